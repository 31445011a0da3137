"""Relays under a real server: uvicorn on loopback, read over HTTP with httpx.

An async stream runs on the server's event loop, beside what it reads: an ``asyncio.Queue``
an app task fills, a LlamaIndex workflow handler, an ``AsyncOpenAI`` client's pooled
connections (replayed from a cassette). A reader that leaves leaves no task or thread behind,
and a stop button's route cancels an answer another request streams.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from _answers import marked

pytest.importorskip("sse_starlette", reason="unicite[serve] is not installed")
fastapi = pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("llama_index.core", reason="llama-index-core is not installed")
pytest.importorskip("openai", reason="unicite[openai] is not installed")
pytest.importorskip("vcr", reason="vcrpy is not installed")

import unicite  # noqa: E402
from unicite import Source, wire  # noqa: E402
from unicite.wire import Relay  # noqa: E402
from unicite.wire.starlette import cancel_response, relay_response  # noqa: E402

PIECES = ["Le viaduc de Millau ", "mesure **343 mètres**", "[1]. ", "Il a été inauguré"]

# The sources and question of cassettes/wire/test_relay_serving/*.yaml.
MONUMENTS = [
    Source(
        id="tor",
        url="https://de.wikipedia.org/wiki/Brandenburger_Tor",
        title="Brandenburger Tor – Wikipedia",
        content=(
            "Das Brandenburger Tor in Berlin wurde von 1788 bis 1791 nach Plänen von Carl "
            "Gotthard Langhans errichtet."
        ),
    ),
    Source(
        id="kinkaku",
        url="https://ja.wikipedia.org/wiki/%E9%B9%BF%E8%8B%91%E5%AF%BA",
        title="鹿苑寺（金閣寺）",  # noqa: RUF001 (the Japanese title's own brackets)
        content="金閣寺は1397年に足利義満によって建てられた。1950年に焼失し、1955年に再建された。",
    ),
    Source(
        id="eiffel",
        url="https://www.toureiffel.paris/fr/le-monument/histoire",
        title="Histoire de la tour Eiffel",
        content="La tour Eiffel a été inaugurée le 31 mars 1889, pour l’Exposition universelle.",
    ),
]
QUESTION = "Quand ces trois monuments ont-ils été construits ?"


def _app() -> Any:
    from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step

    class Piece(Event):
        delta: str

    class Answering(Workflow):
        """A tiny workflow: it streams the answer's pieces as events, and returns the text."""

        @step
        async def answer(self, ctx: Context, ev: StartEvent) -> StopEvent:
            for piece in PIECES:
                ctx.write_event_to_stream(Piece(delta=piece))
                await asyncio.sleep(0.001)
            return StopEvent(result="".join(PIECES))

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        import openai

        # Created on the server's loop: its pooled connections belong to that loop.
        async with openai.AsyncOpenAI(api_key="mock-api-key", max_retries=0) as client:
            app.state.openai = client
            app.state.agents = set()
            yield

    app = fastapi.FastAPI(lifespan=lifespan)

    @app.get("/queue/{message_id}")
    async def queued(message_id: str) -> Any:
        queue: asyncio.Queue[object] = asyncio.Queue()

        async def agent() -> None:  # the app's own task, forwarding an agent's events
            for piece in PIECES:
                await asyncio.sleep(0.001)
                await queue.put(piece)
            await queue.put(marked())
            await queue.put(None)

        task = asyncio.create_task(agent())
        app.state.agents.add(task)
        task.add_done_callback(app.state.agents.discard)

        async def events() -> AsyncIterator[object]:
            while (item := await queue.get()) is not None:
                yield item

        return relay_response(Relay(events(), message_id=message_id))

    @app.get("/workflow/{message_id}")
    async def workflow(message_id: str) -> Any:
        handler = Answering(timeout=10).run()

        async def events() -> AsyncIterator[object]:
            async for event in handler.stream_events():
                if isinstance(event, Piece):
                    yield event.delta
            yield unicite.cite(str(await handler), [Source(title="Viaduc de Millau")])

        return relay_response(Relay(events(), "vercel", message_id=message_id))

    @app.get("/openai/{message_id}")
    async def asked(message_id: str) -> Any:
        stream = unicite.astream_cited(app.state.openai, QUESTION, MONUMENTS, model="gpt-4.1-mini")
        return relay_response(Relay(stream, message_id=message_id))

    @app.get("/slow/{message_id}")
    async def slow(message_id: str) -> Any:
        async def model() -> AsyncIterator[object]:
            for n in range(15):
                await asyncio.sleep(0.02)
                yield f"mot {n} "
            yield marked()

        return relay_response(Relay(model(), message_id=message_id, sources=MONUMENTS))

    @app.get("/messages/{message_id}/stream")
    def follow(message_id: str, request: fastapi.Request) -> Any:
        follower = Relay.follow(message_id)
        if follower is None:
            return fastapi.Response(status_code=404)
        return relay_response(follower, request)

    @app.post("/messages/{message_id}/cancel")
    def stop(message_id: str) -> Any:
        return cancel_response(Relay.follow(message_id))

    @app.get("/stats")
    async def stats() -> Any:
        return {
            "tasks": sorted(task.get_coro().__qualname__ for task in asyncio.all_tasks()),  # type: ignore[union-attr]
            "threads": sorted(thread.name for thread in threading.enumerate()),
        }

    return app


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app under uvicorn in a thread, on a free loopback port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(_app(), log_level="warning", ws="none", http="h11", lifespan="on")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not running.started:
            assert thread.is_alive(), "uvicorn stopped"
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(10)
        sock.close()


def _get(url: str, **options: Any) -> httpx.Response:
    return httpx.get(url, timeout=10, **options)


def test_an_async_generator_reading_an_app_queue_completes(server: str) -> None:
    body = _get(f"{server}/queue/m-queue").text
    assert list(wire.parse_frames(body)) == list(
        wire.frames([*PIECES, marked()], message_id="m-queue")
    )


def test_a_llamaindex_workflow_streams_through_its_handler(server: str) -> None:
    body = _get(f"{server}/workflow/m-flow").text
    answer = wire.decode(body, "vercel")
    assert answer.text == "".join(PIECES)
    assert answer.sources[0].title == "Viaduc de Millau"
    assert [c.text for c in answer.citations] == ["Le viaduc de Millau mesure **343 mètres**"]


@pytest.mark.vcr(ignore_localhost=True)
def test_an_async_openai_stream_completes_under_uvicorn(
    server: str, vcr: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[Any] = []
    play = vcr.play_response

    def played(request: Any) -> Any:
        sent.append(json.loads(request.body))
        return play(request)

    monkeypatch.setattr(vcr, "play_response", played)
    body = _get(f"{server}/openai/m-openai").text
    assert sent == [json.loads(request.body) for request in vcr.requests]
    answer = wire.decode(body)
    assert answer.text == (
        "Das Brandenburger Tor wurde 1788–1791 errichtet [1]. Le Pavillon d’or (金閣寺) date "
        "de 1397 et a été reconstruit en 1955 [2]. La tour Eiffel a été inaugurée le 31 mars "
        "1889 [3]."
    )
    assert [s.id for s in answer.sources] == ["tor", "kinkaku", "eiffel"]
    assert [c.source_ids for c in answer.citations] == [["tor"], ["kinkaku"], ["eiffel"]]


def test_readers_that_leave_leave_no_task_or_thread(server: str) -> None:
    def leave(message_id: str) -> None:
        with (
            httpx.Client(timeout=10) as client,
            client.stream("GET", f"{server}/slow/{message_id}") as sent,
        ):
            assert next(sent.iter_lines()).startswith("id: 1")
        # The relay keeps generating; a reloaded page reads the whole message elsewhere.
        reloaded = _get(f"{server}/messages/{message_id}/stream").text
        assert wire.decode(reloaded) == wire.decode(wire.encode(marked()))

    def settled(expected: dict[str, Any] | None = None) -> dict[str, Any]:
        """The server's tasks and threads once no relay runs (and they equal ``expected``)."""
        deadline = time.monotonic() + 5
        while True:
            now: dict[str, Any] = _get(f"{server}/stats").json()
            running = [name for name in now["tasks"] if "Relay" in name]
            if (not running and expected in (None, now)) or time.monotonic() > deadline:
                return now
            time.sleep(0.02)

    leave("m-left-0")  # the first one starts the server's pools and sse-starlette's watcher
    steady = settled()
    assert not [name for name in steady["tasks"] if "Relay" in name]
    assert not [name for name in steady["threads"] if name.startswith("unicite-relay")]
    for n in range(1, 4):
        leave(f"m-left-{n}")
    assert settled(steady) == steady


def test_a_stop_route_cancels_an_answer_another_request_streams(server: str) -> None:
    with httpx.Client(timeout=10) as client:
        with client.stream("GET", f"{server}/slow/m-stop") as streamed:
            lines = streamed.iter_lines()
            first = next(lines)
            assert first.startswith("id: 1")
            stopped = client.post(f"{server}/messages/m-stop/cancel")
            assert stopped.json() == {"message_id": "m-stop", "cancelled": True}
            body = "\n".join([first, *lines, ""])
        again = client.post(f"{server}/messages/m-stop/cancel").json()
        missing = client.post(f"{server}/messages/m-nothing/cancel")
    assert again == {"message_id": "m-stop", "cancelled": False}
    assert missing.status_code == 404
    frames = list(wire.parse_frames(body))
    assert frames[-1].event == "thread.message.cancelled"
    answer = wire.decode(frames)
    assert answer.extras == {"stopped": True}
    assert answer.text.startswith("mot 0 ")
    # A reconnecting browser resumes after the last frame it saw, on any worker.
    resumed = _get(
        f"{server}/messages/m-stop/stream", headers={"Last-Event-ID": frames[-2].id or ""}
    ).text
    assert list(wire.parse_frames(resumed)) == [frames[-1]]
