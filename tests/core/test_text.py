import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite import sanitize_display, truncate

ESC = "\x1b"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # man-woman-girl-boy
THUMBS_MEDIUM = "\U0001f44d\U0001f3fd"  # thumbs up + medium skin tone
FLAG_FR = "\U0001f1eb\U0001f1f7"
FLAG_DE = "\U0001f1e9\U0001f1ea"
E_ACUTE = "e\u0301"

# Everything sanitize_display must never emit (newline handled separately).
FORBIDDEN = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069"
    "\ufeff\ud800-\udfff]"
)

hostile_chars = st.one_of(
    st.characters(),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.integers(0, 0x9F).map(chr),
    st.sampled_from(
        [
            *(ESC, "[", "]", "\\", ";", "\x07", "P", "_", "^", "X", "m", "8", "\u202e"),
            *("\u2028", "\u200d", "\ufe0f", "\U0001f3fb", "\U0001f1eb", "\u0301"),
            *(" ", "\r", "\n", "\t"),
        ]
    ),
)
hostile_text = st.text(hostile_chars, max_size=200)


# --- sanitize_display -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (f"{ESC}]8;;javascript:alert(1){ESC}\\click{ESC}]8;;{ESC}\\", "click"),
        (f"{ESC}]8;;https://evil.example\x07link{ESC}]8;;\x07", "link"),
        (f"{ESC}]0;pwned title\x07after", "after"),
        ("\x9d8;;javascript:x\x9ctext\x9d8;;\x9c", "text"),
        ("\x9b31mred", "red"),
        (f"{ESC}[31;1mred{ESC}[0m plain", "red plain"),
        (f"{ESC}[?1049h{ESC}[2J{ESC}[Hscreen", "screen"),
        (f"{ESC}Pq#0;2;0;0;0{ESC}\\sixel", "sixel"),
        (f"{ESC}_apc payload{ESC}\\x", "x"),
        (f"{ESC}^pm{ESC}\\y", "y"),
        (f"{ESC}Xsos{ESC}\\z", "z"),
        ("\x90dcs\x9cw", "w"),
        (f"{ESC}(Bcharset {ESC}7saved{ESC}8", "charset saved"),
        (f"{ESC}cRIS", "RIS"),
        ("abc\u202edcba", "abcdcba"),
        ("\u2066iso\u2069 \u200eLRM\u200f \u061c", "iso LRM "),
        ("zero\u200bwidth\u2060joiner\ufeffbom", "zerowidthjoinerbom"),
        ("bell\x07 null\x00 del\x7f c1\x85\x8f", "bell null del c1"),
        ("tab\there", "tab here"),
    ],
)
def test_hostile_sequences_are_removed(raw: str, expected: str) -> None:
    assert sanitize_display(raw) == expected


def test_unterminated_sequences_lose_their_introducer() -> None:
    assert sanitize_display(f"{ESC}]8;;javascript:alert(1)") == "8;;javascript:alert(1)"
    assert sanitize_display(f"a{ESC}[31") == "a31"
    assert sanitize_display("\x9b") == ""


def test_newlines_flattened_by_default() -> None:
    assert sanitize_display("a\r\nb\rc\nd\u2028e\u2029f") == "a b c d e f"


def test_newlines_kept_when_allowed() -> None:
    text = "a\r\nb\rc\nd\u2028e\u2029f\tg"
    assert sanitize_display(text, allow_newlines=True) == "a\nb\nc\nd\ne\nf g"


def test_joiners_and_emoji_survive() -> None:
    text = f"{FAMILY} {THUMBS_MEDIUM} {FLAG_FR} \u2764\ufe0f {E_ACUTE} \u0915\u094d\u200c\u0937"
    assert sanitize_display(text) == text


def test_lone_surrogates_become_replacement_characters() -> None:
    assert sanitize_display("x\ud800y\udfffz") == "x\ufffdy\ufffdz"
    # A well-formed pair spelled as two code units is joined back into the character.
    assert sanitize_display("\ud83d\ude00") == "\U0001f600"


def test_non_strings() -> None:
    class Hostile:
        def __str__(self) -> str:
            return f"{ESC}[2Jboom\u202e"

    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert sanitize_display(None) == ""
    assert sanitize_display(42) == "42"
    assert sanitize_display(Hostile()) == "boom"
    assert sanitize_display(Broken()) == ""


def test_ordinary_text_is_untouched() -> None:
    text = "Plain text, with <html> & [markdown](x) and \u00fcml\u00e4uts \u4e2d\u6587"
    assert sanitize_display(text) == text


@pytest.mark.parametrize(
    "unit",
    [f"{ESC}]", f"{ESC}[", f"{ESC}P", "\x9d", "\x9b", "\x90", f"{ESC}]8;;" + "a" * 10],
)
def test_adversarial_escape_floods_are_cleaned(unit: str) -> None:
    # Unterminated sequences repeated many times: a backtracking regex would stall here.
    text = unit * 20_000
    result = sanitize_display(text)
    assert ESC not in result
    assert not FORBIDDEN.search(result)


@given(hostile_text, st.booleans())
def test_sanitize_never_emits_controls(text: str, allow_newlines: bool) -> None:
    result = sanitize_display(text, allow_newlines=allow_newlines)
    assert not FORBIDDEN.search(result)
    assert "\u2028" not in result
    assert "\u2029" not in result
    assert "\r" not in result
    if not allow_newlines:
        assert "\n" not in result


@given(hostile_text)
def test_sanitize_is_idempotent(text: str) -> None:
    once = sanitize_display(text)
    assert sanitize_display(once) == once


@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), hostile_text))
def test_sanitize_never_raises(value: object) -> None:
    assert isinstance(sanitize_display(value), str)


# --- truncate ---------------------------------------------------------------------------


def test_short_text_is_unchanged() -> None:
    assert truncate("hello", 5) == "hello"
    assert truncate("", 0) == ""
    assert truncate("x" * 200) == "x" * 200


def test_default_limit_and_ellipsis() -> None:
    result = truncate("x" * 300)
    assert result == "x" * 199 + "\u2026"


def test_prefers_word_boundary_and_strips_trailing_space() -> None:
    assert truncate("hello world foo bar", 12) == "hello world\u2026"
    assert truncate("the quick brown fox", 10) == "the quick\u2026"


def test_word_boundary_only_within_last_fifth_of_budget() -> None:
    # The only space is far from the cut: cut mid-word rather than lose most of the text.
    text = "a " + "b" * 50
    assert truncate(text, 21) == "a " + "b" * 18 + "\u2026"


def test_custom_ellipsis() -> None:
    assert truncate("abcdefghij", 6, ellipsis="...") == "abc..."
    assert truncate("abcdefghij", 6, ellipsis="") == "abcdef"


def test_limit_too_small_for_text_returns_cut_ellipsis() -> None:
    assert truncate("abcdef", 1) == "\u2026"
    assert truncate("abcdef", 2, ellipsis="...") == ".."
    assert truncate("abcdef", 0) == ""


def test_negative_limit_is_clamped() -> None:
    assert truncate("abc", -5) == ""


def test_combining_accent_at_cut_point() -> None:
    text = f"caf{E_ACUTE}bar"  # the cut at 4 would fall between "e" and U+0301
    assert truncate(text, 5) == "caf\u2026"
    assert truncate(text, 6) == f"caf{E_ACUTE}\u2026"


def test_skin_tone_modifier_not_separated() -> None:
    text = f"ab{THUMBS_MEDIUM}cd"
    assert truncate(text, 4) == "ab\u2026"
    assert truncate(text, 5) == f"ab{THUMBS_MEDIUM}\u2026"


def test_zwj_family_not_split() -> None:
    text = f"ab{FAMILY}cd"
    for limit in range(3, 2 + len(FAMILY) + 1):
        assert truncate(text, limit) == "ab\u2026"
    assert truncate(text, 2 + len(FAMILY) + 1) == f"ab{FAMILY}\u2026"


def test_never_ends_after_zwj_even_before_space() -> None:
    text = "ab\U0001f468\u200d cdefgh"
    result = truncate(text, 6)
    assert not result[:-1].endswith("\u200d")
    assert result == "ab\u2026"


def test_variation_selector_kept_with_base() -> None:
    text = "ab\u2764\ufe0fcd"
    assert truncate(text, 4) == "ab\u2026"


def test_flags_not_split() -> None:
    text = f"a{FLAG_FR}{FLAG_DE}bc"
    assert truncate(text, 3) == "a\u2026"
    assert truncate(text, 4) == f"a{FLAG_FR}\u2026"
    assert truncate(text, 5) == f"a{FLAG_FR}\u2026"
    assert truncate(text, 6) == f"a{FLAG_FR}{FLAG_DE}\u2026"


def test_surrogate_pair_not_split() -> None:
    text = "ab\ud83d\ude00cd"  # an emoji spelled as two UTF-16 code units
    assert truncate(text, 4) == "ab\u2026"


def test_single_huge_cluster_gives_just_ellipsis() -> None:
    text = "e" + "\u0301" * 1000
    assert truncate(text, 50) == "\u2026"


def is_boundary(text: str, index: int) -> bool:
    """A deliberately simple reference check used by the property test."""
    if index in (0, len(text)):
        return True
    before, after = text[index - 1], text[index]
    if "\ud800" <= before <= "\udbff" and "\udc00" <= after <= "\udfff":
        return False
    if before == "\u200d" or after == "\u200d":
        return False
    if unicodedata.combining(after) or "\ufe00" <= after <= "\ufe0f":
        return False
    return not ("\U0001f3fb" <= after <= "\U0001f3ff")


@settings(max_examples=300)
@given(hostile_text, st.integers(-5, 220), st.sampled_from(["\u2026", "...", "", " [more]"]))
def test_truncate_properties(text: str, limit: int, ellipsis: str) -> None:
    result = truncate(text, limit, ellipsis)
    assert len(result) <= max(limit, 0)
    if len(text) <= max(limit, 0):
        assert result == text
    elif max(limit, 0) <= len(ellipsis):
        assert result == ellipsis[: max(limit, 0)]
    else:
        assert result.endswith(ellipsis)
        kept = result[: len(result) - len(ellipsis)]
        assert text.startswith(kept)
        assert kept == kept.rstrip()
        assert is_boundary(text, len(kept))


@given(hostile_text, st.integers(-5, 220))
def test_truncate_never_raises_and_default_ellipsis(text: str, limit: int) -> None:
    result = truncate(text, limit)
    assert len(result) <= max(limit, 0)
