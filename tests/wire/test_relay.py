"""The relay: a message generated in the background that any reader can follow, or pick up."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator

import pytest
from _answers import SOURCES, marked

import unicite
from unicite import CitedAnswer, wire
from unicite.generation import Retry
from unicite.wire import Relay, client_dir

PIECES = ["Le viaduc de Millau ", "mesure **343 mètres**", "[1]. ", "Il a été inauguré"]


def stream() -> Iterator[object]:
    yield from PIECES
    yield marked()


class Gate:
    """A stream that gives one item each time the test lets it."""

    def __init__(self, items: list[object]) -> None:
        self.items = items
        self.allowed = threading.Semaphore(0)
        self.closed = False

    def step(self, count: int = 1) -> None:
        for _ in range(count):
            self.allowed.release()

    def __iter__(self) -> Iterator[object]:
        for item in self.items:
            assert self.allowed.acquire(timeout=10), "the test never let the stream on"
            yield item


def encoded(frames: list[wire.Frame]) -> str:
    return "".join(frame.encode() for frame in frames)


def expected(message_id: str | None = "m-1") -> list[wire.Frame]:
    return list(wire.frames(stream(), message_id=message_id))


def test_frames_are_the_streams_and_every_reader_gets_them_all() -> None:
    stored: list[CitedAnswer] = []
    relay = Relay(stream(), message_id="m-1", on_answer=stored.append)
    first = list(relay.subscribe(timeout=10))
    assert relay.wait(10)
    second = list(relay.subscribe())
    assert first == second == relay.frames == expected()
    assert relay.done
    assert relay.error is None
    assert relay.answer == marked() == stored[0]
    assert wire.decode(encoded(first)) == wire.decode(wire.encode(marked()))
    assert [frame.id for frame in first] == [str(n) for n in range(1, len(first) + 1)]


def test_readers_follow_frames_as_they_come() -> None:
    gate = Gate([*PIECES, marked()])
    relay = Relay(gate, message_id="m-1")
    reader = relay.subscribe(timeout=10)
    gate.step()
    first = next(reader)
    assert json.loads(first.data)["delta"] == PIECES[0]
    assert relay.answer is None
    assert not relay.done
    late = relay.subscribe(timeout=10)  # a page loaded now reads from the first frame
    assert next(late) == first
    gate.step(len(PIECES))
    rest = list(reader)
    assert [first, *rest] == expected()
    assert [first, *late] == expected()


def test_a_reader_resumes_after_its_last_event_id() -> None:
    relay = Relay(stream(), message_id="m-1")
    assert relay.wait(10)
    frames = relay.frames
    resumed = list(relay.subscribe("2"))
    assert resumed == frames[2:]
    assert relay.position("2") == 2
    assert list(relay.subscribe(frames[-1].id)) == []
    # No id, an empty one, or one this message never sent: the reader has seen nothing.
    for unknown in (None, "", "999", "other-message-7"):
        assert list(relay.subscribe(unknown)) == frames


def test_the_answer_is_kept_before_its_frames_are_recorded() -> None:
    seen: list[tuple[bool, int]] = []
    relay: Relay

    def on_answer(answer: CitedAnswer) -> None:
        seen.append((relay.answer is answer, len(relay.frames)))

    relay = Relay(stream(), message_id="m-1", on_answer=on_answer, start=False)
    relay.start()
    assert relay.wait(10)
    assert seen == [(True, len(PIECES))]


def test_a_retry_is_relayed_as_a_reset() -> None:
    items: list[object] = ["Le viaduc ", Retry(round=2, reason="pas de citation"), *PIECES]
    relay = Relay([*items, marked()])
    assert relay.wait(10)
    events = [frame.event for frame in relay.frames]
    assert events[1] == "thread.message.reset"
    assert wire.decode(encoded(relay.frames)) == wire.decode(wire.encode(marked()))


def test_an_answer_alone_and_an_async_stream() -> None:
    alone = Relay(marked(), message_id="m-2")
    assert alone.wait(10)
    assert [frame.event for frame in alone.frames] == ["thread.message.completed"]

    async def astream() -> AsyncIterator[object]:
        for piece in PIECES:
            await asyncio.sleep(0)
            yield piece
        yield marked()

    relay = Relay(astream(), message_id="m-1")
    assert relay.wait(10)
    assert relay.frames == expected()
    assert relay.answer == marked()


def test_a_broken_stream_ends_every_reader_with_an_error_frame() -> None:
    def broken() -> Iterator[object]:
        yield "Le viaduc "
        raise ConnectionError("the model went away")

    relay = Relay(broken(), message_id="m-3")
    frames = list(relay.subscribe(timeout=10))
    assert relay.wait(10)
    assert [frame.event for frame in frames] == ["thread.message.delta", "thread.message.error"]
    assert "ConnectionError" in json.loads(frames[-1].data)["error"]
    assert "went away" not in frames[-1].data
    assert isinstance(relay.error, ConnectionError)
    assert relay.answer is None
    assert "broke off" in wire.decode(encoded(frames)).diagnostics[0]


def test_async_readers_do_not_block_their_loop() -> None:
    gate = Gate([*PIECES, marked()])
    relay = Relay(gate, message_id="m-1")

    async def read() -> list[wire.Frame]:
        return [frame async for frame in relay.asubscribe()]

    async def main() -> tuple[list[wire.Frame], list[wire.Frame], int]:
        ticks = 0
        readers = [asyncio.create_task(read()), asyncio.create_task(read())]
        for _ in range(len(PIECES) + 1):
            await asyncio.sleep(0.01)
            ticks += 1  # the loop keeps running while both readers wait
            gate.step()
        first, second = await asyncio.wait_for(asyncio.gather(*readers), 10)
        return first, second, ticks

    first, second, ticks = asyncio.run(main())
    assert first == second == expected()
    assert ticks == len(PIECES) + 1
    # A reader on another loop, resuming, once the message is done.
    assert asyncio.run(_collect(relay, "3")) == expected()[3:]


async def _collect(relay: Relay, last_event_id: str) -> list[wire.Frame]:
    return [frame async for frame in relay.asubscribe(last_event_id)]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(unicite.UsageError):
        Relay(stream(), protocol="smoke-signals")  # type: ignore[arg-type]
    with pytest.raises(unicite.UsageError):
        Relay(stream(), message_id=7)  # type: ignore[arg-type]


# --- over HTTP ------------------------------------------------------------------------------


def test_relay_response_serves_the_frames_and_honours_last_event_id() -> None:
    pytest.importorskip("sse_starlette", reason="unicite[serve] is not installed")
    pytest.importorskip("httpx")
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from unicite.wire.starlette import relay_response

    relay = Relay(stream(), message_id="m-1")

    def follow(request: Request) -> Response:
        return relay_response(relay, request)

    def after(request: Request) -> Response:
        return relay_response(relay, request.path_params["last"])

    app = Starlette(
        routes=[
            Route("/messages/m-1/stream", follow),
            Route("/messages/m-1/after/{last}", after),
        ]
    )
    client = TestClient(app)
    response = client.get("/messages/m-1/stream")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert wire.decode(response.text) == wire.decode(wire.encode(marked()))
    frames = list(wire.parse_frames(response.text))
    assert frames == expected()

    resumed = client.get("/messages/m-1/stream", headers={"Last-Event-ID": "3"}).text
    assert list(wire.parse_frames(resumed)) == expected()[3:]
    after_four = client.get("/messages/m-1/after/4").text
    assert list(wire.parse_frames(after_four)) == expected()[4:]
    with pytest.raises(unicite.UsageError):
        relay_response(marked())  # type: ignore[arg-type]


def test_the_client_is_served_from_the_package() -> None:
    pytest.importorskip("sse_starlette", reason="unicite[serve] is not installed")
    pytest.importorskip("httpx")
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from unicite.wire.starlette import mount_client

    assert (client_dir() / "unicite.js").is_file()
    assert (client_dir() / "unicite.css").is_file()
    app = Starlette()
    mount_client(app)
    client = TestClient(app)
    script = client.get("/unicite/unicite.js")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert "export function renderMessage" in script.text
    assert client.get("/unicite/unicite.css").status_code == 200
    assert client.get("/unicite/../_relay.py").status_code == 404
    with pytest.raises(unicite.UsageError):
        mount_client(app, "unicite")
    assert SOURCES  # the shared answers module is the one the other wire tests use
