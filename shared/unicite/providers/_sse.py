"""Reading server-sent-event logs (and JSON Lines) into plain event dicts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["iter_sse", "looks_like_sse"]

_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


def looks_like_sse(text: str) -> bool:
    """Whether text reads as an SSE log rather than one JSON document."""
    head = text.lstrip()[:200]
    return head.startswith(("event:", "data:", "id:", ":"))


def iter_sse(text: str, diagnostics: list[str] | None = None) -> Iterator[Any]:
    """Yield the JSON payload of each SSE event in `text`.

    The ``event:`` name becomes ``type`` when the payload has none; ``[DONE]`` sentinels and
    comments are skipped; payloads that are not JSON are skipped with a line appended to
    `diagnostics` when given. Lines that are whole JSON objects (JSON Lines logs of SDK events)
    are accepted too. Each payload can be fed to `StreamCollector.feed` as it comes.
    """
    if diagnostics is None:
        diagnostics = []
    name: str | None = None
    data: list[str] = []

    def flush() -> Iterator[Any]:
        nonlocal name, data
        if data:
            payload = "\n".join(data).strip()
            if payload and payload != "[DONE]":
                try:
                    value = json.loads(payload)
                except ValueError as err:
                    diagnostics.append(f"SSE event {name or '?'}: payload is not JSON ({err})")
                except RecursionError:
                    diagnostics.append(f"SSE event {name or '?'}: payload is nested too deeply")
                else:
                    if isinstance(value, dict) and name and "type" not in value:
                        value = {"type": name, **value}
                    yield value
        name, data = None, []

    # SSE lines end at CR, LF or CRLF only: str.splitlines() would also split at U+2028, U+0085
    # and other characters JSON payloads may hold unescaped.
    for line in _LINE_BREAK_RE.split(text):
        if not line.strip():
            yield from flush()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif line.lstrip().startswith("{") and not data:
            try:
                value = json.loads(line)
            except ValueError as err:
                diagnostics.append(f"log line is not JSON ({err})")
            except RecursionError:
                diagnostics.append("log line is nested too deeply")
            else:
                yield value
    yield from flush()
