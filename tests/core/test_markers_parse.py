"""`parse_markers`: every marker style, what is not a marker, validation, options, misuse."""

from __future__ import annotations

import pytest

from unicite import Citation, CitationError, CitedAnswer, Source, UsageError
from unicite.markers import inject_markers, parse_markers, renumber
from unicite.sources import SourceLedger

SOURCES = [
    Source(id="a", url="https://alpha.example/page", title="Alpha report"),
    Source(id="b", url="https://beta.example/page", title="Beta.pdf"),
    Source(id="c", url="https://gamma.example/docs/guide.pdf", title="Gamma guide"),
    Source(id="d", url="https://delta.example/", title="Delta"),
]


def cited(answer: CitedAnswer) -> list[tuple[str, list[str], str]]:
    """(claim text, source ids, marker text) of every citation, in order."""
    out = []
    for c in answer.citations:
        assert c.origin == "marker"
        assert c.marker_span is not None
        out.append((c.text, c.source_ids, answer.text[c.marker_span[0] : c.marker_span[1]]))
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The tower is tall [1].", [("The tower is tall", ["a"], "[1]")]),
        ("The tower is tall.[2]", [("The tower is tall.", ["b"], "[2]")]),
        ("It rains [1, 3].", [("It rains", ["a", "c"], "[1, 3]")]),
        ("It rains [2-4].", [("It rains", ["b", "c", "d"], "[2-4]")]),
        ("It rains [2\u20133].", [("It rains", ["b", "c"], "[2\u20133]")]),
        ("It rains [1][2].", [("It rains", ["a", "b"], "[1][2]")]),
        ("It rains [3] [1].", [("It rains", ["c", "a"], "[3] [1]")]),
        ("It rains [[2]].", [("It rains", ["b"], "[[2]]")]),
        ("It rains [[S:1,3]].", [("It rains", ["a", "c"], "[[S:1,3]]")]),
        ("It rains [[S:2-4]].", [("It rains", ["b", "c", "d"], "[[S:2-4]]")]),
        (
            'It rains<sup class="cite" data-sids="1,3">[1,3]</sup>.',
            [("It rains", ["a", "c"], '<sup class="cite" data-sids="1,3">[1,3]</sup>')],
        ),
        ("It rains<sup>[2]</sup>.", [("It rains", ["b"], "<sup>[2]</sup>")]),
        (
            "It rains \u30104:0\u2020source\u3011.",
            [("It rains", ["a"], "\u30104:0\u2020source\u3011")],
        ),
        # The name after the dagger, when it is a source's title or file name, wins over the index.
        (
            "It rains \u30104:0\u2020Beta.pdf\u3011.",
            [("It rains", ["b"], "\u30104:0\u2020Beta.pdf\u3011")],
        ),
        (
            "It rains \u30100\u2020guide.pdf\u3011.",
            [("It rains", ["c"], "\u30100\u2020guide.pdf\u3011")],
        ),
        ("It rains [1:2\u2020source].", [("It rains", ["c"], "[1:2\u2020source]")]),
        (
            "It rains ([beta](https://BETA.example/page?utm_source=x)).",
            [("It rains", ["b"], "([beta](https://BETA.example/page?utm_source=x))")],
        ),
        (
            "Two links ([a](https://alpha.example/page), [d](https://delta.example)).",
            [
                (
                    "Two links",
                    ["a", "d"],
                    "([a](https://alpha.example/page), [d](https://delta.example))",
                )
            ],
        ),
        ("Mixed [1][[S:2]].", [("Mixed", ["a", "b"], "[1][[S:2]]")]),
        (
            "- [2] A leading marker claims its bullet",
            [("A leading marker claims its bullet", ["b"], "[2]")],
        ),
        (
            "First claim [1]. Second claim [2].",
            [("First claim", ["a"], "[1]"), ("Second claim", ["b"], "[2]")],
        ),
    ],
)
def test_styles(text: str, expected: list[tuple[str, list[str], str]]) -> None:
    answer = parse_markers(text, SOURCES)
    assert cited(answer) == expected
    assert answer.text == text
    assert answer.diagnostics == []
    assert answer.sources == SOURCES
    assert answer.has_inline_markers


def test_footnotes_resolve_through_definitions_which_are_removed() -> None:
    text = (
        "Sea levels rise.[^sea] Ice melts.[^2] A note.[^n]\n"
        "\n"
        "[^sea]: https://gamma.example/docs/guide.pdf\n"
        "[^2]: Delta\n"
        "[^n]: Just a remark, not a source."
    )
    answer = parse_markers(text, SOURCES)
    assert answer.text == (
        "Sea levels rise.[^sea] Ice melts.[^2] A note.[^n]\n\n[^n]: Just a remark, not a source."
    )
    # [^2] is defined by title, so it is Delta, not the second source.
    assert cited(answer) == [("Sea levels rise.", ["c"], "[^sea]"), ("Ice melts.", ["d"], "[^2]")]
    assert answer.diagnostics == []
    assert answer.extras["footnote_definitions"] == {
        "sea": "[^sea]: https://gamma.example/docs/guide.pdf",
        "2": "[^2]: Delta",
    }


def test_footnote_definitions_at_the_end_leave_no_trailing_space() -> None:
    answer = parse_markers("Claim.[^1]\n\n[^1]: https://beta.example/page\n", SOURCES)
    assert answer.text == "Claim.[^1]"
    assert cited(answer) == [("Claim.", ["b"], "[^1]")]


def test_numeric_footnotes_without_definitions_are_source_numbers() -> None:
    assert cited(parse_markers("Claim.[^3]", SOURCES)) == [("Claim.", ["c"], "[^3]")]


@pytest.mark.parametrize(
    "text",
    [
        "Code:\n\n```python\nx = [1]\ny = [[S:2]]\n```\n",
        "Inline `x[1] = [2]` and `[[S:1]]` code.",
        "Indented code after a blank line:\n\n    items = [1, 2]\n",
        "Indexing a[0] and row_2[0] and myList[0] and obj.items[0].",
        "A URL https://example.com/list[1] and www.example.com/a[2] stay.",
        "Link text [1](https://example.com) and [2]: https://example.com stay.",
        "The year [2024] and the range [1999-2001] are not sources.",
        "A superscript x<sup>2</sup> and 10<sup>6</sup> and 4<sup>th</sup>.",
        "Reference links [Note][1] stay.",
    ],
)
def test_what_is_not_a_marker(text: str) -> None:
    answer = parse_markers(text, SOURCES)
    assert answer.text == text
    assert answer.citations == []
    assert answer.diagnostics == []
    assert not answer.has_inline_markers


def test_a_year_in_range_is_a_marker() -> None:
    sources = [Source(url=f"https://s{n}.example/") for n in range(2030)]
    answer = parse_markers("Cited [2024].", sources)
    assert [c.source_ids for c in answer.citations] == [[sources[2023].id]]


@pytest.mark.parametrize(
    ("text", "dropped", "problem"),
    [
        ("Claim [0].", "Claim.", "source 0 in 1-based numbering"),
        ("Claim [7].", "Claim.", "source 7 out of range (4 sources given)"),
        ("Claim [3-9] here.", None, "sources 5-9 out of range"),
        ("Claim [4-2].", "Claim.", "reversed range 4-2"),
        ("Claim [1-200].", "Claim.", "range 1-200 names more than 100 sources"),
        ("Claim.[^\u00b2]", None, "footnote [^\u00b2] has no definition naming a source"),
        ("Claim [1, 1].", None, "cites 1 twice"),
        ("Claim [[S:9]] here.", "Claim here.", "source 9 out of range"),
        ('Claim<sup class="cite" data-sids="">[]</sup>.', "Claim.", "empty data-sids"),
        ("Claim \u30103:7\u2020source\u3011.", "Claim.", "search result 7 out of range"),
        ("Claim \u3010nope\u2020Zeta\u3011.", "Claim.", "is not a source title"),
        ("Claim ([z](https://zeta.example/)).", None, "which is not a source"),
        ("Claim.[^zz]", None, "footnote [^zz] has no definition naming a source"),
        (
            "Claim.[^1]\n\n[^1]: https://zeta.example/",
            None,
            "footnote [^1] is defined as https://zeta.example/, which is not a source",
        ),
    ],
)
def test_validation(text: str, dropped: str | None, problem: str) -> None:
    kept = parse_markers(text, SOURCES, on_invalid="keep")
    assert kept.text == text
    assert any(problem in d for d in kept.diagnostics), kept.diagnostics

    answer = parse_markers(text, SOURCES)  # on_invalid="drop"
    assert any(problem in d for d in answer.diagnostics)
    # Markers naming no source at all are removed; links and footnotes are content and stay.
    assert answer.text == (text if dropped is None else dropped)

    with pytest.raises(CitationError) as caught:
        parse_markers(text, SOURCES, on_invalid="raise")
    assert any(problem in d for d in caught.value.diagnostics)


def test_partially_valid_markers_cite_what_they_can() -> None:
    answer = parse_markers("Claim [2, 9].", SOURCES)
    assert cited(answer) == [("Claim", ["b"], "[2, 9]")]
    assert answer.diagnostics == ["marker '[2, 9]' at 6: source 9 out of range (4 sources given)"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Claim [9]. Next", "Claim. Next"),
        ("Claim [9] and more", "Claim and more"),
        ("Claim [9][1].", "Claim [1]."),
        ("Claim [1] [9].", "Claim [1]."),
        ("Claim [9]Next", "Claim Next"),
        ("First.\n[9]\nSecond.", "First.\nSecond."),
        ("First.\n  [9] Second.", "First.\n  Second."),
        ("First.\n\n[9]", "First."),
    ],
)
def test_dropping_a_marker_tidies_the_space_around_it(text: str, expected: str) -> None:
    assert parse_markers(text, SOURCES).text == expected


def test_usage_tags_are_removed_and_reported() -> None:
    text = "Claim [1]. Other claim [2].\n[[USAGE:1,3]]\nLast line."
    answer = parse_markers(text, SOURCES)
    assert answer.text == "Claim [1]. Other claim [2].\nLast line."
    # What the model declared, then what it cited without declaring it (seed 004 §4.4).
    assert answer.sources_used == ["a", "c", "b"]
    assert cited(answer) == [("Claim", ["a"], "[1]"), ("Other claim", ["b"], "[2]")]

    inline = parse_markers("Claim [[USAGE:2]] here [[USAGE:4, 2]].", SOURCES)
    assert inline.text == "Claim here."
    assert inline.sources_used == ["b", "d"]

    assert parse_markers("No tag [1].", SOURCES).sources_used is None
    # A removal at the very end takes the whitespace before it.
    assert parse_markers("Claim [1].\n\n[[USAGE:1]]\n", SOURCES).text == "Claim [1]."
    bad = parse_markers("Claim.\n\n[[USAGE:1,8]]", SOURCES)
    assert bad.text == "Claim."
    assert bad.sources_used == ["a"]
    assert bad.diagnostics == [
        "marker '[[USAGE:1,8]]' at 8: source 8 out of range (4 sources given)"
    ]


def test_zero_based_producers() -> None:
    answer = parse_markers("First [0]. Last [3]. Range [1-2].", SOURCES, base=0)
    assert cited(answer) == [
        ("First", ["a"], "[0]"),
        ("Last", ["d"], "[3]"),
        ("Range", ["b", "c"], "[1-2]"),
    ]
    out = parse_markers("Past the end [4].", SOURCES, base=0)
    assert out.diagnostics == ["marker '[4]' at 13: source 4 out of range (4 sources given)"]
    # The assistant style counts from 0 whatever base says.
    assert cited(parse_markers("X \u30101:1\u2020source\u3011.", SOURCES, base=0)) == [
        ("X", ["b"], "\u30101:1\u2020source\u3011")
    ]


def test_style_option_reads_only_the_chosen_styles() -> None:
    text = "One [1]. Two [[S:2]]. Three [^3]. Four <sup>4</sup>."
    assert [c.source_ids for c in parse_markers(text, SOURCES, style="sids").citations] == [["b"]]
    assert [c.source_ids for c in parse_markers(text, SOURCES, style="brackets").citations] == [
        ["a"]
    ]
    both = parse_markers(text, SOURCES, style=["footnotes", "sup"])
    assert [c.source_ids for c in both.citations] == [["c"], ["d"]]
    # Other styles stay text and are not validated.
    assert parse_markers("Two [[S:9]].", SOURCES, style="brackets").diagnostics == []


def test_sources_as_dicts_ledger_and_duplicates() -> None:
    dicts = [{"url": "https://alpha.example/page"}, {"url": "https://beta.example/page"}]
    answer = parse_markers("Claim [2].", dicts)
    assert answer.citations[0].source_ids == [answer.sources[1].id]

    ledger = SourceLedger()
    for source in SOURCES:
        ledger.add(source)
    assert parse_markers("Claim [3].", ledger).citations[0].source_ids == ["c"]

    twice = parse_markers("One [1]. Two [2].", [SOURCES[0], SOURCES[0]])
    assert [c.source_ids for c in twice.citations] == [["a"], ["a"]]
    assert twice.sources == [SOURCES[0]]
    assert twice.diagnostics == ["sources 1 and 2 have the same id 'a'; both numbers cite it"]


def test_no_sources_every_marker_is_invalid() -> None:
    answer = parse_markers("Claim [1].", [])
    assert answer.text == "Claim."
    assert answer.diagnostics == ["marker '[1]' at 6: source 1 out of range (0 sources given)"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_markers(b"x", SOURCES), "text must be a str"),  # type: ignore[arg-type]
        (lambda: parse_markers("x", "abc"), "sources must be a list"),
        (lambda: parse_markers("x", [42]), "expected a Source or a dict"),
        (lambda: parse_markers("x", [{"kind": "nonsense"}]), "sources[0]: not a valid source"),
        (lambda: parse_markers("x", SOURCES, style="roman"), "style must be one of"),  # type: ignore[arg-type]
        (lambda: parse_markers("x", SOURCES, style=[]), "style names no marker style"),
        (lambda: parse_markers("x", SOURCES, on_invalid="ignore"), "on_invalid must be"),  # type: ignore[arg-type]
        (lambda: parse_markers("x", SOURCES, base=2), "base must be 0 or 1"),
        (lambda: parse_markers("x", SOURCES, base=True), "base must be 0 or 1"),
    ],
)
def test_misuse_is_a_usage_error(call: object, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("[", r"\[")):
        call()  # type: ignore[operator]


def test_diagnostics_show_hostile_markers_safely() -> None:
    answer = parse_markers("Claim \u3010x\u2020\x1b[31m\u202eevil\u3011.", SOURCES)
    assert answer.diagnostics
    assert all("\x1b" not in d and "\u202e" not in d for d in answer.diagnostics)


def test_injected_markers_read_back() -> None:
    base = parse_markers("Alpha claim [1]. Beta claim [2, 3].", SOURCES)
    for style in ("brackets", "sids", "footnotes", "sup"):
        injected = inject_markers(base, style)  # type: ignore[arg-type]
        again = parse_markers(injected.text, SOURCES)
        assert [(c.text, c.source_ids) for c in again.citations] == [
            ("Alpha claim", ["a"]),
            ("Beta claim", ["b", "c"]),
        ]


def test_many_markers_on_a_long_text() -> None:
    sentence = "Facts about item {n} are here [{m}]. "
    text = "".join(sentence.format(n=n, m=n % 4 + 1) for n in range(3000))
    answer = parse_markers(text, SOURCES)
    assert len(answer.citations) == 3000
    assert answer.citations[-1].text == "Facts about item 2999 are here"
    assert answer.citations[-1].source_ids == ["d"]


def test_has_inline_markers() -> None:
    text = "Claim here."
    plain = CitedAnswer(
        text=text,
        sources=SOURCES,
        citations=[Citation(start=0, end=5, text="Claim", source_ids=["a"])],
    )
    assert not plain.has_inline_markers
    empty_span = plain.model_copy(
        update={"citations": [plain.citations[0].model_copy(update={"marker_span": (5, 5)})]}
    )
    assert not empty_span.has_inline_markers
    assert inject_markers(plain).has_inline_markers


@pytest.mark.parametrize(
    "word",
    [
        "OpenAI",
        "GPT-4o",
        "iPhone",
        "YouTube",
        "PostgreSQL",
        "CO2",
        "ChatGPT",
        "iOS",
        "AnswerString",
    ],
)
def test_a_marker_glued_to_a_code_like_word_cites_when_it_names_a_source(word: str) -> None:
    text = f"Première phrase sur {word}[2]. Puis [1]."
    answer = parse_markers(text, SOURCES)
    assert cited(answer) == [(f"Première phrase sur {word}", ["b"], "[2]"), ("Puis", ["a"], "[1]")]
    assert answer.diagnostics == []
    # Renumbering moves that marker with its source: no [n] keeps a number naming another.
    renumbered = renumber(answer)
    assert renumbered.text == f"Première phrase sur {word}[1]. Puis [2]."
    assert [s.id for s in renumbered.sources] == ["b", "a"]


def test_indexing_that_names_no_source_stays_text_and_is_reported() -> None:
    text = "Indexing myList[9] and obj.items[5] but arr[0] is silent; Fact[1]."
    answer = parse_markers(text, SOURCES)
    assert answer.text == text
    assert cited(answer) == [
        ("Indexing myList[9] and obj.items[5] but arr[0] is silent; Fact", ["a"], "[1]")
    ]
    assert answer.diagnostics == [
        "marker '[9]' at 15 may be an index, not a citation (a camelCase name ('myList'));"
        " left as text",
        "marker '[5]' at 32 may be an index, not a citation (an attribute ('obj.items'));"
        " left as text",
    ]
    # Those numbers name no source before or after renumbering: their meaning cannot change.
    assert renumber(answer).text == text


def test_glued_markers_in_code_stay_code() -> None:
    text = "Run `myList[1]` then:\n\n```py\nOpenAI[2]\n```\n"
    answer = parse_markers(text, SOURCES)
    assert answer.citations == []
    assert answer.text == text


def test_a_marker_after_a_closed_link_in_cjk_text_is_not_inside_its_url() -> None:
    # No space separates the link's URL from the next sentence: the ")" closed the URL.
    text = "東京は大きい[[1]](https://alpha.example/page)。人口も多い[[2]](https://beta.example/page)。"
    answer = parse_markers(text, SOURCES)
    assert cited(answer) == [
        ("東京は大きい", ["a"], "[[1]](https://alpha.example/page)"),
        ("人口も多い", ["b"], "[[2]](https://beta.example/page)"),
    ]
