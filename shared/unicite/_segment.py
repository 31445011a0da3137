"""Sentence, clause and claim segmentation of Markdown-ish LLM answers.

Every offset is a ``str`` index into the original text, which is never modified.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from unicite._marker_syntax import (
    MARKER_RE,
    MARKER_SHAPE_RE,
    code_spans,
    marker_spans,
    without_indexes,
)

__all__ = [
    "CITATION_MARKER_RE",
    "DELIM_ROW_RE",
    "FENCE_RE",
    "LIST_RE",
    "MARKER_RE",
    "SETEXT_RE",
    "TERM_RE",
    "Segment",
    "SegmentKind",
    "Segmentation",
    "cached_segmentation",
    "cached_segments",
    "claim_span",
    "claim_spans",
    "claims_in",
    "clauses",
    "find_markers",
    "segment",
]

SegmentKind = Literal["sentence", "heading", "bullet", "code", "table", "quote"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One unit of an answer; ``source[start:end]`` is non-empty and trimmed of whitespace."""

    start: int
    end: int
    kind: SegmentKind

    def text(self, source: str) -> str:
        """Return the segment's text.

        Args:
            source: The text the segment was computed from.

        Returns:
            ``source[start:end]``.
        """
        return source[self.start : self.end]


# Scripts written without spaces between words (CJK, Thai, ...): used by the sentence rules.
_SPACELESS = (
    "\u0e00-\u0eff"
    "\u1000-\u109f"
    "\u1780-\u17ff"
    "\u2e80-\u2fdf"
    "\u3005-\u3007"
    "\u3021-\u3029"
    "\u3031-\u303c"
    "\u3040-\u30ff"
    "\u3100-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\ua960-\ua97f"
    "\uac00-\ud7af"
    "\uf900-\ufaff"
    "\uff66-\uff9f"
    "\U00020000-\U0003ffff"
)
_SPACELESS_RE = re.compile("[" + _SPACELESS + "]")

CITATION_MARKER_RE = MARKER_RE
"""The citation marker pattern, `unicite._marker_syntax.MARKER_RE`, under its older name."""

TERM_RE = re.compile("[.!?\u2026\u203c\u2047\u2048\u2049\u3002\uff61\uff01\uff1f]+")
_CJK_TERMS = frozenset("\u3002\uff61\uff01\uff1f")
_CLOSERS = frozenset("\"'\u201d\u2019\u00bb\u203a)]*_\u300d\u300f\uff09\u3011\u3015\u3009\u300b")
_OPENERS = frozenset(
    "\"'\u201c\u2018\u00ab\u2039\u201e\u201a([{\u00bf\u00a1*_`<#@~"
    "\u300c\u300e\uff08\u3010\u3014\u3008\u300a"
)
_QUOTE_OPENERS = frozenset("\"'\u201c\u201e\u00ab\u2018\u201a\u2039\u300c\u300e")
_QUOTE_CLOSERS = frozenset("\"'\u201d\u201c\u00bb\u2019\u203a\u300d\u300f")
# fmt: off
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "vs", "v", "etc", "cf",
    "approx", "inc", "ltd", "co", "corp", "bros", "plc", "intl", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "gen", "gov", "sen", "rep", "rev",
    "hon", "capt", "col", "lt", "sgt", "messrs", "mme", "mlle", "dept", "univ", "est", "al",
    "viz", "incl", "esp", "ca", "ave", "blvd", "bzw", "usw", "ggf", "evtl", "inkl", "vgl", "sog",
    "mio", "mrd", "tsd", "jh", "jhd", "str", "env", "cie",
})
# Abbreviations that are also ordinary words ("No."), so they only hold before a number.
_NUMBER_ABBREVIATIONS = frozenset({
    "no", "nos", "nr", "fig", "figs", "eq", "eqs", "vol", "vols", "pp", "p", "ch", "sec",
})
# Abbreviations that may also end a sentence ("... in the U.S. It ..."): they do when the next
# word is one that opens sentences far more often than it follows these abbreviations.
_SENTENCE_FINAL = frozenset({
    "inc", "ltd", "co", "corp", "bros", "plc", "etc", "jr", "sr", "a.m", "p.m", "ave", "blvd",
    "str",
})
_SENTENCE_STARTERS = frozenset({
    "The", "This", "That", "These", "Those", "It", "Its", "They", "Their", "There", "He", "She",
    "His", "Her", "We", "Our", "You", "Your", "In", "On", "At", "As", "By", "For", "From", "But",
    "And", "So", "Yet", "However", "Meanwhile", "Also", "After", "Before", "While", "When",
    "If", "Since", "Although", "According", "Some", "Many", "Most", "Other", "Both", "Each",
    "Le", "La", "Les", "Il", "Elle", "Ils", "Elles", "Ce", "Cette", "Ces", "Der", "Die", "Das",
    "Es", "Er", "Sie", "Wir", "El", "Los", "Las",
})
# German ordinals ("am 5. Dezember", "im 19. Jh."): a one- or two-digit number and a dot that
# a month or century follows, or a preposition or article precedes.
_MONTHS = frozenset({
    "januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august",
    "september", "oktober", "november", "dezember", "jh", "jhd", "jahrhundert", "jahrhunderts",
})
_ORDINAL_LEADS = frozenset({
    "am", "vom", "zum", "bis", "seit", "ab", "im", "der", "die", "das", "dem", "den", "des",
    "zur", "beim", "ihr", "ihre", "ihrem", "sein", "seine", "seinem",
})
# fmt: on
_ABBREV_SCAN = 40


_SHORT_ABBREVIATION_NEXT = re.compile(r"[ \t]?[^\W\d_]{1,3}\.")
_WORD_RE = re.compile(r"[^\W\d_]+")
_WORD_BEFORE_RE = re.compile(r"([^\W\d_]{1,12})[ \t\u00a0]+$")


def _next_word(text: str, q: int) -> str:
    m = _WORD_RE.match(text, q, q + 24)
    return "" if m is None else m.group()


def _is_ordinal(text: str, dot: int, lo: int, q: int) -> bool:
    """Whether the digits before ``dot`` are a German ordinal ("am 5. Dezember")."""
    d = dot
    while d > lo and d > dot - 3 and text[d - 1].isdigit():
        d -= 1
    if not 1 <= dot - d <= 2 or (d > lo and not text[d - 1].isspace()):
        return False
    if _next_word(text, q).lower() in _MONTHS:
        return True
    m = _WORD_BEFORE_RE.search(text, max(lo, d - 16), d)
    return m is not None and m.group(1).lower() in _ORDINAL_LEADS


def _is_abbreviation(text: str, dot: int, lo: int, q: int) -> bool:
    """Whether the ``.`` at ``dot`` ends an abbreviation rather than the sentence.

    ``q`` is where the next sentence would start (``text[q]`` is its first character).
    """
    following = text[q]
    k = dot
    limit = max(lo, dot - _ABBREV_SCAN)
    while k > limit and (text[k - 1].isalpha() or text[k - 1] == "."):
        k -= 1
    if k == limit and k > lo and (text[k - 1].isalpha() or text[k - 1] == "."):
        return False
    token = text[k:dot]
    if not token:
        return k > lo and text[k - 1].isdigit() and _is_ordinal(text, dot, lo, q)
    low = token.lower()
    # "Acme Inc. Sells" holds; "... in the U.S. It has" ends a sentence.
    if (low in _SENTENCE_FINAL or ("." in token and token.isupper())) and _next_word(
        text, q
    ) in _SENTENCE_STARTERS:
        return False
    if low in _ABBREVIATIONS:
        return True
    if low in _NUMBER_ABBREVIATIONS:
        return following.isdigit()
    if len(token) == 1:
        if token.islower():
            # German two-part abbreviations: "ü. M.", "z. B.", "v. Chr.", "d. h.".
            return _SHORT_ABBREVIATION_NEXT.match(text, dot + 1) is not None
        return token.isupper() and (k == 0 or text[k - 1] != "\u00b0")
    return "." in token and all(1 <= len(part) <= 2 for part in token.split("."))


def _plausible_start(ch: str) -> bool:
    if ch.isalpha():
        return not ch.islower()
    if ch.isdigit() or ch in _OPENERS:
        return True
    return unicodedata.category(ch) in ("So", "Sc")


def _is_break(text: str, pos: int) -> bool:
    ch = text[pos]
    return ch == "\n" or (ch == "\r" and (pos + 1 >= len(text) or text[pos + 1] != "\n"))


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


_EOL_RE = re.compile(r"\r\n|\r|\n")
_NONWS_RE = re.compile(r"\S")
FENCE_RE = re.compile(r"`{3,}|~{3,}")
_RUN_RE = {"`": re.compile(r"`+"), "~": re.compile(r"~+")}
SETEXT_RE = re.compile(r"(?:=+|-+)\s*$")
_THEMATIC_RE = re.compile(r"([-*_])(?:[ \t]*\1){2,}\s*$")
_ATX_RE = re.compile(r"#{1,6}(?:\s|$)")
LIST_RE = re.compile(r"([-*+]|\d{1,9}[.)])(?:[ \t]|$)")
DELIM_ROW_RE = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?\s*$")
_BOLD_LINE_RE = re.compile(r"(\*\*|__)(?=\S)(.{1,120}?)(?<=\S)\1[ \t]*:?\s*$")
_QUOTE_PREFIX_CHARS = frozenset(" \t>")
_QUOTE_ONLY_RE = re.compile(r"[\s>]+")


@dataclass(slots=True)
class _Block:
    """A paragraph, list item or quote: lines ``first`` to ``last``, read from ``scan`` on."""

    start: int
    end: int
    kind: str
    """``"para"``, ``"item"`` or ``"quote"``."""
    first: int
    last: int
    scan: int


class _Parser:
    """Line-based block parser feeding paragraphs, list items and quotes to the splitter.

    With ``lazy``, `run` leaves paragraphs, list items and quotes whole (`_Block`) for
    `Segmentation` to split where asked.
    """

    ls: list[int]
    """Where each line starts."""
    le: list[int]
    """Where each line ends, before its break."""
    fs: list[int]
    """Where each line's first non-space character is, -1 for a blank line."""

    def __init__(self, text: str, lazy: bool = False, earlier: _Parser | None = None) -> None:
        self.text = text
        self.lazy = lazy
        self.out: list[Segment | _Block] = []
        self.cur: str | None = None
        self.cur_first = 0
        self.cur_last = 0
        self.cur_scan = 0
        # The farthest line a decision looked at, and where the parse could resume on a text
        # that begins the same (after a blank line: the line, `far`, len(out), the list).
        self.far = 0
        self.resumes: list[int] = []  # flat, five numbers each (plain ints: cheap to keep)
        self.start: tuple[int, bool, int] = (0, False, 0)
        lines = 0
        if earlier is not None:
            lines = self._resume(earlier)
        starts: list[int] = [0]
        ends: list[int] = []
        firsts: list[int] = []
        if earlier is not None and lines:
            # The shared lines, then this text's own from the first line not shared.
            starts = earlier.ls[:lines]
            ends = earlier.le[: lines - 1]
            firsts = earlier.fs[: lines - 1]
        for eol in _EOL_RE.finditer(text, starts[-1]):
            ends.append(eol.start())
            starts.append(eol.end())
        ends.append(len(text))
        search = _NONWS_RE.search
        for k in range(len(firsts), len(starts)):
            found = search(text, starts[k], ends[k])
            firsts.append(-1 if found is None else found.start())
        self.ls = starts
        self.le = ends
        self.fs = firsts

    def _resume(self, earlier: _Parser) -> int:
        """Take the blocks of ``earlier`` (a lazy parse of a text this one begins) that stay.

        A decision depends on the lines it looked at, all complete before this text ends: the
        parse resumes after the last blank line whose decisions before it looked at no other.
        Returns how many of its lines this text shares (the last one may end differently).
        """
        n = len(self.text)
        ls = earlier.ls
        safe = bisect.bisect_right(ls, n) - 1  # lines before it end, break included, in text
        resumes = earlier.resumes
        for k in range(len(resumes) - 5, -1, -5):
            # Read one by one: Cython cannot compile unpacking a slice with variable bounds.
            line, far, count = resumes[k], resumes[k + 1], resumes[k + 2]
            in_list, list_col = resumes[k + 3], resumes[k + 4]
            if max(line - 1, far) < safe:
                self.out = earlier.out[:count]
                self.far = far
                self.resumes = resumes[: k + 5]
                self.start = (line, bool(in_list), list_col)
                return line + 1
        return 0

    def _indent(self, s: int, f: int) -> int:
        width = 0
        for ch in self.text[s:f]:
            width = width + 4 - width % 4 if ch == "\t" else width + 1
        return width

    def _emit(self, a: int, b: int, kind: SegmentKind) -> None:
        a, b = _trim(self.text, a, b)
        if a < b:
            self.out.append(Segment(a, b, kind))

    def _open(self, kind: str, line: int, scan: int) -> None:
        self.cur = kind
        self.cur_first = line
        self.cur_last = line
        self.cur_scan = scan

    def segments(self) -> list[Segment]:
        """Every segment of the text."""
        return cast("list[Segment]", self.run())

    def run(self) -> list[Segment | _Block]:
        text, ls, le, fs = self.text, self.ls, self.le, self.fs
        nlines = len(ls)
        blank_before = True
        i, in_list, list_col = self.start
        in_table = False
        while i < nlines:
            f = fs[i]
            if f < 0:
                if self.cur is not None:
                    self._close()
                blank_before = True
                in_table = False
                i += 1
                if self.lazy:
                    self.resumes += (i, self.far, len(self.out), in_list, list_col)
                continue
            s, e = ls[i], le[i]
            ind = f - s if f == s or text.find("\t", s, f) < 0 else self._indent(s, f)
            ch = text[f]
            was_blank, blank_before = blank_before, False
            threshold = list_col + 4 if in_list else 4
            if was_blank and ind >= threshold:
                self._close()
                last = j = i
                while j < nlines and (fs[j] < 0 or self._indent(ls[j], fs[j]) >= threshold):
                    if fs[j] >= 0:
                        last = j
                    j += 1
                self.far = max(self.far, j)
                self._emit(f, le[last], "code")
                i = last + 1
                continue
            if ch in "`~":
                m = FENCE_RE.match(text, f, e)
                if m is not None and (ch == "~" or text.find("`", m.end(), e) < 0):
                    self._close()
                    i = self._fence(i, m.end() - m.start(), ch)
                    in_table = False
                    if ind == 0:
                        in_list = False
                    continue
            if ind < 4:
                # Only one-line setext headings: an LLM's "---" under prose is a rule.
                if (
                    self.cur == "para"
                    and self.cur_first == i - 1
                    and ch in "=-"
                    and SETEXT_RE.match(text, f, e)
                ):
                    self._emit(fs[self.cur_first], e, "heading")
                    self.cur = None
                    i += 1
                    continue
                if (ch in "-*_" and _THEMATIC_RE.match(text, f, e)) or (
                    ch == "#" and _ATX_RE.match(text, f, e)
                ):
                    self._close()
                    self._emit(f, e, "heading")
                    in_table = False
                    if ind == 0:
                        in_list = False
                    i += 1
                    continue
            if ch == "|" or (text.find("|", f, e) >= 0 and self._table_header(i)):
                self._close()
                self._emit(f, e, "table")
                if ch != "|":
                    self._emit(fs[i + 1], le[i + 1], "table")
                    i += 1
                in_table = True
                if ind == 0:
                    in_list = False
                i += 1
                continue
            if ch == ">":
                if self.cur == "quote":
                    self.cur_last = i
                else:
                    self._close()
                    self._open("quote", i, f)
                    if ind == 0:
                        in_list = False
                in_table = False
                i += 1
                continue
            m = LIST_RE.match(text, f, e)
            if m is not None:
                self._close()
                scan = m.end(1)
                while scan < e and text[scan] in " \t":
                    scan += 1
                self._open("item", i, scan)
                in_list = True
                list_col = ind + (scan - f if scan < e else m.end(1) - f + 1)
                in_table = False
                i += 1
                continue
            if in_table and text.find("|", f, e) >= 0:
                self._emit(f, e, "table")
                i += 1
                continue
            in_table = False
            if self.cur in (None, "para") and ch in "*_" and self._bold_line(f, e):
                self._close()
                self._emit(f, e, "heading")
                i += 1
                continue
            if self.cur is not None:
                self.cur_last = i
            else:
                self._open("para", i, f)
                if ind == 0:
                    in_list = False
            i += 1
        self._close()
        return self.out

    def _fence(self, i: int, width: int, ch: str) -> int:
        text, le, fs = self.text, self.le, self.fs
        end_line = len(le) - 1
        seen = len(le)  # every line, unless a closing fence is found
        run = _RUN_RE[ch]
        for j in range(i + 1, len(le)):
            fj = fs[j]
            if fj >= 0 and text[fj] == ch:
                m = run.match(text, fj, le[j])
                if (
                    m is not None
                    and m.end() - fj >= width
                    and _NONWS_RE.search(text, m.end(), le[j]) is None
                ):
                    end_line = seen = j
                    break
        self.far = max(self.far, seen)
        self._emit(fs[i], le[end_line], "code")
        return end_line + 1

    def _table_header(self, i: int) -> bool:
        text, le, fs = self.text, self.le, self.fs
        self.far = max(self.far, i + 1)
        if i + 1 >= len(le) or fs[i + 1] < 0 or text.find("|", fs[i], le[i]) < 0:
            return False
        nf, ne = fs[i + 1], le[i + 1]
        return text.find("|", nf, ne) >= 0 and DELIM_ROW_RE.match(text, nf, ne) is not None

    def _bold_line(self, f: int, e: int) -> bool:
        m = _BOLD_LINE_RE.match(self.text, f, e)
        if m is None:
            return False
        inner = m.group(2)
        return m.group(1) not in inner and inner[-1] not in ".!?\u2026\u3002\uff01\uff1f"

    def _close(self) -> None:
        kind = self.cur
        if kind is None:
            return
        self.cur = None
        first, last = self.cur_first, self.cur_last
        if self.lazy:
            self.out.append(_Block(self.fs[first], self.le[last], kind, first, last, self.cur_scan))
        else:
            self.out.extend(self._sentences(kind, first, last, self.cur_scan))

    def sentences(self, block: _Block) -> list[Segment]:
        """The segments of a paragraph, list item or quote."""
        return self._sentences(block.kind, block.first, block.last, block.scan)

    def _sentences(self, kind: str, first: int, last: int, scan: int) -> list[Segment]:
        out: list[Segment] = []
        bs, be = self.fs[first], self.le[last]
        quote = kind == "quote"
        points = self._split(bs, be, scan, quote, first, last)
        first_kind: SegmentKind = "bullet" if kind == "item" else "quote" if quote else "sentence"
        rest_kind: SegmentKind = "quote" if quote else "sentence"
        prev = bs
        emitted = False
        for p in [*points, be]:
            a, b = _trim(self.text, prev, p)
            if a >= b:
                prev = p
                continue
            if quote and _QUOTE_ONLY_RE.fullmatch(self.text, a, b):
                # An empty quote line belongs to the next sentence, or to the last one.
                if p < be:
                    continue
                if emitted:
                    done = out[-1]
                    out[-1] = Segment(done.start, b, done.kind)
                    break
            out.append(Segment(a, b, first_kind))
            emitted = True
            first_kind = rest_kind
            prev = p
        return out

    def _forced(
        self, first: int, last: int, quote: bool, mstarts: list[int], marks: list[tuple[int, int]]
    ) -> list[int]:
        """Line starts that begin a new unit regardless of punctuation."""
        text, ls, le, fs = self.text, self.ls, self.le, self.fs
        forced: list[int] = []
        pending = False
        for j in range(first + 1, last + 1):
            c, e = fs[j], le[j]
            if c < 0:
                continue
            if quote:
                while c < e and text[c] in _QUOTE_PREFIX_CHARS:
                    c += 1
                if _NONWS_RE.search(text, c, e) is None:
                    pending = True
                    continue
                if (
                    pending
                    or LIST_RE.match(text, c, e)
                    or _ATX_RE.match(text, c, e)
                    or text[c] == "|"
                ):
                    forced.append(ls[j])
                    pending = False
                    continue
            k = bisect.bisect_left(mstarts, c)
            if k < len(marks) and marks[k][0] == c:
                end = marks[k][1]
                while (
                    k + 1 < len(marks)
                    and marks[k + 1][0] < e
                    and _NONWS_RE.search(text, end, marks[k + 1][0]) is None
                ):
                    k += 1
                    end = marks[k][1]
                if end < e and _NONWS_RE.search(text, end, e) is not None:
                    forced.append(ls[j])
        return forced

    def _split(self, bs: int, be: int, scan: int, quote: bool, first: int, last: int) -> list[int]:
        """Sentence boundaries inside ``text[bs:be]`` (positions, increasing)."""
        runs = _Runs(self, bs, be, scan, quote)
        points: list[int] = []
        decide = runs.decide
        start = scan
        for r in range(len(runs.starts)):
            k = decide(r, start)
            if k >= 0:
                points.append(k)
                start = k
        forced = self._forced(first, last, quote, runs.mstarts, runs.marks)
        if forced:
            points = sorted(set(points).union(forced))
        return points

    def _quote_may_go_on(self, i: int, j: int, k: int, q: int) -> bool:
        """Whether ``text[i:j]``, an ellipsis closing a quote, goes on if that quote opens it.

        ``“We will not raise prices…” CEO Doug McMillon said.`` is one sentence: the ellipsis
        cut the quote, the speaker follows it (unless a word that opens sentences follows, as
        in ``“We'll see…” The company declined to comment.``). Inside a sentence (``He called
        it “a turning point…” OpenAI rose.``) the quote's end may end the sentence, as usual
        (`_opens_with_quote` tells).
        """
        text = self.text
        if "\u2026" not in text[i:j] and j - i < 3:
            return False
        if not any(ch in _QUOTE_CLOSERS for ch in text[j:k]):
            return False
        return _next_word(text, q) not in _SENTENCE_STARTERS

    def _opens_with_quote(self, start: int, i: int) -> bool:
        """Whether the sentence from ``start`` opens with a quote (before position ``i``)."""
        text = self.text
        while start < i and (text[start].isspace() or text[start] == ">"):
            start += 1
        return text[start] in _QUOTE_OPENERS

    def _eat_trailing(
        self, k: int, be: int, quote: bool, marks: list[tuple[int, int]], mstarts: list[int]
    ) -> int:
        """Extend a sentence end over the citation markers that close it."""
        text = self.text
        while True:
            t = k
            while t < be and text[t].isspace() and text[t] not in "\n\r":
                t += 1
            idx = bisect.bisect_left(mstarts, t)
            if idx < len(marks) and mstarts[idx] == t:
                k = marks[idx][1]
                continue
            break
        # A line holding nothing but markers closes the sentence on the line before it.
        t = k
        breaks = 0
        while t < be and (text[t].isspace() or (quote and breaks and text[t] == ">")):
            if _is_break(text, t):
                breaks += 1
            t += 1
        if breaks != 1:
            return k
        idx = bisect.bisect_left(mstarts, t)
        end = -1
        while idx < len(marks) and mstarts[idx] == t:
            end = marks[idx][1]
            idx += 1
            t = end
            while t < be and text[t] in " \t":
                t += 1
        if end < 0 or (t < be and not text[t].isspace()):
            return k
        return end


_NEEDS_START = -2
_UNDECIDED = -3


class _Runs:
    """The runs of sentence terminators of one block, outside inline code and markers.

    The splitter reads them in order; `decide` says where the sentence a run ends stops. Each
    decision reads only the text around its run, except for an ellipsis closing a quote, which
    asks where the sentence began (``start``, the previous boundary).
    """

    __slots__ = (
        "be",
        "bs",
        "codes",
        "ends",
        "marks",
        "mstarts",
        "parser",
        "quote",
        "starts",
        "text",
    )

    def __init__(self, parser: _Parser, bs: int, be: int, scan: int, quote: bool) -> None:
        text = parser.text
        self.text = text
        self.parser = parser
        self.bs = bs
        self.be = be
        self.quote = quote
        codes = code_spans(text, scan, be)
        marks = marker_spans(text, scan, be, codes)
        self.codes = codes
        self.marks = marks
        self.mstarts = [a for a, _ in marks]
        found = list(TERM_RE.finditer(text, scan, be))
        starts = [m.start() for m in found]
        ends = [m.end() for m in found]
        if starts and (codes or marks):
            # Leave out the runs that start inside inline code or a marker.
            inside: set[int] = set()
            for a, b in (*codes, *marks):
                inside.update(range(bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)))
            if inside:
                keep = [r for r in range(len(starts)) if r not in inside]
                starts = [starts[r] for r in keep]
                ends = [ends[r] for r in keep]
        self.starts = starts
        self.ends = ends

    def decide(self, r: int, start: int) -> int:
        """Where the sentence that run ``r`` ends stops, or -1 when the run ends none.

        ``start`` is where the sentence began; with a negative one, `_NEEDS_START` when the
        decision depends on it.
        """
        text, be, quote = self.text, self.be, self.quote
        i, j = self.starts[r], self.ends[r]
        cjk = text[j - 1] in _CJK_TERMS
        k = j
        while k < be and text[k] in _CLOSERS:
            k += 1
        # French spacing: « Bonjour. »
        if k + 1 < be and text[k] in " \u00a0\u202f" and text[k + 1] in "\u00bb\u203a":
            k += 2
        k = self.parser._eat_trailing(k, be, quote, self.marks, self.mstarts)
        q = k
        crossed = False
        while q < be:
            ch = text[q]
            if ch.isspace():
                crossed = crossed or ch in "\n\r"
            elif not (quote and crossed and ch == ">"):
                break
            q += 1
        if q >= be:
            return -1
        nxt = text[q]
        if q == k:
            if not cjk and not (nxt.isalpha() and _SPACELESS_RE.match(nxt)):
                return -1
            # 「行く。」と言った: a quoted sentence followed by a particle goes on.
            if cjk and k > j and "\u3041" <= nxt <= "\u309f":
                return -1
        elif not cjk and not _plausible_start(nxt):
            return -1
        if j - i == 1 and text[i] == "." and _is_abbreviation(text, i, self.bs, q):
            return -1
        if k > j and self.parser._quote_may_go_on(i, j, k, q):
            if start < 0:
                return _NEEDS_START
            if self.parser._opens_with_quote(start, i):
                return -1
        return k


class _Sentences:
    """The sentences of one paragraph or list item, found around the positions asked for.

    A sentence ends at a terminator run `_Runs.decide` accepts or at a line `_Parser._forced`
    starts; the sentence holding a position lies between the last such boundary before it and
    the first after it, so only the runs around it are decided. Equal to
    `_Parser.sentences` of the block.
    """

    __slots__ = (
        "block",
        "decided",
        "forced",
        "found",
        "found_starts",
        "markers",
        "run_starts",
        "runs",
        "text",
    )

    def __init__(self, parser: _Parser, block: _Block) -> None:
        self.text = parser.text
        self.block = block
        self.runs = runs = _Runs(parser, block.start, block.end, block.scan, False)
        self.forced = parser._forced(block.first, block.last, False, runs.mstarts, runs.marks)
        self.run_starts = runs.starts
        self.decided = [_UNDECIDED] * len(runs.starts)
        self.found: list[Segment] = []
        self.found_starts: list[int] = []
        self.markers: dict[int, list[tuple[int, int]]] = {}

    def _point(self, r: int) -> int:
        k = self.decided[r]
        if k == _UNDECIDED:
            k = self.runs.decide(r, -1)
            if k == _NEEDS_START:
                self._decide_all()
                return self.decided[r]
            self.decided[r] = k
        return k

    def _decide_all(self) -> None:
        start = self.block.scan
        for r in range(len(self.decided)):
            k = self.decided[r]
            if k == _UNDECIDED:
                k = self.runs.decide(r, start)
                self.decided[r] = k
            if k >= 0:
                start = k

    def at(self, pos: int) -> Segment | None:
        """The sentence holding ``pos``, or None when ``pos`` falls between two."""
        f = bisect.bisect_right(self.found_starts, pos) - 1
        if f >= 0 and pos < self.found[f].end:
            return self.found[f]
        block = self.block
        lo, hi = block.start, block.end
        last = bisect.bisect_left(self.run_starts, pos) - 1
        r = last
        # Boundaries increase with the runs: the last one at or before ``pos``, walking back,
        # and the first one after it (a run before ``pos`` may end its sentence after it).
        while r >= 0:
            k = self._point(r)
            if k >= 0:
                if k <= pos:
                    lo = k
                    break
                hi = k
            r -= 1
        if hi == block.end:
            for r in range(last + 1, len(self.decided)):
                k = self._point(r)
                if k >= 0:
                    hi = k
                    break
        forced = self.forced
        if forced:
            j = bisect.bisect_right(forced, pos)
            if j > 0:
                lo = max(lo, forced[j - 1])
            if j < len(forced):
                hi = min(hi, forced[j])
        a, b = _trim(self.text, lo, hi)
        if not a <= pos < b:
            return None
        kind: SegmentKind = "bullet" if block.kind == "item" and lo == block.start else "sentence"
        seg = Segment(a, b, kind)
        f = bisect.bisect_left(self.found_starts, a)
        self.found.insert(f, seg)
        self.found_starts.insert(f, a)
        return seg


class _Whole:
    """The sentences of a block split whole (a quote: empty quote lines join the next one)."""

    __slots__ = ("markers", "segs", "starts")

    def __init__(self, segs: list[Segment]) -> None:
        self.segs = segs
        self.starts = [seg.start for seg in segs]
        self.markers: dict[int, list[tuple[int, int]]] = {}

    def at(self, pos: int) -> Segment | None:
        k = bisect.bisect_right(self.starts, pos) - 1
        return self.segs[k] if k >= 0 and pos < self.segs[k].end else None


class Segmentation:
    """`segment` of a text, computed where asked: blocks at once, sentences around positions.

    The block structure (code, headings, tables, paragraphs, list items, quotes) needs every
    line; sentences are split only in the blocks and near the positions asked about, so that
    parsing the markers of a long answer costs little more per word than finding them.
    """

    __slots__ = ("_earlier", "_last", "_markers", "_parser", "_split", "starts", "text", "units")
    _parser: _Parser

    def __init__(self, text: str, earlier: Segmentation | None = None) -> None:
        self.text = text
        # A text that `text` begins: its blocks that end before `text` does are split alike.
        self._earlier = earlier if earlier is not None and earlier.text.startswith(text) else None
        prior = None if self._earlier is None else self._earlier._parser
        self._parser = _Parser(text, lazy=True, earlier=prior)
        self.units = self._parser.run()
        self.starts = [unit.start for unit in self.units]
        self._split: dict[int, _Sentences | _Whole] = {}
        self._markers: dict[int, list[tuple[int, int]]] = {}
        self._last = Segment(0, 0, "sentence")  # the last one found: asked about again and again

    def in_code(self, pos: int) -> bool:
        """Whether ``pos`` lies in a code block."""
        u = bisect.bisect_right(self.starts, pos) - 1
        if u < 0:
            return False
        unit = self.units[u]
        return isinstance(unit, Segment) and unit.kind == "code" and pos < unit.end

    def at(self, pos: int) -> Segment | None:
        """The segment holding ``pos``, or None when ``pos`` falls between segments."""
        last = self._last
        if last.start <= pos < last.end:
            return last
        u = bisect.bisect_right(self.starts, pos) - 1
        if u < 0:
            return None
        unit = self.units[u]
        if pos >= unit.end:
            return None
        if isinstance(unit, Segment):
            self._last = unit
            return unit
        split = self._split.get(u)
        if split is None:
            split = self._split_of(u, unit)
        seg = split.at(pos)
        if seg is not None:
            self._last = seg
        return seg

    def markers(self, seg: Segment, indexing: bool = False) -> list[tuple[int, int]]:
        """`marker_spans` of segment ``seg`` of this text (none in code), kept for asking again.

        Kept with the block's sentences, so that a text sharing them shares these too; without
        ``indexing`` they are read from the list with it when that one is known.
        """
        if seg.kind == "code":
            return []
        u = bisect.bisect_right(self.starts, seg.start) - 1
        unit = self.units[u]
        if isinstance(unit, Segment):
            kept = self._markers
        else:
            split = self._split.get(u)
            if split is None:
                split = self._split_of(u, unit)
            kept = split.markers
        key = 2 * seg.start + indexing  # plain ints: cheap to keep
        got = kept.get(key)
        if got is None:
            with_indexes = None if indexing else kept.get(key + 1)
            if with_indexes is not None:
                got = without_indexes(self.text, with_indexes, seg.start)
            else:
                got = marker_spans(self.text, seg.start, seg.end, indexing=indexing)
            kept[key] = got
        return got

    def _split_of(self, u: int, unit: _Block) -> _Sentences | _Whole:
        """The sentences of block ``u``, shared with an earlier text holding the same block.

        A block's sentences depend on the text before it and on its own lines, which end at a
        line break: when the earlier text holds the same block before that break, they agree.
        """
        earlier = self._earlier
        if earlier is not None and unit.end < len(self.text):
            e = bisect.bisect_left(earlier.starts, unit.start)
            if e < len(earlier.units) and earlier.units[e] == unit:
                shared = earlier._split.get(e)
                if shared is None:
                    shared = earlier._split_of(e, unit)
                self._split[u] = shared
                return shared
        split: _Sentences | _Whole
        if unit.kind == "quote":
            split = _Whole(self._parser.sentences(unit))
        else:
            split = _Sentences(self._parser, unit)
        self._split[u] = split
        return split


def segment(text: str) -> list[Segment]:
    """Split an answer into sentences and Markdown blocks.

    Fenced and indented code blocks are one ``"code"`` segment each; headings (ATX, setext,
    thematic breaks and lines that are wholly bold) and table rows are one segment per line;
    paragraphs, list items and block quotes are split into sentences. Citation markers that
    follow a sentence terminator stay with the sentence they close.

    Args:
        text: The answer, as Markdown-ish text.

    Returns:
        Segments in order. Together with whitespace they cover ``text`` exactly once; each is
        non-empty and neither starts nor ends with whitespace.
    """
    return _Parser(text).segments()


def find_markers(text: str) -> list[tuple[int, int]]:
    """Find the citation markers of an answer, outside code and URLs.

    Args:
        text: The answer.

    Returns:
        ``(start, end)`` spans of :data:`MARKER_RE` matches, in order.
    """
    out: list[tuple[int, int]] = []
    for seg in segment(text):
        if seg.kind != "code":
            out.extend(marker_spans(text, seg.start, seg.end))
    return out


_CONJUNCTION_RE = re.compile(r"\s+(?:and|but|or|while|whereas|although|which)(?=\s)")
_CLAUSE_CHARS_RE = re.compile(r"[;:,()\[\]{}]")
_TOKEN_RE = re.compile(r"\S+")
_MIN_CLAUSE_WORDS = 4


def clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a long compound sentence into clauses.

    Splits after ``;``, after ``:`` followed by more text and before ``and``, ``but``,
    ``or``, ``while``, ``whereas``, ``although`` and ``which`` introduced by a comma, but only
    where every resulting piece keeps at least four words. Brackets, inline code and citation
    markers are never split.

    Args:
        text: The whole text.
        start: Start of the sentence in ``text``.
        end: End of the sentence in ``text``.

    Returns:
        Trimmed ``(start, end)`` spans covering the sentence in order; ``[(start, end)]``
        (trimmed) when there is nothing to split, ``[]`` for a blank range.
    """
    n = len(text)
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    s, e = _trim(text, start, end)
    if s >= e:
        return []
    words = [
        m.start() for m in _TOKEN_RE.finditer(text, s, e) if any(c.isalnum() for c in m.group())
    ]

    def count(a: int, b: int) -> int:
        return bisect.bisect_left(words, b) - bisect.bisect_left(words, a)

    codes = code_spans(text, s, e)
    skip = sorted(codes + marker_spans(text, s, e, codes))
    si = 0
    depth = 0
    cuts: list[int] = []
    prev = s
    for m in _CLAUSE_CHARS_RE.finditer(text, s, e):
        i = m.start()
        while si < len(skip) and skip[si][1] <= i:
            si += 1
        if si < len(skip) and skip[si][0] <= i:
            continue
        ch = text[i]
        if ch in "([{":
            depth += 1
            continue
        if ch in ")]}":
            depth = max(0, depth - 1)
            continue
        if depth:
            continue
        cut = -1
        if ch == ";":
            cut = i + 1
        elif ch == ":":
            k = i + 1
            while k < e and text[k] in _CLOSERS:
                k += 1
            if k < e and text[k].isspace():
                cut = k
        elif _CONJUNCTION_RE.match(text, i + 1, e):
            cut = i + 1
        if (
            cut > prev
            and count(prev, cut) >= _MIN_CLAUSE_WORDS
            and count(cut, e) >= _MIN_CLAUSE_WORDS
        ):
            cuts.append(cut)
            prev = cut
    out: list[tuple[int, int]] = []
    prev = s
    for p in [*cuts, e]:
        a, b = _trim(text, prev, p)
        if a < b:
            out.append((a, b))
        prev = p
    return out


_BULLET_PREFIX_RE = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]*(?:\[[ xX]\][ \t]+)?")
_QUOTE_PREFIX_RE = re.compile(r"(?:>[ \t]*)+")
_HEADING_PREFIX_RE = re.compile(r"#{1,6}[ \t]*")
_PREFIX_RES = {
    "bullet": _BULLET_PREFIX_RE,
    "quote": _QUOTE_PREFIX_RE,
    "heading": _HEADING_PREFIX_RE,
}
_CLAIM_PUNCT = ".,;:!?\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u3001"
# Bounds on the whitespace/punctuation gaps and empty table cells a claim looks across, so
# that each claim costs O(sentence) however odd the caller's marker positions are.
_GAP = 256
_MAX_CELLS = 16
_PIPE_RE = re.compile(r"\|")
_PAREN_RE = re.compile(r"[()]")
# A parenthetical that points at sources rather than stating anything: "(see the company
# blog)", "(per the filing …)", "(sources: …)". A link inside or right after one supports
# the statement before it.
_POINTER_RE = re.compile(
    r"[ \t]*(?:(?:see|sources?|via|per (?:the|its|their|a|an)|cf\.|according to|details (?:in|at"
    r"|on)|more (?:at|in|on)|as reported|reported by|voir|d['\u2019]apr\u00e8s|selon|siehe|vgl\."
    r"|quelle|laut|fuente|v\u00e9ase)(?![^\W_])|\u53c2\u7167|\u51fa\u5178|\u53c2\u8003)",
    re.IGNORECASE,
)
# A closing offer or question to the user ("If you want, I can …", "Want me to …?"): a link
# after one supports the statement before it.
_OFFER_RE = re.compile(
    r"(?:\*\*|__)?(?:(?:if you(?:['\u2019]d| would)? (?:like|want|prefer)(?: me to|,? i\b)"
    r"|if (?:it helps|helpful|useful|needed|that helps|you['\u2019]re interested),? i\b"
    r"|want me to|would you like|do you want|shall i|should i"
    r"|i can (?:also )?(?:open|pull|check|look|dig|compare|list|summari[sz]e|provide|share|find"
    r"|search|help|give|make|draft|create|send|put|break|walk|go|track|set)"
    r"|let me know|happy to|i['\u2019]?d be happy|tell me (?:if|whether|which)"
    r"|need (?:more|me to)"
    r"|si (?:vous (?:voulez|le souhaitez|souhaitez)|tu (?:veux|le souhaites)),? je\b"
    r"|voulez-vous|veux-tu|souhaitez-vous|je peux (?:aussi |\u00e9galement )?(?:vous|te"
    r"|v\u00e9rifier|chercher|regarder|comparer)|n['\u2019]h\u00e9sitez pas|dites-moi"
    r"|(?:wenn|falls) (?:du|sie) (?:m\u00f6chtest|m\u00f6chten|magst|willst|wollen),? "
    r"(?:kann|k\u00f6nnte) ich|soll ich|m\u00f6chtest du|m\u00f6chten sie"
    r"|ich kann (?:dir|ihnen|gerne)"
    r"|si (?:quieres|lo deseas),? (?:puedo|te)|\u00bfquieres|\u00bfte gustar\u00eda)(?![^\W_])"
    r"|\u3054\u5e0c\u671b\u304c\u3042\u308c\u3070|\u5fc5\u8981\u3067\u3042\u308c\u3070"
    r"|\u3088\u308d\u3057\u3051\u308c\u3070|\u5fc5\u8981\u306a\u3089"
    r"|\u3082\u3057\u3088\u3051\u308c\u3070)",
    re.IGNORECASE,
)
# Bullets a line may open with that the block parser does not take for list items ("• ",
# "– ", "a) "), and bullet glyphs that also separate items within a line.
_LINE_BULLET_RE = re.compile(
    "[ \t]*(?:(?:[-*+\u2013\u2014]|[a-z]\\)|\\([a-z]\\)|\\d{1,3}[.)])[ \t]+"
    "|[\u2022\u25aa\u25e6\u2023\u25cf\u25a0\u25b8\u25ba][ \t]*)"
)
_LEAD_BULLET_RE = re.compile(
    "(?:[-*+\u2013\u2014][ \t]+|[\u2022\u25aa\u25e6\u2023\u25cf\u25a0\u25b8\u25ba][ \t]*)"
)
_GLYPH_CHAR_RE = re.compile("[\u2022\u25aa\u25e6\u2023\u25cf\u25a0\u25b8\u25ba]")
_BREAK_RE = re.compile("[\r\n]")
_GLYPH_RE = re.compile("(?:(?<=\\s)|^)[\u2022\u25aa\u25e6\u2023\u25cf\u25a0\u25b8\u25ba][ \t]*")
_TRAILING_PUNCT = frozenset(".,;:!?\u2026\u3002\uff01\uff1f\u3001 \t")


@functools.lru_cache(maxsize=4)
def cached_segmentation(text: str) -> Segmentation:
    """A `Segmentation` of a text, cached for the last few texts (`claim_span` asks in turn)."""
    return Segmentation(text)


@functools.lru_cache(maxsize=4)
def cached_segments(text: str) -> tuple[tuple[Segment, ...], tuple[int, ...]]:
    """`segment` of a text as a tuple with the segments' starts, cached for the last few texts.

    Parsing, claim finding and streaming ask for the same text's segments in turn.
    """
    segs = tuple(_Parser(text).segments())
    return segs, tuple(seg.start for seg in segs)


class _Index:
    """Segments of one text with per-segment marker and pipe positions, computed lazily."""

    __slots__ = (
        "_marks",
        "_pipes",
        "_pointers",
        "_prefix",
        "after",
        "back",
        "fwd",
        "segments",
        "text",
    )

    def __init__(self, segments: Segmentation, memo: bool) -> None:
        self.text = segments.text
        self.segments = segments
        # Per-segment results, keyed by the segment's start.
        self._marks: dict[int, tuple[list[int], list[int]]] = {}
        self._pipes: dict[int, list[int]] = {}
        # Walk results keyed by position; only shared across the markers of one batch.
        self.back: dict[tuple[int, bool], int] | None = {} if memo else None
        self.fwd: dict[int, int] | None = {} if memo else None
        self.after: dict[tuple[int, int], tuple[int, int] | None] | None = {} if memo else None
        self._prefix: dict[int, int] = {}
        self._pointers: dict[int, tuple[list[int], list[int]]] = {}

    def seg_at(self, pos: int) -> Segment | None:
        return self.segments.at(pos)

    def marks(self, seg: Segment) -> tuple[list[int], list[int]]:
        got = self._marks.get(seg.start)
        if got is None:
            spans = self.segments.markers(seg)
            got = ([a for a, _ in spans], [b for _, b in spans])
            self._marks[seg.start] = got
        return got

    def content_start(self, seg: Segment) -> int:
        """Start of segment ``seg`` after its list, quote or heading prefix."""
        got = self._prefix.get(seg.start)
        if got is None:
            pattern = _PREFIX_RES.get(seg.kind)
            m = None if pattern is None else pattern.match(self.text, seg.start, seg.end)
            got = seg.start if m is None else m.end()
            self._prefix[seg.start] = got
        return got

    def pointers(self, seg: Segment) -> tuple[list[int], list[int]]:
        """Starts and ends of the outermost pointer parentheticals (``(see …)``) of ``seg``.

        An unclosed one ends with the segment. Parentheses inside markers do not count.
        """
        got = self._pointers.get(seg.start)
        if got is None:
            text = self.text
            starts: list[int] = []
            ends: list[int] = []
            if seg.kind not in ("code", "table"):
                mstarts, mends = self.marks(seg)
                depth = 0
                opened = -1
                for m in _PAREN_RE.finditer(text, seg.start, seg.end):
                    p = m.start()
                    j = bisect.bisect_right(mstarts, p) - 1
                    if j >= 0 and p < mends[j]:
                        continue
                    if text[p] == "(":
                        if not depth:
                            opened = p
                        depth += 1
                    elif depth:
                        depth -= 1
                        if not depth and _POINTER_RE.match(text, opened + 1, seg.end):
                            starts.append(opened)
                            ends.append(p + 1)
                if depth and _POINTER_RE.match(text, opened + 1, seg.end):
                    starts.append(opened)
                    ends.append(seg.end)
            got = (starts, ends)
            self._pointers[seg.start] = got
        return got

    def pipes(self, seg: Segment) -> list[int]:
        got = self._pipes.get(seg.start)
        if got is None:
            got = [m.start() for m in _PIPE_RE.finditer(self.text, seg.start, seg.end)]
            self._pipes[seg.start] = got
        return got

    def marker_ending_at(self, q: int) -> int:
        if q <= 0:
            return -1
        seg = self.seg_at(q - 1)
        if seg is None:
            return -1
        starts, ends = self.marks(seg)
        j = bisect.bisect_left(ends, q)
        return starts[j] if j < len(ends) and ends[j] == q else -1

    def marker_starting_at(self, r: int) -> int:
        seg = self.seg_at(r)
        if seg is None:
            return -1
        starts, ends = self.marks(seg)
        j = bisect.bisect_left(starts, r)
        return ends[j] if j < len(starts) and starts[j] == r else -1


def _walk_back(text: str, idx: _Index, p: int, newlines: bool) -> int:
    """Position after the last non-space character before ``p``, skipping other markers.

    Returns -1 when a blank line is crossed. Without ``newlines`` the walk stops at a line
    break, so the result may point just after it (as it does after an overlong gap).
    """
    seen: list[int] = []
    result = -1
    while True:
        if idx.back is not None:
            cached = idx.back.get((p, newlines))
            if cached is not None:
                result = cached
                break
        seen.append(p)
        window = text[max(0, p - _GAP) : p]
        gap = window[len(window.rstrip()) :]
        q = p - len(gap)
        if not newlines:
            q = max(q, p - len(gap) + 1 + max(gap.rfind("\n"), gap.rfind("\r")))
        elif gap.count("\n") + gap.count("\r") - gap.count("\r\n") >= 2:
            break
        start = idx.marker_ending_at(q)
        if start >= 0:
            p = start
            continue
        window = text[max(0, q - _GAP) : q]
        r = q - len(window) + len(window.rstrip(_CLAIM_PUNCT + " \t"))
        if r < q:
            start = idx.marker_ending_at(r)
            if start >= 0:
                p = start
                continue
        result = q
        break
    if idx.back is not None:
        for pos in seen:
            idx.back[(pos, newlines)] = result
    return result


def _eat_forward(text: str, idx: _Index, r: int) -> int:
    """Position of the first non-space character from ``r`` on, skipping markers."""
    seen: list[int] = []
    n = len(text)
    while True:
        if idx.fwd is not None:
            cached = idx.fwd.get(r)
            if cached is not None:
                r = cached
                break
        seen.append(r)
        window = text[r : r + _GAP]
        gap = window[: len(window) - len(window.lstrip())]
        cut = min(i for i in (gap.find("\n"), gap.find("\r"), len(gap)) if i >= 0)
        t = r + cut
        end = idx.marker_starting_at(t) if t < n else -1
        if end > t:
            r = end
            continue
        r = t
        break
    if idx.fwd is not None:
        for pos in seen:
            idx.fwd[pos] = r
    return r


def _skip_gap(text: str, a: int, b: int) -> int:
    """Skip whitespace and clause punctuation from ``a``; ``b`` when the gap is overlong."""
    ceiling = min(b, a + _GAP)
    while a < ceiling and (text[a].isspace() or text[a] in ",;:"):
        a += 1
    return b if a == ceiling < b and (text[a].isspace() or text[a] in ",;:") else a


def _before(text: str, idx: _Index, q: int, ms: int) -> tuple[int, int] | None:
    """Claim ending at ``q`` (just after a non-space); ``None`` when only a prefix precedes."""
    seg = idx.seg_at(q - 1)
    if seg is None:
        return None
    start = idx.content_start(seg)
    if q - 1 < start:
        return None
    ends = idx.marks(seg)[1]
    j = bisect.bisect_right(ends, q) - 1
    if j >= 0 and ends[j] > start:
        start = ends[j]
    start = _skip_gap(text, start, q)
    return (start, q) if start < q else (ms, ms)


def _after(text: str, idx: _Index, me: int, limit: int = -1) -> tuple[int, int] | None:
    """Claim following a marker that leads its sentence; ``None`` when nothing follows."""
    r = _eat_forward(text, idx, me)
    if r >= len(text) or text[r].isspace():
        return None
    key = (r, limit)
    if idx.after is not None and key in idx.after:
        return idx.after[key]
    got: tuple[int, int] | None = None
    seg = idx.seg_at(r)
    if seg is not None:
        end = seg.end
        if 0 <= limit < end:
            end = limit
        starts = idx.marks(seg)[0]
        j = bisect.bisect_left(starts, r)
        if j < len(starts) and starts[j] < end:
            end = starts[j]
        while end > r and (text[end - 1] in ",;:" or text[end - 1].isspace()):
            end -= 1
        if r < end:
            got = (r, end)
    if idx.after is not None:
        idx.after[key] = got
    return got


def _table_claim(text: str, idx: _Index, seg: Segment, ms: int, me: int) -> tuple[int, int]:
    """Claim of a marker inside a table row: its cell, else the nearest earlier cell."""
    pipes = idx.pipes(seg)
    j = bisect.bisect_left(pipes, ms) - 1
    cell_lo = pipes[j] + 1 if j >= 0 else seg.start
    nxt = bisect.bisect_left(pipes, me)
    cell_hi = pipes[nxt] if nxt < len(pipes) else seg.end
    q = _walk_back(text, idx, ms, False)
    if q > cell_lo and not text[q - 1].isspace():
        start = cell_lo
        ends = idx.marks(seg)[1]
        jm = bisect.bisect_right(ends, q) - 1
        if jm >= 0 and ends[jm] > start:
            start = ends[jm]
        start = _skip_gap(text, start, q)
        if start < q:
            return start, q
    got = _after(text, idx, me, cell_hi)
    if got is not None:
        return got
    for jj in range(j, max(-1, j - _MAX_CELLS), -1):
        lo = pipes[jj - 1] + 1 if jj >= 1 else seg.start
        hi = pipes[jj]
        while hi > lo and text[hi - 1].isspace() and hi > pipes[jj] - _GAP:
            hi -= 1
        a = _skip_gap(text, lo, hi)
        if a < hi and not text[hi - 1].isspace():
            return a, hi
    return ms, ms


def _claim(text: str, idx: _Index, ms: int, me: int) -> tuple[int, int]:
    ums, ume = _unwrap(text, ms, me)
    got = _claim_of(text, idx, ums, ume)
    if got[0] < got[1] and got[1] <= ums:
        got = _refine(text, idx, got, ums)
    return got if got[0] < got[1] else (ms, ms)


def _refine(text: str, idx: _Index, span: tuple[int, int], ms: int) -> tuple[int, int]:
    """Narrow the claim ``span`` of a marker at ``ms`` that the marker follows.

    A closing offer or question is no claim: the statement before it is. A pointer
    parenthetical (``(see …)``) holding or ending the claim is left out, and so are bullets
    the block parser does not know (``•``, ``–``, ``a)``). Returns an empty span at ``ms``
    when only an offer precedes the marker.
    """
    a, b = span
    seg = idx.seg_at(b - 1)
    if seg is None or seg.kind in ("table", "code"):
        return span
    for _ in range(_MAX_OFFERS):
        start = idx.content_start(seg)
        if a < start or not _OFFER_RE.match(text, start, b):
            break
        got = _statement_before(text, idx, seg.start)
        if got is None:
            return ms, ms
        a, b = got
        found = idx.seg_at(b - 1)
        if found is None:
            return a, b
        seg = found
    p = _pointer_before(text, idx, seg, a, b, ms)
    if p >= 0:
        got = _statement_before(text, idx, p)
        if got is not None:
            a, b = got
    return _strip_bullets(text, a, b), b


_MAX_OFFERS = 3


def _statement_before(text: str, idx: _Index, p: int) -> tuple[int, int] | None:
    """The claim of a marker that would sit at ``p``, looking only before it, across blank lines."""
    window = text[max(0, p - _GAP) : p]
    q = p - (len(window) - len(window.rstrip()))
    if q <= 0:
        return None
    q = _walk_back(text, idx, q, True)
    if q <= 0 or text[q - 1].isspace():
        return None
    got = _before(text, idx, q, q)
    return got if got is not None and got[0] < got[1] else None


def _pointer_before(text: str, idx: _Index, seg: Segment, a: int, b: int, ms: int) -> int:
    """Start of a pointer parenthetical that holds the marker at ``ms`` or ends the claim."""
    starts, ends = idx.pointers(seg)
    j = bisect.bisect_left(starts, ms) - 1
    if j < 0:
        return -1
    p, e = starts[j], ends[j]
    if e > ms:
        return p
    if a <= p and e <= b and all(ch in _TRAILING_PUNCT for ch in text[e:b]):
        return p
    return -1


def _strip_bullets(text: str, a: int, b: int) -> int:
    """Start of the claim ``text[a:b]`` after the last bullet it holds."""
    new = a
    m = _LEAD_BULLET_RE.match(text, a, b)
    if m is not None:
        new = m.end()
    if _BREAK_RE.search(text, a, b) is not None:
        starts = [m.end() for m in _EOL_RE.finditer(text, a, b)]
    else:
        starts = []
    indent = a
    while indent > max(0, a - _GAP) and text[indent - 1] in " \t":
        indent -= 1
    if indent == 0 or text[indent - 1] in "\n\r":
        starts.insert(0, a)
    for pos in reversed(starts):
        m = _LINE_BULLET_RE.match(text, pos, b)
        if m is not None:
            new = max(new, m.end())
            break
    if _GLYPH_CHAR_RE.search(text, new, b) is not None:
        glyphs = [m.end() for m in _GLYPH_RE.finditer(text, new, b)]
        if glyphs:
            new = glyphs[-1]
    while new < b and text[new].isspace():
        new += 1
    return new if new < b else a


def _unwrap(text: str, ms: int, me: int) -> tuple[int, int]:
    """Widen a marker to the brackets around it, as in ``([site](url))`` given without them."""
    for _ in range(2):
        if ms > 0 and me < len(text) and text[ms - 1] + text[me] in ("()", "[]"):
            ms -= 1
            me += 1
    if ms > 0 and me == len(text) and text[ms - 1] == "(" and text.startswith("[", ms):
        # The text stops at the link (a stream, or a reader given the text up to it): the
        # "(" before it opens the wrapper whose ")" is still to come.
        ms -= 1
    return ms, me


def _claim_of(text: str, idx: _Index, ms: int, me: int) -> tuple[int, int]:
    seg = idx.seg_at(ms)
    if seg is not None and seg.kind == "table":
        return _table_claim(text, idx, seg, ms, me)
    q = _walk_back(text, idx, ms, False)
    if q > 0 and not text[q - 1].isspace():
        got = _before(text, idx, q, ms)
        if got is not None:
            return got
    got = _after(text, idx, me)
    if got is not None:
        return got
    q = _walk_back(text, idx, ms, True)
    if q > 0 and not text[q - 1].isspace():
        got = _before(text, idx, q, ms)
        if got is not None:
            return got
    return ms, ms


def _bounds(text: str, marker_start: int, marker_end: int | None) -> tuple[int, int]:
    n = len(text)
    ms = min(max(marker_start, 0), n)
    if marker_end is None:
        m = MARKER_SHAPE_RE.match(text, ms)
        return ms, ms if m is None else m.end()
    return ms, min(max(marker_end, ms), n)


def claim_span(text: str, marker_start: int, marker_end: int | None = None) -> tuple[int, int]:
    """Find the claim a citation marker closes.

    The claim is the sentence holding the last non-space character before the marker (other
    markers right before it are skipped, so ``[1][2]`` share a claim), starting after any
    earlier marker in that sentence. A marker that leads its bullet, line or sentence claims
    the text after it instead. List, quote and heading prefixes are excluded; in a table the
    claim is the marker's cell.

    The text's segmentation is cached, so repeated calls on one text cost
    O(sentence length); use :func:`claim_spans` for many markers at once.

    Args:
        text: The answer.
        marker_start: Start of the marker in ``text``.
        marker_end: End of the marker; found with the marker pattern when ``None``.

    Returns:
        Trimmed ``(start, end)`` with ``start <= end``: it ends at or before the marker, or
        starts at or after its end for a leading marker; ``(marker_start, marker_start)``
        when there is no claim.
    """
    ms, me = _bounds(text, marker_start, marker_end)
    return _claim(text, _Index(cached_segmentation(text), memo=False), ms, me)


def claim_spans(text: str, markers: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Find the claims of many citation markers, in linear time overall.

    Args:
        text: The answer.
        markers: ``(start, end)`` spans of markers in ``text``.

    Returns:
        One span per marker, equal to ``claim_span(text, start, end)``.
    """
    return claims_in(cached_segmentation(text), markers)


def claims_in(segments: Segmentation, markers: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """`claim_spans` of the text of ``segments``, split where the claims ask."""
    text = segments.text
    idx = _Index(segments, memo=True)
    out: list[tuple[int, int]] = []
    for marker_start, marker_end in markers:
        ms, me = _bounds(text, marker_start, marker_end)
        out.append(_claim(text, idx, ms, me))
    return out
