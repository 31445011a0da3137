"""Text hygiene for untrusted strings: display sanitising, grapheme-safe truncation, numbers.

Provider output, titles and snippets are attacker-controllable; these helpers make them
safe to show in a terminal, HTML or Markdown and shorten them without mangling characters.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["int_of", "sanitize_display", "truncate"]

# Characters that may never open or continue a terminal control string body. Excluding
# every introducer keeps each regex scan bounded by the next introducer, so the whole
# substitution stays linear even on adversarial input.
_BODY = r"[^\x07\x1b\x80-\x9f]*"
_ST = r"(?:\x07|\x1b\\|\x9c)"

_ESCAPE_RE = re.compile(
    "|".join(
        (
            rf"\x1b\]{_BODY}{_ST}",  # OSC (incl. OSC 8 hyperlinks)
            rf"\x1b[PX^_]{_BODY}{_ST}",  # DCS, SOS, PM, APC
            r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",  # CSI
            r"\x1b[\x20-\x2f]*[\x30-\x7e]",  # two-char (nF/Fp/Fe/Fs) escapes
            rf"\x9d{_BODY}{_ST}",  # 8-bit OSC
            rf"[\x90\x98\x9e\x9f]{_BODY}{_ST}",  # 8-bit DCS, SOS, PM, APC
            r"\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",  # 8-bit CSI
        )
    )
)

_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_BIDI_AND_INVISIBLE = (
    0x061C,
    0x200B,
    0x200E,
    0x200F,
    0x2060,
    0xFEFF,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)


def _build_table(allow_newlines: bool) -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    for code in range(0x20):
        table[code] = None
    for code in range(0x7F, 0xA0):
        table[code] = None
    for code in _BIDI_AND_INVISIBLE:
        table[code] = None
    newline = "\n" if allow_newlines else " "
    table[ord("\t")] = " "
    table[ord("\n")] = newline
    table[ord("\r")] = newline
    table[0x2028] = newline
    table[0x2029] = newline
    return table


_TABLE_NEWLINES = _build_table(allow_newlines=True)
_TABLE_FLAT = _build_table(allow_newlines=False)


def sanitize_display(text: object, *, allow_newlines: bool = False) -> str:
    r"""Make an untrusted string safe to show in a terminal, HTML or Markdown.

    Whole terminal escape sequences (CSI, OSC including OSC 8 hyperlinks, DCS/SOS/PM/APC,
    two-character ``ESC x`` escapes and their 8-bit C1 forms) are removed first, then any
    remaining C0/C1 controls, DEL, bidi embedding/override/isolate controls and marks,
    zero-width space, word joiner and BOM. ZWJ and ZWNJ are kept because emoji and many
    scripts need them. Tabs become spaces. Lone surrogates become U+FFFD (valid surrogate
    pairs are joined into the character they encode). Runs in linear time.

    Args:
        text: Anything; ``None`` gives ``""``, non-strings go through ``str()`` first.
        allow_newlines: Keep line breaks (``\r\n``, ``\r``, U+2028 and U+2029 become
            ``\n``). When false every line break becomes a single space.

    Returns:
        The sanitised string; never raises.
    """
    if text is None:
        return ""
    if isinstance(text, str):
        value = text
    else:
        try:
            value = str(text)
        except Exception:
            return ""
    if _SURROGATE_RE.search(value):
        value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    value = _ESCAPE_RE.sub("", value)
    value = value.replace("\r\n", "\n")
    return value.translate(_TABLE_NEWLINES if allow_newlines else _TABLE_FLAT)


_ZWJ = "\u200d"


def _is_extender(char: str) -> bool:
    """Whether ``char`` attaches to the character before it (no cut just before it)."""
    code = ord(char)
    if char == _ZWJ:
        return True
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:  # variation selectors
        return True
    if 0x1F3FB <= code <= 0x1F3FF:  # emoji skin-tone modifiers
        return True
    if 0xE0020 <= code <= 0xE007F:  # emoji tag sequences (subdivision flags)
        return True
    if code < 0x300:  # fast path: nothing below the combining diacritics block extends
        return False
    return unicodedata.combining(char) != 0 or unicodedata.category(char) in {"Mn", "Mc", "Me"}


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _is_safe_cut(text: str, index: int) -> bool:
    """Whether ``text[:index]`` ends on a boundary that splits no character or cluster."""
    if index <= 0 or index >= len(text):
        return True
    before, after = text[index - 1], text[index]
    if "\ud800" <= before <= "\udbff":
        return False
    if before == _ZWJ or _is_extender(after):
        return False
    if before == "\r" and after == "\n":
        return False
    if _is_regional_indicator(before) and _is_regional_indicator(after):
        run = 0
        position = index - 1
        while position >= 0 and _is_regional_indicator(text[position]):
            run += 1
            position -= 1
        return run % 2 == 0
    return True


def _back_off(text: str, cut: int) -> int:
    while cut > 0 and not _is_safe_cut(text, cut):
        cut -= 1
    return cut


def truncate(text: str, limit: int = 200, ellipsis: str = "…") -> str:
    """Shorten ``text`` to at most ``limit`` characters, ellipsis included.

    The cut never leaves half of a surrogate pair and never separates a base character
    from its combining marks, variation selectors, emoji modifiers, ZWJ sequence members
    or the second regional indicator of a flag; it backs off to the previous safe
    boundary instead. If whitespace occurs within the last 20% of the budget the cut
    moves there, and trailing whitespace is stripped before the ellipsis is appended.

    Args:
        text: The text to shorten.
        limit: Maximum length of the result in code points. Negative values are
            treated as 0.
        ellipsis: Appended when the text is shortened.

    Returns:
        ``text`` unchanged if it fits, otherwise a prefix of ``text`` followed by
        ``ellipsis``; if ``limit`` leaves no room for any text, just ``ellipsis`` cut to
        ``limit`` characters.
    """
    limit = max(limit, 0)
    if len(text) <= limit:
        return text
    budget = limit - len(ellipsis)
    if budget < 1:
        return ellipsis[:limit]

    cut = _back_off(text, budget)
    word_floor = max(1, budget - budget // 5)
    for candidate in range(cut, word_floor - 1, -1):
        if text[candidate].isspace() and _is_safe_cut(text, candidate):
            cut = candidate
            break

    # Stripping whitespace can expose an unsafe end (e.g. a ZWJ), so repeat until stable;
    # every round strictly shrinks the cut, keeping this linear.
    while True:
        cut = _back_off(text, cut)
        stripped = cut
        while stripped > 0 and text[stripped - 1].isspace():
            stripped -= 1
        if stripped == cut:
            break
        cut = stripped
    return text[:cut] + ellipsis


def int_of(text: str, *, signed: bool = False) -> int | None:
    """The int a string of ASCII digits spells (``"12"``, ``" 7 "``; ``"-3"`` when `signed`).

    None for anything else, where ``str.isdigit`` and ``int`` disagree or ``int`` raises:
    superscripts (``"²"`` is a digit ``int`` rejects), other scripts' digits, ``"--3"``,
    underscores, and more digits than ``int`` converts (``sys.get_int_max_str_digits``).
    Never raises.
    """
    stripped = text.strip()
    body = stripped[1:] if signed and stripped[:1] == "-" else stripped
    if not (body.isascii() and body.isdigit()):
        return None
    try:
        return int(stripped)
    except ValueError:  # longer than int() converts
        return None
