from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite._segment import (
    CITATION_MARKER_RE,
    MARKER_RE,
    Segment,
    claim_span,
    claim_spans,
    clauses,
    find_markers,
    segment,
)


def units(text: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text(text)) for s in segment(text)]


def sentences(text: str) -> list[str]:
    return [s.text(text) for s in segment(text)]


def claim(text: str, marker: str, occurrence: int = 0) -> str:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(marker, start + 1)
    a, b = claim_span(text, start, start + len(marker))
    return text[a:b]


def assert_partition(text: str, segs: list[Segment]) -> None:
    covered = bytearray(len(text))
    previous_end = 0
    for seg in segs:
        assert previous_end <= seg.start < seg.end <= len(text)
        assert not text[seg.start].isspace()
        assert not text[seg.end - 1].isspace()
        covered[seg.start : seg.end] = b"\x01" * (seg.end - seg.start)
        previous_end = seg.end
    for i, ch in enumerate(text):
        assert covered[i] or ch.isspace(), (i, ch)


def test_segment_is_frozen_with_text_helper() -> None:
    seg = Segment(0, 5, "sentence")
    assert seg.text("Hello world") == "Hello"
    with pytest.raises(AttributeError):
        seg.start = 1  # type: ignore[misc]
    assert not hasattr(seg, "__dict__")


def test_marker_re_alias() -> None:
    assert CITATION_MARKER_RE is MARKER_RE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   \n\t  ", []),
        ("Hello", ["Hello"]),
        (
            "Paris is the capital of France. It is big! Is it old? Yes.",
            ["Paris is the capital of France.", "It is big!", "Is it old?", "Yes."],
        ),
        ("Really?! Yes.", ["Really?!", "Yes."]),
        ("Wait... Then it rained.", ["Wait...", "Then it rained."]),
        ("Wait… Then it rained.", ["Wait…", "Then it rained."]),
        ("Wait... what happened?", ["Wait... what happened?"]),
        ("It costs 3.14 dollars. Fine.", ["It costs 3.14 dollars.", "Fine."]),
        ("Use v1.2.3 now. Later v2.", ["Use v1.2.3 now.", "Later v2."]),
        ("See Section 2.1 for details.", ["See Section 2.1 for details."]),
        ("it ended. then more.", ["it ended. then more."]),
        ("Line one\nline two. Next", ["Line one\nline two.", "Next"]),
        ("First.\nSecond.", ["First.", "Second."]),
        ("First.\n\nsecond", ["First.", "second"]),
        ("No terminator\n\nAnother block", ["No terminator", "Another block"]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("He said “Stop.” Then he left.", ["He said “Stop.”", "Then he left."]),
        ("(See above.) Next one.", ["(See above.)", "Next one."]),
        ("**Note.** The rest follows.", ["**Note.**", "The rest follows."]),
        ("End. *Emphasis* starts.", ["End.", "*Emphasis* starts."]),
        ("End. _Emphasis_ starts.", ["End.", "_Emphasis_ starts."]),
        ('End. "Quoted" starts.', ["End.", '"Quoted" starts.']),
        ("End. 42 is the answer.", ["End.", "42 is the answer."]),
        ("End. (Aside) continues.", ["End.", "(Aside) continues."]),
        ("Done! 🎉 Next step.", ["Done!", "🎉 Next step."]),
        ("It is -5 °C. Wind is strong.", ["It is -5 °C.", "Wind is strong."]),
        ("Price. $5 only.", ["Price.", "$5 only."]),
        ("Run `a.b. C` now. Then stop.", ["Run `a.b. C` now.", "Then stop."]),
    ],
)
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected
    assert all(kind == "sentence" for kind, _ in units(text))


@pytest.mark.parametrize(
    "text",
    [
        "Mr. Smith and Mrs. Jones met Ms. Brown.",
        "Dr. Who and Prof. Plum arrived.",
        "John Smith Sr. and John Smith Jr. arrived.",
        "They live on St. James Street.",
        "Cats vs. Dogs is a debate.",
        "Apples, pears, etc. Are all fruit.",
        "Fruit, e.g. Apples, are healthy.",
        "Fruit, i.e. Apples, are healthy.",
        "Compare, cf. Smith, for details.",
        "It weighs approx. Ten tons.",
        "Acme Inc. Sells anvils.",
        "Acme Ltd. Sells anvils.",
        "Acme Co. Sells anvils.",
        "Acme Corp. Sells anvils.",
        "See No. 5 for details.",
        "See Fig. 3 for details.",
        "See Eq. 2 for details.",
        "See Vol. 4 for details.",
        "See pp. 10 for details.",
        "The U.S. Army is large.",
        "The U.K. Parliament sat.",
        "At 9 a.m. Breakfast starts.",
        "At 9 p.m. Dinner starts.",
        "On Jan. 5 it snowed.",
        "On Feb. 5 it snowed.",
        "On Sept. 5 it snowed.",
        "On Dec. 25 we rest.",
        "J. R. R. Tolkien wrote it.",
        "The author is J. K. Rowling.",
        "A Ph.D. Student wrote it.",
    ],
)
def test_abbreviations_do_not_split(text: str) -> None:
    assert sentences(text) == [text]


def test_number_abbreviations_split_when_no_number_follows() -> None:
    assert sentences("No. The capital is Paris.") == ["No.", "The capital is Paris."]
    assert sentences("See No. 5 now.") == ["See No. 5 now."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See www.python.org. Next one.", ["See www.python.org.", "Next one."]),
        ("Visit example.com/a.b today. Next.", ["Visit example.com/a.b today.", "Next."]),
        (
            "Go to https://example.com/a.b?x=1. Then click.",
            ["Go to https://example.com/a.b?x=1.", "Then click."],
        ),
        ("Mail bob@example.com. Thanks.", ["Mail bob@example.com.", "Thanks."]),
        ("Node.js. Is fast.", ["Node.js.", "Is fast."]),
    ],
)
def test_urls_and_domains(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris is big [1]. Lyon is small.", ["Paris is big [1].", "Lyon is small."]),
        ("Paris is big. [1] Lyon is small.", ["Paris is big. [1]", "Lyon is small."]),
        ("Paris is big.[1][2] Lyon is small.", ["Paris is big.[1][2]", "Lyon is small."]),
        ("Paris is big. [1, 2] Lyon.", ["Paris is big. [1, 2]", "Lyon."]),
        ("Paris is big. [2-4] Lyon.", ["Paris is big. [2-4]", "Lyon."]),
        ("Paris is big.[^1] Lyon.", ["Paris is big.[^1]", "Lyon."]),
        ("Paris is big. [[S:1,3]] Lyon.", ["Paris is big. [[S:1,3]]", "Lyon."]),
        ("Paris is big.【4:0†source】 Lyon.", ["Paris is big.【4:0†source】", "Lyon."]),
        (
            'Paris is big.<sup class="c">[1]</sup> Lyon.',
            ['Paris is big.<sup class="c">[1]</sup>', "Lyon."],
        ),
        (
            "Paris is big. ([example.com](https://example.com/x)) Lyon.",
            ["Paris is big. ([example.com](https://example.com/x))", "Lyon."],
        ),
        ("Paris is big.\n[1]\nLyon is small.", ["Paris is big.\n[1]", "Lyon is small."]),
        ("Paris is big. [1] lyon is small.", ["Paris is big. [1] lyon is small."]),
    ],
)
def test_trailing_markers_stay_with_their_sentence(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_openai_inline_link_answer() -> None:
    text = (
        "The capital is Paris ([wikipedia.org]"
        "(https://en.wikipedia.org/wiki/Paris?utm_source=openai)). Next sentence."
    )
    assert sentences(text) == [
        "The capital is Paris ([wikipedia.org]"
        "(https://en.wikipedia.org/wiki/Paris?utm_source=openai)).",
        "Next sentence.",
    ]
    start = text.index("([")
    end = text.index(")).") + 2
    assert find_markers(text) == [(start, end)]
    assert claim(text, text[start:end]) == "The capital is Paris"
    inner = text[start + 1 : end - 1]
    assert claim(text, inner) == "The capital is Paris"


def test_cjk_terminators_need_no_space() -> None:
    text = "東京は日本の首都です。大阪は大きな都市です\uff01本当\uff1fはい。"
    assert sentences(text) == [
        "東京は日本の首都です。",
        "大阪は大きな都市です\uff01",
        "本当\uff1f",
        "はい。",
    ]


def test_cjk_with_closers_and_markers() -> None:
    text = "彼は「行く。」と言った。東京は首都です【4:0†source】。次の文。"
    assert sentences(text) == [
        "彼は「行く。」と言った。",
        "東京は首都です【4:0†source】。",
        "次の文。",
    ]
    text = "東京は首都です。[1]大阪は大きい。"
    assert sentences(text) == ["東京は首都です。[1]", "大阪は大きい。"]


def test_ascii_terminator_before_cjk() -> None:
    assert sentences("It is Tokyo.東京です。") == ["It is Tokyo.", "東京です。"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Das ist z.B. ein Test. Und hier geht es weiter.",
            ["Das ist z.B. ein Test.", "Und hier geht es weiter."],
        ),
        (
            "Die Straße ist lang. Über Nacht wurde es kalt.",
            ["Die Straße ist lang.", "Über Nacht wurde es kalt."],
        ),
        (
            "M. Dupont est là. Élise arrive à 9 h. Ça va ?",
            ["M. Dupont est là.", "Élise arrive à 9 h.", "Ça va ?"],
        ),
        (
            "Il a dit « Bonjour. » Puis il est parti.",
            ["Il a dit « Bonjour. »", "Puis il est parti."],
        ),
        (
            "Москва — столица России. Это большой город.",
            ["Москва — столица России.", "Это большой город."],
        ),
        ("Αθήνα είναι πόλη. \u0397 Ελλάδα.", ["Αθήνα είναι πόλη.", "\u0397 Ελλάδα."]),
        ("Cafe\u0301 is open. Nai\u0308ve people.", ["Cafe\u0301 is open.", "Nai\u0308ve people."]),
        ("¿Dónde está? ¡Aquí está!", ["¿Dónde está?", "¡Aquí está!"]),
        ("Emoji 😀. Family 👨‍👩‍👧 here.", ["Emoji 😀.", "Family 👨‍👩‍👧 here."]),
    ],
)
def test_non_english(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_offsets_are_str_indices() -> None:
    text = "😀 Emoji first. 東京です。Café\u0301 ok."
    segs = segment(text)
    assert [s.text(text) for s in segs] == ["😀 Emoji first.", "東京です。", "Café\u0301 ok."]
    assert segs[1].start == text.index("東")


def test_headings() -> None:
    text = "# Title\n## Sub. Title [1]\n###### Six\n####### Seven. Eight\n#hashtag text"
    assert units(text) == [
        ("heading", "# Title"),
        ("heading", "## Sub. Title [1]"),
        ("heading", "###### Six"),
        ("sentence", "####### Seven."),
        ("sentence", "Eight\n#hashtag text"),
    ]


def test_setext_heading_and_thematic_break() -> None:
    text = "Title here\n=====\n\nBody. More.\n\n---\n\n* * *"
    assert units(text) == [
        ("heading", "Title here\n====="),
        ("sentence", "Body."),
        ("sentence", "More."),
        ("heading", "---"),
        ("heading", "* * *"),
    ]


def test_multi_line_paragraph_keeps_sentences_above_a_rule() -> None:
    assert units("One here.\nTwo here.\n---\nAfter.") == [
        ("sentence", "One here."),
        ("sentence", "Two here."),
        ("heading", "---"),
        ("sentence", "After."),
    ]


def test_bold_line_is_a_heading() -> None:
    text = "**Summary**\nParis is big.\n\n**Key points:**\n- One."
    assert units(text) == [
        ("heading", "**Summary**"),
        ("sentence", "Paris is big."),
        ("heading", "**Key points:**"),
        ("bullet", "- One."),
    ]
    assert units("**Paris is big.**") == [("sentence", "**Paris is big.**")]
    assert units("**Paris** is **big**") == [("sentence", "**Paris** is **big**")]


def test_bullets() -> None:
    text = (
        "Intro:\n"
        "- First item. Second sentence.\n"
        "  continued here. Third.\n"
        "* Star item\n"
        "+ Plus item\n"
        "1. Numbered. Two.\n"
        "2) Paren item\n"
        "   - Nested item. Nested two."
    )
    assert units(text) == [
        ("sentence", "Intro:"),
        ("bullet", "- First item."),
        ("sentence", "Second sentence.\n  continued here."),
        ("sentence", "Third."),
        ("bullet", "* Star item"),
        ("bullet", "+ Plus item"),
        ("bullet", "1. Numbered."),
        ("sentence", "Two."),
        ("bullet", "2) Paren item"),
        ("bullet", "- Nested item."),
        ("sentence", "Nested two."),
    ]


def test_bullet_lazy_continuation_and_later_paragraph() -> None:
    text = "- Item one\nlazy line. Next.\n\n  Second paragraph. Again.\n\nOutside."
    assert units(text) == [
        ("bullet", "- Item one\nlazy line."),
        ("sentence", "Next."),
        ("sentence", "Second paragraph."),
        ("sentence", "Again."),
        ("sentence", "Outside."),
    ]


def test_bullet_marker_is_not_a_sentence_end() -> None:
    assert units("1. Paris") == [("bullet", "1. Paris")]
    assert units("- [ ] todo. Done.") == [("bullet", "- [ ] todo."), ("sentence", "Done.")]
    assert units("-5 degrees.") == [("sentence", "-5 degrees.")]


def test_fenced_code() -> None:
    text = "Before.\n```python\na.b. C [1]\n\nx = 1. Y\n```\nAfter. More."
    assert units(text) == [
        ("sentence", "Before."),
        ("code", "```python\na.b. C [1]\n\nx = 1. Y\n```"),
        ("sentence", "After."),
        ("sentence", "More."),
    ]


def test_fence_needs_matching_closer() -> None:
    text = "````md\n```\ninner. X\n```\n````\nAfter."
    assert units(text) == [
        ("code", "````md\n```\ninner. X\n```\n````"),
        ("sentence", "After."),
    ]
    text = "~~~\ncode. X\n```\n~~~~\nAfter."
    assert units(text) == [("code", "~~~\ncode. X\n```\n~~~~"), ("sentence", "After.")]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Intro.\n```\ncode. X\n\nMore. Y\n"
    assert units(text) == [("sentence", "Intro."), ("code", "```\ncode. X\n\nMore. Y")]


def test_backticks_with_info_backtick_are_inline_code() -> None:
    assert units("```a``` is code. Next.") == [
        ("sentence", "```a``` is code."),
        ("sentence", "Next."),
    ]


def test_indented_code_after_blank_line() -> None:
    text = "Intro.\n\n    x = 1. Y\n    y = 2\n\nAfter."
    assert units(text) == [
        ("sentence", "Intro."),
        ("code", "x = 1. Y\n    y = 2"),
        ("sentence", "After."),
    ]
    assert units("Intro\n    indented. Continues.") == [
        ("sentence", "Intro\n    indented."),
        ("sentence", "Continues."),
    ]


def test_indented_paragraph_in_a_list_is_not_code() -> None:
    text = "1. Step one.\n\n    Details here. More."
    assert units(text) == [
        ("bullet", "1. Step one."),
        ("sentence", "Details here."),
        ("sentence", "More."),
    ]


def test_tables() -> None:
    text = "| Name | Value. X |\n|---|:---:|\n| a. B | 1 [1] |\n\nAfter."
    assert units(text) == [
        ("table", "| Name | Value. X |"),
        ("table", "|---|:---:|"),
        ("table", "| a. B | 1 [1] |"),
        ("sentence", "After."),
    ]


def test_table_without_leading_pipes() -> None:
    text = "Name | Value\n--- | ---\na | 1\nb | 2\n\nAfter."
    assert units(text) == [
        ("table", "Name | Value"),
        ("table", "--- | ---"),
        ("table", "a | 1"),
        ("table", "b | 2"),
        ("sentence", "After."),
    ]


def test_block_quotes() -> None:
    text = "> Quote one. Quote two\n> continues. Three.\n>\n> New para.\n\nAfter."
    assert units(text) == [
        ("quote", "> Quote one."),
        ("quote", "Quote two\n> continues."),
        ("quote", "Three."),
        ("quote", ">\n> New para."),
        ("sentence", "After."),
    ]
    assert units("> Alpha.\n> > Beta.") == [("quote", "> Alpha."), ("quote", "> > Beta.")]


def test_crlf_and_lone_cr() -> None:
    text = "# T\r\n\r\nOne. Two.\r\n- Item.\r\n"
    assert units(text) == [
        ("heading", "# T"),
        ("sentence", "One."),
        ("sentence", "Two."),
        ("bullet", "- Item."),
    ]
    assert units("One.\rTwo.\r\rThree") == [
        ("sentence", "One."),
        ("sentence", "Two."),
        ("sentence", "Three"),
    ]


def test_source_list_lines_are_separate() -> None:
    text = "Sources:\n[1] https://a.example/x\n[2] https://b.example/y"
    assert sentences(text) == ["Sources:", "[1] https://a.example/x", "[2] https://b.example/y"]


LLM_ANSWER = """# Paris

Paris is the capital of France [1]. It has about 2.1 million residents, e.g. in 2023 [2].

## Facts

- **Population:** About 2.1 million [2]. The metro area is larger.
- Founded in the 3rd century BC by the Parisii [3].
  Later it became Lutetia.

```python
a.b. C [1]
print("x. Y")
```

| City | Country |
|------|---------|
| Paris | France [1] |

> Paris is always a good idea. Audrey Hepburn said so.

In short: Paris is big ([wikipedia.org](https://en.wikipedia.org/wiki/Paris)). See you.
"""


def test_mixed_llm_answer() -> None:
    assert units(LLM_ANSWER) == [
        ("heading", "# Paris"),
        ("sentence", "Paris is the capital of France [1]."),
        ("sentence", "It has about 2.1 million residents, e.g. in 2023 [2]."),
        ("heading", "## Facts"),
        ("bullet", "- **Population:** About 2.1 million [2]."),
        ("sentence", "The metro area is larger."),
        ("bullet", "- Founded in the 3rd century BC by the Parisii [3]."),
        ("sentence", "Later it became Lutetia."),
        ("code", '```python\na.b. C [1]\nprint("x. Y")\n```'),
        ("table", "| City | Country |"),
        ("table", "|------|---------|"),
        ("table", "| Paris | France [1] |"),
        ("quote", "> Paris is always a good idea."),
        ("quote", "Audrey Hepburn said so."),
        (
            "sentence",
            "In short: Paris is big ([wikipedia.org](https://en.wikipedia.org/wiki/Paris)).",
        ),
        ("sentence", "See you."),
    ]
    assert_partition(LLM_ANSWER, segment(LLM_ANSWER))


def test_mixed_llm_answer_markers_and_claims() -> None:
    marks = find_markers(LLM_ANSWER)
    code = LLM_ANSWER.index("```python")
    code_end = LLM_ANSWER.index("```\n\n|")
    assert all(not code <= a < code_end for a, _ in marks)
    got = [LLM_ANSWER[a:b] for a, b in claim_spans(LLM_ANSWER, marks)]
    assert got == [
        "Paris is the capital of France",
        "It has about 2.1 million residents, e.g. in 2023",
        "**Population:** About 2.1 million",
        "Founded in the 3rd century BC by the Parisii",
        "France",
        "In short: Paris is big",
    ]


def test_linear_on_large_input() -> None:
    text = (LLM_ANSWER + "Mr. A. B. " + "x. " * 50 + "\n") * 600
    text = text[:1_000_000] if len(text) > 1_000_000 else text + "y. " * 300_000
    segs = segment(text)
    assert_partition(text, segs)
    marks = find_markers(text)
    assert len(claim_spans(text, marks)) == len(marks)
    for adversarial in ("." * 200_000, "[1" * 100_000, "([" * 100_000, "`a``" * 50_000):
        assert segment(adversarial)
        assert clauses(adversarial, 0, len(adversarial))


@pytest.mark.parametrize(
    "marker",
    [
        "[1]",
        "[12]",
        "[1, 2]",
        "[1,2]",
        "[2-4]",
        "[2–4]",
        "[^1]",
        "[^note-1]",
        "[[S:1,3]]",
        "[[1]]",
        "[[1]](https://example.com/a)",
        "【4:0†source】",
        "【12†L1-L5】",
        "【3】",
        "[1†source]",
        "<sup>1</sup>",
        '<sup class="ref"><a href="#c1">[1]</a></sup>',
        "([example.com](https://example.com/x))",
        "([a.com](https://a.com/x_(y)), [b.org](https://b.org/))",
    ],
)
def test_marker_shapes(marker: str) -> None:
    text = f"Paris is big {marker}. Next."
    m = MARKER_RE.search(text)
    assert m is not None
    assert m.group() == marker
    start = text.index(marker)
    assert find_markers(text) == [(start, start + len(marker))]


@pytest.mark.parametrize(
    "text",
    [
        "Index a[1] of the list.",
        "Use arr[0] and x[2-4] here.",
        "Visit https://example.com/items[1]/x now.",
        "Visit https://example.com/[1] now.",
        "Visit https://example.com/a.[1] now.",
        "Query ?q=[1] now.",
        "A link [1](http://example.com/) here.",
        "Code `x = [1]` here.",
        "Square mc<sup>2</sup> here.",
        "Escaped \\[1] here.",
        "Nested a[1][2] index.",
        "Call row_2[1] and myList[3] and obj.items[1] here.",
        "Use x1[2] here.",
        "A reference [link][1] here.",
        "[1]: https://example.com/ref",
        "[^1]: The footnote text.",
        "Chinese【注意】heading.",
    ],
)
def test_not_markers(text: str) -> None:
    assert find_markers(text) == []


def test_markers_glued_to_words() -> None:
    assert find_markers("capital of France[1].") == [(17, 20)]
    assert find_markers("It is tall[1][2].") == [(10, 13), (13, 16)]
    assert find_markers("Köln[2] und München[3, 4].") == [(4, 7), (19, 25)]
    assert find_markers("NASA[3] says so.") == [(4, 7)]
    assert find_markers("Is it France?[1] Yes.") == [(13, 16)]
    assert find_markers("It was founded in 1932[1].") == [(22, 25)]
    cite = '<sup class="cite" data-sids="1">[1]</sup>'
    assert find_markers(f"Built in 1932{cite}.") == [(13, 13 + len(cite))]
    assert find_markers("France[^1] x") == [(6, 10)]
    assert find_markers("東京[1]です") == [(2, 5)]
    assert find_markers("France【4:0†source】") == [(6, 18)]
    assert find_markers("Paris.<sup>1</sup>") == [(6, 18)]
    assert find_markers("Paris[[S:2]]") == [(5, 12)]
    assert find_markers("Paris.[1]") == [(6, 9)]
    assert find_markers('"Paris"[1]') == [(7, 10)]


def test_markers_skip_fenced_code() -> None:
    text = "A [1].\n```\nB [2]\n```\nC [3]."
    assert [text[a:b] for a, b in find_markers(text)] == ["[1]", "[3]"]


def spans(text: str) -> list[str]:
    return [text[a:b] for a, b in clauses(text, 0, len(text))]


def test_clauses_split_long_compound_sentences() -> None:
    text = (
        "Paris is the capital of France; it has many old museums, and it hosts "
        "millions of tourists every year, but Lyon has a much better food scene: "
        "the restaurants there are famous."
    )
    assert spans(text) == [
        "Paris is the capital of France;",
        "it has many old museums,",
        "and it hosts millions of tourists every year,",
        "but Lyon has a much better food scene:",
        "the restaurants there are famous.",
    ]


@pytest.mark.parametrize("conj", ["and", "but", "or", "while", "whereas", "although", "which"])
def test_clause_conjunctions(conj: str) -> None:
    text = f"The first part has words, {conj} the second part has words."
    assert spans(text) == ["The first part has words,", f"{conj} the second part has words."]


@pytest.mark.parametrize(
    "text",
    [
        "Short; very short.",
        "Paris is big, and old.",
        "Note: the city is big.",
        "The time is 10:30 and the city is big today.",
        "See https://example.com/x and the city is big today.",
        "The set (a; b; c; d; e; f; g) is big and old today.",
        "Apples, oranges, and pears are fruit.",
        "Use `a; b; c; d; e; f` in the big old code today.",
        "The sources [1, 2, 3, 4, 5] say the city is big.",
    ],
)
def test_clauses_do_not_split(text: str) -> None:
    assert spans(text) == [text]


def test_clauses_respect_bounds_and_trim() -> None:
    text = "xx   One two three four; five six seven eight.   yy"
    start, end = 2, len(text) - 2
    assert [text[a:b] for a, b in clauses(text, start, end)] == [
        "One two three four;",
        "five six seven eight.",
    ]
    assert clauses(text, 0, 0) == []
    assert clauses("   ", 0, 3) == []
    assert clauses("abc", -5, 99) == [(0, 3)]


@pytest.mark.parametrize(
    ("text", "marker", "expected"),
    [
        ("Paris is the capital. [1]", "[1]", "Paris is the capital."),
        ("Paris is the capital [1].", "[1]", "Paris is the capital"),
        ("Paris is the capital.[1]", "[1]", "Paris is the capital."),
        ("Intro here. Paris is the capital [1]. More.", "[1]", "Paris is the capital"),
        ("Paris is the capital [1][2].", "[2]", "Paris is the capital"),
        ("Paris is the capital [1], [2].", "[2]", "Paris is the capital"),
        ("Paris is the capital [1]. [2]", "[2]", "Paris is the capital"),
        ("A is 1 [1], and B is 2 [2].", "[1]", "A is 1"),
        ("A is 1 [1], and B is 2 [2].", "[2]", "and B is 2"),
        ("A is 1 [1]; B is 2 [2].", "[2]", "B is 2"),
        ("- [1] claim text here.", "[1]", "claim text here."),
        ("- [1][2] claim text here.", "[1]", "claim text here."),
        ("- [1] claim text [2]. Next.", "[1]", "claim text"),
        ("- Paris is the capital [1].", "[1]", "Paris is the capital"),
        ("1. Paris is the capital [1].", "[1]", "Paris is the capital"),
        ("- Paris is big. Lyon is small [2].", "[2]", "Lyon is small"),
        ("> Paris is the capital [1].", "[1]", "Paris is the capital"),
        ("## Paris [1]", "[1]", "Paris"),
        ("[1] Paris is the capital. Next.", "[1]", "Paris is the capital."),
        ("Intro.\n\n[1] Paris is the capital.", "[1]", "Paris is the capital."),
        ("Intro.\n[1] Paris is the capital.", "[1]", "Paris is the capital."),
        ("Paris is the capital.\n[1]\nNext.", "[1]", "Paris is the capital."),
        ("Paris is the capital.\n\n[1]", "[1]", ""),
        ("| Paris | capital city [1] |", "[1]", "capital city"),
        ("| Paris is big | [1] |", "[1]", "Paris is big"),
        ("| [1] Paris is big | x |", "[1]", "Paris is big"),
        ("Paris is big 【4:0†source】.", "【4:0†source】", "Paris is big"),
        ("Paris is big.<sup>1</sup> Next.", "<sup>1</sup>", "Paris is big."),
        ("Paris is big [^1].", "[^1]", "Paris is big"),
        ("東京は日本の首都です[1]。大阪は大きい[2]。", "[2]", "大阪は大きい"),
        ("Dr. Smith said so [1].", "[1]", "Dr. Smith said so"),
    ],
)
def test_claim_span(text: str, marker: str, expected: str) -> None:
    assert claim(text, marker) == expected


def test_claim_span_finds_marker_end() -> None:
    text = "Paris is the capital [12]."
    start = text.index("[12]")
    assert claim_span(text, start) == claim_span(text, start, start + 4) == (0, 20)


def test_claim_span_unrecognised_markers() -> None:
    text = "Paris is big. {{1}} Lyon is small."
    assert claim(text, "{{1}}") == "Paris is big."
    text = "Paris is big[1]."
    start = text.index("[1]")
    assert text.__getitem__(slice(*claim_span(text, start, start + 3))) == "Paris is big"


def test_claim_span_empty_and_out_of_range() -> None:
    assert claim_span("[1]", 0) == (0, 0)
    assert claim_span("", 0) == (0, 0)
    assert claim_span("", 5, 9) == (0, 0)
    assert claim_span("abc", -3) == (0, 3)
    a, b = claim_span("Paris is big [1].", 40, 2)
    assert 0 <= a <= b <= 17


def test_claim_spans_matches_single_calls() -> None:
    marks = find_markers(LLM_ANSWER)
    assert claim_spans(LLM_ANSWER, marks) == [claim_span(LLM_ANSWER, a, b) for a, b in marks]
    assert claim_spans(LLM_ANSWER, []) == []


def test_claim_spans_many_markers_in_one_sentence() -> None:
    text = "A claim " + "[1]" * 30_000 + "."
    marks = find_markers(text)
    assert len(marks) == 30_000
    assert set(claim_spans(text, marks)) == {(0, 7)}


TOKENS = [
    "a", "Bc", " ", "  ", "\n", "\n\n", "\r\n", "\r", "\t", ".", "!", "?", "...", "…", "。",
    "[1]", "[2, 3]", "[^1]", "[[S:1]]", "【4:0†source】", "<sup>1</sup>",
    "([x.com](https://x.com/a))", "- ", "* ", "1. ", "2) ", "# ", "> ", "| ", "|", "|---|",
    "```", "~~~", "    ", "`", "**", "_", "Mr.", "e.g.", "U.S.", "3.14", "https://x.com/a.b",
    "東京", "é", "\u0301", "😀", "\x00", "---", "===", ":", ";", ", and ", "(", ")", '"', "“",
]  # fmt: skip

answers = st.lists(
    st.one_of(
        st.sampled_from(TOKENS),
        st.characters(),
        st.characters(categories=["Cs"]),
        st.text(max_size=5),
    ),
    max_size=40,
).map("".join)
any_text = st.one_of(answers, st.text(), st.text(st.characters(codec="ascii")))


@settings(max_examples=400, deadline=None)
@given(any_text)
def test_segment_partitions_any_text(text: str) -> None:
    segs = segment(text)
    assert_partition(text, segs)
    assert all(
        seg.kind in ("sentence", "heading", "bullet", "code", "table", "quote") for seg in segs
    )


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_markers_are_ordered_and_disjoint(text: str) -> None:
    marks = find_markers(text)
    previous = 0
    for a, b in marks:
        assert previous <= a < b <= len(text)
        assert MARKER_RE.fullmatch(text, a, b)
        previous = b


@settings(max_examples=300, deadline=None)
@given(any_text, st.data())
def test_clauses_cover_each_segment(text: str, data: st.DataObject) -> None:
    for seg in segment(text):
        pieces = clauses(text, seg.start, seg.end)
        assert pieces[0][0] == seg.start
        assert pieces[-1][1] == seg.end
        for (a, b), (c, _) in itertools.pairwise(pieces):
            assert a < b <= c
    start = data.draw(st.integers(-3, len(text) + 3))
    end = data.draw(st.integers(-3, len(text) + 3))
    for a, b in clauses(text, start, end):
        assert 0 <= a < b <= len(text)
        assert not text[a].isspace()
        assert not text[b - 1].isspace()


@settings(max_examples=300, deadline=None)
@given(answers, st.data())
def test_claim_spans_properties(text: str, data: st.DataObject) -> None:
    marks = find_markers(text)
    extra = data.draw(
        st.lists(
            st.tuples(st.integers(-2, len(text) + 2), st.integers(-2, len(text) + 2)), max_size=5
        )
    )
    queries = marks + extra
    batch = claim_spans(text, queries)
    assert batch == [claim_span(text, a, b) for a, b in queries]
    n = len(text)
    for (ms, me), (a, b) in zip(queries, batch, strict=True):
        ms_c = min(max(ms, 0), n)
        me_c = min(max(me, ms_c), n)
        assert 0 <= a <= b <= n
        assert b <= ms_c or a >= me_c
        if a < b:
            assert not text[a].isspace()
            assert not text[b - 1].isspace()
    for ms, me in marks:
        assert claim_span(text, ms) == claim_span(text, ms, me)


@pytest.mark.parametrize(
    "text",
    [
        "Zürich liegt auf 408 m ü. M. am Zürichsee.",
        "Das gilt z. B. für Bern.",
        "Rom wurde 753 v. Chr. gegründet.",
    ],
)
def test_german_two_part_abbreviations_do_not_end_sentences(text: str) -> None:
    assert [s.kind for s in segment(text)] == ["sentence"]


def test_single_lowercase_letter_still_ends_a_sentence_otherwise() -> None:
    assert len(segment("Take plan b. Then rest.")) == 2


@pytest.mark.parametrize(
    "text",
    [
        "Warner Bros. Discovery reported results.",
        "Brown v. Board of Education was decided in 1954.",
        "Die Bahn verlor 1,8 Mrd. Euro im Jahr.",
        "Der Umsatz lag bei 26 Mio. Euro pro Tag.",
        "Der Reichstag wurde am 5. Dezember 1894 eröffnet.",
        "Im 19. Jh. galt er als modern.",
        "Sie feierte am 31. August Geburtstag.",
        "Le groupe prévoit env. 3 % de croissance.",
    ],
)
def test_more_abbreviations_do_not_split(text: str) -> None:
    assert sentences(text) == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It has 900 stores in the U.S. It grew.", ["It has 900 stores in the U.S.", "It grew."]),
        (
            "It was bought by Acme Inc. The deal closed.",
            ["It was bought by Acme Inc.", "The deal closed."],
        ),
        (
            "It opens at 9 a.m. The café opens later.",
            ["It opens at 9 a.m.", "The café opens later."],
        ),
        (
            "Die Zahl sank auf 83. Die Kette schließt.",
            ["Die Zahl sank auf 83.", "Die Kette schließt."],
        ),
    ],
)
def test_sentence_final_abbreviations_end_before_a_sentence_opener(
    text: str, expected: list[str]
) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "“We will not raise prices…” CEO Doug McMillon said. Shares rose.",
            ["“We will not raise prices…” CEO Doug McMillon said.", "Shares rose."],
        ),
        (
            '"No plans to sell..." Musk wrote. Shares rose.',
            ['"No plans to sell..." Musk wrote.', "Shares rose."],
        ),
        (
            "« Nous ne reculerons pas… » Gabriel Attal l'a répété.",
            ["« Nous ne reculerons pas… » Gabriel Attal l'a répété."],
        ),
        ("“We’ll see…” The company declined.", ["“We’ll see…”", "The company declined."]),
        (
            "He said it was “under review…” OpenAI declined to comment.",
            ["He said it was “under review…”", "OpenAI declined to comment."],
        ),
        ("“Is it over?” Analysts asked.", ["“Is it over?”", "Analysts asked."]),
    ],
)
def test_an_ellipsis_cutting_an_opening_quote_is_followed_by_its_speaker(
    text: str, expected: list[str]
) -> None:
    assert sentences(text) == expected


def test_claim_spans_agree_with_claim_span_on_the_link_set() -> None:
    rows = [
        json.loads(line)
        for line in (Path(__file__).parents[1] / "data" / "claims" / "link_citations.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]
    by_text: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        by_text.setdefault(row["text"], []).append((row["start"], row["end"]))
    for text, links in by_text.items():
        assert claim_spans(text, links) == [claim_span(text, a, b) for a, b in links]
