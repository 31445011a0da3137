"""`inject_markers`: marker placement, offsets moved to the new text, linear on big inputs."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import Citation, CitedAnswer, Source, UsageError
from unicite.markers import inject_markers, parse_markers

SOURCES = [
    Source(id="a", url="https://a.example/"),
    Source(id="b", url="https://b.example/"),
    Source(id="c", url="https://c.example/"),
]
MARKER_RE = re.compile(r"(?:\[\d+\])+")


def cite(text: str, part: str, ids: list[str], **fields: object) -> Citation:
    start = text.index(part)
    return Citation.model_validate(
        {"start": start, "end": start + len(part), "text": part, "source_ids": ids} | fields
    )


def answer_of(text: str, *citations: Citation) -> CitedAnswer:
    return CitedAnswer(text=text, sources=SOURCES, citations=list(citations))


TEXT = "Première phrase. Deuxième phrase ([site](https://c.example/x)).\nTroisième."


def example() -> CitedAnswer:
    link = "([site](https://c.example/x))"
    at = TEXT.index(link)
    return answer_of(
        TEXT,
        cite(TEXT, "Première phrase. ", ["b"]),
        cite(TEXT, "Première phrase.", ["a", "b"]),
        cite(TEXT, "Deuxième phrase", ["c"], marker_span=(at, at + len(link))),
        cite(TEXT, "Troisième.", ["c", "a"]),
    )


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("brackets", "Première phrase.[1][2] Deuxième phrase [3].\nTroisième.[1][3]"),
        ("sids", "Première phrase.[[S:1,2]] Deuxième phrase [[S:3]].\nTroisième.[[S:1,3]]"),
        ("footnotes", "Première phrase.[^1][^2] Deuxième phrase [^3].\nTroisième.[^1][^3]"),
        (
            "sup",
            'Première phrase.<sup class="cite" data-sids="1,2">[1,2]</sup> Deuxième phrase '
            '<sup class="cite" data-sids="3">[3]</sup>.\n'
            'Troisième.<sup class="cite" data-sids="1,3">[1,3]</sup>',
        ),
    ],
)
def test_styles(style: str, expected: str) -> None:
    result = inject_markers(example(), style)  # type: ignore[arg-type]
    assert result.text == expected
    for citation in result.citations:
        assert citation.marker_span is not None
        marker = result.text[citation.marker_span[0] : citation.marker_span[1]]
        for sid in citation.source_ids:
            assert str(result.footnote_number(sid)) in marker


def test_offsets_follow_the_new_text() -> None:
    result = inject_markers(example())
    texts = [(c.text, c.marker_span) for c in result.citations]
    assert texts == [
        ("Première phrase.", (16, 22)),
        # Its span ended in a space: the marker went before the space, so it is inside.
        ("Première phrase.[1][2] ", (16, 22)),
        ("Deuxième phrase", (39, 42)),
        ("Troisième.", (54, 60)),
    ]
    assert result.sources == example().sources
    assert result.diagnostics == example().diagnostics


def test_idempotent() -> None:
    once = inject_markers(example())
    assert inject_markers(once) == once


def test_does_not_modify_its_input() -> None:
    answer = example()
    inject_markers(answer)
    assert answer == example()


def test_no_citations_no_change() -> None:
    answer = CitedAnswer(text="Rien à citer.", sources=SOURCES)
    assert inject_markers(answer) == answer


def test_empty_and_whitespace_spans() -> None:
    text = "A.   \n"
    answer = answer_of(
        text,
        Citation(start=0, end=0, text="", source_ids=["a"]),
        Citation(start=2, end=6, text="   \n", source_ids=["b"]),
        Citation(start=6, end=6, text="", source_ids=["c"]),
    )
    result = inject_markers(answer)
    assert result.text == "[1]A.[2]   \n[3]"
    # All whitespace: its marker sits at its start, which is outside the span.
    assert [c.text for c in result.citations] == ["", "   \n", ""]


def test_overlapping_marker_spans_merge() -> None:
    text = "Claim [1][2] and more."
    answer = answer_of(
        text,
        cite(text, "Claim", ["b"], marker_span=(6, 9)),
        cite(text, "Claim", ["a"], marker_span=(6, 12)),
        # Its end falls inside the replaced marker, so it joins it.
        Citation(start=0, end=8, text=text[:8], source_ids=["c"]),
    )
    result = inject_markers(answer)
    assert result.text == "Claim [1][2][3] and more."
    assert {c.marker_span for c in result.citations} == {(6, 15)}
    assert [c.text for c in result.citations] == ["Claim", "Claim", "Claim [1][2][3]"]


def test_combined_markers_have_ascending_distinct_numbers() -> None:
    text = "Une affirmation."
    answer = answer_of(
        text,
        cite(text, text, ["c", "a"]),
        cite(text, text, ["a"]),
        cite(text, "affirmation.", ["b", "c"]),
    )
    assert inject_markers(answer).text == "Une affirmation.[1][2][3]"


def test_rejects_misuse() -> None:
    with pytest.raises(UsageError):
        inject_markers(example(), "roman")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        inject_markers({"text": "x"})  # type: ignore[arg-type]


# --- properties ---------------------------------------------------------------------------------

CHARS = st.sampled_from([*"ab é東 .,\n\t[]1()", "\U0001f600", "\u0301", "\x1b", "\u202e"])


@st.composite
def answers(draw: st.DrawFn, *, marker_spans: bool) -> CitedAnswer:
    text = draw(st.text(CHARS, max_size=60))
    size = len(text)
    citations = []
    for _ in range(draw(st.integers(0, 8))):
        start = draw(st.integers(0, size))
        end = draw(st.integers(start, size))
        ids = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
        span = None
        if marker_spans and draw(st.booleans()):
            left = draw(st.integers(0, size))
            span = (left, draw(st.integers(left, size)))
        citations.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=ids,
                marker_span=span,
                quote=draw(st.none() | st.text(CHARS, max_size=10)),
            )
        )
    return CitedAnswer(text=text, sources=SOURCES, citations=citations)


def markers_of(answer: CitedAnswer) -> list[tuple[int, int]]:
    return sorted({c.marker_span for c in answer.citations if c.marker_span is not None})


def without(text: str, spans: list[tuple[int, int]], lo: int, hi: int) -> str:
    """``text[lo:hi]`` with the spans lying inside it cut out."""
    parts: list[str] = []
    position = lo
    for start, end in spans:
        if lo <= start and end <= hi:
            parts.append(text[position:start])
            position = end
    parts.append(text[position:hi])
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers(marker_spans=False))
def test_property_texts_survive_insertion(answer: CitedAnswer) -> None:
    result = inject_markers(answer)  # constructing it checked every invariant
    spans = markers_of(result)
    for span in spans:
        assert MARKER_RE.fullmatch(result.text[span[0] : span[1]])
    # An inserted marker that would read as an index glued to its word has a space before it:
    # the insertion is the space and the marker.
    inserted = {
        new.marker_span
        for old, new in zip(answer.citations, result.citations, strict=True)
        if old.marker_span is None and new.marker_span is not None
    }
    spaced = [
        span for span in spans if span in inserted and result.text[span[0] - 1 : span[0]] == " "
    ]
    assert len(spaced) <= 8  # the generated answers hold a few citations
    candidates = [
        sorted((a - (span in chosen), b) for span in spans for a, b in [span])
        for n in range(len(spaced) + 1)
        for chosen in map(set, itertools.combinations(spaced, n))
    ]
    cut = [c for c in candidates if without(result.text, c, 0, len(result.text)) == answer.text]
    assert cut
    old = sorted((c.text, tuple(c.source_ids), c.quote or "") for c in answer.citations)
    new = sorted(
        (without(result.text, cut[0], c.start, c.end), tuple(c.source_ids), c.quote or "")
        for c in result.citations
    )
    assert new == old


def test_an_inserted_marker_that_would_read_as_an_index_is_spaced() -> None:
    sources = [Source(id="a", url="https://a.example/")]
    text = "Sum the array data. The river flows."
    answer = CitedAnswer(
        text=text,
        sources=sources,
        citations=[
            Citation(start=0, end=18, text="Sum the array data", source_ids=["a"]),
            Citation(start=20, end=35, text="The river flows", source_ids=["a"]),
        ],
    )
    result = inject_markers(answer)
    assert result.text == "Sum the array data [1]. The river flows[1]."
    assert [c.text for c in result.citations] == ["Sum the array data", "The river flows"]
    # Read back, both are citations again.
    parsed = parse_markers(result.text, sources)
    assert [c.source_ids for c in parsed.citations] == [["a"], ["a"]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers(marker_spans=True), st.sampled_from(["brackets", "sids", "footnotes", "sup"]))
def test_property_markers_and_idempotence(answer: CitedAnswer, style: str) -> None:
    result = inject_markers(answer, style)  # type: ignore[arg-type]
    assert len(result.citations) == len(answer.citations)
    assert sorted(tuple(c.source_ids) for c in result.citations) == sorted(
        tuple(c.source_ids) for c in answer.citations
    )
    for citation in result.citations:
        assert citation.marker_span is not None
        marker = result.text[citation.marker_span[0] : citation.marker_span[1]]
        numbers = {int(n) for n in re.findall(r"\d+", marker.replace('class="cite"', ""))}
        assert {result.footnote_number(sid) for sid in citation.source_ids} <= numbers
    assert inject_markers(result, style) == result  # type: ignore[arg-type]


def test_overlapping_spans_and_insertions_give_disjoint_markers() -> None:
    rng = random.Random(7)
    text = "".join(rng.choice("ab .\n") for _ in range(500))
    citations = []
    for _ in range(300):
        start = rng.randrange(0, 500)
        end = rng.randrange(start, 501)
        span = None
        if rng.random() < 0.3:
            left = rng.randrange(0, 500)
            span = (left, rng.randrange(left, 501))
        citations.append(
            Citation(start=start, end=end, text=text[start:end], source_ids=["a"], marker_span=span)
        )
    result = inject_markers(CitedAnswer(text=text, sources=SOURCES, citations=citations))
    assert len(result.citations) == 300
    spans = markers_of(result)
    assert all(c.marker_span in spans for c in result.citations)
    for before, after in itertools.pairwise(spans):
        assert before[1] <= after[0]
    for start, end in spans:
        assert result.text[start:end] == "[1]"


def test_hundred_thousand_citations_on_a_million_characters() -> None:
    rng = random.Random(2024)
    words = ["alpha ", "beta. ", "gamma\n", "délta ", "東京 ", "x  "]
    text = "".join(rng.choice(words) for _ in range(220_000))[:1_000_000]
    sources = [Source(id=f"s{n}", url=f"https://s{n}.example/") for n in range(40)]
    citations = []
    for _ in range(100_000):
        start = rng.randrange(0, len(text))
        end = min(len(text), start + rng.randrange(0, 60))
        span = None
        if rng.random() < 0.1:
            left = rng.randrange(0, len(text) - 4)
            span = (left, left + 4)
        citations.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=[f"s{rng.randrange(40)}", f"s{rng.randrange(40)}"],
                marker_span=span,
            )
        )
    answer = CitedAnswer(text=text, sources=sources, citations=citations)
    result = inject_markers(answer)
    assert len(result.citations) == 100_000
    assert len(result.text) > len(text)
    for citation in rng.sample(result.citations, 500):
        assert citation.marker_span is not None
        assert MARKER_RE.fullmatch(result.text[slice(*citation.marker_span)])
