"""Cited answers on the wire: Server-Sent Events for chat front ends, and the history form.

``encode`` turns a cited stream — the ``str`` deltas, `unicite.generation.Retry` notices and
final `CitedAnswer` (or `CitedGeneration`) that `unicite.stream_cited` and the adapters'
streams yield, or a `CitedAnswer` alone — into SSE frames in one of four protocols:

- ``"unicite"``: seed 002's ``thread.message.delta`` (text only) and
  ``thread.message.completed`` (the content with ``[n]`` markers and ``metadata.citations``:
  url, title, snippet and spans in str, UTF-16 and byte offsets); ``history(answer)`` is the
  completed event's data, for the REST reload, built by the same function;
- ``"vercel"``: the Vercel AI SDK UI message stream (text parts, ``source-url`` /
  ``source-document`` parts, a ``data-unicite`` part carrying the spans);
- ``"openwebui"``: Open WebUI's ``citation`` / ``source`` events;
- ``"openai"``: OpenAI-compatible ``chat.completion.chunk`` frames whose last chunk carries
  ``url_citation`` annotations.

``decode`` reads the frames of any of them back into a `CitedAnswer`. The markers in a stream
already carry their final numbers (`unicite.MarkerStream`), so what a user sees live is what
the history shows after a reload.

A `Relay` runs a cited stream in the background (on the server's event loop) and records its
frames for any reader; `Relay.cancel` stops it and keeps the answer as far as it went. With a
`RelayStore` — `MemoryRelayStore` in the process, `unicite.wire.redis.RedisRelayStore` shared
by every worker — `Relay.follow` reads and stops it from any worker.

A `HistoryStore` keeps a chat's sessions and turns, each answer as its history document, and
gives the ``GET /sessions/{id}/history`` body a reloaded page reads: `SQLiteHistoryStore` in
one file, `unicite.wire.postgres.PostgresHistoryStore` in PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from unicite.exceptions import UsageError, WireError
from unicite.model import CitedAnswer
from unicite.wire._client import client_dir
from unicite.wire._encode import aframes, check_id, encode, frames
from unicite.wire._frames import Frame, parse_frames
from unicite.wire._history_store import HistoryStore, Session, SQLiteHistoryStore, Turn, TurnStatus
from unicite.wire._registry import WireProtocol, protocol_named
from unicite.wire._relay import Relay, RelayFollower
from unicite.wire._relay_store import (
    MemoryRelayStore,
    RelaySnapshot,
    RelayState,
    RelayStore,
    RelayWriter,
)
from unicite.wire._unicite import completed_data

__all__ = [
    "Frame",
    "HistoryStore",
    "MemoryRelayStore",
    "Relay",
    "RelayFollower",
    "RelaySnapshot",
    "RelayState",
    "RelayStore",
    "RelayWriter",
    "SQLiteHistoryStore",
    "Session",
    "Turn",
    "TurnStatus",
    "WireError",
    "WireProtocol",
    "aframes",
    "client_dir",
    "decode",
    "encode",
    "frames",
    "history",
    "parse_frames",
]


def history(answer: CitedAnswer, *, message_id: str | None = None) -> dict[str, Any]:
    """The REST form of an answer: exactly the ``thread.message.completed`` event's data.

    ``{"type", "message_id"?, "content", "metadata": {"version", "provider", "model",
    "citations", "sources_used", "has_markers", "diagnostics"}}``: the content carries a
    ``[n]`` marker for every citation, and ``metadata.citations[n - 1]`` is the source that
    marker opens (``number``, ``id``, ``kind``, ``url``, ``href`` — the URL safe to link, or
    null —, ``title``, ``domain``, ``snippet``, …, ``cited``, and ``spans``: each citing span
    of the content with ``start``/``end`` (str indices), ``utf16``, ``bytes``, its ``text``,
    the ``marker`` span, the ``sources`` numbers of the citation, ``quote``, ``location``,
    ``origin``, ``confidence``, ``verified``, ``support`` and ``ref``, the citation's id).
    Sources without citations are listed too (``cited`` false) so a front end can show them.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"history expects a CitedAnswer, got {type(answer).__name__}")
    return completed_data(answer, check_id(message_id))


def decode(
    frames: str | bytes | Iterable[str | bytes | Frame],
    protocol: WireProtocol = "unicite",
) -> CitedAnswer:
    """The `CitedAnswer` a message's frames carry (for Python clients and tests).

    Args:
        frames: The SSE body (``str`` or ``bytes``), or its chunks cut anywhere, or the
            encoded frames one by one, or `Frame` objects.
        protocol: The protocol the frames were written in.

    Raises:
        UsageError: Unknown protocol.
        WireError: The frames are not that protocol's (bad JSON, a missing field, a span
            that does not fit the text).
    """
    return protocol_named(protocol).decode(parse_frames(frames))
