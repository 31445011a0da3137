"""Claim segmentation for post-hoc attribution: the parts of an answer that need a source.

Sentences, bullets and quotes are claims (long compound sentences are split into clauses);
code, headings, number-only tables, lead-ins and chat boilerplate are not.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from unicite._marker_syntax import marker_spans
from unicite._segment import Segment, clauses, find_markers, segment

__all__ = ["Claim", "ClaimSplit", "claim_text", "split_claims"]

# A sentence with at least this many words is split into clauses when it is compound.
CLAUSE_MIN_WORDS = 25

_WORD_RE = re.compile(r"\w+")
_LETTER_RE = re.compile(r"[^\W\d_]")
_PREFIX_RE = {
    "bullet": re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]*(?:\[[ xX]\][ \t]+)?"),
    "quote": re.compile(r"(?:>[ \t]*)+"),
}
_LINK_RE = re.compile(r"\[([^\[\]\n]{1,200})\]\((?:[^()\s]|\([^()\s]{0,300}\))*\)")
_EMPHASIS_RE = re.compile(r"`+|\*+|~~|(?<!\w)_+|_+(?!\w)")
_TAIL_PUNCT = frozenset(" \t\r\n.,;:!?)]\u3002\uff01\uff1f")
_BOILERPLATE_RE = re.compile(
    r"(?:(?:i|we)\s+hope\s+(?:this|that|it)\s+helps|hope\s+(?:this|that)\s+helps"
    r"|let\s+me\s+know\s+if|feel\s+free\s+to|(?:if\s+you\s+have|do\s+you\s+have)\s+any\s+"
    r"(?:other|more|further|additional)?\s*questions|is\s+there\s+anything\s+else"
    r"|happy\s+to\s+help|glad\s+(?:i\s+could|to)\s+help|good\s+luck|great\s+question"
    r"|as\s+an\s+ai(?:\s+language\s+model)?|i\s+(?:can(?:not|'t)|am\s+unable\s+to)\s+browse"
    r"|(?:here\s+(?:is|are)|here's)\s+(?:a|an|the|some|what|how)\b[^.!?]{0,60}[.!:]?\s*$"
    r"|(?:sure|certainly|of\s+course|absolutely|okay|ok)[.!,]?\s*$)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim: a span of the answer and the plain text it is scored with."""

    start: int
    end: int
    text: str
    """The span's text without citation markers and Markdown emphasis."""


@dataclass(slots=True)
class ClaimSplit:
    """The claims of an answer and counts of what was skipped, for diagnostics."""

    claims: list[Claim]
    code: int = 0
    skipped: int = 0
    markers: int = 0

    @property
    def code_only(self) -> bool:
        """The answer holds code and nothing else that could need a source."""
        return not self.claims and self.code > 0 and self.skipped == 0


_BLANK_LINE_RE = re.compile(r"\n[ \t]*\r?\n")
_DELIMITER_ROW_RE = re.compile(r"\|?[\s:|-]*-[\s:|-]*\|?")


def _number_only_tables(segments: list[Segment], text: str) -> set[int]:
    """Indices of table rows that claim nothing: header and delimiter rows, number-only tables."""
    skip: set[int] = set()
    n = 0
    while n < len(segments):
        if segments[n].kind != "table":
            n += 1
            continue
        end = n + 1
        while (
            end < len(segments)
            and segments[end].kind == "table"
            and not _BLANK_LINE_RE.search(text, segments[end - 1].end, segments[end].start)
        ):
            end += 1
        rows = range(n, end)
        delimiter = next(
            (k for k in rows if _DELIMITER_ROW_RE.fullmatch(segments[k].text(text))), None
        )
        body = [k for k in rows if delimiter is None or k > delimiter]
        if not any(_LETTER_RE.search(text, segments[k].start, segments[k].end) for k in body):
            skip.update(rows)
        elif delimiter is not None:
            skip.update(range(n, delimiter + 1))  # the header labels columns; it claims nothing
        n = end
    return skip


def _strip_markers(text: str, start: int, end: int, markers: list[tuple[int, int]]) -> str:
    """The span's text with citation markers removed (each replaced by one space)."""
    lo = bisect.bisect_left(markers, (start, -1))
    parts: list[str] = []
    position = start
    for a, b in markers[lo:]:
        if a >= end:
            break
        parts.append(text[position:a])
        parts.append(" ")
        position = min(b, end)
    parts.append(text[position:end])
    return "".join(parts)


def _trim_trailing_markers(text: str, start: int, end: int, markers: list[tuple[int, int]]) -> int:
    """End of the span once markers that close it (and what follows them) are cut off."""
    k = bisect.bisect_left(markers, (start, -1))
    for a, b in markers[k:]:
        if a >= end:
            break
        if all(ch in _TAIL_PUNCT for ch in _strip_markers(text, b, end, markers)):
            end = a
            break
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _plain(text: str) -> str:
    text = _EMPHASIS_RE.sub("", _LINK_RE.sub(lambda m: m.group(1), text))
    return " ".join(text.replace("|", " ").split())


def split_claims(text: str, *, clause_min_words: int = CLAUSE_MIN_WORDS) -> ClaimSplit:
    """Find the claims of an answer.

    Args:
        text: The answer.
        clause_min_words: Sentences with at least this many words are split into clauses.

    Returns:
        The claims in text order, with counts of code blocks and skipped segments.
    """
    segments = segment(text)
    markers = [
        span
        for seg in segments
        if seg.kind != "code"
        for span in marker_spans(text, seg.start, seg.end)
    ]
    skip_rows = _number_only_tables(segments, text)
    out = ClaimSplit(claims=[], markers=len(markers))
    for n, seg in enumerate(segments):
        if seg.kind == "code":
            out.code += 1
            continue
        if seg.kind == "heading" or n in skip_rows:
            out.skipped += 1
            continue
        start, end = seg.start, seg.end
        prefix = _PREFIX_RE.get(seg.kind)
        if prefix is not None:
            m = prefix.match(text, start, end)
            if m is not None:
                start = m.end()
        end = _trim_trailing_markers(text, start, end, markers)
        body = _plain(_strip_markers(text, start, end, markers))
        if (
            len(_WORD_RE.findall(body)) < 2
            or body.endswith(":")
            or _BOILERPLATE_RE.match(body) is not None
        ):
            out.skipped += 1
            continue
        pieces = [(start, end)]
        if seg.kind != "table" and len(body.split()) >= clause_min_words:
            pieces = clauses(text, start, end) or pieces
        for a, b in pieces:
            b = _trim_trailing_markers(text, a, b, markers)
            if len(pieces) > 1:
                while b > a and text[b - 1] in ",;":
                    b -= 1
            piece = body if (a, b) == (start, end) else _plain(_strip_markers(text, a, b, markers))
            if a < b and piece:
                out.claims.append(Claim(a, b, piece))
    return out


def claim_text(text: str) -> str:
    """A claim's plain text: citation markers and Markdown emphasis removed, spaces collapsed."""
    return _plain(_strip_markers(text, 0, len(text), find_markers(text)))
