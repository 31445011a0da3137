"""Claim boundaries never fall inside a word.

Gemini segments (and Interactions annotations) are byte ranges the model's grounder chose; they
can start or end inside a token: ``"6."`` out of ``"4.0.6."``, ``"60 mètres"`` out of
``"2 460 mètres"``. A claim cut there reads as a different claim, so each boundary that falls
inside a word is moved outward to the word's edge: the claim only ever grows, to the whole
tokens the provider's range touches.

The rule, for a boundary between the characters ``a`` (before) and ``b`` (after):

- it is inside a word when ``a`` and ``b`` are both word characters (letters, digits, marks);
- or when one of them is a joiner (``.`` ``,`` ``:`` ``'`` ``’`` ``-`` U+2011 ``_``) set between
  two word characters (``4.0|.6``, ``l’|abbaye``), or a space a number uses to group its digits
  (U+00A0, U+202F, U+2009 between two digits: ``2 460``);
- never next to a character of a script written without spaces (Han, kana, Thai, Lao, Khmer,
  Myanmar): there every character may end a word, so the provider's boundary stands.

Whitespace and every other character always separate words.
"""

from __future__ import annotations

import unicodedata

__all__ = ["inside_word", "widen_to_words"]

_JOINERS = frozenset(".,:'’-\u2011_")
_DIGIT_GROUPERS = frozenset("\u00a0\u202f\u2009")
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # iteration mark, closing mark, ideographic zero
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x20000, 0x3134F),  # CJK extensions B-G
)


_FIRST_UNSPACED = _UNSPACED[0][0]


def _unspaced(ch: str) -> bool:
    code = ord(ch)
    if code < _FIRST_UNSPACED:
        return False  # Latin, Greek, Cyrillic, Arabic, Indic, ...: the common case, one test
    return any(low <= code <= high for low, high in _UNSPACED)


def _word(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _digit(ch: str) -> bool:
    return ch.isdigit()


def _joins(joiner: str, left: str, right: str) -> bool:
    """Whether `joiner`, set between `left` and `right`, makes them one word."""
    if not (_word(left) and _word(right)):
        return False
    return joiner in _JOINERS or (joiner in _DIGIT_GROUPERS and _digit(left) and _digit(right))


def inside_word(text: str, at: int) -> bool:
    """Whether str index `at` of `text` falls inside a word (see the module's rule)."""
    if not 0 < at < len(text):
        return False
    before, after = text[at - 1], text[at]
    if _unspaced(before) or _unspaced(after):
        return False
    if _word(before) and _word(after):
        return True
    if _word(after) and at >= 2 and _joins(before, text[at - 2], after):
        return not _unspaced(text[at - 2])  # a joiner just before the boundary
    if _word(before) and at + 1 < len(text) and _joins(after, before, text[at + 1]):
        return not _unspaced(text[at + 1])  # a joiner just after the boundary
    return False


_MAX_WIDENING = 256
"""How far a boundary may move: a longer "word" (a hash, base64) is no claim to cut into."""


def widen_to_words(
    text: str, start: int, end: int, low: int = 0, high: int | None = None
) -> tuple[int, int] | None:
    """``(start, end)`` moved outward until neither boundary falls inside a word.

    `low` and `high` bound the result (a part of the text: a claim never leaves its part).
    None when a boundary would move more than `_MAX_WIDENING` characters.
    """
    high = len(text) if high is None else high
    if start >= end:
        return start, end
    first, last = start, end
    while start > low and inside_word(text, start):
        start -= 1
        if first - start > _MAX_WIDENING:
            return None
    while end < high and inside_word(text, end):
        end += 1
        if end - last > _MAX_WIDENING:
            return None
    return start, end
