"""`renumber`: first-cited order, unused sources, markers rewritten in every style."""

from __future__ import annotations

import pytest

from unicite import Citation, CitedAnswer, Source, UsageError
from unicite.markers import inject_markers, parse_markers, renumber

SOURCES = [Source(id=k, url=f"https://{k}.example/", title=f"Title {k}") for k in "abcdef"]


def numbers(answer: CitedAnswer) -> list[list[int | None]]:
    return [[answer.footnote_number(sid) for sid in c.source_ids] for c in answer.citations]


def test_first_cited_order_and_markers_rewritten() -> None:
    answer = parse_markers("Alpha [5]. Beta [2]. Gamma [5, 2]. Delta [2-4].", SOURCES)
    result = renumber(answer)
    assert result.text == "Alpha [1]. Beta [2]. Gamma [1, 2]. Delta [2-4]."
    assert [s.id for s in result.sources] == ["e", "b", "c", "d"]
    assert numbers(result) == [[1], [2], [1, 2], [2, 3, 4]]
    assert [c.text for c in result.citations] == ["Alpha", "Beta", "Gamma", "Delta"]
    for c in result.citations:
        assert c.marker_span is not None
        assert result.text[c.start : c.end] == c.text


@pytest.mark.parametrize(
    ("text", "expected", "order"),
    [
        # Within a marker, the order it writes: 3 is cited first.
        ("A [3, 1]. B [1].", "A [1, 2]. B [2].", "ca"),
        # A range stays one while the new numbers run on, and is listed once they do not.
        ("A [3]. B [2-4].", "A [1]. B [1-3].", "cbd"),
        ("A [3]. B [5]. C [2-4].", "A [1]. B [2]. C [1,3,4].", "cebd"),
        # Adjacent markers make one citation, rewritten as one.
        ("A [3] [1]. B [2].", "A [1][2]. B [3].", "cab"),
        # A footnote counts where it stands, not where its definition is.
        ("X.[^d] Y [2].\n\n[^d]: https://d.example/", "X.[^1] Y [2].", "db"),
        # Code, and markers that name nothing, take no number.
        ("See `[3]` and [2]. Bad [9] [4].", "See `[3]` and [1]. Bad [2].", "bd"),
    ],
)
def test_numbers_follow_the_reading_order_of_the_markers(
    text: str, expected: str, order: str
) -> None:
    result = renumber(parse_markers(text, SOURCES))
    assert result.text == expected
    assert "".join(s.id for s in result.sources) == order


def test_keep_unused_and_declared_sources() -> None:
    answer = parse_markers("Claim [3].\n[[USAGE:3,6]]", SOURCES)
    assert [s.id for s in renumber(answer).sources] == ["c", "f"]
    kept = renumber(answer, keep_unused=True)
    assert [s.id for s in kept.sources] == ["c", "f", "a", "b", "d", "e"]
    assert kept.sources_used == ["c", "f"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X [4][2].", "X [1][2]."),
        ("X [4, 2].", "X [1, 2]."),
        ("X [4,2].", "X [1,2]."),
        ("X [[4]].", "X [[1]]."),
        ("X [[4]](https://d.example/).", "X [[1]](https://d.example/)."),
        ("X [[S:4,2]].", "X [[S:1,2]]."),
        ("X [[SRC:4]].", "X [[SRC:1]]."),
        ("X [[S:3-6]] y [1].", "X [[S:1-4]] y [5]."),
        (
            'Claim<sup class="cite" data-sids="4">[4]</sup>.',
            'Claim<sup class="cite" data-sids="1">[1]</sup>.',
        ),
        ("X.[^4] Y.[^2]", "X.[^1] Y.[^2]"),
        ("X.[^d]\n\n[^d]: https://d.example/", "X.[^1]"),
        ("X \u30101:3\u2020source\u3011.", "X \u30101:0\u2020source\u3011."),
        ("X [2:5\u2020source].", "X [2:0\u2020source]."),
        ("X ([d](https://d.example/)).", "X ([d](https://d.example/))."),
    ],
)
def test_every_style_is_rewritten_in_its_own_style(text: str, expected: str) -> None:
    result = renumber(parse_markers(text, SOURCES))
    assert result.text == expected
    # The rewritten text reads back to the same citations.
    again = parse_markers(result.text, result.sources)
    assert [(c.start, c.end, c.source_ids, c.marker_span) for c in again.citations] == [
        (c.start, c.end, c.source_ids, c.marker_span) for c in result.citations
    ]


def test_zero_based_markers_become_one_based() -> None:
    answer = parse_markers("First [3]. Second [0].", SOURCES, base=0)
    result = renumber(answer)
    assert result.text == "First [1]. Second [2]."
    assert [s.id for s in result.sources] == ["d", "a"]


def test_idempotent() -> None:
    answer = parse_markers("A [5][3]. B [[S:6]]. C [3-5].", SOURCES)
    once = renumber(answer)
    assert renumber(once) == once


def test_citations_without_markers_reorder_sources_only() -> None:
    text = "One claim. Two claim."
    answer = CitedAnswer(
        text=text,
        sources=SOURCES,
        citations=[
            Citation(start=0, end=10, text="One claim.", source_ids=["f", "a"]),
            Citation(start=11, end=21, text="Two claim.", source_ids=["c"]),
        ],
    )
    result = renumber(answer)
    assert result.text == text
    assert [s.id for s in result.sources] == ["f", "a", "c"]
    assert not result.has_inline_markers
    # Then inject writes markers that already follow the new order.
    assert inject_markers(result).text == "One claim.[1][2] Two claim.[3]"


def test_does_not_modify_its_input() -> None:
    answer = parse_markers("A [5]. B [1].", SOURCES)
    copy = answer.model_copy(deep=True)
    renumber(answer)
    assert answer == copy


def test_misuse() -> None:
    with pytest.raises(UsageError):
        renumber("text")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        renumber(CitedAnswer(), keep_unused="yes")  # type: ignore[arg-type]


def _hand_built() -> CitedAnswer:
    # Written by hand: "[1]" in prose is no citation's marker, and meant the first source.
    text = "Le rapport [2] le dit. Voir aussi [1] et `x[1]`."
    return CitedAnswer(
        text=text,
        sources=[
            Source(id="a", url="https://a.example/"),
            Source(id="b", url="https://b.example/"),
        ],
        citations=[
            Citation(
                start=0,
                end=10,
                text="Le rapport",
                source_ids=["b"],
                origin="marker",
                marker_span=(11, 14),
            )
        ],
    )


def test_a_bracketed_number_that_would_name_another_source_is_escaped() -> None:
    answer = renumber(_hand_built())
    assert answer.text == "Le rapport [1] le dit. Voir aussi \\[1] et `x[1]`."
    assert [s.id for s in answer.sources] == ["b"]
    assert answer.diagnostics == [
        "text '[1]' at 34 is not a citation and its number now names another source:"
        " escaped as text"
    ]
    assert renumber(answer) == answer  # the escaped text is no marker: nothing more changes


def test_without_escaping_the_stray_number_is_reported_and_left() -> None:
    answer = renumber(_hand_built(), escape=False)
    assert answer.text == "Le rapport [1] le dit. Voir aussi [1] et `x[1]`."
    assert "read it as text, not as that source" in answer.diagnostics[0]


def test_numbers_that_keep_their_source_are_left_alone() -> None:
    answer = _hand_built()
    answer = answer.replace(sources=list(reversed(answer.sources)))  # b is [1], a is [2]
    # "[1]" names b, which the citation before it already numbers 1.
    text = "Le rapport [1] le dit. Voir aussi [1] et `x[1]`."
    answer = answer.replace(text=text)
    renumbered = renumber(answer, keep_unused=True)
    assert renumbered.text == text
    assert renumbered.diagnostics == []


def test_a_number_is_escaped_unless_the_citations_before_it_keep_its_source() -> None:
    # "[2]" names a, which only keep_unused numbers 2, after the text: a stream showing the
    # number cannot know that yet, so it is escaped (as MarkerStream does), and said why.
    answer = _hand_built()
    answer = answer.replace(sources=list(reversed(answer.sources)))  # b is [1], a is [2]
    answer = answer.replace(text="Le rapport [1] le dit. Voir aussi [2] et `x[1]`.")
    renumbered = renumber(answer, keep_unused=True)
    assert renumbered.text == "Le rapport [1] le dit. Voir aussi \\[2] et `x[1]`."
    assert renumbered.diagnostics == [
        "text '[2]' at 34 is not a citation and no citation before it gives its number to that"
        " source: escaped as text"
    ]
    # Left as written, it keeps its source: nothing to report.
    assert renumber(answer, keep_unused=True, escape=False).diagnostics == []
