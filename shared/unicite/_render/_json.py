"""JSON rendering: the canonical `CitedAnswer` JSON, safe to print to a terminal."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel

from unicite._schema import json_schema
from unicite.model import CitedAnswer

__all__ = ["render_json"]

# JSON may carry these raw inside strings; a terminal could act on C1 controls and bidi
# overrides, and cannot encode lone surrogates, so they are written as \u escapes instead
# (the decoded data is unchanged).
_UNSAFE_RE = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


_M = TypeVar("_M", bound=BaseModel)


def _without_raw(items: list[_M]) -> list[_M]:
    return [
        item.model_copy(update={"raw": None}) if getattr(item, "raw", None) is not None else item
        for item in items
    ]


def _fallback(value: object) -> str:
    return f"<{type(value).__name__}>"


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def render_json(answer: CitedAnswer, *, schema: bool) -> str:
    """``answer.to_json(indent=2)`` with every ``raw`` field null, optionally with the schema.

    ``raw`` holds untouched provider objects for forensics and is never rendered; an answer
    read back with `CitedAnswer.from_json` is otherwise equal to the original, lone surrogates
    included (they are written as escapes).
    """
    update = {"sources": _without_raw(answer.sources), "citations": _without_raw(answer.citations)}
    clean = answer.model_copy(update=update)
    try:
        text = clean.to_json(indent=2)
    except Exception:  # lone surrogates or unserialisable extras: rendering never raises
        text = json.dumps(clean.model_dump(), indent=2, ensure_ascii=False, default=_fallback)
        # Lone surrogates cannot be encoded; they become U+FFFD, as on display.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if schema:
        wrapped = {"schema": json_schema(), "answer": json.loads(text)}
        text = json.dumps(wrapped, indent=2, ensure_ascii=False)
    return _UNSAFE_RE.sub(_escape, text)
