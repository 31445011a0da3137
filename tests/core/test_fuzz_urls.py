"""Fuzzing the URL, display-text, segmentation and offset helpers on arbitrary text.

They never raise on any str (a non-str is a `UsageError` or is read as text), `safe_href`
returns only printable-ASCII http(s) URLs or None, and `sanitize_display` leaves nothing a
terminal or browser would act on.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from _fuzz import HOSTILE_STRINGS, HUGE_WORD, fuzz_settings, hostile_text, json_values, outcome
from hypothesis import given
from hypothesis import strategies as st

from unicite import (
    OffsetIndex,
    UsageError,
    byte_span,
    claim_span,
    clauses,
    from_byte_span,
    from_utf16_span,
    is_redirect_url,
    normalize_url,
    registrable_domain,
    safe_href,
    sanitize_display,
    segment,
    truncate,
    utf16_span,
)

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

URL_PARTS = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTPS://",
        "javascript:",
        "data:",
        "//",
        "[::1]",
        "[",
        "xn--",
        "пример.рф",
        "example.co.uk",
        "user:pw@",
        ":8080",
        ":99999",
        "/path",
        "?q=1&utm_source=x",
        "#frag",
        "%",
        "%zz",
        "\\",
        " ",
        "\t",
        "\n",
        "vertexaisearch.cloud.google.com/grounding-api-redirect/x",
    ]
)
url_like = st.lists(st.one_of(URL_PARTS, hostile_text), max_size=8).map("".join)
SAFE_HREF = re.compile(r"https?://[\x21-\x7e]+")
# What sanitize_display must remove: C0 (newline aside), DEL, C1, bidi controls, surrogates.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@fuzz_settings()
@given(url_like)
def test_url_helpers_on_any_text(url: str) -> None:
    notes: list[str] = []
    normalized = normalize_url(url, notes)
    assert isinstance(normalized, str)
    assert all(isinstance(n, str) and "\n" not in n for n in notes)
    domain = registrable_domain(url)
    assert domain is None or (isinstance(domain, str) and domain and not domain.isspace())
    assert isinstance(is_redirect_url(url), bool)
    href = safe_href(url)
    assert href is None or SAFE_HREF.fullmatch(href), href
    if href is not None:
        # A safe link stays safe, and stays itself.
        assert safe_href(href) == href


@fuzz_settings()
@given(json_values | st.binary(max_size=50) | st.builds(object))
def test_url_helpers_on_any_value(value: Any) -> None:
    href = safe_href(value)
    assert href is None or SAFE_HREF.fullmatch(href)
    for helper in (normalize_url, registrable_domain, is_redirect_url):
        result = outcome(lambda helper=helper: helper(value), UsageError)  # type: ignore[misc]
        assert isinstance(result, (str, bool, UsageError)) or result is None


@fuzz_settings()
@given(hostile_text | json_values, st.booleans())
def test_sanitize_display_leaves_nothing_active(value: Any, newlines: bool) -> None:
    shown = sanitize_display(value, allow_newlines=newlines)
    assert isinstance(shown, str)
    shown.encode("utf-8")
    assert not UNSAFE.search(shown), repr(shown)
    if not newlines:
        assert "\n" not in shown
    assert sanitize_display(shown, allow_newlines=newlines) == shown


@fuzz_settings()
@given(hostile_text, st.integers(-5, 300), st.sampled_from(["…", "...", "", "\ud800"]))
def test_truncate_any_text(text: str, limit: int, ellipsis: str) -> None:
    result = outcome(lambda: truncate(text, limit, ellipsis), UsageError)
    if isinstance(result, UsageError):
        return
    assert isinstance(result, str)
    if len(text) <= max(limit, 0):
        assert result == text


segment_text = st.lists(
    st.one_of(
        hostile_text,
        st.sampled_from(
            [". ", "!\n", "\n\n", "- ", "1. ", "```\n", "# H\n", "| a |\n", "[1]", "e.g. ", "…"]
        ),
    ),
    max_size=20,
).map("".join)


@fuzz_settings()
@given(segment_text, st.data())
def test_segments_and_claim_spans_stay_in_the_text(text: str, data: st.DataObject) -> None:
    previous_end = 0
    for seg in segment(text):
        assert previous_end <= seg.start <= seg.end <= len(text)
        previous_end = seg.end
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    a, b = claim_span(text, start, end)
    assert 0 <= a <= b <= len(text)
    for c_start, c_end in clauses(text, start, end):
        assert start <= c_start <= c_end <= end


@fuzz_settings()
@given(hostile_text, st.data())
def test_offset_conversions_round_trip(text: str, data: st.DataObject) -> None:
    index = OffsetIndex(text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    u16 = utf16_span(text, start, end)
    raw = byte_span(text, start, end)
    assert from_utf16_span(text, *u16) == (start, end)
    assert from_byte_span(text, *raw) == (start, end)
    assert (index.to_utf16(start), index.to_utf16(end)) == u16
    assert (index.to_bytes(start), index.to_bytes(end)) == raw
    assert index.utf16_length == len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert index.byte_length == len(text.encode("utf-8", "surrogatepass"))
    # Out-of-range and mid-character offsets are clamped or rejected, never a crash.
    for value in (-1, len(text) + 1, index.byte_length + 3, 2**40):
        for convert in (index.to_utf16, index.to_bytes, index.from_utf16, index.from_bytes):
            result = outcome(lambda c=convert, v=value: c(v), UsageError)  # type: ignore[misc]
            assert isinstance(result, (int, UsageError))


def test_huge_and_hostile_inputs() -> None:
    for text in (HUGE_WORD, "https://" + HUGE_WORD, "".join(HOSTILE_STRINGS) * 100):
        assert isinstance(normalize_url(text), str)
        href = safe_href(text)
        assert href is None or SAFE_HREF.fullmatch(href)
        assert not UNSAFE.search(sanitize_display(text))
        assert len(truncate(text, 50)) <= 50
        for seg in segment(text):
            assert 0 <= seg.start <= seg.end <= len(text)
