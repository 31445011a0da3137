"""Reading one ``GenerateContentResponse``: its candidate's text, grounding and recitations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import ValidationError

from unicite._offsets import OffsetIndex
from unicite._urls import domain_hint
from unicite.model import Location, PageLocation
from unicite.providers._builder import AnswerBuilder
from unicite.providers.gemini._keys import EXTRA_KEYS, Entry, entries_of, read_entry
from unicite.providers.gemini._shape import (
    _CANDIDATE_FIELDS,
    _CHUNK_KINDS,
    _GROUNDING_FIELDS,
    _RESPONSE_FIELDS,
    _SEARCH_RAN_FIELDS,
    _is_empty,
    _short,
    _snake,
    _type_name,
)
from unicite.providers.gemini._words import inside_word, widen_to_words
from unicite.providers.shapes import GEMINI_PART_FIELDS, GEMINI_TEXT_PART_FIELDS

__all__ = ["ResponseReader", "TextPart", "add_source", "claim_span", "set_grounding_extras"]


class TextPart:
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


class _Span(NamedTuple):
    """A claim's str span, and the provider's own span when it was widened to whole words."""

    start: int
    end: int
    provider: tuple[int, int] | None


def claim_span(
    builder: AnswerBuilder,
    start: int,
    end: int,
    where: str,
    *,
    settling: bool = False,
    low: int = 0,
    high: int | None = None,
) -> _Span | None:
    """``start..end`` widened to whole words (see `unicite.providers.gemini._words`).

    `low` and `high` bound the widening (the part or block the span belongs to). None, with a
    diagnostic, when a word is too long to widen to; None without one when `settling` (a
    stream's text may still grow) and the claim ends where the text does, inside what may be a
    word.
    """
    text = builder.text
    if (
        settling
        and end == len(text)
        and end > start
        and (text[end - 1].isalnum() or inside_word(text[end - 2 : end] + "0", min(end, 2)))
    ):
        return None
    widened = widen_to_words(text, start, end, low, high)
    if widened is None:
        builder.note(
            f"{where}: span {start}..{end} falls inside a word too long to widen to; left uncited"
        )
        return None
    if widened == (start, end):
        return _Span(start, end, None)
    return _Span(widened[0], widened[1], (start, end))


def add_source(builder: AnswerBuilder, source: dict[str, Any], where: str) -> str | None:
    """Add a source; None, with a diagnostic, when it is not a valid one."""
    try:
        return builder.add_source(source)
    except ValidationError as err:
        builder.note(f"{where}: not a valid source ({err.error_count()} problem(s)); dropped")
        return None


def set_grounding_extras(builder: AnswerBuilder, tool_calls: int) -> None:
    """``grounded_effective`` and ``tool_calls``: what a REQUIRED-grounding router checks."""
    builder.extras["grounded_effective"] = builder.grounded
    builder.extras["tool_calls"] = tool_calls


_TOOL_CALL_PARTS = ("functionCall", "executableCode", "toolCall")


def _indices(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


class ResponseReader:
    """Reads one normalised response into a builder.

    ``settling``: the response is a stream's so far, whose text may still grow; citations ending
    where the text does, inside what may be a word, wait for the rest.
    """

    def __init__(self, builder: AnswerBuilder, *, settling: bool = False) -> None:
        self.builder = builder
        self.read = builder.read
        self.settling = settling
        self.tool_calls = 0
        self.tools_seen: set[str] = set()

    def note(self, message: str) -> None:
        self.builder.note(message)

    # -- response and candidate --

    def response(self, data: Mapping[str, Any], candidate: Any) -> None:
        self.chosen(data, candidate)
        set_grounding_extras(self.builder, self.tool_calls + len(self.tools_seen))

    def chosen(self, data: Mapping[str, Any], candidate: Any) -> None:
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
        attributions = data.get("groundingAttributions")
        if not _is_empty(attributions) and attributions is not None:
            # The Gemini API puts generateAnswer's attributions on the candidate itself.
            entries = self.read_entries("groundingAttributions", attributions, path)
            whole = self.entries(entries, texts)
            self.whole_answer(whole, f"{path}.groundingAttributions")
        url_context = data.get("urlContextMetadata")
        if isinstance(url_context, Mapping) and not _is_empty(url_context.get("urlMetadata", [])):
            self.tools_seen.add("url_context")
        recitation = self.read.obj(data, "citationMetadata", path)
        if recitation is not None:
            self.recitations(recitation, f"{path}.citationMetadata")

    def parts(self, parts: list[Any], path: str) -> dict[int, TextPart]:
        """Append the answer text; keep thoughts and non-text parts in extras."""
        texts: dict[int, TextPart] = {}
        thoughts: list[str] = []
        others: list[dict[str, Any]] = []
        for n, part in enumerate(parts):
            where = f"{path}[{n}]"
            if not isinstance(part, Mapping):
                self.note(f"{where}: expected an object, got {_type_name(part)}")
                continue
            unknown = sorted(key for key in part if key not in GEMINI_PART_FIELDS)
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
                    texts[n] = TextPart(self.builder.append_text(text), text)
            rest = {key: value for key, value in part.items() if key not in GEMINI_TEXT_PART_FIELDS}
            self.tool_calls += sum(1 for key in _TOOL_CALL_PARTS if key in rest)
            if rest:
                others.append({"partIndex": n, **rest})
        if thoughts:
            self.builder.extras["thoughts"] = thoughts
        if others:
            self.builder.extras["non_text_parts"] = others
        return texts

    # -- groundingMetadata --

    def grounding(self, data: Mapping[str, Any], path: str, texts: dict[int, TextPart]) -> None:
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
        self.count_tools(data, chunks, entry)
        # Entries of the other grounding keys first: they may name the end-site URL behind a
        # chunk's redirect.
        entries: list[tuple[str, str, int, Entry]] = []
        for key in EXTRA_KEYS:
            value = data.get(key)
            if value is None or _is_empty(value) or _indices(value):
                # A list of integers points at grounding chunks: nothing new to read.
                continue
            entries.extend(self.read_entries(key, value, path))
        resolved = {e.redirect: e.source for *_, e in entries if e.redirect is not None}
        refs = [
            self.chunk(chunk, n, f"{path}.groundingChunks[{n}]", resolved)
            for n, chunk in enumerate(chunks)
        ]
        for n, support in enumerate(supports):
            self.support(support, f"{path}.groundingSupports[{n}]", refs, texts)
        self.whole_answer(self.entries(entries, texts), f"{path}.groundingAttributions")

    def count_tools(
        self, data: Mapping[str, Any], chunks: list[Any], entry: Mapping[str, Any] | None
    ) -> None:
        """Note which grounding tools ran: the response shows their queries, not their calls."""
        kinds = {
            next((k for k in _CHUNK_KINDS if k in c), None)
            for c in chunks
            if isinstance(c, Mapping)
        }
        if data.get("webSearchQueries") or "web" in kinds or entry is not None:
            self.tools_seen.add("google_search")
        if data.get("retrievalQueries") or "retrievedContext" in kinds:
            self.tools_seen.add("retrieval")
        if "maps" in kinds or data.get("googleMapsWidgetContextToken"):
            self.tools_seen.add("google_maps")
        if data.get("imageSearchQueries") or "image" in kinds:
            self.tools_seen.add("image_search")

    def read_entries(self, key: str, value: Any, path: str) -> list[tuple[str, str, int, Entry]]:
        """The entries one grounding key holds, each with its key, path and rank."""
        found = []
        for rank, (at, item) in enumerate(entries_of(key, value)):
            read = read_entry(item)
            if isinstance(read, Entry):
                found.append((key, f"{path}.{at}", rank, read))
            elif key != "retrievalMetadata":
                self.note(f"{path}.{at}: {read}; skipped")
        return found

    def entries(
        self, entries: list[tuple[str, str, int, Entry]], texts: dict[int, TextPart]
    ) -> list[str]:
        """Add the sources of the other grounding keys; cite those with a segment.

        Returns the ids of the Gemini API attributions (``sourceId``), which attribute the whole
        answer rather than a segment of it.
        """
        whole: list[str] = []
        for key, where, rank, entry in entries:
            source = {"rank": rank, **entry.source}
            source.setdefault("extras", {})
            source["extras"] = {"grounding_key": key, **source["extras"]}
            source_id = self.add_source(source, where)
            if source_id is None:
                continue
            self.builder.grounded = True
            if not self.tools_seen:
                self.tools_seen.add("grounding")
            raw = entry.source.get("raw")
            if entry.segment is None and isinstance(raw, Mapping) and "sourceId" in raw:
                whole.append(source_id)
                continue
            if entry.segment is None:
                if isinstance(raw, Mapping) and ("startIndex" in raw or "endIndex" in raw):
                    self.note(
                        f"{where}: startIndex/endIndex without a segment are of no documented "
                        "unit; kept as an uncited source"
                    )
                continue
            span = self.segment(entry.segment, f"{where}.segment", texts)
            if span is None:
                continue
            extras: dict[str, Any] = {"grounding_key": key}
            if span.provider is not None:
                extras["provider_span"] = list(span.provider)
            confidence = entry.confidence
            if confidence is not None and not 0.0 <= confidence <= 1.0:
                confidence = None
            self.builder.cite(
                span.start,
                span.end,
                [source_id],
                confidence=confidence,
                extras=extras,
                raw=raw,
                where=where,
            )
        return whole

    def whole_answer(self, ids: list[str], where: str) -> None:
        """Cite the whole answer with the sources a ``generateAnswer`` attributes it to.

        A Gemini API ``GroundingAttribution`` names a passage or chunk that "contributed to the
        answer", with no segment: like an Anthropic citation of a whole text block, it covers
        the answer's text (its surrounding whitespace left out).
        """
        text = self.builder.text
        start, end = len(text) - len(text.lstrip()), len(text.rstrip())
        if ids and start < end:
            self.builder.cite(
                start,
                end,
                ids,
                extras={"grounding_key": "groundingAttributions", "whole_answer": True},
                where=where,
            )

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> list[str]:
        values = []
        for n, value in enumerate(self.read.items(data, key, path)):
            if isinstance(value, str):
                values.append(value)
            else:
                self.note(f"{path}.{key}[{n}]: expected a string, got {_type_name(value)}")
        return values

    def chunk(
        self, chunk: Any, rank: int, where: str, resolved: Mapping[str, Mapping[str, Any]]
    ) -> _ChunkRef:
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
        title = self.read.text(body, "title", where)
        given = self.read.text(body, "domain", where)
        extras = self.rest(body, fields)
        end_site = resolved.get(url)
        if end_site is not None:
            # Another grounding key names the site behind this redirect.
            extras["redirect_url"] = url
            url = end_site["url"]
        source = {
            "kind": "web",
            "url": url,
            "title": title,
            "domain": (domain_hint(given) or given) if given else None,
            "rank": rank,
            "extras": extras,
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
        return add_source(self.builder, source, where)

    def support(
        self, support: Any, where: str, refs: list[_ChunkRef], texts: dict[int, TextPart]
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
        if span.provider is not None:
            extras["provider_span"] = list(span.provider)
        self.builder.cite(
            span.start,
            span.end,
            ids,
            location=location,
            confidence=max(numbers) if numbers else None,
            extras=extras,
            raw=dict(support),
            where=where,
        )

    def segment(
        self, segment: Mapping[str, Any] | None, where: str, texts: dict[int, TextPart]
    ) -> _Span | None:
        """The str span of a segment in the joined answer text, widened to whole words.

        Gemini segment indices are UTF-8 byte offsets within the part named by ``partIndex``
        (in streams: within the text of all chunks, which the stream reader joins into one part).
        The segment's ``text`` is the stronger evidence: when the offsets slice something else,
        the text is located in the answer (the occurrence nearest the offsets) and used, with a
        diagnostic; when it is not in the answer, the segment is left uncited, with one too.
        """
        located = self.locate_segment(segment, where, texts)
        if located is None:
            return None
        start, end = located
        # A claim never widens out of its part (parts are joined with nothing between them).
        part = next(
            (p for p in texts.values() if p.offset <= start and end <= p.offset + len(p.text)),
            None,
        )
        low, high = (part.offset, part.offset + len(part.text)) if part else (0, None)
        return claim_span(
            self.builder, start, end, where, settling=self.settling, low=low, high=high
        )

    def locate_segment(
        self, segment: Mapping[str, Any] | None, where: str, texts: dict[int, TextPart]
    ) -> tuple[int, int] | None:
        if segment is None:
            self.note(f"{where}: missing")
            return None
        text = self.read.text(segment, "text", where) or None
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
            if text is None or found == text or (found.strip() == text.strip() != ""):
                return part.offset + first, part.offset + last
            problem = f"text {_short(text)} differs from {_short(found)} at bytes {start}..{end}"
        if not text:
            self.note(f"{where}: {problem}, and no segment text to locate")
            return None
        located = self.locate(text, part, start)
        if located is None:
            self.note(f"{where}: {problem}, and its text {_short(text)} is not in the answer")
            return None
        self.note(f"{where}: {problem}; located its text at {located[0]}..{located[1]} instead")
        return located

    def locate(self, needle: str, part: TextPart | None, start_byte: int) -> tuple[int, int] | None:
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
            span = claim_span(
                self.builder,
                index.from_bytes(start),
                index.from_bytes(end),
                where,
                settling=self.settling,
            )
            if span is None:
                continue
            if span.provider is not None:
                extras["provider_span"] = list(span.provider)
            self.builder.cite(
                span.start,
                span.end,
                [source_id],
                extras={"recitation": True, **extras},
                raw=dict(entry),
                where=where,
            )
        if empty:
            self.note(f"{path}: skipped {empty} empty citation entr{'y' if empty == 1 else 'ies'}")
