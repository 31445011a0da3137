"""Replay recorded provider responses: offline examples and tests, in a reviewable format.

The recordings are vcrpy cassettes in this project's YAML format: plain YAML, JSON bodies
stored parsed (``parsed_body``) so a reviewer reads exactly which citations the provider
returned, server-sent-event bodies as literal text blocks, AWS event streams (Bedrock's
``ConverseStream``) as the list of their messages, and only the headers a replay needs:
keys, cookies, organisation/project ids and tracking headers never reach the file.

`replay` plays a cassette for every HTTP request made while it is entered (``httpx``,
``requests``, ``aiohttp``... whatever vcrpy patches, so the OpenAI, Anthropic and Gemini SDKs
too); `live_or_replay` does so only while an API key is missing::

    from unicite.testing import live_or_replay

    with live_or_replay("cassettes/answer.yaml", env="OPENAI_API_KEY"):
        response = OpenAI().responses.create(...)  # replayed, or live with a key

The module is itself a vcrpy serializer (`serialize` and `deserialize`), for recording::

    my_vcr.register_serializer("yaml", unicite.testing)

It needs vcrpy, which the ``testing`` extra installs: ``pip install "unicite[testing]"``.
Importing it does not: the functions raise `ImportError` saying so when vcrpy is missing.
"""

from __future__ import annotations

import importlib
import json
import os
import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MATCH_ON",
    "KEEP_REQUEST_HEADERS",
    "KEEP_RESPONSE_HEADERS",
    "PLACEHOLDER_KEY",
    "Matcher",
    "deserialize",
    "live_or_replay",
    "replay",
    "serialize",
]

KEEP_REQUEST_HEADERS = frozenset({"content-type"})
"""Request headers a cassette keeps (lower case); every other one is dropped when saving."""
KEEP_RESPONSE_HEADERS = frozenset({"content-type"})
"""Response headers a cassette keeps (lower case); every other one is dropped when saving."""

DEFAULT_MATCH_ON = ("method", "scheme", "host", "port", "path", "query")
"""How a request finds its recorded interaction by default (vcrpy's matchers of those names)."""

PLACEHOLDER_KEY = "offline-replay"
"""The API key `live_or_replay` sets while replaying, so that SDK clients can be created."""

Matcher = Callable[[Any, Any], bool | None]
"""A request matcher: ``(recorded, made) -> bool``, or None when it passes (vcrpy's
convention; raising `AssertionError` says why it does not match)."""

_INSTALL = 'unicite.testing needs vcrpy: pip install "unicite[testing]"'


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(_INSTALL, name=name) from err


# --- the cassette format ------------------------------------------------------------------------


@cache
def _dumper() -> Any:
    yaml = _import("yaml")
    # Multi-line strings as literal blocks, so bodies read as they were sent.
    dumper: Any = type("CassetteDumper", (yaml.SafeDumper,), {})

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    dumper.add_representer(str, text)
    return dumper


def _headers(headers: dict[str, Any], keep: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in headers.items() if k.lower() in keep}


def _is_json(headers: dict[str, Any]) -> bool:
    for key, value in headers.items():
        if key.lower() == "content-type":
            values = value if isinstance(value, list) else [value]
            return any("json" in str(v) for v in values)
    return False


_EVENTSTREAM = "application/vnd.amazon.eventstream"
"""AWS's binary event-stream framing (Bedrock ``ConverseStream``, ``RetrieveAndGenerateStream``)."""
_STANDARD_HEADERS = frozenset({":event-type", ":exception-type", ":message-type", ":content-type"})


def _content_type(headers: dict[str, Any]) -> str:
    for key, value in headers.items():
        if key.lower() == "content-type":
            values = value if isinstance(value, list) else [value]
            return " ".join(str(v) for v in values)
    return ""


def _event_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude, string headers, payload, CRC32 checksums."""
    encoded = b"".join(
        struct.pack(">B", len(name.encode()))
        + name.encode()
        + struct.pack(">BH", 7, len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )
    total = 16 + len(encoded) + len(payload)
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _event_header(data: bytes, at: int) -> tuple[str, object, int]:
    """One header of an event-stream message at `at`: name, value, where the next starts."""
    size = data[at]
    name = data[at + 1 : at + 1 + size].decode()
    at += 1 + size
    kind = data[at]
    at += 1
    fixed = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
    if kind in (6, 7):
        (length,) = struct.unpack_from(">H", data, at)
        raw = data[at + 2 : at + 2 + length]
        return name, raw.decode() if kind == 7 else raw.hex(), at + 2 + length
    if kind not in fixed:
        raise ValueError(f"event-stream header {name!r} has unknown value type {kind}")
    width = fixed[kind]
    value: object = kind == 0 if kind in (0, 1) else data[at : at + width].hex()
    return name, value, at + width


def _events(body: bytes) -> list[dict[str, Any]]:
    """An event-stream body as reviewable entries: event type, payload (parsed when JSON)."""
    events = []
    at = 0
    while at < len(body):
        total, header_length = struct.unpack_from(">II", body, at)
        headers: dict[str, object] = {}
        cursor, end = at + 12, at + 12 + header_length
        while cursor < end:
            name, value, cursor = _event_header(body, cursor)
            headers[name] = value
        raw = body[end : at + total - 4]
        entry: dict[str, Any] = {}
        if headers.get(":message-type") == "exception":
            entry["exception"] = headers.get(":exception-type")
        else:
            entry["event"] = headers.get(":event-type")
        extra = {k: v for k, v in headers.items() if k not in _STANDARD_HEADERS}
        if extra:
            entry["headers"] = extra
        try:
            entry["payload"] = json.loads(raw) if raw else {}
        except ValueError:
            entry["payload_text"] = raw.decode("utf-8", "replace")
        events.append(entry)
        at += total
    return events


def _event_body(events: list[dict[str, Any]]) -> bytes:
    """The event-stream body the reviewable entries of `_events` stand for."""
    frames = []
    for entry in events:
        if "exception" in entry:
            headers = {
                ":exception-type": str(entry["exception"]),
                ":content-type": "application/json",
                ":message-type": "exception",
            }
        else:
            headers = {
                ":event-type": str(entry["event"]),
                ":content-type": "application/json",
                ":message-type": "event",
            }
        headers.update({str(k): str(v) for k, v in (entry.get("headers") or {}).items()})
        if "payload_text" in entry:
            payload = str(entry["payload_text"]).encode()
        else:
            payload = json.dumps(entry.get("payload", {}), ensure_ascii=False).encode()
        frames.append(_event_frame(headers, payload))
    return b"".join(frames)


def _body_bytes(body: Any) -> bytes | None:
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, str):
        return body.encode()
    return body if isinstance(body, bytes) else None


def _body_text(body: Any) -> str | None:
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        return body.decode("utf-8")
    return body if isinstance(body, str) else None


def serialize(cassette: dict[str, Any]) -> str:
    """A vcrpy cassette as this format's YAML text (vcrpy's serializer interface).

    Only the headers in `KEEP_REQUEST_HEADERS` and `KEEP_RESPONSE_HEADERS` are kept; a body
    with a JSON content type is stored parsed, under ``parsed_body``; an AWS event-stream
    body (``application/vnd.amazon.eventstream``) as its messages, under ``events``; any other
    as text.
    """
    interactions = []
    for item in cassette["interactions"]:
        request, response = dict(item["request"]), dict(item["response"])
        request["headers"] = _headers(request.get("headers") or {}, KEEP_REQUEST_HEADERS)
        response["headers"] = _headers(response.get("headers") or {}, KEEP_RESPONSE_HEADERS)
        for part in (request, response):
            if _EVENTSTREAM in _content_type(part["headers"]):
                raw = _body_bytes(part.pop("body", None)) or b""
                part["events"] = _events(raw)
                continue
            text = _body_text(part.pop("body", None))
            if text and _is_json(part["headers"]):
                try:
                    part["parsed_body"] = json.loads(text)
                    continue
                except ValueError:
                    pass
            part["body"] = text
        interactions.append({"request": request, "response": response})
    data = {"interactions": interactions, "version": cassette.get("version", 1)}
    dumped: str = _import("yaml").dump(
        data, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=120
    )
    return dumped


def deserialize(text: str) -> dict[str, Any]:
    """This format's YAML text as a vcrpy cassette (vcrpy's serializer interface).

    A response without a ``status`` is a ``200 OK``; ``parsed_body`` becomes the JSON body;
    ``events`` (an AWS event-stream body: one entry per message, ``event`` or ``exception``
    naming its type, ``payload`` its JSON) becomes the binary body they are framed as.
    """
    data: dict[str, Any] = _import("yaml").safe_load(text)
    for item in data["interactions"]:
        request, response = item["request"], item["response"]
        for part in (request, response):
            body: str | bytes | None
            if "parsed_body" in part:
                body = json.dumps(part.pop("parsed_body"), ensure_ascii=False)
            elif "events" in part:
                body = _event_body(part.pop("events") or [])
            else:
                body = part.pop("body", None)
            if part is response:
                part["body"] = {"string": body or ""}
            else:
                part["body"] = body
        response.setdefault("status", {"code": 200, "message": "OK"})
        request.setdefault("headers", {})
        response["headers"] = {
            k: v if isinstance(v, list) else [v] for k, v in response["headers"].items()
        }
    return data


# --- replaying ----------------------------------------------------------------------------------


def replay(
    cassette: str | os.PathLike[str],
    *,
    match_on: Sequence[str | Matcher] = DEFAULT_MATCH_ON,
    allow_playback_repeats: bool = True,
    ignore_localhost: bool = False,
) -> AbstractContextManager[Any]:
    """A context replaying `cassette` for every HTTP request made while it is entered.

    Nothing is recorded and nothing reaches the network: a request the cassette has no
    interaction for raises vcrpy's ``CannotOverwriteExistingCassetteException``. Entering the
    context gives vcrpy's ``Cassette`` (``play_count``, ``all_played``...).

    Args:
        cassette: The cassette file, in this module's format.
        match_on: How a request finds its interaction: names of vcrpy's matchers
            (``"method"``, ``"host"``, ``"path"``, ``"query"``, ``"body"``...) and matcher
            functions (`Matcher`), all of which must pass.
        allow_playback_repeats: Whether an interaction may answer any number of requests
            (an example asked the same question twice); when False each plays once.
        ignore_localhost: Let requests to this machine (a local server under test) through.

    Raises:
        FileNotFoundError: There is no such cassette.
        ImportError: vcrpy is not installed (the ``testing`` extra installs it).
    """
    vcr = _import("vcr")
    path = Path(cassette)
    if not path.is_file():
        raise FileNotFoundError(f"no cassette at {path}")
    player = vcr.VCR(record_mode="none", ignore_localhost=ignore_localhost)
    player.register_serializer("unicite", _Serializer)
    names = []
    for n, matcher in enumerate(match_on):
        if isinstance(matcher, str):
            names.append(matcher)
        else:
            name = f"unicite-matcher-{n}-{getattr(matcher, '__name__', 'matcher')}"
            player.register_matcher(name, matcher)
            names.append(name)
    context: AbstractContextManager[Any] = player.use_cassette(
        str(path),
        serializer="unicite",
        match_on=names,
        allow_playback_repeats=allow_playback_repeats,
    )
    return context


def live_or_replay(
    cassette: str | os.PathLike[str],
    env: str = "OPENAI_API_KEY",
    *,
    match_on: Sequence[str | Matcher] = DEFAULT_MATCH_ON,
    allow_playback_repeats: bool = True,
    ignore_localhost: bool = False,
) -> AbstractContextManager[Any]:
    """A context replaying `cassette` unless the environment variable `env` holds a key.

    With the key set (non-empty), the context does nothing and gives None: calls go to the
    live API. Without it, the context is `replay`'s (the other arguments are its own), and
    while it is entered `env` holds `PLACEHOLDER_KEY`, so that SDK clients, which refuse to be
    created without a key, can be; the variable is unset again on exit.

    Raises:
        FileNotFoundError: Replaying, and there is no such cassette.
        ImportError: Replaying, and vcrpy is not installed.
    """
    if os.environ.get(env):
        return nullcontext()
    player = replay(
        cassette,
        match_on=match_on,
        allow_playback_repeats=allow_playback_repeats,
        ignore_localhost=ignore_localhost,
    )
    return _with_placeholder(player, env)


@contextmanager
def _with_placeholder(player: AbstractContextManager[Any], env: str) -> Iterator[Any]:
    before = os.environ.get(env)
    os.environ[env] = PLACEHOLDER_KEY
    try:
        with player as cassette:
            yield cassette
    finally:
        if before is None:
            os.environ.pop(env, None)
        else:
            os.environ[env] = before


class _Serializer:
    """This module's format under vcrpy's serializer interface."""

    serialize = staticmethod(serialize)
    deserialize = staticmethod(deserialize)
