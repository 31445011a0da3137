"""AWS event-stream bodies (``application/vnd.amazon.eventstream``) as the events boto3 yields.

Bedrock's streaming APIs (``ConverseStream``, ``RetrieveAndGenerateStream``...) frame each event
as a binary message: a prelude (total length, headers length, CRC32), string headers naming the
event (``:event-type``, or ``:exception-type`` for an error), a JSON payload and a CRC32 of the
whole message. A recorded body read here gives the dicts boto3's ``EventStream`` gives,
``{"<event type>": payload}``, so a logged body reads like the live stream.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

__all__ = ["iter_eventstream", "looks_like_eventstream"]

_PRELUDE = 12
_MINIMUM = 16  # prelude and message checksum
_VALUE_WIDTHS = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Header value types of fixed width (booleans, integers, timestamp, UUID); 6 and 7 are
variable-length bytes and strings."""


def _prelude(data: bytes, at: int) -> tuple[int, int] | None:
    """Total and headers length of the message at `at`, when its prelude is sound."""
    if len(data) - at < _MINIMUM:
        return None
    total, headers = struct.unpack_from(">II", data, at)
    (checksum,) = struct.unpack_from(">I", data, at + 8)
    if zlib.crc32(data[at : at + 8]) != checksum:
        return None
    if total < _MINIMUM or headers > total - _MINIMUM:
        return None
    return total, headers


def looks_like_eventstream(data: bytes | bytearray) -> bool:
    """Whether `data` starts with a whole AWS event-stream message (its prelude checks out)."""
    found = _prelude(bytes(data[:_MINIMUM]), 0)
    return found is not None and found[0] <= len(data)


def _headers(data: bytes, at: int, end: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    while at < end:
        size = data[at]
        name = data[at + 1 : at + 1 + size].decode("utf-8", "replace")
        at += 1 + size
        kind = data[at]
        at += 1
        if kind in (6, 7):
            (length,) = struct.unpack_from(">H", data, at)
            raw = data[at + 2 : at + 2 + length]
            headers[name] = raw.decode("utf-8", "replace") if kind == 7 else raw
            at += 2 + length
        elif kind in _VALUE_WIDTHS:
            headers[name] = kind == 0 if kind in (0, 1) else data[at : at + _VALUE_WIDTHS[kind]]
            at += _VALUE_WIDTHS[kind]
        else:
            raise ValueError(f"header {name!r} has unknown value type {kind}")
    return headers


def iter_eventstream(data: bytes | bytearray, diagnostics: list[str]) -> Iterator[dict[str, Any]]:
    """The events of an event-stream body, as ``{"<event type>": payload}`` dicts.

    Exceptions come as ``{"<exception type>": payload}`` (``throttlingException``...), as boto3
    names them. A message whose checksums fail, or that is cut short, ends the reading with a
    diagnostic; a payload that is not a JSON object is skipped with one.
    """
    body = bytes(data)
    at = 0
    number = 0
    while at < len(body):
        found = _prelude(body, at)
        if found is None or at + found[0] > len(body):
            diagnostics.append(f"event-stream message {number}: cut short or corrupt; stopped")
            return
        total, header_length = found
        (checksum,) = struct.unpack_from(">I", body, at + total - 4)
        if zlib.crc32(body[at : at + total - 4]) != checksum:
            diagnostics.append(f"event-stream message {number}: checksum mismatch; stopped")
            return
        try:
            headers = _headers(body, at + _PRELUDE, at + _PRELUDE + header_length)
        except (ValueError, IndexError, struct.error) as err:
            diagnostics.append(f"event-stream message {number}: unreadable headers ({err})")
            return
        payload = body[at + _PRELUDE + header_length : at + total - 4]
        at += total
        number += 1
        kind = headers.get(":exception-type") or headers.get(":event-type")
        if not isinstance(kind, str) or not kind:
            diagnostics.append(f"event-stream message {number - 1}: names no event type")
            continue
        try:
            value = json.loads(payload) if payload else {}
        except ValueError:
            value = None
        if not isinstance(value, dict):
            diagnostics.append(f"event-stream message {number - 1}: payload is not a JSON object")
            continue
        yield {kind: value}
