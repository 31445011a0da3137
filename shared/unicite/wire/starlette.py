"""Starlette and FastAPI responses for cited answers: a live SSE stream, and the history.

Needs ``pip install 'unicite[serve]'`` (Starlette and sse-starlette). ::

    from fastapi import FastAPI
    from unicite.wire.starlette import history_response, sse_response

    app = FastAPI()

    @app.get("/answers/{answer_id}/stream")
    def stream(answer_id: str):
        return sse_response(unicite.stream_cited(llm, question, sources), message_id=answer_id,
                            on_answer=lambda answer: store.save(answer_id, answer))

    @app.get("/answers/{answer_id}")
    def reload(answer_id: str):
        return history_response(store.load(answer_id), message_id=answer_id)

The stream's ``thread.message.completed`` data and the history body are the same document
(`unicite.wire.history`), so what a user saw live is what a reload shows.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping

from unicite.exceptions import UsageError
from unicite.model import CitedAnswer
from unicite.wire import aframes, history
from unicite.wire._client import client_dir
from unicite.wire._frames import dumps
from unicite.wire._registry import WireProtocol, protocol_named
from unicite.wire._relay import Relay, RelayFollower

try:
    from sse_starlette import EventSourceResponse, ServerSentEvent
    from starlette.applications import Starlette
    from starlette.requests import HTTPConnection
    from starlette.responses import Response
    from starlette.staticfiles import StaticFiles
except ImportError as error:  # pragma: no cover - exercised in the core-only environment
    raise ImportError(
        "unicite.wire.starlette needs Starlette and sse-starlette: pip install 'unicite[serve]'"
    ) from error

__all__ = [
    "cancel_response",
    "history_response",
    "mount_client",
    "relay_response",
    "sse_response",
    "static_files",
]


def sse_response(
    stream: AsyncIterable[object] | Iterable[object] | CitedAnswer,
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
    on_answer: Callable[[CitedAnswer], object] | None = None,
    headers: Mapping[str, str] | None = None,
    ping: float | None = 15,
) -> EventSourceResponse:
    """An ``EventSourceResponse`` sending a cited stream in a `unicite.wire` protocol.

    A sync stream (`unicite.stream_cited`, a LangChain ``.stream``) is read in a worker
    thread, so the event loop never waits on the model.

    Args:
        stream: Deltas ending with the answer (sync or async), or an answer alone.
        protocol: The wire protocol.
        message_id: The message's id, carried by its frames.
        on_answer: Called with the final answer before its frames are sent (store it for the
            history there).
        headers: Extra response headers (the protocol's own, such as Vercel's
            ``x-vercel-ai-ui-message-stream``, are always sent).
        ping: Seconds between keep-alive comments; None for none.

    Raises:
        UsageError: Unknown protocol.
    """
    chosen = protocol_named(protocol)
    merged = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **chosen.headers}
    merged.update(headers or {})
    return EventSourceResponse(
        _events(stream, protocol, message_id, on_answer),
        headers=merged,
        ping=ping,
        sep="\n",
    )


async def _events(
    stream: AsyncIterable[object] | Iterable[object] | CitedAnswer,
    protocol: WireProtocol,
    message_id: str | None,
    on_answer: Callable[[CitedAnswer], object] | None,
) -> AsyncIterator[ServerSentEvent]:
    if not isinstance(stream, (AsyncIterable, CitedAnswer)):
        stream = _in_thread(stream)
    async for frame in aframes(stream, protocol, message_id=message_id, on_answer=on_answer):
        yield ServerSentEvent(data=frame.data, event=frame.event, id=frame.id)


async def _in_thread(stream: Iterable[object]) -> AsyncIterator[object]:
    from starlette.concurrency import iterate_in_threadpool

    async for item in iterate_in_threadpool(iter(stream)):
        yield item


def history_response(
    answer: CitedAnswer,
    *,
    message_id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """A JSON response holding `unicite.wire.history` of the answer (lone surrogates escaped)."""
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"history_response expects a CitedAnswer, got {type(answer).__name__}")
    body = dumps(history(answer, message_id=message_id))
    return Response(body, media_type="application/json", headers=dict(headers or {}))


# --- The browser client, and messages that survive a reload -------------------------------------


def static_files() -> StaticFiles:
    """A Starlette ``StaticFiles`` app serving the browser client (``unicite.js``, ``.css``)."""
    return StaticFiles(directory=client_dir())


def mount_client(app: Starlette, path: str = "/unicite") -> None:
    """Serve the browser client under ``path`` (``/unicite/unicite.js``, ``/unicite/unicite.css``).

    Raises:
        UsageError: ``path`` does not start with ``/``.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise UsageError(f"mount_client: the path must start with '/', got {path!r}")
    app.mount(path.rstrip("/") or "/", static_files(), name="unicite-client")


def relay_response(
    relay: Relay | RelayFollower,
    request_or_last_event_id: HTTPConnection | str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    ping: float | None = 15,
) -> EventSourceResponse:
    """An ``EventSourceResponse`` following a `Relay`: its frames so far, then each new one.

    A reader that goes away (a page reloaded mid-answer) leaves the relay generating; the
    reloaded page asks again and reads the message from its first frame, and a browser
    reconnecting on its own sends ``Last-Event-ID`` and reads on from the frame after it. On
    another worker, follow the message with `unicite.wire.Relay.follow` and send the
    follower the same way.

    Args:
        relay: The running message, or a `unicite.wire.RelayFollower` of it.
        request_or_last_event_id: The request (its ``Last-Event-ID`` header is read), or the
            last event id the reader saw, or None to send every frame.
        headers: Extra response headers.
        ping: Seconds between keep-alive comments; None for none.

    Raises:
        UsageError: ``relay`` is neither a `Relay` nor a `RelayFollower`.
    """
    if not isinstance(relay, (Relay, RelayFollower)):
        raise UsageError(
            f"relay_response expects a Relay or a RelayFollower, got {type(relay).__name__}"
        )
    last_event_id = request_or_last_event_id
    if isinstance(last_event_id, HTTPConnection):
        last_event_id = last_event_id.headers.get("last-event-id")
    chosen = protocol_named(relay.protocol)
    merged = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **chosen.headers}
    merged.update(headers or {})
    return EventSourceResponse(_relayed(relay, last_event_id), headers=merged, ping=ping, sep="\n")


async def _relayed(
    relay: Relay | RelayFollower, last_event_id: str | None
) -> AsyncIterator[ServerSentEvent]:
    # The relay's batches, read directly: one generator less for every frame sent.
    start = await relay._aposition(last_event_id)
    async for batch in relay._abatches(start):
        for frame in batch:
            yield ServerSentEvent(data=frame.data, event=frame.event, id=frame.id)


def cancel_response(
    relay: Relay | RelayFollower | None, *, headers: Mapping[str, str] | None = None
) -> Response:
    """The response of a stop button's route: the message is cancelled, wherever it runs.

    The body is ``{"message_id", "cancelled"}``: ``cancelled`` says whether a running message
    was stopped (false once it ended); its stopped answer reaches its readers as the
    message's last frames. None (no such message) gives a 404. ::

        @app.post("/messages/{message_id}/cancel")
        def stop(message_id: str):
            return cancel_response(Relay.follow(message_id, store=store))

    Raises:
        UsageError: ``relay`` is neither a `Relay`, a `RelayFollower` nor None.
    """
    if relay is None:
        return Response(
            dumps({"detail": "no such message"}),
            status_code=404,
            media_type="application/json",
            headers=dict(headers or {}),
        )
    if not isinstance(relay, (Relay, RelayFollower)):
        raise UsageError(
            f"cancel_response expects a Relay or a RelayFollower, got {type(relay).__name__}"
        )
    body = {"message_id": relay.message_id, "cancelled": relay.cancel()}
    return Response(dumps(body), media_type="application/json", headers=dict(headers or {}))
