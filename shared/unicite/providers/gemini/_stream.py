"""``streamGenerateContent``: chunks merged back into the final response.

`SettlingStream` reads a rebuilt response while its text may still grow: `GeminiStream` (in
`_provider`, beside the `GEMINI` it reads with by default) and the Interactions API's stream
build on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.providers._base import CitationEvent, Provider, RebuildingStream
from unicite.providers._builder import AnswerBuilder
from unicite.providers.shapes import GEMINI_TEXT_PART_FIELDS

__all__ = ["SettlingStream"]


def _merge_list(old: list[Any], new: list[Any]) -> list[Any]:
    # Chunks may repeat what earlier chunks sent (accumulated) or send only what is new.
    if new[: len(old)] == old:
        return new
    if old[: len(new)] == new:
        return old
    return old + new


def _merge_objects(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        previous = out.get(key)
        if isinstance(previous, list) and isinstance(value, list):
            out[key] = _merge_list(previous, value)
        elif isinstance(previous, Mapping) and isinstance(value, Mapping):
            out[key] = {**previous, **value}
        else:
            out[key] = value
    return out


def _is_text_part(part: Any) -> bool:
    return (
        isinstance(part, Mapping)
        and isinstance(part.get("text"), str)
        and all(key in GEMINI_TEXT_PART_FIELDS for key in part)
    )


class _StreamedText:
    """A text part being streamed: its fields, and its text pieces joined only when read.

    Adding each piece to the text so far would copy the whole text once per chunk.
    """

    __slots__ = ("fields", "pieces")

    def __init__(self, part: Mapping[str, Any]) -> None:
        self.fields = dict(part)
        self.pieces = [part["text"]]

    def add(self, part: Mapping[str, Any]) -> None:
        self.fields.update(part)
        self.pieces.append(part["text"])

    def thought(self) -> bool:
        return bool(self.fields.get("thought"))

    def value(self) -> dict[str, Any]:
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return {**self.fields, "text": self.pieces[0]}


def _merge_parts(old: list[Any], new: list[Any]) -> list[Any]:
    """Join streamed text pieces into parts; other parts (calls, code) stay parts of their own."""
    parts = list(old)
    for part in new:
        last = parts[-1] if parts else None
        streamed = None
        if isinstance(last, _StreamedText):
            streamed = last
        elif isinstance(last, Mapping) and _is_text_part(last):
            streamed = _StreamedText(last)
        if (
            streamed is not None
            and _is_text_part(part)
            and streamed.thought() == bool(part.get("thought"))
        ):
            parts[-1] = streamed
            streamed.add(part)
        else:
            parts.append(part)
    return parts


def _joined(candidate: dict[str, Any]) -> dict[str, Any]:
    """The merged candidate with its streamed text parts as plain parts."""
    content = candidate.get("content")
    if not isinstance(content, Mapping):
        return candidate
    parts = content.get("parts")
    if not isinstance(parts, list) or not any(isinstance(p, _StreamedText) for p in parts):
        return candidate
    plain = [p.value() if isinstance(p, _StreamedText) else p for p in parts]
    return {**candidate, "content": {**content, "parts": plain}}


def _merge_candidate(merged: dict[str, Any], chunk: Mapping[str, Any]) -> None:
    for key, value in chunk.items():
        previous = merged.get(key)
        if key == "content" and isinstance(previous, Mapping) and isinstance(value, Mapping):
            content = dict(previous)
            for name, item in value.items():
                if (
                    name == "parts"
                    and isinstance(content.get(name), list)
                    and isinstance(item, list)
                ):
                    content[name] = _merge_parts(content[name], item)
                else:
                    content[name] = item
            merged[key] = content
        elif (
            key in ("groundingMetadata", "citationMetadata")
            and isinstance(previous, Mapping)
            and isinstance(value, Mapping)
        ):
            merged[key] = _merge_objects(previous, value)
        else:
            merged[key] = value


class SettlingStream(RebuildingStream):
    """A rebuilding stream whose text may still grow: announced claims never end in a word.

    While announcing, the rebuilt response is read with ``settling=True`` (a claim ending
    where the text so far ends waits for the next chunk) until `_growing` says the text is
    complete; `finish` reads it as a final one.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._settling = False

    def _growing(self) -> bool:
        """Whether the text read may still grow."""
        raise NotImplementedError

    def read(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt response; while announcing, as a text that may still grow."""
        settling = self._settling and self._growing()
        options = {**self.options, "settling": True} if settling else self.options
        self.provider.read(self.response(), builder, **options)

    def announce(self) -> list[CitationEvent]:
        """Citations settled so far: one ending where the text so far does waits for the rest."""
        self._settling = True
        try:
            return super().announce()
        finally:
            self._settling = False
