"""Fast reader for Gemini / Vertex AI responses (see `unicite.analytics._fast`).

It walks a final ``GenerateContentResponse`` once (REST camelCase or SDK snake_case, nulls read as
absent, as `GeminiProvider` normalises them) and counts what the provider reader would build from
its first candidate: the text parts, ``groundingMetadata`` (``groundingChunks``: ``web``,
``image``, ``retrievedContext``, ``maps``; ``groundingSupports``; whether grounding ran) and
``citationMetadata`` recitations. An ``Interaction`` of the Interactions API (``steps`` or the
first beta's ``outputs``) is read too: its text blocks, its search and URL-context results and
their ``url_citation`` annotations.

Segment offsets are UTF-8 byte offsets: the reader never converts them to str indices. A span is
valid exactly when the provider reader's is (offsets within the part's bytes, on character
boundaries, slicing the segment's ``text``), which the encoded text decides. The provider reader
widens each span to whole words; the reader follows that rule on the bytes only where it changes
a count: a word too long to widen to drops the citation (a diagnostic: give up), and an
interaction's annotations of one widened span are one citation. Where sources sit in the text
does not matter: rows list them sorted (`unicite.analytics._rows.canonical`).

What the provider reader accepts without a diagnostic is modelled exactly (a response whose only
diagnostic is its skipped empty recitation entries too); anything else gives up (returns None)
and `extract()` reads the response: any other diagnostic, the grounding keys besides chunks and
supports (``citations``, ``groundingAttributions``, ``retrievalMetadata`` entries...), a bare
candidate or a ``generateAnswer`` response, text that is not valid UTF-8 (lone surrogates).

Gemini sources are not all web pages found by URL: File Search chunks and places are found by
content or by place id, as `SourceLedger` keys them, and a later sighting's URL fills a place
that had none (`_add` gives `FastSources` those keys).

The provider reader's private helpers cannot be imported from here (tests/core/
test_import_rules.py): the word rule (`unicite.providers.gemini._words`), the domain of a title
(`_keys.domain_hint`), the field spellings and the interaction test are restated below; the
agreement tests hold them equal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from itertools import product
from typing import Any

from unicite._ids import content_hash, stable_source_id
from unicite._urls import domain_hint
from unicite.analytics._fast._sources import FastSources, is_redirect
from unicite.analytics._fast._types import FastReader
from unicite.analytics._rows import Row
from unicite.providers.shapes import (
    GEMINI_PART_FIELDS,
    interaction_key,
    looks_like_interaction,
)
from unicite.sources import page_key

__all__ = ["READERS", "read_gemini"]


class _GiveUp(Exception):
    """The response holds something the fast reader does not model exactly."""


_GIVE_UP = _GiveUp()


# --- field spellings ----------------------------------------------------------------------


def _spellings(camel: str) -> frozenset[str]:
    """Every key `GeminiProvider` renames to `camel`: each hump camelCase or ``_snake``."""
    pieces = re.split(r"(?=[A-Z])", camel)
    found = set()
    for choice in product((False, True), repeat=len(pieces) - 1):
        tail = "".join(
            "_" + piece[0].lower() + piece[1:] if snake else piece
            for snake, piece in zip(choice, pieces[1:], strict=True)
        )
        found.add(pieces[0] + tail)
    return frozenset(found)


def _others(camel: str) -> frozenset[str]:
    return _spellings(camel) - {camel}


def _field(data: Mapping[str, Any], camel: str, others: frozenset[str]) -> Any:
    """The value the normalised response holds under `camel`.

    Nulls are dropped; the camelCase key wins; else the first other spelling in key order.
    """
    value = data.get(camel)
    if value is None:
        for key, item in data.items():
            if item is not None and key in others:
                return item
    return value


def _two(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    """`_field` of a key with one hump: its only other spelling is `snake`."""
    value = data.get(camel)
    return data.get(snake) if value is None else value


_PART_KEYS = frozenset().union(*(_spellings(name) for name in GEMINI_PART_FIELDS))
"""A part's keys the provider reader knows (any other one is a diagnostic)."""

_WEB_SEARCH_QUERIES = _others("webSearchQueries")
_SEARCH_ENTRY_POINT = _others("searchEntryPoint")
_IMAGE_SEARCH_QUERIES = _others("imageSearchQueries")
_CHUNK_INDICES = _others("groundingChunkIndices")
_QUIET_EXTRA_KEYS: tuple[tuple[str, frozenset[str]], ...] = (
    ("citations", frozenset()),
    ("citedSources", _others("citedSources")),
    ("groundingAttributions", _others("groundingAttributions")),
    ("supportingContent", _others("supportingContent")),
    ("sources", frozenset()),
    ("webSearchSources", _others("webSearchSources")),
)
"""The grounding keys read besides chunks and supports (but ``retrievalMetadata``): any entry
under them gives up."""
_QUIET_EXTRA_SPELLINGS = frozenset().union(*(_spellings(key) for key, _ in _QUIET_EXTRA_KEYS))
_CANDIDATE_KEYS = (
    "content",
    "groundingMetadata",
    "grounding_metadata",
    "citationMetadata",
    "citation_metadata",
)


def _is_empty(value: Any) -> bool:
    return isinstance(value, (Mapping, list, str)) and not value


def _indices(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def _integer(value: Any) -> int | None:
    """An integer field as the provider reader reads it; gives up where it would note one.

    Digit strings, which it reads too, give up: ``int()`` refuses some of them.
    """
    if value is None:
        return None
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    raise _GIVE_UP


def _text(value: Any) -> str | None:
    """A string field, or None; anything else gives up (the reader notes it)."""
    if value is None or isinstance(value, str):
        return value
    raise _GIVE_UP


def _mapping(value: Any) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    raise _GIVE_UP


def _object(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    raise _GIVE_UP


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _GIVE_UP


# --- claim boundaries: the provider reader's word rule, on UTF-8 bytes ------------------------

_JOINERS = frozenset(".,:'’-\u2011_")
_DIGIT_GROUPERS = frozenset("\u00a0\u202f\u2009")
_UNSPACED = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x2E80, 0x2FDF),
    (0x3005, 0x3007),
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)
_MAX_WIDENING = 256

_SEPARATOR = bytes(
    1 if byte < 0x80 and not (chr(byte).isalnum() or chr(byte) in _JOINERS) else 0
    for byte in range(256)
)
"""ASCII bytes that are neither word characters nor joiners: no boundary next to one is inside
a word, so a span bounded by them is never widened."""


def _unspaced(ch: str) -> bool:
    code = ord(ch)
    return code >= 0x0E00 and any(low <= code <= high for low, high in _UNSPACED)


def _word(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _joins(joiner: str, left: str, right: str) -> bool:
    if not (_word(left) and _word(right)):
        return False
    return joiner in _JOINERS or (joiner in _DIGIT_GROUPERS and left.isdigit() and right.isdigit())


def _char_before(data: bytes, at: int) -> tuple[str, int]:
    """The character ending at byte `at`, and the byte it starts at."""
    start = at - 1
    while start > 0 and 0x80 <= data[start] < 0xC0:
        start -= 1
    return data[start:at].decode(), start


def _char_at(data: bytes, at: int) -> tuple[str, int]:
    """The character starting at byte `at`, and the byte after it."""
    lead = data[at]
    end = at + (1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4)
    return data[at:end].decode(), end


def _inside_word(data: bytes, at: int) -> bool:
    """The provider reader's ``inside_word`` at the character boundary at byte `at`."""
    if not 0 < at < len(data):
        return False
    before, start = _char_before(data, at)
    after, end = _char_at(data, at)
    if _unspaced(before) or _unspaced(after):
        return False
    word_before, word_after = _word(before), _word(after)
    if word_before and word_after:
        return True
    if word_after and start > 0:
        left = _char_before(data, start)[0]
        if _joins(before, left, after):
            return not _unspaced(left)
    if word_before and end < len(data):
        right = _char_at(data, end)[0]
        if _joins(after, before, right):
            return not _unspaced(right)
    return False


def _widen(data: bytes, start: int, end: int, low: int, high: int) -> tuple[int, int]:
    """``start..end`` (byte offsets of `data`) widened to whole words within ``low..high``.

    Gives up where the provider reader finds a word too long to widen to (a diagnostic: the
    citation is dropped). The widened span itself only matters where it merges citations.
    """
    if start >= end:
        return start, end
    sep = _SEPARATOR
    if (start == low or sep[data[start - 1]] or sep[data[start]]) and (
        end == high or sep[data[end - 1]] or sep[data[end]]
    ):
        return start, end
    moved = 0
    while start > low and _inside_word(data, start):
        start = _char_before(data, start)[1]
        moved += 1
        if moved > _MAX_WIDENING:
            raise _GIVE_UP
    moved = 0
    while end < high and _inside_word(data, end):
        end = _char_at(data, end)[1]
        moved += 1
        if moved > _MAX_WIDENING:
            raise _GIVE_UP
    return start, end


def _on_characters(data: bytes, start: int, end: int) -> None:
    """Give up when an offset (within `data`, valid UTF-8) falls inside a character."""
    if (start < len(data) and 0x80 <= data[start] < 0xC0) or (
        end < len(data) and 0x80 <= data[end] < 0xC0
    ):
        raise _GIVE_UP


# --- sources ------------------------------------------------------------------------------------


_TITLE_HINTS: dict[str | None, str | None] = {}


def _title_hint(title: str | None) -> str | None:
    """`domain_hint` of a title, cached."""
    try:
        return _TITLE_HINTS[title]
    except KeyError:
        if len(_TITLE_HINTS) >= 4096:
            _TITLE_HINTS.clear()
        hint = _TITLE_HINTS[title] = domain_hint(title)
        return hint


def _add(
    sources: FastSources,
    url: str | None,
    title: str | None,
    *,
    domain: str | None = None,
    provider_id: str | None = None,
    content: str | None = None,
) -> int:
    """Add any source (`url`, `provider_id`, `content` None when it has none); its position.

    Keyed as the ledger keys it: by provider id (and page key), by URL alone, or by a hash of
    its title and text.
    """
    if not provider_id:
        if url:
            return sources.web(url, title, domain)
        return sources.keyed([("text", content_hash(title, content))], None, title, domain)
    source_id = stable_source_id(provider_id=provider_id)
    if source_id.startswith(("u-", "h-")):
        raise _GIVE_UP  # could collide with a URL's or a text's id
    keys: list[object] = [("id", source_id)]
    if url:
        keys.append(page_key(url))
    return sources.keyed(keys, url or None, title, domain)


def _row(
    model: str | None, grounded: bool, sources: FastSources, citations: int, diagnostics: int
) -> Row:
    return sources.row(
        provider="gemini",
        model=model,
        grounded=grounded,
        citations=citations,
        diagnostics=diagnostics,
    )


# --- generateContent ----------------------------------------------------------------------------


class _Answer:
    """The candidate's answer text: its text parts and, once a span needs them, their bytes."""

    __slots__ = ("data", "parts", "pieces", "starts")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.parts: dict[int, int] = {}  # part index -> position in pieces
        self.data = b""
        self.starts: list[int] = []  # where each piece starts in data

    def encode(self) -> bytes:
        """The text's UTF-8 bytes (lone surrogates give up); `starts` set."""
        if not self.starts:
            encoded = [piece.encode() for piece in self.pieces]  # lone surrogates: give up
            starts = [0]
            for piece in encoded:
                starts.append(starts[-1] + len(piece))
            self.starts = starts
            self.data = encoded[0] if len(encoded) == 1 else b"".join(encoded)
        return self.data


def _read_parts(parts: list[Any], answer: _Answer) -> None:
    for n, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise _GIVE_UP
        if not part.keys() <= _PART_KEYS and any(
            value is not None and key not in _PART_KEYS for key, value in part.items()
        ):
            raise _GIVE_UP  # an unknown part type
        text = part.get("text")
        if text is None:
            thought = part.get("thought")
            if thought is not None and not isinstance(thought, bool):
                raise _GIVE_UP
            continue
        if not isinstance(text, str):
            raise _GIVE_UP
        thought = part.get("thought")
        if thought is None or thought is False:
            answer.parts[n] = len(answer.pieces)
            answer.pieces.append(text)
        elif thought is not True:
            raise _GIVE_UP


def _chunk(chunk: Any, sources: FastSources) -> int:
    """The position of a grounding chunk's source."""
    if not isinstance(chunk, Mapping):
        raise _GIVE_UP
    body = chunk.get("web")
    if body is not None:
        uri_key = "uri"
    else:
        body = _two(chunk, "retrievedContext", "retrieved_context")
        if body is not None:
            return _retrieved(_object(body), sources)
        body = chunk.get("maps")
        if body is not None:
            return _place(_object(body), sources)
        body = chunk.get("image")
        if body is None:
            raise _GIVE_UP  # an unknown chunk type
        uri_key = "sourceUri"
    if not isinstance(body, Mapping):
        raise _GIVE_UP
    url = body.get(uri_key) if uri_key == "uri" else _two(body, "sourceUri", "source_uri")
    if not url or not isinstance(url, str):
        raise _GIVE_UP
    title = body.get("title")
    given = body.get("domain")
    if title is not None and not isinstance(title, str):
        raise _GIVE_UP
    if given is not None and not isinstance(given, str):
        raise _GIVE_UP
    return sources.web(url, title, (domain_hint(given) or given) if given else None)


def _retrieved(body: Mapping[str, Any], sources: FastSources) -> int:
    uri = _text(body.get("uri"))
    title = _text(body.get("title"))
    text = _text(body.get("text"))
    rag = _mapping(_two(body, "ragChunk", "rag_chunk"))
    if text is None and rag is not None:
        text = _text(rag.get("text"))
    if not (uri or title or text):
        raise _GIVE_UP
    first = last = _integer(_two(body, "pageNumber", "page_number"))
    span = _mapping(_two(rag, "pageSpan", "page_span")) if rag is not None else None
    if span is not None:
        first = _integer(_two(span, "firstPage", "first_page"))
        last = _integer(_two(span, "lastPage", "last_page"))
    if (first is not None or last is not None) and (
        first is None or last is None or not 1 <= first <= last
    ):
        raise _GIVE_UP
    return _add(sources, uri or None, title, content=text or None)


def _place(body: Mapping[str, Any], sources: FastSources) -> int:
    uri = _text(body.get("uri"))
    title = _text(body.get("title"))
    place_id = _text(_two(body, "placeId", "place_id"))
    text = _text(body.get("text"))
    if not (uri or title or place_id):
        raise _GIVE_UP
    return _add(sources, uri or None, title, provider_id=place_id or None, content=text or None)


def _supports(supports: list[Any], refs: list[int], answer: _Answer, cited: list[bool]) -> None:
    """Check each support (`refs`: each grounding chunk's source): one citation each, or give up."""
    data = answer.encode()
    starts = answer.starts
    parts = answer.parts
    count = len(refs)
    for support in supports:
        if type(support) is not dict and not isinstance(support, Mapping):
            raise _GIVE_UP
        get = support.get
        indices = get("groundingChunkIndices")
        if indices is None:
            indices = _field(support, "groundingChunkIndices", _CHUNK_INDICES)
        scores = get("confidenceScores")
        if scores is None:
            scores = get("confidence_scores")
        segment = get("segment")
        if type(segment) is not dict and not isinstance(segment, Mapping):
            raise _GIVE_UP  # missing (noted) or not an object
        if type(indices) is not list or not indices:
            raise _GIVE_UP  # cites nothing (noted) or not a list
        for value in indices:
            if type(value) is not int or not 0 <= value < count:
                raise _GIVE_UP
            cited[refs[value]] = True
        if scores:
            if type(scores) is not list or len(scores) != len(indices):
                raise _GIVE_UP
            top: float | None = None
            for value in scores:
                if type(value) is not float:
                    if isinstance(value, bool) or not isinstance(value, (int, float)):
                        raise _GIVE_UP
                    value = float(value)
                if top is None or value > top:
                    top = value
            if top is None or not 0.0 <= top <= 1.0:
                raise _GIVE_UP  # the confidence is dropped with a diagnostic
        elif scores is not None and type(scores) is not list:
            raise _GIVE_UP
        get = segment.get
        text = get("text")
        index = get("partIndex")
        if index is None:
            index = get("part_index")
        start = get("startIndex")
        if start is None:
            start = get("start_index")
        end = get("endIndex")
        if end is None:
            end = get("end_index")
        if type(start) is not int:
            start = _integer(start) or 0
        if type(end) is not int:
            end = _integer(end)
            if end is None:
                raise _GIVE_UP
        if index is None:
            slot = parts.get(0)
            if slot is None:
                slot = next(iter(parts.values()), None)
        else:
            number = _integer(index)
            slot = None if number is None else parts.get(number)
        if slot is None:
            raise _GIVE_UP
        low = starts[slot]
        high = starts[slot + 1]
        if not 0 <= start <= end <= high - low:
            raise _GIVE_UP
        start += low
        end += low
        if text is not None and type(text) is not str:
            raise _GIVE_UP  # noted
        if text:
            try:
                found = data[start:end].decode()
            except UnicodeDecodeError:
                raise _GIVE_UP from None  # an offset inside a character
            if found != text and not (found.strip() == text.strip() != ""):
                raise _GIVE_UP  # the reader locates the text elsewhere, with a diagnostic
        else:
            _on_characters(data, start, end)
        _widen(data, start, end, low, high)  # a word too long to widen to: dropped, noted


def _recitations(
    metadata: Mapping[str, Any], answer: _Answer, sources: FastSources
) -> tuple[int, int]:
    """Cite the recitations: their count, and 1 when empty entries were skipped (a diagnostic)."""
    entries = metadata.get("citations")
    if entries is None:
        entries = _two(metadata, "citationSources", "citation_sources")
    citations = empty = 0
    for entry in _list(entries):
        if not isinstance(entry, Mapping):
            raise _GIVE_UP
        if all(value is None for value in entry.values()):
            empty += 1
            continue
        uri = _text(entry.get("uri"))
        title = _text(entry.get("title"))
        start = _integer(_two(entry, "startIndex", "start_index"))
        end = _integer(_two(entry, "endIndex", "end_index"))
        position = _add(sources, uri or None, title) if uri or title else None
        if start is None and end is None:
            if position is None:
                raise _GIVE_UP
            continue
        if position is None or end is None:
            raise _GIVE_UP
        start = start or 0
        data = answer.encode()
        if not 0 <= start <= end <= len(data):
            raise _GIVE_UP
        _on_characters(data, start, end)
        _widen(data, start, end, 0, len(data))  # a word too long to widen to: dropped, noted
        sources.cited[position] = True
        citations += 1
    return citations, 1 if empty else 0


def _grounding(
    metadata: Mapping[str, Any], answer: _Answer, sources: FastSources
) -> tuple[bool, int]:
    """Read ``groundingMetadata``: whether it shows grounding ran, and its citations."""
    chunks = _list(_two(metadata, "groundingChunks", "grounding_chunks"))
    supports = _list(_two(metadata, "groundingSupports", "grounding_supports"))
    queries = _list(_field(metadata, "webSearchQueries", _WEB_SEARCH_QUERIES))
    for query in queries:
        if not isinstance(query, str):
            raise _GIVE_UP
    entry = _mapping(_field(metadata, "searchEntryPoint", _SEARCH_ENTRY_POINT))
    if entry is not None:
        _text(_two(entry, "renderedContent", "rendered_content"))
    retrieval = _mapping(_two(metadata, "retrievalMetadata", "retrieval_metadata"))
    if retrieval and any(isinstance(value, (list, Mapping)) for value in retrieval.values()):
        raise _GIVE_UP  # may hold sources
    if not metadata.keys().isdisjoint(_QUIET_EXTRA_SPELLINGS):
        for key, others in _QUIET_EXTRA_KEYS:
            value = _field(metadata, key, others) if others else metadata.get(key)
            if value is not None and not _is_empty(value) and not _indices(value):
                raise _GIVE_UP  # sources of another grounding key
    grounded = bool(chunks or supports or entry is not None or queries)
    if not grounded:
        for value in (
            _two(metadata, "retrievalQueries", "retrieval_queries"),
            _field(metadata, "imageSearchQueries", _IMAGE_SEARCH_QUERIES),
        ):
            if value is not None and not _is_empty(value):
                grounded = True
    refs: list[int] = []  # each grounding chunk's source
    web = sources.web
    for chunk in chunks:
        body = chunk.get("web") if type(chunk) is dict else None
        if type(body) is dict and body.get("domain") is None:
            url = body.get("uri")
            title = body.get("title")
            if type(url) is str and url and (title is None or type(title) is str):
                refs.append(web(url, title))  # the common chunk: a page and its title
                continue
        refs.append(_chunk(chunk, sources))
    if supports:
        _supports(supports, refs, answer, sources.cited)
    return grounded, len(supports)


def _read_response(data: Mapping[str, Any]) -> Row:
    model = _text(_two(data, "modelVersion", "model_version"))
    candidates = data.get("candidates")
    if not candidates:
        if candidates is None and (
            data.get("answer") is not None
            or any(data.get(key) is not None for key in _CANDIDATE_KEYS)
        ):
            raise _GIVE_UP  # a generateAnswer response or a bare candidate
        if candidates is not None and not isinstance(candidates, list):
            raise _GIVE_UP
        # No candidates: a blocked prompt says why in promptFeedback; else a diagnostic.
        feedback = _two(data, "promptFeedback", "prompt_feedback")
        return _row(model, False, FastSources(), 0, 0 if feedback is not None else 1)
    if not isinstance(candidates, list):
        raise _GIVE_UP
    candidate = candidates[0]
    if not isinstance(candidate, Mapping):
        raise _GIVE_UP
    attributions = _two(candidate, "groundingAttributions", "grounding_attributions")
    if attributions is not None and not _is_empty(attributions):
        raise _GIVE_UP  # generateAnswer's, on the candidate
    answer = _Answer()
    content = _mapping(candidate.get("content"))
    if content is not None:
        _read_parts(_list(content.get("parts")), answer)
    sources = FastSources()
    grounded = False
    citations = diagnostics = 0
    metadata = _mapping(_two(candidate, "groundingMetadata", "grounding_metadata"))
    if metadata is not None:
        grounded, citations = _grounding(metadata, answer, sources)
    recitation = _mapping(_two(candidate, "citationMetadata", "citation_metadata"))
    if recitation is not None:
        recited, diagnostics = _recitations(recitation, answer, sources)
        citations += recited
    return _row(model, grounded, sources, citations, diagnostics)


def read_gemini(data: Mapping[str, Any]) -> Row | None:
    """The row of a response `GeminiProvider` detected, or None to let `extract()` read it."""
    try:
        if looks_like_interaction(data):
            return _read_interaction(data)
        return _read_response(data)
    except _GiveUp:
        return None
    except Exception:
        return None  # what the provider reader would raise it notes as a diagnostic


# --- Interactions API ------------------------------------------------------------------------


_SNAKE_KEYS = frozenset(
    {
        "agent",
        "annotations",
        "arguments",
        "call_id",
        "content",
        "created",
        "data",
        "document_uri",
        "end_index",
        "file_name",
        "file_search_store",
        "id",
        "mime_type",
        "model",
        "name",
        "object",
        "outputs",
        "page_number",
        "place_id",
        "places",
        "previous_interaction_id",
        "rendered_content",
        "result",
        "role",
        "search_suggestions",
        "search_type",
        "signature",
        "source",
        "start_index",
        "status",
        "steps",
        "summary",
        "text",
        "title",
        "type",
        "updated",
        "uri",
        "url",
        "usage",
    }
)
"""Keys the provider reader keeps as they are: a mapping holding only these needs no renaming."""


def _get(data: Mapping[str, Any], key: str) -> Any:
    """The value the normalised interaction holds under `key` (snake_case, nulls dropped).

    The key as spelled wins; else the first other spelling renamed to it, in key order.
    """
    value = data.get(key)
    if value is None and not data.keys() <= _SNAKE_KEYS:
        for name, item in data.items():
            if item is not None and name != key and interaction_key(name) == key:
                return item
    return value


def _given(value: Any) -> str | None:
    """A non-empty string, else None (the interaction reader's ``_text``: no diagnostic)."""
    return value if isinstance(value, str) and value else None


def _is_link(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://", "gs://"))


_BAD_STATUSES = frozenset({"failed", "cancelled", "incomplete", "budget_exceeded"})
_GROUNDING_CALLS = frozenset(
    {"google_search_call", "file_search_call", "google_maps_call", "url_context_call"}
)
_GROUNDING_RESULTS = frozenset(
    {"google_search_result", "file_search_result", "google_maps_result", "url_context_result"}
)
_FIRST_BETA_OUTPUTS = frozenset({"text", "image", "audio", "document", "video"})


class _Interaction:
    """What an interaction's steps add up to: its text blocks, sources, and whether it grounded."""

    __slots__ = ("answer", "blocks", "grounded", "sources")

    def __init__(self) -> None:
        self.answer = _Answer()
        self.blocks: list[list[Any]] = []  # each text block's annotations, in order
        self.sources = FastSources()
        self.grounded = False

    def add(self, url: str | None, title: str | None, provider_id: str | None = None) -> int:
        """A source as the interaction reader adds one.

        Behind a redirect, a title that is a domain gives the domain.
        """
        domain = _title_hint(title) if url and is_redirect(url) else None
        if provider_id or not url:
            return _add(self.sources, url, title, domain=domain, provider_id=provider_id)
        return self.sources.web(url, title, domain)

    def step(self, step: Any) -> None:
        if not isinstance(step, Mapping):
            raise _GIVE_UP
        kind = _get(step, "type")
        if kind == "model_output":
            for block in _list(_get(step, "content")):
                self.block(block)
        elif kind in _FIRST_BETA_OUTPUTS:
            self.block(step)
        elif kind in ("thought", "user_input"):
            return
        elif isinstance(kind, str) and kind.endswith("_call"):
            if kind in _GROUNDING_CALLS:
                self.grounded = True
            arguments = _get(step, "arguments")
            queries = arguments.get("queries") if isinstance(arguments, Mapping) else None
            if kind == "google_search_call" and isinstance(queries, list):
                for query in queries:
                    if not isinstance(query, str):
                        raise _GIVE_UP
        elif isinstance(kind, str) and kind.endswith("_result"):
            if kind in _GROUNDING_RESULTS:
                self.grounded = True
                self.result(kind, _get(step, "result"))
        else:
            raise _GIVE_UP  # an unknown step type

    def block(self, block: Any) -> None:
        if not isinstance(block, Mapping):
            raise _GIVE_UP
        if _get(block, "type") != "text":
            return  # a thought or media: not answer text
        text = _get(block, "text")
        if text is None:
            text = ""
        elif not isinstance(text, str):
            raise _GIVE_UP
        annotations = _list(_get(block, "annotations"))
        self.answer.pieces.append(text)
        self.blocks.append(annotations)

    def result(self, kind: str, results: Any) -> None:
        for item in results if isinstance(results, list) else []:
            if not isinstance(item, Mapping):
                continue
            if kind == "google_search_result":
                url = _get(item, "url")
                if _is_link(url):
                    self.add(url, _given(_get(item, "title")))
            elif kind == "url_context_result":
                url = _get(item, "url")
                if _is_link(url):
                    self.add(url, None)
            elif kind == "file_search_result":
                text, title = _given(_get(item, "text")), _given(_get(item, "title"))
                if text or title:
                    _add(self.sources, None, title, content=text)
            else:
                places = _get(item, "places")
                for place in places if isinstance(places, list) else []:
                    if isinstance(place, Mapping):
                        self.place(place)

    def place(self, place: Mapping[str, Any]) -> int:
        place_id = _given(_get(place, "place_id"))
        name = _given(_get(place, "name"))
        url = _given(_get(place, "url"))
        if not (place_id or name or url):
            raise _GIVE_UP
        return self.add(url, name, place_id)

    def annotation_source(self, annotation: Mapping[str, Any]) -> int:
        kind = _get(annotation, "type")
        if kind == "url_citation" or (kind is None and _is_link(_get(annotation, "url"))):
            url = _given(_get(annotation, "url"))
            if url is None:
                raise _GIVE_UP
            return self.add(url, _given(_get(annotation, "title")))
        if kind == "file_citation":
            uri = _given(_get(annotation, "document_uri"))
            name = _given(_get(annotation, "file_name"))
            origin = _given(_get(annotation, "source"))
            if not (uri or name or origin):
                raise _GIVE_UP
            page = _get(annotation, "page_number")
            if isinstance(page, int) and not isinstance(page, bool) and page < 1:
                raise _GIVE_UP
            link = _is_link(uri)
            return self.add(
                uri if link else None, name or origin, uri if uri and not link else None
            )
        if kind == "place_citation":
            return self.place(annotation)
        if kind is None:
            source = _given(_get(annotation, "source"))
            if source is None:
                raise _GIVE_UP
            if _is_link(source):
                return self.add(source, None)
            return _add(self.sources, None, source)
        raise _GIVE_UP  # an unknown annotation type

    def citations(self) -> int:
        """Cite each block's annotations: those of one (widened) span are one citation."""
        if not any(self.blocks):
            return 0
        answer = self.answer
        data = answer.encode()
        cited = self.sources.cited
        spans: set[tuple[int, int]] = set()
        for n, notes in enumerate(self.blocks):
            low, high = answer.starts[n], answer.starts[n + 1]
            for annotation in notes:
                if not isinstance(annotation, Mapping):
                    raise _GIVE_UP
                start = _integer(_get(annotation, "start_index")) or 0
                end = _integer(_get(annotation, "end_index"))
                if end is None or not 0 <= start < end <= high - low:
                    raise _GIVE_UP
                _on_characters(data, low + start, low + end)
                spans.add(_widen(data, low + start, low + end, low, high))
                cited[self.annotation_source(annotation)] = True
        return len(spans)


def _read_interaction(data: Mapping[str, Any]) -> Row:
    model = _given(_get(data, "model")) or _given(_get(data, "agent"))
    status = _get(data, "status")
    if isinstance(status, str) and status in _BAD_STATUSES:
        raise _GIVE_UP  # noted: the answer may be incomplete
    steps = _get(data, "steps")
    if not isinstance(steps, list):
        steps = _get(data, "outputs")
        if not isinstance(steps, list):
            raise _GIVE_UP
    interaction = _Interaction()
    for step in steps:
        interaction.step(step)
    citations = interaction.citations()
    return _row(model, interaction.grounded, interaction.sources, citations, 0)


READERS: dict[str, FastReader] = {"GeminiProvider": read_gemini}
"""Fast readers by the class name of the provider reader they stand in for."""
