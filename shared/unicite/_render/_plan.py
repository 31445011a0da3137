"""What every format shows: the markers (placed by `unicite._marks`) and the Sources list.

A `Plan` is computed once per rendering: the marks, and for each listed source its sanitised
title, domain, safe link and the quotes and locations of its citations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from unicite._marks import Mark, check_choice, plan_marks
from unicite._text import sanitize_display, truncate
from unicite._urls import safe_href
from unicite.model import (
    BlockLocation,
    CharLocation,
    CitedAnswer,
    Location,
    PageLocation,
    SearchResultLocation,
    Source,
)

__all__ = [
    "LINK_ATTRIBUTES",
    "MAX_LINK_LENGTH",
    "Detail",
    "Entry",
    "Plan",
    "SourceSelection",
    "build_plan",
    "link_target",
    "search_suggestions",
    "weave",
]

SourceSelection = Literal["cited", "all"]
"""Which sources a rendering lists: only those cited (the default) or all of them."""

MAX_TITLE = 200
"""Titles, domains and non-link URLs are cut to this many characters for display."""
MAX_QUOTE = 200
"""Quoted excerpts are cut to this many characters, ``…`` included."""
MAX_LINK_LENGTH = 2083
"""Longer URLs are shown as inert text, never linked (terminals ignore longer OSC 8 URIs)."""
MAX_DETAILS = 3
"""Quote/location lines shown per source; further ones are counted, not shown."""
LINK_ATTRIBUTES = 'rel="noopener noreferrer nofollow" target="_blank"'
"""The attributes of every link an HTML rendering writes: a new tab, no referrer, no opener."""

_SELECTIONS = ("cited", "all")


@dataclass(frozen=True, slots=True)
class Detail:
    """A quote and/or a location of one citation of a source, ready to display."""

    quote: str | None
    location: str | None


@dataclass(frozen=True, slots=True)
class Entry:
    """One source in the Sources list, with every displayed field already sanitised."""

    number: int
    source: Source
    title: str | None
    domain: str | None
    href: str | None
    """A safe http(s) URL to link to, or None when the source must not be linked."""
    url_text: str | None
    """The URL as shown: `href` when linked, else the sanitised, shortened original."""
    details: tuple[Detail, ...]
    more_details: int
    """How many further distinct quote/location lines were left out."""

    @property
    def label(self) -> str:
        """What names the source: title, else domain, else URL, else provider id, else kind."""
        for value in (self.title, self.domain, self.url_text, _clean(self.source.provider_id)):
            if value:
                return value
        return self.source.kind


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything a renderer needs, computed once from an answer."""

    marks: list[Mark]
    entries: list[Entry]
    fallback: bool
    """Nothing is cited, so every source is listed (plainly, as retrieved)."""
    search_suggestions: str | None
    """Google Search Suggestions HTML (unsanitised) when the answer carries it."""


def _clean(value: object, limit: int = MAX_TITLE) -> str:
    return truncate(sanitize_display(value).strip(), limit)


def weave(
    text: str, marks: list[Mark], piece: Callable[[str], str], marker: Callable[[Mark], str]
) -> Iterator[str]:
    """Yield the text between marks through ``piece`` and each mark through ``marker``."""
    position = 0
    for mark in marks:
        if mark.start > position:
            yield piece(text[position : mark.start])
        yield marker(mark)
        position = mark.end
    if position < len(text):
        yield piece(text[position:])


def link_target(url: object) -> str | None:
    """The safe http(s) URL to link to, or None (other schemes, unparsable or too long)."""
    href = safe_href(url)
    if href is None or len(href) > MAX_LINK_LENGTH:
        return None
    return href


def location_text(location: Location | None) -> str | None:
    """A short description of where in a source a citation points, in the API's numbers.

    Character and block ranges are offsets, shown exactly as the location holds them: 0-based
    and end-exclusive, written as the half-open interval ``[start, end)`` (``chars [0, 35)``
    is ``text[0:35]``, 35 characters), or as one index when the range holds one (``block 0``).
    Pages are shown as a document numbers them: 1-based, as `PageLocation` holds them, a range
    inclusive as page ranges are cited (``start_page=3, end_page=5`` is ``pages 3–4``).
    Search results are counted, not indexed: index 1 is the ``2nd search result``.
    """
    if isinstance(location, PageLocation):
        return _page_text(location.start_page, location.end_page)
    if isinstance(location, CharLocation):
        return _offsets_text("char", "chars", location.start, location.end)
    if isinstance(location, BlockLocation):
        return _offsets_text("block", "blocks", location.start_block, location.end_block)
    if isinstance(location, SearchResultLocation):
        text = f"{_ordinal(location.search_result_index + 1)} search result"
        if location.start_block is not None and location.end_block is not None:
            text += ", " + _offsets_text(
                "block", "blocks", location.start_block, location.end_block
            )
        return text
    return None


def _offsets_text(one: str, many: str, start: int, end: int) -> str:
    """A 0-based, end-exclusive range as it is held: ``chars [0, 35)``; one index alone."""
    if end - start == 1:
        return f"{one} {start}"
    return f"{many} [{start}, {end})"


def _page_text(start: int, end: int) -> str:
    """A 1-based, end-exclusive page range as pages are cited: 3..5 is ``pages 3–4``."""
    if end - start <= 1:
        return f"page {start}"
    return f"pages {start}\u2013{end - 1}"


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    suffix = "th" if n % 100 in (11, 12, 13) else _SUFFIXES.get(n % 10, "th")
    return f"{n}{suffix}"


_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


def search_suggestions(answer: CitedAnswer) -> str | None:
    """The Google Search Suggestions HTML an answer carries (a string or a dict), if any."""
    value = answer.extras.get("search_entry_point")
    if isinstance(value, dict):
        value = value.get("rendered_content") or value.get("renderedContent")
    return value if isinstance(value, str) and value.strip() else None


def build_plan(answer: CitedAnswer, sources: SourceSelection = "cited") -> Plan:
    """Plan the markers and the Sources list of `answer`."""
    check_choice("sources", sources, _SELECTIONS)
    marks = plan_marks(answer)
    cited = answer.cited_sources()
    fallback = not cited
    listed = answer.sources if fallback or sources == "all" else cited

    wanted = {source.id for source in listed}
    seen: dict[str, set[Detail]] = {sid: set() for sid in wanted}
    details: dict[str, list[Detail]] = {sid: [] for sid in wanted}
    for citation in answer.citations:
        first = citation.source_ids[0]
        if first not in wanted:
            continue
        quote = _clean(citation.quote, MAX_QUOTE) or None
        detail = Detail(quote, location_text(citation.location))
        if (detail.quote or detail.location) and detail not in seen[first]:
            seen[first].add(detail)
            details[first].append(detail)

    entries = []
    for source in listed:
        number = answer.footnote_number(source.id)
        if number is None:
            continue
        href = link_target(source.url)
        shown = details[source.id]
        entries.append(
            Entry(
                number=number,
                source=source,
                title=_clean(source.title) or None,
                domain=_clean(source.domain) or None,
                href=href,
                url_text=href or _clean(source.url) or None,
                details=tuple(shown[:MAX_DETAILS]),
                more_details=max(0, len(shown) - MAX_DETAILS),
            )
        )
    return Plan(marks, entries, fallback, search_suggestions(answer))


def mark_quotes(answer: CitedAnswer, mark: Mark) -> dict[int, str]:
    """Per footnote number at ``mark``: the first quote of its citations, else the snippet."""
    quotes: dict[int, str] = {}
    for position in mark.citations:
        citation = answer.citations[position]
        number = answer.footnote_number(citation.source_ids[0])
        if number is not None and number not in quotes and citation.quote:
            quote = _clean(citation.quote, MAX_QUOTE)
            if quote:
                quotes[number] = quote
    for number in mark.numbers:
        if number not in quotes and 0 < number <= len(answer.sources):
            snippet = _clean(answer.sources[number - 1].snippet, MAX_QUOTE)
            if snippet:
                quotes[number] = snippet
    return quotes
