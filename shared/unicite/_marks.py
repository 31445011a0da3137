"""Where citation markers go in an answer's text, and how a marker is written.

`plan_marks` decides, once, where markers are placed: a citation with a ``marker_span`` has that
span replaced; any other citation gets a marker inserted at the end of its span, before trailing
whitespace. Citations whose markers land on the same place share one combined marker with
ascending, distinct footnote numbers. `inject_markers` and every renderer build their output from
the same marks, so they always agree.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from unicite.exceptions import UsageError
from unicite.model import CitedAnswer

__all__ = [
    "Mark",
    "MarkerStyle",
    "check_choice",
    "check_marker_style",
    "format_marker",
    "plan_marks",
]

MarkerStyle = Literal["brackets", "sids", "footnotes", "sup"]
"""How a marker is written: ``[1][3]``, ``[[S:1,3]]``, ``[^1][^3]`` or an HTML ``<sup>``."""

_MARKER_STYLES = ("brackets", "sids", "footnotes", "sup")


@dataclass(frozen=True, slots=True)
class Mark:
    """One marker in the text: replaces ``text[start:end]`` (an insertion when they are equal)."""

    start: int
    end: int
    numbers: tuple[int, ...]
    """Footnote numbers, ascending and distinct."""
    citations: tuple[int, ...]
    """Positions in ``answer.citations`` of the citations this marker stands for."""


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
