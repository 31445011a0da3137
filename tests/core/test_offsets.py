import pytest
from hypothesis import given
from hypothesis import strategies as st

from unicite import OffsetIndex, byte_span, from_byte_span, from_utf16_span, utf16_span


def test_ascii_fast_path_is_identity() -> None:
    index = OffsetIndex("plain ascii")
    assert index.to_bytes(5) == index.to_utf16(5) == index.from_bytes(5) == 5
    assert index.byte_length == index.utf16_length == 11


def test_gemini_style_byte_segment_on_accented_text() -> None:
    # "é" is two UTF-8 bytes: the naive reading of byte offsets as str indices is off by one.
    text = "Résumé: Zürich is in Switzerland. It is large."
    claim = "Zürich is in Switzerland."
    raw = text.encode()
    start_b = raw.index(claim.encode())
    end_b = start_b + len(claim.encode())
    start, end = from_byte_span(text, start_b, end_b)
    assert text[start:end] == claim
    assert text[start_b:end_b] != claim


def test_offset_inside_a_multibyte_character_rounds_outward() -> None:
    text = "a€b"  # € is three bytes: a=0, €=1..3, b=4
    index = OffsetIndex(text)
    assert index.from_bytes(2) == 1
    assert index.from_bytes(2, ceil=True) == 2
    assert not index.is_char_boundary_bytes(2)
    assert index.is_char_boundary_bytes(4)
    assert not index.is_char_boundary_bytes(99)


def test_astral_characters_take_two_utf16_units() -> None:
    text = "x😀y"
    assert utf16_span(text, 2, 3) == (3, 4)
    assert from_utf16_span(text, 3, 4) == (2, 3)
    assert from_utf16_span(text, 2, 3) == (1, 2)  # inside the surrogate pair: widen


def test_out_of_range_offsets_clamp() -> None:
    text = "日本"
    index = OffsetIndex(text)
    assert index.from_bytes(-5) == 0
    assert index.from_bytes(1000) == 2
    assert index.to_bytes(99) == 6
    assert index.to_utf16(-1) == 0


def test_long_text_crosses_many_blocks() -> None:
    text = ("αβγ 東京 😀 " * 500) + "end"
    index = OffsetIndex(text)
    raw = text.encode()
    for i in range(0, len(text) + 1, 37):
        b = index.to_bytes(i)
        assert b == len(text[:i].encode())
        assert index.from_bytes(b) == i
        u = index.to_utf16(i)
        assert u == len(text[:i].encode("utf-16-le")) // 2
        assert index.from_utf16(u) == i
    assert index.byte_length == len(raw)


def test_lone_surrogates_do_not_crash() -> None:
    text = "a\ud800b"
    index = OffsetIndex(text)
    assert index.from_bytes(index.to_bytes(2)) == 2
    assert byte_span(text, 0, 3) == (0, 5)


@given(st.text(), st.data())
def test_round_trips_on_arbitrary_text(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert from_byte_span(text, *byte_span(text, start, end)) == (start, end)
    assert from_utf16_span(text, *utf16_span(text, start, end)) == (start, end)


@given(st.text(), st.integers(-3, 400))
def test_any_byte_offset_resolves_within_the_text(text: str, offset: int) -> None:
    index = OffsetIndex(text)
    lo = index.from_bytes(offset)
    hi = index.from_bytes(offset, ceil=True)
    assert 0 <= lo <= hi <= len(text)
    assert hi - lo <= 1


@pytest.mark.parametrize("text", ["", "a", "é"])
def test_empty_and_tiny(text: str) -> None:
    assert from_byte_span(text, 0, len(text.encode())) == (0, len(text))
