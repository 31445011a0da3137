"""Where citation markers go and what the Sources list holds, shared by every format.

`plan_marks` decides, once, where markers are placed in the answer text: a citation with a
``marker_span`` has that span replaced; any other citation gets a marker inserted at the end of
its span, before trailing whitespace. Citations whose markers land on the same place share one
combined marker with ascending, distinct footnote numbers. `inject_markers` and every renderer
build their output from the same plan, so they always agree.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from unicite._text import sanitize_display, truncate
from unicite._urls import safe_href
from unicite.exceptions import UsageError
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
    "MAX_LINK_LENGTH",
    "Detail",
    "Entry",
    "Mark",
    "MarkerStyle",
    "Plan",
    "SourceSelection",
    "build_plan",
    "format_marker",
    "link_target",
    "plan_marks",
    "search_suggestions",
    "weave",
]

MarkerStyle = Literal["brackets", "sids", "footnotes", "sup"]
"""How a marker is written: ``[1][3]``, ``[[S:1,3]]``, ``[^1][^3]`` or an HTML ``<sup>``."""

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

_MARKER_STYLES = ("brackets", "sids", "footnotes", "sup")
_SELECTIONS = ("cited", "all")


@dataclass(frozen=True, slots=True)
class Mark:
    """One marker in the text: replaces ``text[start:end]`` (an insertion when they are equal)."""

    start: int
    end: int
    numbers: tuple[int, ...]
    """Footnote numbers, ascending and distinct."""
    citations: tuple[int, ...]
    """Positions in ``answer.citations`` of the citations this marker stands for."""


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


def format_marker(numbers: tuple[int, ...], style: MarkerStyle = "brackets") -> str:
    """The text of one combined marker for ascending footnote numbers."""
    if style == "brackets":
        return "".join(f"[{n}]" for n in numbers)
    if style == "footnotes":
        return "".join(f"[^{n}]" for n in numbers)
    joined = ",".join(str(n) for n in numbers)
    if style == "sids":
        return f"[[S:{joined}]]"
    return f'<sup class="cite" data-sids="{joined}">[{joined}]</sup>'


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise `UsageError` unless ``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise UsageError(f"{name} must be one of {allowed}, got {value!r}")


def check_marker_style(style: object) -> None:
    """Raise `UsageError` for an unknown marker style."""
    check_choice("style", style, _MARKER_STYLES)


class _TrailingSpace:
    """Finds where trailing whitespace before a position begins, in O(log n) per query."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None

    def back_off(self, start: int, end: int) -> int:
        if end <= start or not self._text[end - 1].isspace():
            return end
        if self._starts is None:  # built on first need: one linear scan of the text
            self._starts = [match.start() for match in re.finditer(r"\s+", self._text)]
        run = bisect.bisect_right(self._starts, end - 1) - 1
        return max(start, self._starts[run])


def plan_marks(answer: CitedAnswer) -> list[Mark]:
    """Where the markers of `answer` go: sorted, non-overlapping marks over ``answer.text``.

    Overlapping marker spans merge into one replacement; an insertion point that falls inside
    or at the edge of a replaced span joins that marker. Runs in O(n + k log k).
    """
    text = answer.text
    size = len(text)
    spaces = _TrailingSpace(text)
    replaced: list[tuple[int, int, int]] = []
    inserted: list[tuple[int, int]] = []
    numbers_of: list[tuple[int, ...]] = []
    for position, citation in enumerate(answer.citations):
        found = {answer.footnote_number(sid) for sid in citation.source_ids}
        numbers = tuple(sorted(n for n in found if n is not None))
        numbers_of.append(numbers)
        if not numbers:
            continue
        span = citation.marker_span
        if span is not None and 0 <= span[0] < span[1] <= size:
            replaced.append((span[0], span[1], position))
        elif span is not None and 0 <= span[0] == span[1] <= size:
            inserted.append((span[0], position))
        else:
            end = min(citation.end, size)
            inserted.append((spaces.back_off(min(citation.start, end), end), position))

    # Merge overlapping replacements into groups [start, end) with their citations.
    replaced.sort()
    groups: list[tuple[int, list[int], list[int]]] = []  # start, [end], members
    for start, end, position in replaced:
        if groups and start < groups[-1][1][0]:
            groups[-1][1][0] = max(groups[-1][1][0], end)
            groups[-1][2].append(position)
        else:
            groups.append((start, [end], [position]))
    starts = [group[0] for group in groups]

    points: dict[int, list[int]] = {}
    for point, position in inserted:
        index = bisect.bisect_right(starts, point) - 1
        if index >= 0 and point <= groups[index][1][0]:
            groups[index][2].append(position)
        else:
            points.setdefault(point, []).append(position)

    marks = [_mark(start, end[0], members, numbers_of) for start, end, members in groups] + [
        _mark(point, point, members, numbers_of) for point, members in points.items()
    ]
    marks.sort(key=lambda mark: (mark.start, mark.end))
    return marks


def _mark(start: int, end: int, members: list[int], numbers_of: list[tuple[int, ...]]) -> Mark:
    numbers = sorted({n for position in members for n in numbers_of[position]})
    return Mark(start, end, tuple(numbers), tuple(sorted(members)))


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
    """A short human description of where in a source a citation points."""
    if isinstance(location, PageLocation):
        return _range_text("page", "pages", location.start_page, location.end_page)
    if isinstance(location, CharLocation):
        return _range_text("char", "chars", location.start, location.end)
    if isinstance(location, BlockLocation):
        return _range_text("block", "blocks", location.start_block, location.end_block)
    if isinstance(location, SearchResultLocation):
        # The index is 0-based; people count results from 1.
        text = f"search result {location.search_result_index + 1}"
        if location.start_block is not None and location.end_block is not None:
            text += ", " + _range_text("block", "blocks", location.start_block, location.end_block)
        return text
    return None


def _range_text(one: str, many: str, start: int, end: int) -> str:
    """An end-exclusive range shown inclusively: pages 3..5 is ``pages 3–4``."""
    if end - start <= 1:
        return f"{one} {start}"
    return f"{many} {start}\u2013{end - 1}"


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
