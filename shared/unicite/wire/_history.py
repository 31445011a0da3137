"""The unicite wire document: an answer's text with its markers, and the metadata to show them.

``{"content": ..., "metadata": {"citations": [...], ...}}`` is seed 002's shape: the content
carries a ``[n]`` marker for every citation and ``metadata.citations[n - 1]`` is the source
marker ``[n]`` opens, with its url, title and snippet, and the spans of the text that cite it
in ``str``, UTF-16 and UTF-8 byte offsets of the content. The live stream's completed event and
the REST history hold the same document, built by one function.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from unicite._offsets import OffsetIndex
from unicite._urls import safe_href
from unicite.exceptions import WireError
from unicite.markers import inject_markers
from unicite.model import Citation, CitedAnswer, Source

__all__ = ["VERSION", "from_document", "shown", "to_document", "view_document"]

VERSION = 1
"""Version of the document's shape; a reader refuses documents of a newer version."""

_SOURCE_FIELDS = (
    "id",
    "kind",
    "url",
    "title",
    "domain",
    "snippet",
    "provider_id",
    "rank",
    "redirect",
    "relevance",
    "published_at",
    "modified_at",
    "origin",
)
"""What the wire carries of a source: everything but its full content, extras and raw data."""

_CITATION_FIELDS = ("quote", "location", "origin", "confidence", "verified", "support")


def shown(answer: CitedAnswer) -> CitedAnswer:
    """The answer as the wire shows it: a ``[n]`` marker in the text for every citation.

    Markers a reader already placed (an inline link, a model's ``[3]``) become ``[n]`` in the
    answer's numbering; citations without one get one at the end of their span. An answer with
    no citation is sent as it is (a front end lists its sources after the text). Metadata
    without markers (citations no marker shows, sources nothing cites) is said in the
    diagnostics, once.
    """
    if answer.citations:
        view = inject_markers(answer, "brackets")
        unmarked = sum(1 for c in answer.citations if c.marker_span is None)
        if not unmarked:
            return view
        note = (
            f"metadata without markers: {unmarked} citation(s) had no marker in the text; "
            "[n] markers were added at the end of their spans"
        )
    elif answer.sources:
        view = answer
        note = (
            f"metadata without markers: {len(answer.sources)} source(s) and no citation; "
            "they are listed after the text"
        )
    else:
        return answer
    if note in view.diagnostics:
        return view
    return view.model_copy(update={"diagnostics": [*view.diagnostics, note]})


def _span(index: OffsetIndex, start: int, end: int) -> dict[str, Any]:
    return {
        "start": start,
        "end": end,
        "utf16": [index.to_utf16(start), index.to_utf16(end)],
        "bytes": [index.to_bytes(start), index.to_bytes(end)],
    }


def _citation(
    offsets: OffsetIndex, index: int, citation: Citation, numbers: dict[str, int]
) -> dict[str, Any]:
    out = {"index": index, **_span(offsets, citation.start, citation.end)}
    out["text"] = citation.text
    out["ref"] = citation.id
    out["sources"] = [numbers[sid] for sid in citation.source_ids]
    marker = citation.marker_span
    out["marker"] = None if marker is None else _span(offsets, *marker)
    for name in _CITATION_FIELDS:
        out[name] = getattr(citation, name)
    if citation.location is not None:
        out["location"] = citation.location.model_dump(mode="json")
    return out


def to_document(answer: CitedAnswer, *, message_id: str | None = None) -> dict[str, Any]:
    """The history document of an answer (see the module docstring)."""
    return view_document(shown(answer), message_id=message_id)


def view_document(view: CitedAnswer, *, message_id: str | None = None) -> dict[str, Any]:
    """The history document of an answer already `shown` (its markers are not placed again)."""
    numbers = {source.id: n for n, source in enumerate(view.sources, 1)}
    spans: dict[str, list[dict[str, Any]]] = {source.id: [] for source in view.sources}
    offsets = view._offset_index()
    for index, citation in enumerate(view.citations):
        dumped = _citation(offsets, index, citation, numbers)
        for sid in dict.fromkeys(citation.source_ids):
            spans[sid].append(dumped)
    citations = []
    for number, source in enumerate(view.sources, 1):
        dumped = source.model_dump(mode="json", include=set(_SOURCE_FIELDS))
        entry: dict[str, Any] = {"number": number, **dumped}
        entry["href"] = safe_href(source.url)
        entry["cited"] = bool(spans[source.id])
        entry["spans"] = spans[source.id]
        citations.append(entry)
    used = view.sources_used
    document: dict[str, Any] = {}
    if message_id is not None:
        document["message_id"] = message_id
    document["content"] = view.text
    document["metadata"] = {
        "version": VERSION,
        "provider": view.provider,
        "model": view.model,
        "citations": citations,
        "sources_used": None if used is None else [numbers[sid] for sid in used],
        "has_markers": view.has_inline_markers,
        "diagnostics": list(view.diagnostics),
    }
    return document


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise WireError(f"{where}: {name!r} is missing or not {_names(kind)}")
    return value


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def from_document(document: object) -> CitedAnswer:
    """The answer a history document describes (what `to_document` wrote, read back).

    Raises:
        WireError: The document is not one: a field is missing or has the wrong type, a span
            does not slice the content to its text, a number names no source.
    """
    if not isinstance(document, dict):
        raise WireError(f"a history document is a JSON object, got {type(document).__name__}")
    content = _field(document, "content", str, "history")
    metadata = _field(document, "metadata", dict, "history")
    version = metadata.get("version", VERSION)
    if not isinstance(version, int) or version > VERSION:
        raise WireError(
            f"history metadata version {version!r} is newer than this reader ({VERSION})"
        )
    entries = _field(metadata, "citations", list, "history metadata")
    try:
        sources, citations = _read_entries(entries)
        used = metadata.get("sources_used")
        return CitedAnswer(
            text=content,
            sources=sources,
            citations=citations,
            provider=metadata.get("provider"),
            model=metadata.get("model"),
            diagnostics=list(metadata.get("diagnostics") or ()),
            sources_used=None if used is None else [_source_at(sources, n) for n in used],
        )
    except (ValidationError, TypeError, KeyError) as err:
        raise WireError(f"history document does not describe a cited answer: {err}") from None


def _source_at(sources: list[Source], number: object) -> str:
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(sources):
        raise WireError(f"source number {number!r} names no source (there are {len(sources)})")
    return sources[number - 1].id


def _read_entries(entries: list[Any]) -> tuple[list[Source], list[Citation]]:
    sources: list[Source] = []
    for position, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise WireError(f"metadata.citations[{position - 1}] is not an object")
        if entry.get("number", position) != position:
            raise WireError(
                f"metadata.citations[{position - 1}] has number {entry.get('number')!r}, "
                f"not {position}: marker [n] opens metadata.citations[n - 1]"
            )
        sources.append(
            Source(**{name: entry.get(name) for name in _SOURCE_FIELDS if name in entry})
        )
    citations: dict[object, tuple[int, Citation]] = {}
    for position, entry in enumerate(entries):
        spans = entry.get("spans") or []
        if not isinstance(spans, list):
            raise WireError(f"metadata.citations[{position}].spans is not a list")
        for span in spans:
            if not isinstance(span, dict):
                raise WireError(f"metadata.citations[{position}].spans holds a non-object")
            # A citation citing several sources is listed under each: its index names it.
            key = span.get("index")
            if key is None:
                key = (
                    span.get("ref"),
                    span.get("start"),
                    span.get("end"),
                    str(span.get("sources")),
                )
            if key in citations:
                continue
            order = key if isinstance(key, int) else len(entries) + len(citations)
            citations[key] = (order, _read_citation(span, sources))
    # In the answer's own order (citations at one place keep theirs).
    ordered = sorted(citations.values(), key=lambda pair: pair[0])
    return sources, [citation for _, citation in ordered]


def _read_citation(span: dict[str, Any], sources: list[Source]) -> Citation:
    numbers = span.get("sources")
    if not isinstance(numbers, list) or not numbers:
        raise WireError("a span names no source numbers")
    marker = span.get("marker")
    marker_span = None
    if isinstance(marker, dict):
        marker_span = (marker.get("start"), marker.get("end"))
    fields = {name: span[name] for name in _CITATION_FIELDS if span.get(name) is not None}
    return Citation(
        start=span.get("start"),
        end=span.get("end"),
        text=span.get("text"),
        source_ids=[_source_at(sources, n) for n in numbers],
        marker_span=marker_span,
        id=span.get("ref"),
        **fields,
    )
