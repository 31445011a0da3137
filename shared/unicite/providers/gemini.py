"""Gemini and Vertex AI: `groundingMetadata` and `citationMetadata` of ``GenerateContentResponse``.

Reads REST (camelCase) and SDK (snake_case) shapes alike, final responses and stream chunks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from unicite._data import to_plain
from unicite._offsets import OffsetIndex
from unicite.model import Location, PageLocation
from unicite.providers._base import Provider, RebuildingStream
from unicite.providers._builder import AnswerBuilder

__all__ = ["GEMINI", "GeminiProvider", "GeminiStream"]

# Values of these fields are the caller's own data (function arguments, tool output): their keys
# are never renamed.
_OPAQUE_FIELDS = frozenset({"args", "response", "partMetadata"})

# Response fields read here, or SDK-side helpers that are not provider data.
_RESPONSE_FIELDS = frozenset(
    {"candidates", "modelVersion", "sdkHttpResponse", "automaticFunctionCallingHistory", "parsed"}
)
_CANDIDATE_FIELDS = frozenset({"content", "groundingMetadata", "citationMetadata", "index"})
_GROUNDING_FIELDS = frozenset(
    {
        "groundingChunks",
        "groundingSupports",
        "webSearchQueries",
        "searchEntryPoint",
        "retrievalMetadata",
    }
)
_SEARCH_RAN_FIELDS = ("webSearchQueries", "retrievalQueries", "imageSearchQueries")
# Fields of a response (not of its candidates), in the camelCase the reader normalises to.
_TOP_LEVEL_FIELDS = _RESPONSE_FIELDS | {
    "usageMetadata",
    "promptFeedback",
    "responseId",
    "createTime",
    "modelStatus",
}
_CANDIDATE_METADATA_KEYS = (
    "groundingMetadata",
    "grounding_metadata",
    "citationMetadata",
    "citation_metadata",
)
_GROUNDING_KEYS = ("grounding_metadata", "groundingMetadata")

_TEXT_PART_FIELDS = frozenset({"text", "thought", "thoughtSignature"})
_PAYLOAD_PART_FIELDS = frozenset(
    {
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
        "toolCall",
        "toolResponse",
    }
)
_METADATA_PART_FIELDS = frozenset(
    {
        "videoMetadata",
        "mediaResolution",
        "partMetadata",
        "audioTranscription",
        "mediaProcessing",
        "speechMetadata",
        "documentMetadata",
        "spreadsheetMetadata",
        "audioMetadata",
    }
)
_PART_FIELDS = _TEXT_PART_FIELDS | _PAYLOAD_PART_FIELDS | _METADATA_PART_FIELDS

_CHUNK_KINDS = ("web", "retrievedContext", "maps", "image")

_CAMEL_RE = re.compile(r"_([a-z0-9])")
_SNAKE_RE = re.compile(r"(?<=[a-z0-9])([A-Z])")


# --- one shape for REST, SDK JSON dumps and SDK python dumps -----------------------------------


@functools.lru_cache(maxsize=2048)
def _camel(key: str) -> str:
    return _CAMEL_RE.sub(lambda m: m.group(1).upper(), key) if "_" in key else key


def _snake(key: str) -> str:
    return _SNAKE_RE.sub(r"_\1", key).lower()


def _plain(value: Any) -> Any:
    """REST-shaped copy of `value`: camelCase keys, no nulls, other values as `to_plain` makes them.

    The SDK's ``model_dump()`` gives snake_case keys and a null for every unset field; the REST
    API and ``model_dump(by_alias=True)`` give camelCase. Reading one shape makes them all give
    equal answers (``raw`` and extras included).
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is dict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                continue
            name = _camel(key) if isinstance(key, str) else str(key)
            if name in out and name != key:
                continue  # the camelCase spelling of a field wins over its snake_case twin
            out[name] = to_plain(item) if name in _OPAQUE_FIELDS else _plain(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    plain = to_plain(value)
    return _plain(plain) if isinstance(plain, (dict, list)) else plain


def _looks_like_response(data: Mapping[str, Any]) -> bool:
    if isinstance(data.get("candidates"), list):
        return True
    return any(
        isinstance(data.get(key), Mapping)
        for key in ("promptFeedback", "prompt_feedback", "usageMetadata", "usage_metadata")
    )


def _looks_like_candidate(data: Mapping[str, Any]) -> bool:
    """A bare candidate: model content (a ``parts`` list or a role) or candidate metadata."""
    if "candidates" in data:
        return False
    content = data.get("content")
    if isinstance(content, Mapping) and ("parts" in content or "role" in content):
        return True
    return any(isinstance(data.get(key), Mapping) for key in _CANDIDATE_METADATA_KEYS)


def _as_response(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A normalised response; a bare candidate wrapped, its response-level fields lifted out."""
    if not _looks_like_candidate(data):
        return data
    top = {key: value for key, value in data.items() if key in _TOP_LEVEL_FIELDS}
    candidate = {key: value for key, value in data.items() if key not in _TOP_LEVEL_FIELDS}
    return {**top, "candidates": [candidate]}


def _is_empty(value: Any) -> bool:
    return isinstance(value, (Mapping, list, str)) and not value


def _type_name(value: Any) -> str:
    return type(value).__name__


# --- reading one response -----------------------------------------------------------------------


class _TextPart:
    """One answer-text part: where it starts in the joined text, and its byte offsets."""

    __slots__ = ("_index", "offset", "text")

    def __init__(self, offset: int, text: str) -> None:
        self.offset = offset
        self.text = text
        self._index: OffsetIndex | None = None

    @property
    def index(self) -> OffsetIndex:
        if self._index is None:
            self._index = OffsetIndex(self.text)
        return self._index


_ChunkRef = tuple[str | None, Location | None]
"""The surviving source id of a grounding chunk (None when unreadable) and its location."""


class _ResponseReader:
    """Reads one normalised response into a builder."""

    def __init__(self, builder: AnswerBuilder) -> None:
        self.builder = builder
        self.read = builder.read

    def note(self, message: str) -> None:
        self.builder.note(message)

    # -- response and candidate --

    def response(self, data: Mapping[str, Any], candidate: Any) -> None:
        builder = self.builder
        builder.model = self.read.text(data, "modelVersion", "response")
        for key, value in data.items():
            if key not in _RESPONSE_FIELDS and not _is_empty(value):
                builder.extras[_snake(key)] = value
        candidates = self.read.items(data, "candidates", "response")
        if len(candidates) > 1:
            builder.extras["candidate_count"] = len(candidates)
        if isinstance(candidate, bool) or not isinstance(candidate, int):
            self.note(f"candidate must be an integer, got {_type_name(candidate)}")
            return
        if not 0 <= candidate < len(candidates):
            if candidates or candidate != 0:
                self.note(
                    f"candidate {candidate} is out of range: the response has "
                    f"{len(candidates)} candidate(s)"
                )
            elif "promptFeedback" not in data:
                self.note("response has no candidates")
            return
        chosen = candidates[candidate]
        path = f"candidates[{candidate}]"
        if not isinstance(chosen, Mapping):
            self.note(f"{path}: expected an object, got {_type_name(chosen)}")
            return
        self.candidate(chosen, path)

    def candidate(self, data: Mapping[str, Any], path: str) -> None:
        for key, value in data.items():
            if key not in _CANDIDATE_FIELDS and not _is_empty(value):
                self.builder.extras[_snake(key)] = value
        content = self.read.obj(data, "content", path)
        parts = self.read.items(content, "parts", f"{path}.content")
        texts = self.parts(parts, f"{path}.content.parts")
        grounding = self.read.obj(data, "groundingMetadata", path)
        if grounding is not None:
            self.grounding(grounding, f"{path}.groundingMetadata", texts)
        recitation = self.read.obj(data, "citationMetadata", path)
        if recitation is not None:
            self.recitations(recitation, f"{path}.citationMetadata")

    def parts(self, parts: list[Any], path: str) -> dict[int, _TextPart]:
        """Append the answer text; keep thoughts and non-text parts in extras."""
        texts: dict[int, _TextPart] = {}
        thoughts: list[str] = []
        others: list[dict[str, Any]] = []
        for n, part in enumerate(parts):
            where = f"{path}[{n}]"
            if not isinstance(part, Mapping):
                self.note(f"{where}: expected an object, got {_type_name(part)}")
                continue
            unknown = sorted(key for key in part if key not in _PART_FIELDS)
            if unknown:
                self.note(f"{where}: unknown part type {', '.join(unknown)}; kept in extras")
            text = self.read.text(part, "text", where)
            thought = part.get("thought", False)
            if not isinstance(thought, bool):
                self.note(f"{where}.thought: expected a boolean, got {_type_name(thought)}")
                thought = False
            if text is not None:
                # As GenerateContentResponse.text: text parts joined with "", thoughts left out.
                if thought:
                    thoughts.append(text)
                else:
                    texts[n] = _TextPart(self.builder.append_text(text), text)
            rest = {key: value for key, value in part.items() if key not in _TEXT_PART_FIELDS}
            if rest:
                others.append({"partIndex": n, **rest})
        if thoughts:
            self.builder.extras["thoughts"] = thoughts
        if others:
            self.builder.extras["non_text_parts"] = others
        return texts

    # -- groundingMetadata --

    def grounding(self, data: Mapping[str, Any], path: str, texts: dict[int, _TextPart]) -> None:
        builder = self.builder
        chunks = self.read.items(data, "groundingChunks", path)
        supports = self.read.items(data, "groundingSupports", path)
        queries = self.strings(data, "webSearchQueries", path)
        entry = self.read.obj(data, "searchEntryPoint", path)
        retrieval = self.read.obj(data, "retrievalMetadata", path)
        for key, value in data.items():
            if key not in _GROUNDING_FIELDS and not _is_empty(value):
                builder.extras[_snake(key)] = value
        if queries:
            builder.extras["web_search_queries"] = queries
        if entry is not None:
            # Google requires showing these Search Suggestions wherever the answer is shown.
            rendered = self.read.text(entry, "renderedContent", f"{path}.searchEntryPoint")
            if rendered:
                builder.extras["search_entry_point"] = rendered
            blob = entry.get("sdkBlob")
            if blob:
                builder.extras["search_entry_point_sdk_blob"] = blob
        if retrieval:
            builder.extras["retrieval_metadata"] = dict(retrieval)
        if (
            chunks
            or supports
            or entry is not None
            or any(not _is_empty(data.get(key, [])) for key in _SEARCH_RAN_FIELDS)
        ):
            builder.grounded = True
        refs = [
            self.chunk(chunk, n, f"{path}.groundingChunks[{n}]") for n, chunk in enumerate(chunks)
        ]
        for n, support in enumerate(supports):
            self.support(support, f"{path}.groundingSupports[{n}]", refs, texts)

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> list[str]:
        values = []
        for n, value in enumerate(self.read.items(data, key, path)):
            if isinstance(value, str):
                values.append(value)
            else:
                self.note(f"{path}.{key}[{n}]: expected a string, got {_type_name(value)}")
        return values

    def chunk(self, chunk: Any, rank: int, where: str) -> _ChunkRef:
        if not isinstance(chunk, Mapping):
            self.note(f"{where}: expected an object, got {_type_name(chunk)}")
            return None, None
        kind = next((k for k in _CHUNK_KINDS if k in chunk), None)
        if kind is None:
            shown = ", ".join(sorted(chunk)) or "an empty chunk"
            self.note(f"{where}: unknown grounding chunk type ({shown}); kept in extras")
            self.builder.extras.setdefault("unknown_grounding_chunks", []).append(
                {"index": rank, "chunk": dict(chunk)}
            )
            return None, None
        body = self.read.obj(chunk, kind, where)
        if body is None:
            return None, None
        where = f"{where}.{kind}"
        if kind == "retrievedContext":
            return self.retrieved_context(body, chunk, rank, where)
        if kind == "maps":
            return self.place(body, chunk, rank, where), None
        if kind == "image":
            url = self.read.text(body, "sourceUri", where)
            fields = ("sourceUri", "title", "domain")
        else:
            url = self.read.text(body, "uri", where)
            fields = ("uri", "title", "domain")
        if not url:
            self.note(f"{where}: no uri to cite")
            return None, None
        source = {
            "kind": "web",
            "url": url,
            "title": self.read.text(body, "title", where),
            "domain": self.read.text(body, "domain", where) or None,
            "rank": rank,
            "extras": self.rest(body, fields),
            "raw": dict(chunk),
        }
        return self.add_source(source, where), None

    def retrieved_context(
        self, body: Mapping[str, Any], chunk: Mapping[str, Any], rank: int, where: str
    ) -> _ChunkRef:
        uri = self.read.text(body, "uri", where)
        title = self.read.text(body, "title", where)
        text = self.read.text(body, "text", where)
        rag = self.read.obj(body, "ragChunk", where)
        if text is None and rag is not None:
            text = self.read.text(rag, "text", f"{where}.ragChunk")
        if not (uri or title or text):
            self.note(f"{where}: retrieved context has no uri, title or text to cite")
            return None, None
        # File Search chunks carry only text (and the store's name): they get content-hash ids,
        # so identical chunks collapse into one source.
        source = {
            "kind": "document",
            "url": uri or None,
            "title": title,
            "content": text or None,
            "rank": rank,
            "extras": self.rest(body, ("uri", "title", "text")),
            "raw": dict(chunk),
        }
        return self.add_source(source, where), self.pages(body, rag, where)

    def pages(
        self, body: Mapping[str, Any], rag: Mapping[str, Any] | None, where: str
    ) -> Location | None:
        first = last = self.read.integer(body, "pageNumber", where)
        span = self.read.obj(rag, "pageSpan", f"{where}.ragChunk")
        if span is not None:
            first = self.read.integer(span, "firstPage", f"{where}.ragChunk.pageSpan")
            last = self.read.integer(span, "lastPage", f"{where}.ragChunk.pageSpan")
        if first is None and last is None:
            return None
        if first is None or last is None or not 1 <= first <= last:
            self.note(f"{where}: page range {first}..{last} is not a 1-based range; dropped")
            return None
        return PageLocation(start_page=first, end_page=last + 1)

    def place(
        self, body: Mapping[str, Any], chunk: Mapping[str, Any], rank: int, where: str
    ) -> str | None:
        uri = self.read.text(body, "uri", where)
        title = self.read.text(body, "title", where)
        place_id = self.read.text(body, "placeId", where)
        text = self.read.text(body, "text", where)
        if not (uri or title or place_id):
            self.note(f"{where}: place has no uri, title or placeId to cite")
            return None
        source = {
            "kind": "place",
            "url": uri or None,
            "title": title,
            "provider_id": place_id or None,
            "content": text or None,
            "rank": rank,
            "extras": self.rest(body, ("uri", "title", "placeId", "text")),
            "raw": dict(chunk),
        }
        return self.add_source(source, where)

    @staticmethod
    def rest(body: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
        return {_snake(key): value for key, value in body.items() if key not in known}

    def add_source(self, source: dict[str, Any], where: str) -> str | None:
        try:
            return self.builder.add_source(source)
        except ValidationError as err:
            self.note(f"{where}: not a valid source ({err.error_count()} problem(s)); dropped")
            return None

    def support(
        self, support: Any, where: str, refs: list[_ChunkRef], texts: dict[int, _TextPart]
    ) -> None:
        if not isinstance(support, Mapping):
            self.note(f"{where}: expected an object, got {_type_name(support)}")
            return
        indices = self.read.items(support, "groundingChunkIndices", where)
        scores = self.read.items(support, "confidenceScores", where)
        ids: list[str] = []
        location: Location | None = None
        for n, value in enumerate(indices):
            at = f"{where}.groundingChunkIndices[{n}]"
            if isinstance(value, bool) or not isinstance(value, int):
                self.note(f"{at}: expected an integer, got {_type_name(value)}")
                continue
            if not 0 <= value < len(refs):
                self.note(f"{at}: chunk {value} is out of range ({len(refs)} grounding chunks)")
                continue
            source_id, chunk_location = refs[value]
            if source_id is not None:
                if not ids:
                    location = chunk_location
                ids.append(source_id)
        numbers: list[float] = []
        for n, value in enumerate(scores):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.note(
                    f"{where}.confidenceScores[{n}]: expected a number, got {_type_name(value)}"
                )
            else:
                numbers.append(float(value))
        if scores and len(scores) != len(indices):
            self.note(f"{where}: {len(scores)} confidence scores for {len(indices)} chunk indices")
        extras: dict[str, Any] = {}
        if numbers:
            extras["confidence_scores"] = numbers
        extras.update(self.rest(support, ("segment", "groundingChunkIndices", "confidenceScores")))
        span = self.segment(self.read.obj(support, "segment", where), f"{where}.segment", texts)
        if span is None:
            return
        if not ids:
            self.note(f"{where}: cites no readable grounding chunk")
            return
        self.builder.cite(
            span[0],
            span[1],
            ids,
            location=location,
            confidence=max(numbers) if numbers else None,
            extras=extras,
            raw=dict(support),
            where=where,
        )

    def segment(
        self, segment: Mapping[str, Any] | None, where: str, texts: dict[int, _TextPart]
    ) -> tuple[int, int] | None:
        """The str span of a segment in the joined answer text.

        Gemini segment indices are UTF-8 byte offsets within the part named by ``partIndex``
        (in streams: within the text of all chunks, which the stream reader joins into one part).
        """
        if segment is None:
            self.note(f"{where}: missing")
            return None
        text = self.read.text(segment, "text", where)
        part_index = self.read.integer(segment, "partIndex", where)
        start = self.read.integer(segment, "startIndex", where)
        end = self.read.integer(segment, "endIndex", where)
        # Proto3 JSON leaves zero values out: a missing startIndex is 0, and a missing partIndex
        # names part 0 (or, when part 0 is a thought or a call, the first text part).
        if part_index is None:
            part = texts.get(0) or next(iter(texts.values()), None)
        else:
            part = texts.get(part_index)
        start = 0 if start is None else start
        if part is None:
            problem = f"partIndex {part_index or 0} is not an answer text part"
        elif end is None:
            problem = "no endIndex"
        elif not 0 <= start <= end <= part.index.byte_length:
            problem = (
                f"byte offsets {start}..{end} do not fit the part ({part.index.byte_length} bytes)"
            )
        elif not (
            part.index.is_char_boundary_bytes(start) and part.index.is_char_boundary_bytes(end)
        ):
            problem = f"byte offsets {start}..{end} fall inside a character"
        else:
            first, last = part.index.from_bytes(start), part.index.from_bytes(end)
            found = part.text[first:last]
            if text is not None and found != text:
                self.note(
                    f"{where}: text {_short(text)} differs from {_short(found)} at bytes "
                    f"{start}..{end}; the offsets are kept"
                )
            return part.offset + first, part.offset + last
        if not text:
            self.note(f"{where}: {problem}, and no segment text to locate")
            return None
        located = self.locate(text, part, start)
        if located is None:
            self.note(f"{where}: {problem}, and its text {_short(text)} is not in the answer")
            return None
        self.note(f"{where}: {problem}; located its text at {located[0]}..{located[1]} instead")
        return located

    def locate(
        self, needle: str, part: _TextPart | None, start_byte: int
    ) -> tuple[int, int] | None:
        """Where `needle` occurs nearest to a byte offset: in the part first, else anywhere."""
        candidates: list[tuple[str, int, OffsetIndex | None]] = []
        if part is not None:
            candidates.append((part.text, part.offset, part.index))
        candidates.append((self.builder.text, 0, None))
        for haystack, base, index in candidates:
            best: tuple[int, int] | None = None
            pos = haystack.find(needle)
            while pos != -1:
                distance = abs((index.to_bytes(pos) if index else pos) - start_byte)
                if best is None or distance < best[0]:
                    best = (distance, pos)
                pos = haystack.find(needle, pos + 1)
            if best is not None:
                return base + best[1], base + best[1] + len(needle)
        return None

    # -- citationMetadata (recitation) --

    def recitations(self, data: Mapping[str, Any], path: str) -> None:
        key = "citations" if "citations" in data else "citationSources"
        entries = self.read.items(data, key, path)
        path = f"{path}.{key}"
        empty = 0
        index: OffsetIndex | None = None
        for n, entry in enumerate(entries):
            where = f"{path}[{n}]"
            if not isinstance(entry, Mapping):
                self.note(f"{where}: expected an object, got {_type_name(entry)}")
                continue
            if not entry:
                empty += 1
                continue
            uri = self.read.text(entry, "uri", where)
            title = self.read.text(entry, "title", where)
            start = self.read.integer(entry, "startIndex", where)
            end = self.read.integer(entry, "endIndex", where)
            extras = self.rest(entry, ("uri", "title", "startIndex", "endIndex"))
            source_id = None
            if uri or title:
                source = {
                    "kind": "web" if uri else "document",
                    "url": uri or None,
                    "title": title,
                    "extras": extras,
                    "raw": dict(entry),
                }
                source_id = self.add_source(source, where)
            if start is None and end is None:
                if not (uri or title):
                    self.note(f"{where}: no uri, title or indices")
                continue
            if source_id is None:
                self.note(f"{where}: indices without a uri or title to cite")
                continue
            if index is None:
                index = OffsetIndex(self.builder.text)
            # Recitation indices are UTF-8 byte offsets into the candidate's text.
            start = 0 if start is None else start
            if (
                end is None
                or not 0 <= start <= end <= index.byte_length
                or not index.is_char_boundary_bytes(start)
                or not index.is_char_boundary_bytes(end)
            ):
                self.note(
                    f"{where}: byte offsets {start}..{end} do not fit the answer text "
                    f"({index.byte_length} bytes)"
                )
                continue
            self.builder.cite(
                index.from_bytes(start),
                index.from_bytes(end),
                [source_id],
                extras={"recitation": True, **extras},
                raw=dict(entry),
                where=where,
            )
        if empty:
            self.note(f"{path}: skipped {empty} empty citation entr{'y' if empty == 1 else 'ies'}")


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


# --- streams ------------------------------------------------------------------------------------


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
        and all(key in _TEXT_PART_FIELDS for key in part)
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


# --- content as frameworks keep it -------------------------------------------------------------


def _part(block: Any) -> dict[str, Any] | None:
    """One ``Part`` of the candidate, from a content item (a part, or a typed block made of one)."""
    if isinstance(block, str):
        return {"text": block}
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind is None:
        return dict(block)
    if kind == "text":
        text = block.get("text")
        return {"text": text if isinstance(text, str) else ""}
    if kind in ("thinking", "reasoning"):
        thought = block.get("thinking", block.get("reasoning"))
        return {"text": thought if isinstance(thought, str) else "", "thought": True}
    if kind == "executable_code":
        return {
            "executableCode": {
                "code": block.get("executable_code"),
                "language": block.get("language"),
            }
        }
    if kind == "code_execution_result":
        return {
            "codeExecutionResult": {
                "output": block.get("code_execution_result"),
                "outcome": block.get("outcome"),
            }
        }
    if kind in ("image_url", "image"):
        return {"inlineData": {"mimeType": block.get("mime_type", "image/*")}}
    return None


def _grounding_from_v1(blocks: list[Any]) -> dict[str, Any] | None:
    """Grounding metadata rebuilt from LangChain's standard (v1) Gemini citations.

    Each ``citation`` annotation keeps its chunk index, search queries and scores in
    ``extras["google_ai_metadata"]`` and its segment's offsets (still UTF-8 bytes) in its
    ``start_index`` / ``end_index``; annotations of one segment become one support.
    """
    chunks: dict[int, dict[str, Any]] = {}
    supports: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    queries: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            continue
        annotations = block.get("annotations")
        for ann in annotations if isinstance(annotations, list) else []:
            if not isinstance(ann, Mapping) or ann.get("type") != "citation":
                continue
            extras = ann.get("extras")
            google = extras.get("google_ai_metadata") if isinstance(extras, Mapping) else None
            if not isinstance(google, Mapping):
                continue
            index = google.get("grounding_chunk_index")
            if not isinstance(index, int) or isinstance(index, bool):
                continue
            chunks.setdefault(index, {"web": {"uri": ann.get("url"), "title": ann.get("title")}})
            for query in google.get("web_search_queries") or []:
                if isinstance(query, str) and query not in queries:
                    queries.append(query)
            key = (ann.get("start_index"), ann.get("end_index"), ann.get("cited_text"))
            support = supports.setdefault(
                key,
                {
                    "segment": {"start_index": key[0], "end_index": key[1], "text": key[2]},
                    "grounding_chunk_indices": [],
                },
            )
            support["grounding_chunk_indices"].append(index)
            scores = google.get("confidence_scores")
            if scores:
                support["confidence_scores"] = scores
    if not chunks:
        return None
    listed = [chunks.get(n, {}) for n in range(max(chunks) + 1)]
    return {
        "grounding_chunks": listed,
        "grounding_supports": list(supports.values()),
        "web_search_queries": queries,
    }


def _field(fields: Mapping[str, Any], snake: str) -> Any:
    value = fields.get(snake)
    return value if value is not None else fields.get(_camel(snake))


def _content_response(content: str | list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``GenerateContentResponse`` of one candidate kept as content items plus fields."""
    blocks = [content] if isinstance(content, str) else content
    parts = [part for part in map(_part, blocks) if part is not None]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    grounding = _field(fields, "grounding_metadata")
    if grounding is None:
        grounding = _grounding_from_v1(blocks)
    if grounding is not None:
        candidate["groundingMetadata"] = grounding
    for key in ("citation_metadata", "finish_reason"):
        value = _field(fields, key)
        if value is not None:
            candidate[_camel(key)] = value
    response: dict[str, Any] = {"candidates": [candidate]}
    model = next(
        (
            value
            for value in map(fields.get, ("model", "model_version", "modelVersion"))
            if isinstance(value, str) and value
        ),
        None,
    )
    if model:
        response["modelVersion"] = model
    return response


class GeminiStream(RebuildingStream):
    """Rebuilds the final response from ``generateContent`` stream chunks.

    Text arrives in pieces and grounding on late chunks, whose segment offsets index the text of
    all chunks together; `finish` reads the rebuilt response exactly as a final one. Chunks may
    be bare candidates too, as frameworks keep them.
    """

    def __init__(self, provider: Provider | None = None, **options: Any) -> None:
        super().__init__(provider or GEMINI, **options)
        self._top: dict[str, Any] = {}
        self._candidates: dict[int, dict[str, Any]] = {}
        self._finished: set[int] = set()
        self._blocked = False

    def response(self) -> dict[str, Any]:
        """The final response the chunks so far add up to."""
        response = dict(self._top)
        if self._candidates:
            response["candidates"] = [
                _joined(self._candidates[n]) for n in sorted(self._candidates)
            ]
        return response

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one chunk; True when it brings grounding, recitations or a finish."""
        chunk = _plain(event)
        if not isinstance(chunk, Mapping):
            self.diagnostics.append(f"stream chunk is a {_type_name(chunk)}, not an object")
            return False
        chunk = _as_response(chunk)
        for key, value in chunk.items():
            if key != "candidates":
                self._top[key] = value
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self._blocked = True
        candidates = chunk.get("candidates", [])
        if not isinstance(candidates, list):
            self.diagnostics.append(
                f"stream chunk candidates: expected a list, got {_type_name(candidates)}"
            )
            return False
        settled = False
        for position, candidate in enumerate(candidates):
            if not isinstance(candidate, Mapping):
                self.diagnostics.append(
                    f"stream chunk candidates[{position}]: expected an object, "
                    f"got {_type_name(candidate)}"
                )
                continue
            number = candidate.get("index", 0)
            if isinstance(number, bool) or not isinstance(number, int):
                number = position
            _merge_candidate(self._candidates.setdefault(number, {}), candidate)
            if "finishReason" in candidate:
                self._finished.add(number)
            settled = settled or any(
                key in candidate
                for key in ("groundingMetadata", "citationMetadata", "finishReason")
            )
        return settled

    def problems(self) -> list[str]:
        """Candidates that never got their finishReason (a blocked prompt has none)."""
        unfinished = [n for n in sorted(self._candidates) if n not in self._finished]
        if self._blocked or not unfinished:
            return []
        return [
            "stream ended before a chunk with finishReason for candidate(s) "
            f"{', '.join(map(str, unfinished))}: the answer may be cut short"
        ]


class GeminiProvider(Provider):
    """Gemini API and Vertex AI ``GenerateContentResponse`` (google-genai objects, REST JSON).

    A bare candidate reads as a response holding only it, with any response-level fields
    (``usageMetadata``, ``modelVersion``...) merged into it kept at the response level: that is
    how frameworks keep a Gemini answer (LlamaIndex's ``raw``, each streamed chunk included).
    """

    name = "gemini"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A response (a ``candidates`` list, or only prompt feedback or usage), or a candidate."""
        return _looks_like_response(data) or _looks_like_candidate(data)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Stream chunks are whole responses (or bare candidates)."""
        return _looks_like_response(event) or _looks_like_candidate(event)

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Read the candidate chosen by ``candidate=`` (the first by default)."""
        response = _plain(data)
        if not isinstance(response, Mapping):
            builder.note(f"expected a response object, got {_type_name(response)}")
            return
        _ResponseReader(builder).response(_as_response(response), options.get("candidate", 0))

    def stream(self, **options: Any) -> GeminiStream:
        """A reader of ``generateContent`` stream chunks."""
        return GeminiStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The response a framework's content items and candidate fields came from.

        Content items are the candidate's parts, as Gemini writes them or as typed blocks
        (``text``, ``thinking``, ``executable_code``, ``code_execution_result``, ``image``);
        ``fields``: ``grounding_metadata``, ``citation_metadata``, ``finish_reason`` (either
        spelling) and ``model``. Without grounding metadata, LangChain's standard (v1) citations
        give it back from what they keep in ``extras["google_ai_metadata"]``.
        """
        return _content_response(content, fields)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Fields holding grounding metadata."""
        return any(fields.get(key) is not None for key in _GROUNDING_KEYS)


GEMINI = GeminiProvider()
"""The Gemini / Vertex AI reader registered with the dispatcher."""
