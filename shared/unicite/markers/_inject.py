"""Write citation markers into answer text, keeping every citation's offsets right."""

from __future__ import annotations

import bisect
from typing import Literal

from unicite._glued import glued_reading
from unicite._marks import Mark, MarkerStyle, check_marker_style, format_marker, plan_marks
from unicite.exceptions import UsageError
from unicite.model import Citation, CitedAnswer

__all__ = ["MarkerStyle", "inject_markers"]


def inject_markers(answer: CitedAnswer, style: MarkerStyle = "brackets") -> CitedAnswer:
    """Return a copy of `answer` whose text carries a marker for every citation.

    A citation with a ``marker_span`` (an inline link, a ``[3]`` the model wrote) has that span
    replaced; any other citation gets a marker inserted at the end of its span, before trailing
    whitespace. Citations whose markers fall on the same place share one combined marker, with
    footnote numbers (positions in ``answer.sources``) ascending and distinct. Styles:
    ``"brackets"`` (``[1][3]``), ``"sids"`` (``[[S:1,3]]``), ``"footnotes"`` (``[^1][^3]``) and
    ``"sup"`` (``<sup class="cite" data-sids="1,3">[1,3]</sup>``).

    Citation offsets move to the new text and each ``marker_span`` points at the citation's
    marker. A citation's text changes only where a marker now lies strictly inside its span (its
    own, when the span ends in whitespace, or another citation's) or where its span overlapped a
    replaced marker. The text is rebuilt once: linear time plus a sort of the markers.

    Args:
        answer: The answer to mark up; it is not modified.
        style: The marker style.

    Returns:
        A new, validated `CitedAnswer`.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer` or ``style`` is unknown.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"inject_markers expects a CitedAnswer, got {type(answer).__name__}")
    check_marker_style(style)
    return _Injection(answer, plan_marks(answer), style).result()


class _Injection:
    """The new text, and where every old position lands in it."""

    def __init__(self, answer: CitedAnswer, marks: list[Mark], style: MarkerStyle) -> None:
        self.answer = answer
        self.marks = marks
        self.starts = [mark.start for mark in marks]
        self.style = style
        self._build(set())
        if style == "brackets":
            # A [n] glued to a word that reads as an index would not be read back as a
            # citation (``data[1]`` after a programming word): a space goes before it.
            spaced = {
                k
                for k, mark in enumerate(marks)
                if mark.start == mark.end and self._reads_as_text(self.new_starts[k])
            }
            if spaced:
                self._build(spaced)

    def _reads_as_text(self, start: int) -> bool:
        reading = glued_reading(self.text, start) if start else None
        return reading is not None and reading.reading != "citation"

    def _build(self, spaced: set[int]) -> None:
        """The new text, a space before the inserted markers in `spaced`."""
        old = self.answer.text
        self.new_starts = []
        self.new_ends = []
        self.gaps = [1 if k in spaced else 0 for k in range(len(self.marks))]
        parts: list[str] = []
        position = 0
        delta = 0  # running length change of the text before the current position
        for k, mark in enumerate(self.marks):
            parts.append(old[position : mark.start])
            marker = format_marker(mark.numbers, self.style)
            if k in spaced:
                parts.append(" ")
                delta += 1
            parts.append(marker)
            self.new_starts.append(mark.start + delta)
            self.new_ends.append(mark.start + delta + len(marker))
            delta += len(marker) - (mark.end - mark.start)
            position = mark.end
        parts.append(old[position:])
        self.text = "".join(parts)

    def moved(self, position: int, edge: Literal["start", "end"]) -> int:
        """Where an old span edge lands in the new text.

        A span never takes in a marker inserted exactly at its edge, and takes in the whole of
        a replaced marker it overlapped.
        """
        index = bisect.bisect_right(self.starts, position) - 1
        if index < 0:
            return position
        mark = self.marks[index]
        if mark.start == mark.end == position:
            if edge == "start":
                return self.new_ends[index]
            return self.new_starts[index] - self.gaps[index]
        if position == mark.start:
            return self.new_starts[index]
        if position < mark.end:
            return self.new_starts[index] if edge == "start" else self.new_ends[index]
        return position + self.new_ends[index] - mark.end

    def result(self) -> CitedAnswer:
        owner: dict[int, int] = {}
        for number, mark in enumerate(self.marks):
            for position in mark.citations:
                owner[position] = number
        citations: list[Citation] = []
        for position, citation in enumerate(self.answer.citations):
            end = self.moved(citation.end, "end")
            start = min(self.moved(citation.start, "start"), end)
            index = owner.get(position)
            span = None if index is None else (self.new_starts[index], self.new_ends[index])
            update = {"start": start, "end": end, "text": self.text[start:end], "marker_span": span}
            citations.append(citation.model_copy(update=update))
        return self.answer.replace(text=self.text, citations=citations)
