"""Terminal and plain-text renderings: marked-up text, then a numbered Sources block.

Plain string building (no rich): the same code serves ``format="terminal"`` (OSC 8 links when
enabled, wrapped to the terminal's width) and ``format="text"`` (no escape sequences at all).
"""

from __future__ import annotations

import re
import unicodedata

from unicite._marks import Mark, format_marker
from unicite._render._hyperlinks import osc8
from unicite._render._plan import Entry, Plan, weave
from unicite._text import sanitize_display
from unicite.model import CitedAnswer

__all__ = ["SEARCH_SUGGESTIONS_NOTE", "render_terminal"]

SEARCH_SUGGESTIONS_NOTE = (
    "Google Search Suggestions are available for this answer; the HTML rendering shows them."
)

# (separator before the word, the word as written, its display width)
_Word = tuple[str, str, int]

_FENCE_RE = re.compile(r" {0,3}(?:```|~~~)")
_CONTAINER_RE = re.compile(r"[ \t]*(?:(?:>[ \t]?)+|(?:[-*+\u2022]|\d{1,9}[.)])[ \t]+)?")
_WORD_RE = re.compile(r"(\s*)(\S+)")
# A token that is only markers (and closing punctuation) stays on the line of the word before.
_MARKER_TOKEN_RE = re.compile(r"(?:\[\d+\])+[^\s\w]*")
# Kinsoku: CJK marks that may not start a line (closing punctuation, small kana, the
# prolonged sound mark) and that may not end one (opening brackets).
_NO_BREAK_BEFORE = frozenset(
    "\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff01\uff1f\uff09\uff3d\uff5d\u3015"
    "\u3009\u300b\u300d\u300f\u3011\u3019\u3017\u30fc\u3005\u309d\u309e\u30fd\u30fe"
    "\u3041\u3043\u3045\u3047\u3049\u3063\u3083\u3085\u3087"
    "\u30a1\u30a3\u30a5\u30a7\u30a9\u30c3\u30e3\u30e5\u30e7\u30fb"
)
_NO_BREAK_AFTER = frozenset("\uff08\uff3b\uff5b\u3014\u3008\u300a\u300c\u300e\u3010\u3018\u3016")


def char_width(char: str) -> int:
    """Columns a character takes in a terminal: 0 for combining and format, 2 for wide."""
    if char < "\u0300":
        return 1
    if unicodedata.combining(char) or unicodedata.category(char) in {"Mn", "Me", "Cf"}:
        return 0
    return 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1


def text_width(text: str) -> int:
    """Columns ``text`` takes in a terminal (it must hold no escape sequences)."""
    if text.isascii():
        return len(text)
    return sum(char_width(char) for char in text)


def _is_wide(char: str) -> bool:
    return char >= "\u1100" and unicodedata.east_asian_width(char) in {"W", "F"}


def _pieces(word: str) -> list[str]:
    """Split a word between two wide (CJK) characters, where lines may break without a space.

    No break goes before closing or after opening CJK punctuation, nor next to anything else
    (so a marker stays with the character it follows).
    """
    if word.isascii():
        return [word]
    pieces: list[str] = []
    start = 0
    for index in range(1, len(word)):
        before, after = word[index - 1], word[index]
        if (
            _is_wide(before)
            and _is_wide(after)
            and after not in _NO_BREAK_BEFORE
            and before not in _NO_BREAK_AFTER
        ):
            pieces.append(word[start:index])
            start = index
    pieces.append(word[start:])
    return pieces


def _words(text: str) -> list[_Word]:
    words: list[_Word] = []
    for sep, word in _WORD_RE.findall(text):
        for n, piece in enumerate(_pieces(word)):
            words.append((sep if n == 0 else "", piece, text_width(piece)))
    return words


def _fill(prefix: str, hang: str, words: list[_Word], width: int | None) -> list[str]:
    """Greedy fill: words never split, so escape sequences and markers stay whole."""
    if not words:
        return [prefix.rstrip()]
    if width is None:
        return [prefix + "".join(sep + word for sep, word, _ in words).lstrip()]
    lines: list[str] = []
    line = prefix + words[0][1]
    used = text_width(prefix) + words[0][2]
    hang_width = text_width(hang)
    for sep, word, size in words[1:]:
        if used + text_width(sep) + size > width:
            lines.append(line)
            line, used = hang + word, hang_width + size
        else:
            line += sep + word
            used += text_width(sep) + size
    lines.append(line)
    return lines


def _wrap_body(body: str, width: int | None) -> str:
    """Wrap long lines of prose; code fences and tables are left as they are."""
    if width is None:
        return body
    out: list[str] = []
    fenced = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            fenced = not fenced
        if fenced or _FENCE_RE.match(line) or line.lstrip().startswith("|"):
            out.append(line)
            continue
        if text_width(line) <= width:
            out.append(line)
            continue
        container = _CONTAINER_RE.match(line)
        prefix = container.group() if container else ""
        if ">" in prefix:  # a block quote continues as one
            hang = prefix if prefix[-1:].isspace() else prefix + " "
        else:
            hang = " " * text_width(prefix)
        words = _words(line[len(prefix) :])
        glued: list[_Word] = []
        for word in words:
            if glued and _MARKER_TOKEN_RE.fullmatch(word[1]):
                sep, previous, size = glued[-1]
                glued[-1] = (
                    sep,
                    previous + word[0] + word[1],
                    size + text_width(word[0]) + word[2],
                )
            else:
                glued.append(word)
        out.extend(_fill(prefix, hang, glued, width))
    return "\n".join(out)


def _entry_lines(entry: Entry, number_width: int, links: bool, width: int | None) -> list[str]:
    prefix = f"{entry.number:>{number_width}}. "
    hang = " " * len(prefix)
    label = entry.label
    url = entry.url_text
    words: list[_Word] = []
    if url != label:
        words = _words(label) + ([(" ", "\u2014", 1)] if url else [])
    if url and entry.href:
        # A safe href holds no spaces: one unbreakable word, linked when links are on.
        words.append((" ", osc8(entry.href, url) if links else url, text_width(url)))
    elif url:
        words.extend(
            (" " if n == 0 else sep, word, size) for n, (sep, word, size) in enumerate(_words(url))
        )
    lines = _fill(prefix, hang, words, width)
    for detail in entry.details:
        if detail.quote:
            text = f'"{detail.quote}"'
            if detail.location:
                text += f" ({detail.location})"
            lines.extend(_fill(hang + "> ", hang + "  ", _words(text), width))
        elif detail.location:
            lines.extend(_fill(hang, hang, _words(detail.location), width))
    if entry.more_details:
        lines.append(f"{hang}(and {entry.more_details} more)")
    return lines


def render_terminal(answer: CitedAnswer, plan: Plan, *, links: bool, width: int | None) -> str:
    """The answer with ``[n]`` markers, a Sources block, and the Search Suggestions note."""

    def piece(text: str) -> str:
        return sanitize_display(text, allow_newlines=True)

    def marker(mark: Mark) -> str:
        return format_marker(mark.numbers)

    body = "".join(weave(answer.text, plan.marks, piece, marker)).rstrip().lstrip("\n")
    blocks = [_wrap_body(body, width)] if body else []
    if plan.entries:
        number_width = len(str(max(entry.number for entry in plan.entries)))
        lines = ["Sources"]
        for entry in plan.entries:
            lines.extend(_entry_lines(entry, number_width, links, width))
        blocks.append("\n".join(lines))
    if plan.search_suggestions:
        blocks.append("\n".join(_fill("", "", _words(SEARCH_SUGGESTIONS_NOTE), width)))
    return "\n\n".join(blocks)
