"""Replace spans of a text and follow positions from the old text into the new one."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Edit", "EditedText", "merge"]


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` by `replacement` (a deletion when it is empty)."""

    start: int
    end: int
    replacement: str = ""


def merge(edits: Sequence[Edit]) -> list[Edit]:
    """Deletions sorted, overlapping or touching ones joined; replacements must not overlap."""
    out: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if out and edit.start <= out[-1].end and not edit.replacement and not out[-1].replacement:
            last = out[-1]
            out[-1] = Edit(last.start, max(last.end, edit.end))
        else:
            out.append(edit)
    return out


class EditedText:
    """The text with sorted, disjoint edits applied, built in one pass."""

    def __init__(self, text: str, edits: Sequence[Edit]) -> None:
        self.edits = list(edits)
        self.starts = [edit.start for edit in self.edits]
        self.new_starts: list[int] = []
        parts: list[str] = []
        position = 0
        delta = 0
        for edit in self.edits:
            parts.append(text[position : edit.start])
            parts.append(edit.replacement)
            self.new_starts.append(edit.start + delta)
            delta += len(edit.replacement) - (edit.end - edit.start)
            position = edit.end
        parts.append(text[position:])
        self.text = "".join(parts) if self.edits else text

    def position(self, p: int, side: Literal["start", "end"]) -> int:
        """Where old position ``p`` lands; a position inside an edit goes to its start or end."""
        index = bisect.bisect_right(self.starts, p) - 1
        if index < 0:
            return p
        edit = self.edits[index]
        new_start = self.new_starts[index]
        new_end = new_start + len(edit.replacement)
        if p == edit.start:
            return new_start
        if p < edit.end:
            return new_start if side == "start" else new_end
        return p + new_end - edit.end

    def span(self, start: int, end: int) -> tuple[int, int]:
        """An old ``(start, end)`` span in the new text (never reversed)."""
        new_end = self.position(end, "end")
        return min(self.position(start, "start"), new_end), new_end
