"""`MarkerStream`: the same answer as parsing the whole text, and never half a marker shown."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import CitationError, CitedAnswer, Source, UsageError
from unicite._segment import find_markers
from unicite.markers import MarkerStream, parse_markers

SOURCES = [
    Source(id="a", url="https://alpha.example/page", title="Alpha"),
    Source(id="b", url="https://beta.example/page", title="Beta"),
    Source(id="c", url="https://gamma.example/page", title="Gamma"),
]
HOSTILE = json.loads(
    (Path(__file__).parent.parent / "data" / "hostile" / "texts.json").read_text("utf-8")
)


def stream(chunks: list[str], **options: object) -> tuple[list[str], CitedAnswer]:
    """Feed ``chunks``; return what each call returned (the last is close()) and the answer."""
    marker_stream = MarkerStream(SOURCES, **options)  # type: ignore[arg-type]
    shown = [marker_stream.feed(chunk) for chunk in chunks]
    shown.append(marker_stream.close())
    return shown, marker_stream.answer


def assert_same_as_whole(chunks: list[str], **options: object) -> None:
    text = "".join(chunks)
    whole = parse_markers(text, SOURCES, **options)  # type: ignore[arg-type]
    shown, answer = stream(chunks, **options)
    assert answer == whole
    assert "".join(shown) == whole.text
    # No piece ends inside a marker the answer cites with.
    markers = [
        (a, b)
        for a, b in find_markers(whole.text)
        if any(
            c.marker_span is not None and c.marker_span[0] <= a and b <= c.marker_span[1]
            for c in whole.citations
        )
    ]
    position = 0
    for piece in shown:
        position += len(piece)
        assert not any(a < position < b for a, b in markers), (position, whole.text)


def test_a_marker_split_across_chunks_is_held_back() -> None:
    shown, answer = stream(["Paris is the capital [", "1", "] of France [2", ", 3]."])
    assert shown == ["Paris is the capital", "", " [1] of France", " [2, 3].", ""]
    assert [c.source_ids for c in answer.citations] == [["a"], ["b", "c"]]


def test_removed_markers_never_reach_the_reader() -> None:
    chunks = ["A claim [9", "] and ", "more [1].\n[[US", "AGE:1]]"]
    shown, answer = stream(chunks)
    assert "".join(shown) == "A claim and more [1]." == answer.text
    assert answer.sources_used == ["a"]
    assert all("9" not in piece and "USAGE" not in piece for piece in shown)


def test_ordinary_text_flows_through() -> None:
    chunks = ["The first sentence ", "is here. The second ", "one too."]
    shown, _ = stream(chunks)
    # Only trailing whitespace waits, for a marker that might follow and be removed.
    assert shown == ["The first sentence", " is here. The second", " one too.", ""]


def test_code_is_never_parsed() -> None:
    chunks = ["Run:\n\n```\nx = [9]\n", "y = [[USAGE:1]]\n```\n", "Then `[9]` is code [1]."]
    assert_same_as_whole(chunks)
    shown, answer = stream(chunks)
    assert "x = [9]" in "".join(shown)
    assert answer.sources_used is None


def test_footnote_definitions_are_held_until_their_line_ends() -> None:
    chunks = ["Claim.[^x]\n\n[^x]: https://beta.exa", "mple/page\n", "After."]
    shown, answer = stream(chunks)
    assert shown[0] == "Claim.[^x]"
    assert "".join(shown) == "Claim.[^x]\n\nAfter." == answer.text
    assert answer.citations[0].source_ids == ["b"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_texts_stream_like_whole_texts(text: str) -> None:
    for size in (1, 3, 7):
        assert_same_as_whole([text[i : i + size] for i in range(0, len(text), size)])


def test_misuse() -> None:
    marker_stream = MarkerStream(SOURCES)
    with pytest.raises(UsageError):
        marker_stream.feed(b"x")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        _ = marker_stream.answer
    assert marker_stream.feed("") == ""
    assert marker_stream.close() == ""
    assert marker_stream.close() == ""
    assert marker_stream.answer == parse_markers("", SOURCES)
    with pytest.raises(UsageError):
        marker_stream.feed("more")
    with pytest.raises(UsageError):
        MarkerStream(SOURCES, style="roman")  # type: ignore[arg-type]


def test_raise_mode_raises_at_close() -> None:
    marker_stream = MarkerStream(SOURCES, on_invalid="raise")
    marker_stream.feed("Claim [7].")
    with pytest.raises(CitationError):
        marker_stream.close()


def test_a_long_stream_in_small_chunks() -> None:
    paragraph = "Sentence one [1]. Sentence `code` two [2][[USAGE:1]]. Bad [9] three.\n\n"
    text = paragraph * 300 + "```\n" + "x = [9]\n" * 300 + "```\n"
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    assert_same_as_whole(chunks)


# --- properties ---------------------------------------------------------------------------------

PIECES = st.sampled_from(
    [
        "Word",
        " ",
        ". ",
        "\n",
        "\n\n",
        "\r\n",
        "[1]",
        "[2, 3]",
        "[9]",
        "[0]",
        "[[USAGE:1,2]]",
        "[[S:2]]",
        "[[S:",
        "9]]",
        "`",
        "```\n",
        "~~~\n",
        "    ",
        "| a |",
        "\n---|---\n",
        "[^1]",
        "[^x]",
        "\n[^x]: https://beta.example/page\n",
        "\n[^y]: https://nope.example/\n",
        "([a](https://gamma.example/page))",
        '<sup class="cite" data-sids="9">[9]</sup>',
        "<sup>1</sup>",
        "\u30101:0\u2020source\u3011",
        "\u3010",
        "\u2020",
        "\u3011",
        "https://u.example/a",
        "- ",
        "> ",
        "**B**",
        "[",
        "]",
        "(",
        ")",
        "<",
        ">",
        ":",
        "a[1]",
        "\u6771\u4eac",
    ]
)
OPTIONS = st.sampled_from(
    [{}, {"on_invalid": "keep"}, {"base": 0}, {"style": "brackets"}, {"style": "footnotes"}]
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=30), st.data(), OPTIONS)
def test_property_streaming_equals_whole_text_for_every_chunking(
    pieces: list[str], data: st.DataObject, options: dict[str, object]
) -> None:
    text = "".join(pieces)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert_same_as_whole(chunks, **options)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=20))
def test_property_one_character_at_a_time(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert_same_as_whole(list(text))
