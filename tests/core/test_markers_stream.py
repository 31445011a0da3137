"""`MarkerStream`: the answer of the whole text, and shown text that never has to change.

With renumbering (the default) the stream's answer is ``renumber(parse_markers(text))`` and the
markers shown already carry those numbers; with ``renumber=False`` it is ``parse_markers(text)``.
Either way the pieces shown, joined, are the answer's text, and no piece ends inside a marker.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import CitationError, CitedAnswer, Source, UsageError
from unicite.markers import MARKER_RE, MarkerStream, parse_markers, renumber

SOURCES = [
    Source(id="a", url="https://alpha.example/page", title="Alpha"),
    Source(id="b", url="https://beta.example/page", title="Beta"),
    Source(id="c", url="https://gamma.example/page", title="Gamma"),
    Source(id="d", url="https://delta.example/page", title="Delta"),
]
HOSTILE = json.loads(
    (Path(__file__).parent.parent / "data" / "hostile" / "texts.json").read_text("utf-8")
)


def stream(chunks: list[str], **options: Any) -> tuple[list[str], CitedAnswer]:
    """Feed ``chunks``; return what each call returned (the last is close()) and the answer."""
    marker_stream = MarkerStream(SOURCES, **options)
    shown = [marker_stream.feed(chunk) for chunk in chunks]
    shown.append(marker_stream.close())
    return shown, marker_stream.answer


def whole_answer(text: str, **options: Any) -> CitedAnswer:
    """What the stream must give for ``text``: the whole text parsed, then renumbered."""
    renumbering = options.pop("renumber", True)
    keep_unused = options.pop("keep_unused", False)
    parsed = parse_markers(text, SOURCES, **options)
    # Bracketed numbers the stream was not asked to read are reported, never escaped.
    style = options.get("style", "auto")
    styles = [style] if isinstance(style, str) else list(style)
    escape = "auto" in styles or "brackets" in styles
    return renumber(parsed, keep_unused=keep_unused, escape=escape) if renumbering else parsed


def assert_same_as_whole(chunks: list[str], **options: Any) -> None:
    whole = whole_answer("".join(chunks), **options)
    shown, answer = stream(chunks, **options)
    assert answer == whole
    assert "".join(shown) == whole.text
    # No piece ends inside a marker a citation is made of; renumbered, a citation's markers
    # are rewritten as one and shown whole.
    spans = [c.marker_span for c in whole.citations if c.marker_span is not None]
    if not options.get("renumber", True):
        spans = [m.span() for a, b in spans for m in MARKER_RE.finditer(whole.text, a, b)]
    position = 0
    for piece in shown:
        position += len(piece)
        assert not any(a < position < b for a, b in spans), (position, whole.text)


def test_a_marker_split_across_chunks_is_held_back() -> None:
    chunks = ["Paris is the capital [", "1", "] of France [2", ", 3]."]
    for renumbering in (True, False):
        shown, answer = stream(chunks, renumber=renumbering)
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
    shown, answer = stream(chunks, renumber=False)
    assert shown[0] == "Claim.[^x]"
    assert "".join(shown) == "Claim.[^x]\n\nAfter." == answer.text
    assert answer.citations[0].source_ids == ["b"]


def test_a_carriage_return_alone_starts_no_definition_line() -> None:
    # As in parse_markers, a footnote definition starts a line: after a line feed only.
    text = "Claim.[^x]\r[^x]: https://beta.example/page\nAfter."
    for chunks in ([text], list(text)):
        assert_same_as_whole(chunks, renumber=False)
        assert_same_as_whole(chunks)


@pytest.mark.parametrize("renumbering", [True, False])
@pytest.mark.parametrize(
    "text",
    [
        "\u3002_[9].\n===\n\nMore.",
        "A claim\u3002_[1].\n---\nMore [2].",
        "\u3002][2] x | y [1]\n|---|---|\n",
        "\u3002_[1].\nNext line [2].\n\nEnd.",
    ],
)
def test_a_line_that_becomes_a_heading_or_table_row_later(text: str, renumbering: bool) -> None:
    # The whole line is then one segment, which decides whether these odd markers are markers.
    for chunks in ([text], list(text)):
        assert_same_as_whole(chunks, renumber=renumbering)


@pytest.mark.parametrize("renumbering", [True, False])
@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_texts_stream_like_whole_texts(text: str, renumbering: bool) -> None:
    for size in (1, 3, 7):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        assert_same_as_whole(chunks, renumber=renumbering)


def test_misuse() -> None:
    marker_stream = MarkerStream(SOURCES)
    with pytest.raises(UsageError):
        marker_stream.feed(b"x")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        _ = marker_stream.answer
    assert marker_stream.feed("") == ""
    assert marker_stream.close() == ""
    assert marker_stream.close() == ""
    assert marker_stream.answer == renumber(parse_markers("", SOURCES))
    with pytest.raises(UsageError):
        marker_stream.feed("more")
    with pytest.raises(UsageError):
        MarkerStream(SOURCES, style="roman")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        MarkerStream(SOURCES, renumber="yes")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        MarkerStream(SOURCES, keep_unused=1)  # type: ignore[arg-type]


def test_raise_mode_raises_at_close() -> None:
    marker_stream = MarkerStream(SOURCES, on_invalid="raise")
    marker_stream.feed("Claim [7].")
    with pytest.raises(CitationError):
        marker_stream.close()


@pytest.mark.parametrize("renumbering", [True, False])
def test_a_long_stream_in_small_chunks(renumbering: bool) -> None:
    paragraph = "Sentence one [3]. Sentence `code` two [2][[USAGE:1]]. Bad [9] three.\n\n"
    text = paragraph * 300 + "```\n" + "x = [9]\n" * 300 + "```\n"
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    assert_same_as_whole(chunks, renumber=renumbering)


# --- renumbering while streaming ----------------------------------------------------------------


def test_live_markers_carry_the_final_numbers() -> None:
    chunks = ["Alpha [3", "]. Beta [2]", ". Gamma [3, 2]. Delta [2-4]."]
    shown, answer = stream(chunks)
    assert shown == ["Alpha", " [1]. Beta", " [2]. Gamma [1, 2]. Delta [1-3].", ""]
    assert [s.id for s in answer.sources] == ["c", "b", "d"]
    one_by_one, _ = stream(list("".join(chunks)))
    assert "".join(one_by_one) == answer.text


def test_without_renumbering_the_numbers_are_the_models() -> None:
    shown, answer = stream(["Alpha [3]. Beta [2]."], renumber=False)
    assert "".join(shown) == "Alpha [3]. Beta [2]." == answer.text
    assert [s.id for s in answer.sources] == ["a", "b", "c", "d"]


def test_a_run_of_markers_waits_for_its_end() -> None:
    # [3] then [1] is one citation; renumbered as a whole it reads [1][2], not "[1] [2]".
    shown, answer = stream(["A [3]", " [1]", " and more."])
    assert shown == ["A", "", " [1][2] and more.", ""]
    assert answer.citations[0].source_ids == ["c", "a"]


def test_a_footnote_waits_for_its_definition() -> None:
    chunks = [
        "Claim.[^x] More",
        " text [1].\n\n[^x]: https://beta.example/page\n",
        "After.",
    ]
    shown, answer = stream(chunks)
    assert shown[0] == "Claim."
    assert "".join(shown[:2]) == "Claim.[^1] More text [2]."
    assert answer.text == "Claim.[^1] More text [2].\n\nAfter."
    assert [s.id for s in answer.sources] == ["b", "a"]


def test_markers_after_an_undecided_footnote_are_checked_when_it_is_decided() -> None:
    body = "Intro.[^a] Then [3], `x[2]` and [2].\n\n```\ny = [4]\n```\n\nMore [4][3].\n\n"
    text = body + "[^a]: https://delta.example/page\nAfter [1]."
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    marker_stream = MarkerStream(SOURCES)
    shown = []
    for chunk in chunks:
        shown.append(marker_stream.feed(chunk))
        if len("".join(chunks[: len(shown)])) < len(body):
            assert "Intro.".startswith("".join(shown))  # nothing after the reference yet
    shown.append(marker_stream.close())
    expected = "Intro.[^1] Then [2], `x[2]` and [3].\n\n```\ny = [4]\n```\n\nMore [1][2].\n\n"
    assert marker_stream.answer.text == expected + "After [4]."
    assert "".join(shown) == marker_stream.answer.text
    assert [s.id for s in marker_stream.answer.sources] == ["d", "c", "b", "a"]


def test_an_undefined_numbered_footnote_waits_for_the_end() -> None:
    # A definition further on could still name another source than number 3.
    shown, answer = stream(["Claim [^3]. More [1].", " End."])
    assert shown == ["Claim ", "", "[^1]. More [2]. End."]
    assert answer.text == "Claim [^1]. More [2]. End."


def test_markers_that_are_not_markers_keep_their_numbers() -> None:
    chunks = ["Use `x[3]` and ", "a[7] but [3]", ". Then [1]", "."]
    shown, answer = stream(chunks)
    assert "".join(shown) == "Use `x[3]` and a[7] but [1]. Then [2]." == answer.text


def test_markers_glued_to_code_like_words_are_renumbered_live() -> None:
    # OpenAI[2] names a source: it is a citation, renumbered with it, while streaming too.
    chunks = ["Über OpenAI", "[2", "] and CO2[1]", ". Then myList[9] stays."]
    shown, answer = stream(chunks)
    assert "".join(shown) == "Über OpenAI[1] and CO2[2]. Then myList[9] stays." == answer.text
    assert len(answer.citations) == 2


def test_invalid_markers_are_dropped_before_numbering() -> None:
    shown, answer = stream(["Claim [9] [0] [4]", ". Next [2][9][4]."])
    assert "".join(shown) == "Claim [1]. Next [1][2]." == answer.text
    assert [s.id for s in answer.sources] == ["d", "b"]


def test_keep_unused_keeps_the_other_sources_after_the_cited() -> None:
    _, answer = stream(["Claim [3]."], keep_unused=True)
    assert answer.text == "Claim [1]."
    assert [s.id for s in answer.sources] == ["c", "a", "b", "d"]
    _, answer = stream(["Claim [3]."])
    assert [s.id for s in answer.sources] == ["c"]


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
        "[2]",
        "[3]",
        "[4]",
        "[2, 3]",
        "[3, 1]",
        "[1,3]",
        "[2-4]",
        "[1-4]",
        "[1][2]",
        "[3] [1]",
        "[1, 1]",
        "[2][2]",
        "[[4]]",
        "[[1]](https://delta.example/page)",
        "[9]",
        "[0]",
        "[1, 9]",
        "[4-2]",
        "[2024]",
        "[[USAGE:1,2]]",
        "[[S:2]]",
        "[[S:1,3]]",
        "[[S:",
        "9]]",
        "`",
        "```\n",
        "~~~\n",
        "    ",
        "| a |",
        "\n---|---\n",
        "[^1]",
        "[^3]",
        "[^x]",
        "[^y]",
        "\n[^x]: https://beta.example/page\n",
        "\n[^x]: Gamma\n",
        "\n[^3]: https://alpha.example/page\n",
        "\n[^y]: https://nope.example/\n",
        "[^x]: 4\r",
        "([a](https://gamma.example/page))",
        '<sup class="cite" data-sids="9">[9]</sup>',
        "<sup>1</sup>",
        "<sup>3, 4</sup>",
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
        # Numbers that are no citation but name a source: renumber may escape them.
        "x[1, 9]",
        "a[0, 2]",
        "`[3]`",
        "\r",
        "\t",
        "caf\u00e9 ",
        "\u6771\u4eac",
        "\U0001f600",
    ]
)
OPTIONS = st.sampled_from(
    [
        {},
        {"keep_unused": True},
        {"on_invalid": "keep"},
        {"base": 0},
        {"style": "brackets"},
        {"style": "footnotes"},
        {"style": ["sids", "sup", "links"]},
        {"renumber": False},
        {"renumber": False, "on_invalid": "keep"},
        {"renumber": False, "base": 0},
        {"renumber": False, "style": "footnotes"},
    ]
)


def chunked(text: str, cuts: set[int]) -> list[str]:
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=30), st.data(), OPTIONS)
def test_property_streaming_equals_whole_text_for_every_chunking(
    pieces: list[str], data: st.DataObject, options: dict[str, Any]
) -> None:
    text = "".join(pieces)
    cuts = data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12))
    assert_same_as_whole(chunked(text, cuts), **options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=20), OPTIONS)
def test_property_one_character_at_a_time(pieces: list[str], options: dict[str, Any]) -> None:
    text = "".join(pieces)
    assert_same_as_whole(list(text), **options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=25), st.data())
def test_property_every_shown_number_is_final(pieces: list[str], data: st.DataObject) -> None:
    """After every chunk, what has been shown is the start of the final, renumbered text."""
    text = "".join(pieces)
    chunks = chunked(text, data.draw(st.sets(st.integers(1, max(1, len(text) - 1)))))
    final = whole_answer(text).text
    marker_stream = MarkerStream(SOURCES)
    for chunk in chunks:
        marker_stream.feed(chunk)
        assert final.startswith(marker_stream.text)
    marker_stream.close()
    assert marker_stream.text == final


WORDS = st.sampled_from(
    [
        "river",
        "Stone",
        "city",
        "Dr.",
        "e.g.",
        "caf\u00e9",
        "\u6771\u4eac\u3002",
        "\u3002",
        "x_1",
        "obj.items",
        "1932",
        "https://u.example/a.b",
        "*bold*",
        "\u300c\u884c\u304f\u3002\u300d",
        "\u5927\u962a\u306e\u8857",
        "www.x.example",
        "a://b",
    ]
)
MARKERS = st.sampled_from(
    [
        "[1]",
        "[2, 3]",
        "[3, 1]",
        "[2-4]",
        "[1][2]",
        "[3] [1]",
        "[9]",
        "[^1]",
        "[^x]",
        "[[S:1,3]]",
        "<sup>2</sup>",
        "([a](https://gamma.example/page))",
        "\u3010a. B\u2020source\u3011",
        "`[3]`",
        "`code",
        "`",
        "[[USAGE:1]]",
        "a[1]",
        "x[1, 9]",
        "\u3002_[1]",
        "\u3002][2]",
        "x.[1]",
        "[1](x)",
    ]
)


@st.composite
def sentences_with_markers(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.one_of(WORDS, MARKERS), min_size=1, max_size=9))
    end = draw(st.sampled_from([".", "!", "?", "\u3002", ".)", ":", ","]))
    tail = draw(st.sampled_from(["", " [2]", "[4]", " [^y]"]))
    # CJK text runs on with no spaces, its punctuation between the words.
    glue = draw(st.sampled_from([" ", " ", "", "\u3001", "\u3002"]))
    return glue.join(words) + end + tail


@st.composite
def blocks(draw: st.DrawFn) -> str:
    kind = draw(
        st.sampled_from(["para", "para", "para", "list", "code", "heading", "table", "def"])
    )
    if kind == "para":
        return " ".join(draw(st.lists(sentences_with_markers(), min_size=1, max_size=7)))
    if kind == "list":
        bullet = draw(st.sampled_from(["- ", "1. ", "* "]))
        items = draw(st.lists(st.lists(sentences_with_markers(), min_size=1, max_size=3)))
        # After a blank line, indented text continues the item; more indentation is code.
        more = draw(st.sampled_from(["", "\n\n    ", "\n\n      "]))
        return "\n".join(bullet + " ".join(item) for item in items) + (
            more + draw(sentences_with_markers()) if more else ""
        )
    if kind == "code":
        return draw(st.sampled_from(["```\nx = [1]\n```", "```\nopen [2]", "    y = [3]"]))
    if kind == "heading":
        underline = draw(st.sampled_from(["", "\n===", "\n---"]))
        return draw(st.sampled_from(["# ", ""])) + draw(sentences_with_markers()) + underline
    if kind == "table":
        return "| a [1] | b |\n|---|---|\n| " + draw(sentences_with_markers()) + " |"
    return draw(
        st.sampled_from(["[^x]: https://beta.example/page", "[^y]: Gamma", "[^1]: 4", "[^x]: nope"])
    )


STRUCTURED = st.lists(st.tuples(blocks(), st.sampled_from(["\n\n", "\n", "\r\n\r\n"]))).map(
    lambda parts: "".join(block + gap for block, gap in parts)
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STRUCTURED, st.data(), OPTIONS, st.sampled_from(["1", "4", "cuts"]))
def test_property_long_structured_answers(
    text: str, data: st.DataObject, options: dict[str, Any], how: str
) -> None:
    """Paragraphs long enough for the checks' shortcuts, lists, code, tables, definitions."""
    if how == "cuts":
        chunks = chunked(text, data.draw(st.sets(st.integers(1, max(1, len(text) - 1)))))
    else:
        chunks = [text[i : i + int(how)] for i in range(0, len(text), int(how))]
    assert_same_as_whole(chunks, **options)


@pytest.mark.parametrize("text", ["`[3]`[9]`", "`x` [9]`", "code `a`\t[9]`b`"])
def test_an_invalid_marker_after_a_backtick_stays_so_code_spans_do_not_change(text: str) -> None:
    # Dropping it would join two backtick runs: text shown as code would stop being code
    # after the stream had shown it (and its numbers would then be escaped).
    for chunks in (list(text), [text]):
        stream = MarkerStream(SOURCES)
        for chunk in chunks:
            stream.feed(chunk)
        stream.close()
        assert stream.text == whole_answer(text).text == text
        assert not any("differs" in note for note in stream.answer.diagnostics)


# --- numbers that are no citation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        # Glued to a code-like word and naming no given source as a whole, [1, 9] is text; it
        # still names source 1, which no citation before it numbers 1: escaped, as shown.
        ("WordWord[1, 9]Word", {}, "WordWord\\[1, 9]Word"),
        ("W[4]] x", {"base": 0}, "W\\[4]] x"),
        ("Claim [2]. WordWord[1, 9] too.", {}, "Claim [1]. WordWord\\[1, 9] too."),
        # Source 1 is already number 1 where the number stands: it keeps its meaning.
        ("Claim [1]. WordWord[1, 9] too.", {}, "Claim [1]. WordWord[1, 9] too."),
    ],
)
def test_a_number_that_is_no_citation_is_escaped_as_it_is_shown(
    text: str, options: dict[str, Any], expected: str
) -> None:
    # renumber decides from the citations before the number, so the stream decides as it
    # shows the number, not only when the answer is complete.
    for chunks in ([text], list(text)):
        shown, answer = stream(chunks, **options)
        assert "".join(shown[:-1]) == answer.text == whole_answer(text, **options).text == expected
        assert not any("differs" in note for note in answer.diagnostics)


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        # Removing the usage tag joins two backtick runs: [2] is no longer code.
        ("`]```[2]`[[USAGE:2]]`", {"style": "brackets"}, "`]```\\[2]``"),
        # Removing [9] makes ~~~ open a fence, and the second one close it: [2, 3] and [1]
        # were code as written, and are numbers of the parsed text.
        ("[9]~~~\n~~~\n[2, 3]` and more [1].\n", {}, "~~~\n~~~\n\\[2, 3]` and more \\[1].\n"),
        # Removing the definition line makes the indented line a code block.
        ("[^x]: Gamma\n    x[1, 9] y\n\nMore [3].", {}, "    x[1, 9] y\n\nMore [1]."),
        # Removing [9], alone on its line, makes the indented line after the blank one code.
        ("a\n\n[9]\n    x WordWord[1, 9] end.", {}, "a\n\n    x WordWord[1, 9] end."),
        # Removing the usage tag puts "(" after a[0, 1]: link text, not a number.
        ("a[0, 1][[USAGE:2]]( x", {}, "a[0, 1]( x"),
        ("Also a[0, 1][[USAGE:2]] x", {}, "Also a\\[0, 1] x"),
        # Removing the invalid <sup> leaves [4] a number, no longer a reference definition.
        ("[4]:<sup>9</sup> see more.", {}, "\\[4]: see more."),
        # Removing [[9]] glues the <sup> to a word, which makes it no match: [4] in it is one.
        ("ab[[9]]<sup>[4]</sup> x", {"style": "brackets"}, "ab<sup>\\[4]</sup> x"),
    ],
)
def test_numbers_are_read_in_the_parsed_text_as_renumber_reads_them(
    text: str, options: dict[str, Any], expected: str
) -> None:
    # A removal can change what the parsed text reads as code or as a number; renumber escapes
    # by the parsed text, so the stream checks such numbers there too.
    for chunks in ([text], list(text)):
        shown, answer = stream(chunks, **options)
        assert "".join(shown) == answer.text == whole_answer(text, **options).text == expected
        assert not any("differs" in note for note in answer.diagnostics)


# A check on one line of plain prose reads the line's markers without segmenting it:
# texts made of what such a line holds (sentence ends, abbreviations, decimals, quotes and
# parentheses next to markers, glued and adjacent brackets), then lines that turn it into
# something else (a heading, a table row, a list, code) once its markers were shown.
PLAIN_PIECES = st.sampled_from(
    [
        "Word",
        "word",
        "river",
        " ",
        "  ",
        ". ",
        "! ",
        "? ",
        ".",
        ", ",
        "; ",
        ": ",
        "e.g. ",
        "Dr. ",
        "3.5 ",
        "1932 ",
        "'",
        '"',
        "(",
        ")",
        "-",
        "[",
        "]",
        "[1]",
        "[2]",
        "[3]",
        "[4]",
        "[9]",
        "[0]",
        "[2024]",
        "[2, 3]",
        "[3, 1]",
        "[2-4]",
        "[4-2]",
        "[1, 9]",
        "[1][2]",
        "[3] [1]",
        "][1]",
        "a[1]",
        "x[1, 9]",
        "Item[2]",
        "([1])",
        "[1].",
        '"Quoted." [2]',
        "www.x [1]",
        "www.x[1]",
        "K\u00f6ln ",
        "l\u2019\u00e9t\u00e9 ",
        "\u00ab Bonjour. \u00bb ",
        "\u201cCit\u00e9.\u201d [2]",
        "\u0152uvre[3]",
    ]
)
TURNS = st.sampled_from(
    ["", "\n---\n", "\n===\n", "| a |\n---|---\n", "\n\n    code [2]\n", "\n- item [3]", "\n`[1]`"]
)


@pytest.mark.parametrize(
    "text",
    [
        # A bracket glued to a www. token is part of a URL, not a marker: [2] is the first.
        "Word www.x[1] more [2].",
        "www.x[1] then [3] and [2].",
        # Glued to a "]" that ends no marker: text; after a marker: one run.
        "See x][1] and [2]. Then [1][3].",
        # Sentence ends inside abbreviations and decimals, markers after them.
        'Dr. Who [2]. It grew 3.5 [3] e.g. [1] here. (See [4].) "Quoted." [2]',
        # Latin letters and typographic quotes read like ASCII ones.
        "L\u2019\u00e9t\u00e9 \u00e0 K\u00f6ln [3]. \u00ab Bonjour. \u00bb [2] "
        "\u201cFin.\u201d [1]",
        # A plain line that turns into a setext heading, then a table row.
        "Title [3] here\n---\nRow [2] | cell [1]\n---|---\n",
    ],
)
def test_plain_lines_stream_like_whole_texts(text: str) -> None:
    for chunks in ([text], list(text), chunked(text, set(range(3, len(text), 7)))):
        assert_same_as_whole(chunks)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PLAIN_PIECES, min_size=1, max_size=30), TURNS, st.data(), OPTIONS)
def test_property_plain_prose_lines_stream_like_whole_texts(
    pieces: list[str], turn: str, data: st.DataObject, options: dict[str, Any]
) -> None:
    text = "".join(pieces) + turn
    cuts = data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=20))
    assert_same_as_whole(chunked(text, cuts), **options)
    assert_same_as_whole(list(text), **options)
