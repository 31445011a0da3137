"""The Starlette helpers: an SSE response from any cited stream, and the history endpoint."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator

import pytest
from _answers import SOURCES, marked

pytest.importorskip("sse_starlette", reason="unicite[serve] is not installed")
fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

import unicite  # noqa: E402
from unicite import CitedAnswer, wire  # noqa: E402
from unicite.generation import Retry  # noqa: E402
from unicite.wire.starlette import history_response, sse_response  # noqa: E402

LOOP_THREADS: set[int] = set()


def _app(stream_factory: object, store: dict[str, CitedAnswer]) -> TestClient:
    app = fastapi.FastAPI()

    @app.get("/messages/{message_id}/stream")
    async def stream(message_id: str) -> object:
        LOOP_THREADS.add(threading.get_ident())
        return sse_response(
            stream_factory(),  # type: ignore[operator]
            message_id=message_id,
            on_answer=lambda answer: store.__setitem__(message_id, answer),
        )

    @app.get("/messages/{message_id}")
    def reload(message_id: str) -> object:
        return history_response(store[message_id], message_id=message_id)

    return TestClient(app)


def test_a_sync_stream_is_read_off_the_event_loop_and_reloads_equal() -> None:
    threads: set[int] = set()

    def stream() -> Iterator[object]:
        threads.add(threading.get_ident())
        yield "Le viaduc "
        yield Retry(round=2, reason="pas de citation")
        yield "Le viaduc de Millau"
        yield marked()

    store: dict[str, CitedAnswer] = {}
    client = _app(stream, store)
    response = client.get("/messages/m-1/stream")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    live = wire.decode(response.text)
    assert threads
    assert not threads & LOOP_THREADS
    completed = [
        json.loads(line[6:])
        for line in response.text.splitlines()
        if '"thread.message.completed"' in line
    ]
    reloaded = client.get("/messages/m-1").json()
    assert completed == [reloaded]
    assert reloaded == wire.history(marked(), message_id="m-1")
    assert live == wire.decode(wire.encode(marked()))


def test_an_async_stream_and_the_answer_is_stored_before_completion_is_sent() -> None:
    seen_before_completed: list[bool] = []
    store: dict[str, CitedAnswer] = {}

    async def stream() -> AsyncIterator[object]:
        for piece in ["東京タワー", "は333メートルです[1]。"]:
            await asyncio.sleep(0)
            yield piece
        seen_before_completed.append("m-2" in store)
        yield unicite.cite("東京タワーは333メートルです[1]。", [SOURCES[2]])

    client = _app(stream, store)
    body = client.get("/messages/m-2/stream").text
    assert seen_before_completed == [False]
    assert "m-2" in store
    assert wire.decode(body).citations[0].source_ids == [SOURCES[2].id]


def test_history_response_escapes_lone_surrogates() -> None:
    answer = unicite.cite("Texte \udc80 cassé [1].", [SOURCES[0]])
    store = {"m": answer}
    client = _app(lambda: iter([answer]), store)
    response = client.get("/messages/m")
    assert response.headers["content-type"] == "application/json"
    assert "\\udc80" in response.text
    assert response.json()["content"] == answer.text


def test_unknown_protocol_is_refused_before_streaming() -> None:
    with pytest.raises(unicite.UsageError):
        sse_response(marked(), protocol="smoke-signals")  # type: ignore[arg-type]
