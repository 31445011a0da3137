"""The local attributor: claims, lexical support, located passages, calibration and plug-ins."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite import CharLocation, CitedAnswer, Source, UsageError
from unicite.attribution import EmbeddingScorer, JudgeScorer, Scorer, attribute
from unicite.attribution import _calibration as cal
from unicite.attribution import _lexical as lexical
from unicite.sources import SourceLedger

EIFFEL = Source(
    id="eiffel",
    title="Eiffel Tower",
    url="https://en.wikipedia.org/wiki/Eiffel_Tower",
    content=(
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
        "It is named after the engineer Gustave Eiffel, whose company designed and built the "
        "tower from 1887 to 1889. It is 330 metres (1,083 ft) tall, about the same height as an "
        "81-storey building. Locally nicknamed La dame de fer, it was constructed as the "
        "centrepiece of the 1889 World's Fair."
    ),
)
LOUVRE = Source(
    id="louvre",
    title="Louvre",
    content=(
        "The Louvre is the world's most-visited art museum, and a historic landmark in Paris. "
        "It is the home of some of the best-known works of art, including the Mona Lisa and the "
        "Venus de Milo. Approximately 38,000 objects are exhibited over an area of 72,735 square "
        "metres."
    ),
)
BERLIN = Source(
    id="berlin",
    title="Brandenburger Tor",
    content=(
        "Das Brandenburger Tor ist ein frühklassizistisches Triumphtor in Berlin. Es wurde von "
        "1789 bis 1793 nach Plänen von Carl Gotthard Langhans errichtet. Die Quadriga auf dem "
        "Tor stammt von Johann Gottfried Schadow."
    ),
)
FUJI = Source(
    id="fuji",
    title="富士山",
    content=(
        "富士山は静岡県と山梨県にまたがる活火山である。標高は3776メートルで、日本最高峰の山である。"
        "2013年に世界文化遺産に登録された。"
    ),
)
MONT = Source(
    id="mont",
    title="Mont-Saint-Michel",
    content=(
        "Le Mont-Saint-Michel est une commune française située dans la Manche. L'abbaye, "
        "construite entre le VIIIe et le XVIe siècle, attire chaque année plus de deux millions "
        "de visiteurs."
    ),
)

ANSWER = (
    "The Eiffel Tower was built by Gustave Eiffel's company between 1887 and 1889. "
    "It is 330 metres tall. "
    "The Louvre exhibits about 38,000 objects, including the Mona Lisa. "
    "Bananas are berries, botanically speaking."
)


def by_text(answer: CitedAnswer) -> dict[str, list[str]]:
    return {c.text: c.source_ids for c in answer.citations}


def test_cites_supported_claims_to_their_source_and_locates_the_passage() -> None:
    answer = attribute(ANSWER, [EIFFEL, LOUVRE])

    assert by_text(answer) == {
        "The Eiffel Tower was built by Gustave Eiffel's company between 1887 and 1889.": ["eiffel"],
        "It is 330 metres tall.": ["eiffel"],
        "The Louvre exhibits about 38,000 objects, including the Mona Lisa.": ["louvre"],
    }
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text
        assert citation.origin == "posthoc-lexical"
        assert citation.confidence is not None
        assert cal.MODEL.threshold <= citation.confidence <= 1.0
        source = answer.source(citation.source_ids[0])
        assert source is not None
        assert source.content is not None
        assert isinstance(citation.location, CharLocation)
        assert source.content[citation.location.start : citation.location.end] == citation.quote
    height = next(c for c in answer.citations if c.text.startswith("It is 330"))
    assert (
        height.quote
        == "It is 330 metres (1,083 ft) tall, about the same height as an 81-storey building."
    )
    assert answer.diagnostics == ["1 of 4 claim(s) have no source with enough support"]
    # Footnote order follows first citation.
    assert [s.id for s in answer.sources] == ["eiffel", "louvre"]


def test_a_claim_is_cited_to_every_supporting_source_strongest_first() -> None:
    copy = Source(
        id="copy", content="The Louvre shows about 38,000 objects, the Mona Lisa among them."
    )
    answer = attribute(
        "The Louvre exhibits about 38,000 objects, including the Mona Lisa.", [EIFFEL, LOUVRE, copy]
    )

    [citation] = answer.citations
    assert set(citation.source_ids) == {"louvre", "copy"}
    per_source = citation.extras["source_confidence"]
    assert list(per_source) == citation.source_ids
    assert list(per_source.values()) == sorted(per_source.values(), reverse=True)
    assert citation.confidence == per_source[citation.source_ids[0]]
    assert answer.sources[-1].id == "eiffel"  # uncited sources come last


def test_numbers_that_do_not_match_lower_the_support() -> None:
    wrong = Source(
        id="wrong",
        content="The Eiffel Tower is 324 metres tall, about the height of an 81-storey building.",
    )
    right = Source(
        id="right",
        content="The Eiffel Tower is 330 metres tall, about the height of an 81-storey building.",
    )
    answer = attribute("The Eiffel Tower is 330 metres tall.", [wrong, right])

    [citation] = answer.citations
    assert citation.source_ids[0] == "right"
    confidence = citation.extras["source_confidence"]
    assert confidence.get("wrong", 0.0) < confidence["right"]


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        (
            "Das Brandenburger Tor wurde zwischen 1789 und 1793 von Carl Gotthard Langhans "
            "errichtet.",
            "berlin",
        ),
        ("富士山の標高は3776メートルで、日本最高峰です。", "fuji"),
        (
            "L'abbaye du Mont-Saint-Michel attire plus de deux millions de visiteurs chaque année.",
            "mont",
        ),
    ],
)
def test_multilingual_claims_find_their_source(claim: str, source: str) -> None:
    answer = attribute(claim, [EIFFEL, BERLIN, FUJI, MONT])

    [citation] = answer.citations
    assert citation.source_ids == [source]
    assert citation.quote is not None


def test_unrelated_sources_get_no_citation() -> None:
    answer = attribute(
        "Der Eiffelturm steht in Paris und ist aus Schmiedeeisen gebaut.", [BERLIN, FUJI, MONT]
    )

    assert answer.citations == []
    assert answer.diagnostics == ["1 of 1 claim(s) have no source with enough support"]


def test_code_only_answer_gets_no_citations_and_says_why() -> None:
    text = "```python\nprint('The Eiffel Tower is 330 metres tall.')\n```\n\n    x = 1\n"
    answer = attribute(text, [EIFFEL])

    assert answer.citations == []
    assert answer.diagnostics == ["the answer is code only: no claims to attribute"]
    assert answer.text == text


def test_headings_number_tables_boilerplate_and_lead_ins_are_not_claims() -> None:
    text = (
        "# The Eiffel Tower\n\n"
        "Sure! Here is what I found.\n\n"
        "The tower is 330 metres tall [1].\n\n"
        "| year | height |\n|---|---|\n| 1889 | 312 |\n| 2022 | 330 |\n\n"
        "| name | city |\n|---|---|\n| Louvre | Paris, France |\n\n"
        "Key facts:\n\n"
        "- It was built for the **1889 World's Fair**.\n\n"
        "I hope this helps! Let me know if you have any other questions."
    )
    # A source holding every word of the text, and no threshold: each claim gets a citation.
    everything = Source(id="all", content=text.replace("*", ""))
    answer = attribute(text, [everything], threshold=0.0)

    assert [text[c.start : c.end] for c in answer.citations] == [
        "The tower is 330 metres tall",
        "| Louvre | Paris, France |",
        "It was built for the **1889 World's Fair**.",
    ]
    # Nothing else was a claim left without support, and the marker was counted.
    assert answer.diagnostics == [
        "the text has 1 citation marker(s); attribute() ignores them (parse_markers reads them)"
    ]


def test_long_compound_sentences_are_split_into_clauses_cited_separately() -> None:
    text = (
        "The Eiffel Tower was designed and built by the company of the engineer Gustave Eiffel "
        "between 1887 and 1889, while the Louvre exhibits approximately 38,000 objects including "
        "the Mona Lisa and the Venus de Milo."
    )
    answer = attribute(text, [EIFFEL, LOUVRE])

    assert [(c.text.split()[0:2], c.source_ids) for c in answer.citations] == [
        (["The", "Eiffel"], ["eiffel"]),
        (["while", "the"], ["louvre"]),
    ]


def test_markers_already_in_the_text_are_ignored_and_reported() -> None:
    answer = attribute(
        "The Louvre exhibits about 38,000 objects, including the Mona Lisa [7].", [LOUVRE]
    )

    [citation] = answer.citations
    assert citation.text == "The Louvre exhibits about 38,000 objects, including the Mona Lisa"
    assert answer.diagnostics[0].startswith("the text has 1 citation marker(s)")


def test_sources_as_dicts_as_a_ledger_and_snippet_only() -> None:
    snippet_only = {"id": "snip", "url": "https://example.org/louvre", "snippet": LOUVRE.content}
    empty = {"id": "empty", "url": "https://example.org/empty", "title": "Nothing here"}
    answer = attribute("The Louvre exhibits about 38,000 objects.", [snippet_only, empty])

    [citation] = answer.citations
    assert citation.source_ids == ["snip"]
    assert citation.extras["located_in"] == "snippet"
    assert "source 'empty' has no content or snippet to match" in answer.diagnostics

    ledger = SourceLedger()
    ledger.add(LOUVRE)
    assert attribute("The Louvre exhibits about 38,000 objects.", ledger).citations[
        0
    ].source_ids == ["louvre"]


def test_repeated_source_ids_keep_the_first() -> None:
    answer = attribute(
        "The Louvre exhibits about 38,000 objects.",
        [LOUVRE, LOUVRE.model_copy(update={"content": "x"})],
    )

    assert [s.id for s in answer.sources] == ["louvre"]
    assert "sources[1] repeats id 'louvre'; the first one is kept" in answer.diagnostics


def test_no_sources_or_no_text() -> None:
    assert attribute("The Louvre exhibits about 38,000 objects.", []).diagnostics == [
        "no source has text: nothing to attribute"
    ]
    assert attribute("", [LOUVRE]).diagnostics == ["the answer has no claims to attribute"]


def test_threshold_and_max_sources_options() -> None:
    copy = Source(
        id="copy", content="The Louvre shows about 38,000 objects, the Mona Lisa among them."
    )
    text = "The Louvre exhibits about 38,000 objects, including the Mona Lisa."
    full = attribute(text, [LOUVRE, copy]).citations[0].source_ids
    capped = attribute(text, [LOUVRE, copy], max_sources=1).citations[0].source_ids
    assert len(full) == 2
    assert capped == full[:1]
    assert attribute(text, [LOUVRE, copy], threshold=1.0).citations == []
    lenient = attribute("Paris has a famous museum.", [LOUVRE], threshold=0.0)
    assert [c.source_ids for c in lenient.citations] == [["louvre"]]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((b"text", [LOUVRE]), {}, "text must be a str"),
        (("text", "not a list"), {}, "sources must be a list"),
        (("text", [42]), {}, r"sources\[0\] must be a Source or a dict"),
        (("text", [LOUVRE], "magic"), {}, "method must be"),
        (("text", [LOUVRE], "llm"), {}, "needs llm="),
        (("text", [LOUVRE]), {"llm": lambda p: p}, "only used with method='llm'"),
        (("text", [LOUVRE]), {"threshold": 1.5}, "threshold must be"),
        (("text", [LOUVRE]), {"threshold": True}, "threshold must be"),
        (("text", [LOUVRE]), {"max_sources": 0}, "max_sources"),
        (("text", [LOUVRE]), {"all_supporting": 1}, "all_supporting"),
        (("text", [LOUVRE]), {"scorer": object()}, "scorer="),
        (("text", [LOUVRE], "llm"), {"llm": lambda p: p, "batch_chars": 10}, "batch_chars"),
    ],
)
def test_usage_errors(args: tuple[object, ...], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        attribute(*args, **kwargs)  # type: ignore[arg-type]


def test_output_is_deterministic() -> None:
    first = attribute(ANSWER, [EIFFEL, LOUVRE, BERLIN]).to_json()
    lexical.clear_cache()
    assert attribute(ANSWER, [EIFFEL, LOUVRE, BERLIN]).to_json() == first


def test_pruning_never_drops_a_pair_the_exhaustive_scoring_would_cite() -> None:
    claims = [lexical.claim_terms(f"{c}.") for c in ANSWER.removesuffix(".").split(". ")]
    indexes = [lexical.index_source(s.content or "") for s in (EIFFEL, LOUVRE, BERLIN, FUJI)]
    pruned = lexical.score(claims, indexes)
    full = lexical.score(claims, indexes, exhaustive=True)
    for row_p, row_f in zip(pruned, full, strict=True):
        for p, f in zip(row_p, row_f, strict=True):
            if f is not None and f.probability >= cal.MODEL.threshold:
                assert p is not None
                assert p.probability == f.probability


def test_sources_tied_on_probability_are_ranked_by_their_support() -> None:
    claim = (
        "The Eiffel Tower was built from 1887 to 1889 by the company of Gustave Eiffel in Paris."
    )
    partial = Source(id="partial", content=claim.replace(" in Paris", "") + " It is tall.")
    whole = Source(id="whole", content=claim + " It is tall.")
    matches = lexical.score(
        [lexical.claim_terms(claim)],
        [lexical.index_source(s.content or "") for s in (partial, whole)],
    )[0]
    assert matches[0] is not None
    assert matches[1] is not None
    # The calibrated probabilities tie; the passage covering the whole claim is stronger.
    assert matches[0].probability == matches[1].probability
    assert matches[1].strength > matches[0].strength
    answer = attribute(claim, [partial, whole])
    (citation,) = answer.citations
    assert citation.source_ids == ["whole", "partial"]
    assert citation.quote == claim


def test_a_weaker_source_is_cited_only_when_asked_for() -> None:
    claim = (
        "The Eiffel Tower was built from 1887 to 1889 by the company of Gustave Eiffel in Paris."
    )
    strong = Source(id="strong", content=claim + " It is tall.")
    weak = Source(id="weak", content="The Eiffel Tower was built from 1887 to 1889 in Paris.")
    every = attribute(claim, [weak, strong], all_supporting=True)
    (citation,) = every.citations
    assert citation.source_ids == ["strong", "weak"]
    confidence = citation.extras["source_confidence"]
    assert confidence["strong"] > confidence["weak"] >= cal.MODEL.threshold
    assert every.diagnostics == []
    strongest = attribute(claim, [weak, strong])
    (citation,) = strongest.citations
    assert citation.source_ids == ["strong"]
    assert citation.extras["source_confidence"] == {"strong": confidence["strong"]}
    assert strongest.diagnostics == [
        "1 source(s) less probable than a claim's strongest also reached the threshold and "
        "were not cited (all_supporting=True cites them)"
    ]
    # The uncited source is still listed, after the cited one.
    assert [s.id for s in strongest.sources] == ["strong", "weak"]


# --- source indexes ----------------------------------------------------------------------------

ascii_text = st.lists(
    st.sampled_from([*"aZ9_ \t\n.?!,;-'()", "Word", "LONGERWORD", ". ", "\r\n", "x" * 230]),
    max_size=80,
).map("".join)


@settings(max_examples=300)
@given(ascii_text)
def test_ascii_text_is_indexed_as_the_general_tokenizer_reads_it(text: str) -> None:
    index = lexical._build_index(text)
    low = text.lower()
    tokens = [lexical._tokens(low, a, b, False) for a, b in index.units]
    assert index.sizes == [len(t) for t in tokens]
    assert index.tokens == tokens
    # Every unit with a word is kept, in order, inside the text.
    assert all(0 <= a < b <= len(text) for a, b in index.units)
    assert [u for u in lexical._units(text) if lexical._tokens(low, *u, False)] == index.units


@settings(max_examples=300)
@given(st.text(alphabet="ab .?!\n\t\u3002\u2026\x00\x01\ufdd0\ufdd1", max_size=80))
def test_units_are_trimmed_sentences_split_at_breaks(text: str) -> None:
    units = lexical._units(text)
    assert units == sorted(units)
    for a, b in units:
        piece = text[a:b]
        assert piece
        assert piece == piece.strip()
        assert "\n" not in piece
        if not all(mark in text for mark in ("\x00", "\x01", "\ufdd0", "\ufdd1")):
            assert all(mark not in piece[:-1] for mark in (". ", "? ", "! ", "\u3002"))
    # Nothing but whitespace falls between the units.
    kept = "".join(text[a:b] for a, b in units)
    assert "".join(kept.split()) == "".join(text.split())


def test_numbers_of_an_index_are_read_when_first_asked_for() -> None:
    index = lexical._build_index("Built from 1887 to 1,889; 5 floors.")
    assert index.numbers == frozenset({"1887", "1889"})


# --- calibration -------------------------------------------------------------------------------

N = len(cal.FEATURES)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
vectors = st.lists(st.floats(min_value=0.0, max_value=8.0, allow_nan=False), min_size=N, max_size=N)


@settings(max_examples=60)
@given(st.floats(-50, 50, allow_nan=False), st.floats(-50, 50, allow_nan=False))
def test_calibration_map_is_monotone_and_a_probability(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert 0.0 <= cal.MODEL.calibrate(lo) <= cal.MODEL.calibrate(hi) <= 1.0


@settings(max_examples=60)
@given(vectors, st.sampled_from(sorted(cal.MONOTONE)), unit)
def test_more_support_never_lowers_the_confidence(
    values: list[float], name: str, bump: float
) -> None:
    position = cal.FEATURES.index(name)
    raised = list(values)
    raised[position] += bump * cal.MONOTONE[name]
    before, after = cal.MODEL.probability(values), cal.MODEL.probability(raised)
    assert 0.0 <= before <= 1.0
    if position == 0 and values[0] < cal.MODEL.min_coverage <= raised[0]:
        assert after >= cal.MODEL.floor
    else:
        assert after >= before


@settings(max_examples=60)
@given(vectors)
def test_upper_bound_covers_every_passage_feature_value(values: list[float]) -> None:
    blank = list(values)
    for position in cal.MODEL.passage:
        blank[position] = 0.0
    assert cal.MODEL.upper_bound(blank) >= cal.MODEL.probability(values)


def test_model_build_rejects_broken_constants() -> None:
    with pytest.raises(ValueError, match="knots must increase"):
        cal.Model.build(intercept=0, shapes={}, knots=[(1.0, 0.5), (0.0, 0.6)], threshold=0.5)
    with pytest.raises(ValueError, match="monotone"):
        cal.Model.build(
            intercept=0, shapes={"coverage": ((0.5,), (1.0, -1.0))}, knots=(), threshold=0.5
        )
    with pytest.raises(ValueError, match="unknown features"):
        cal.Model.build(intercept=0, shapes={"vibes": ((), (0.0,))}, knots=(), threshold=0.5)
    plain = cal.Model.build(intercept=0, shapes={}, knots=(), threshold=0.5)
    assert plain.calibrate(0.0) == 0.5
    assert math.isclose(plain.calibrate(-800.0), 0.0, abs_tol=1e-12)


words = st.sampled_from(
    [
        "the",
        "tower",
        "Paris",
        "Louvre",
        "museum",
        "330",
        "metres",
        "built",
        "1889",
        "iron",
        "Zürich",
        "東京",
        "naïve",
        "(a+b)*",
        "[1]",
        "**",
        "```",
        "|",
        "-",
    ]
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(words, min_size=1, max_size=12).map(" ".join), max_size=5).map(". ".join),
    st.lists(st.lists(words, min_size=0, max_size=40).map(" ".join), max_size=3),
)
def test_any_text_and_sources_give_a_valid_answer(text: str, contents: list[str]) -> None:
    sources = [Source(id=f"s{n}", content=c or None) for n, c in enumerate(contents)]
    answer = attribute(text, sources)
    assert answer.text == text
    for citation in answer.citations:
        assert citation.confidence is not None
        assert 0.0 <= citation.confidence <= 1.0
        assert text[citation.start : citation.end] == citation.text


# --- plug-in scorers ---------------------------------------------------------------------------


def letters(texts: list[str]) -> list[list[float]]:
    """A toy embedding: letter frequencies (deterministic, enough to rank paraphrases)."""
    calls.append(len(texts))
    return [[t.lower().count(ch) for ch in "abcdefghijklmnopqrstuvwxyz"] for t in texts]


calls: list[int] = []


def test_embedding_scorer_blends_and_embeds_each_text_once_per_call() -> None:
    calls.clear()
    scorer = EmbeddingScorer(letters, weight=0.5, midpoint=0.8)
    answer = attribute(ANSWER, [EIFFEL, LOUVRE], scorer=scorer)

    assert isinstance(scorer, Scorer)
    assert len(calls) == 1
    assert answer.citations
    assert {c.origin for c in answer.citations} == {"posthoc-embedding"}
    assert all(c.confidence is not None and 0.0 <= c.confidence <= 1.0 for c in answer.citations)


def test_judge_scorer_can_cite_what_the_lexical_score_misses() -> None:
    claim = "The Paris museum holds Leonardo's famous portrait."
    assert attribute(claim, [LOUVRE, EIFFEL]).citations == []

    def judge(claim: str, passage: str) -> float:
        return 0.95 if "Mona Lisa" in passage else 0.05

    answer = attribute(claim, [LOUVRE, EIFFEL], scorer=JudgeScorer(judge))
    [citation] = answer.citations
    assert citation.source_ids == ["louvre"]
    assert citation.origin == "posthoc-nli"
    assert citation.confidence == 0.95

    batched = JudgeScorer(lambda pairs: [judge(c, p) for c, p in pairs], batched=True)
    assert attribute(claim, [LOUVRE, EIFFEL], scorer=batched).citations[0].source_ids == ["louvre"]


@pytest.mark.parametrize(
    ("scorer", "message"),
    [
        (EmbeddingScorer(lambda texts: [[1.0]]), "vectors for"),
        (
            EmbeddingScorer(lambda texts: [[1.0] * (n % 2 + 1) for n, _ in enumerate(texts)]),
            "different lengths",
        ),
        (EmbeddingScorer(lambda texts: [["x"] for _ in texts]), "not a number"),
        (JudgeScorer(lambda c, p: float("nan")), "NaN"),
        (JudgeScorer(lambda pairs: [0.5], batched=True), "scores for"),
        (JudgeScorer(lambda pairs: "yes", batched=True), "sequence of numbers"),
    ],
)
def test_broken_plug_ins_raise_usage_errors(scorer: Scorer, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        attribute(ANSWER, [EIFFEL, LOUVRE], scorer=scorer)


def test_scorer_options_are_checked() -> None:
    with pytest.raises(UsageError, match="weight"):
        EmbeddingScorer(letters, weight=2.0)
    with pytest.raises(UsageError, match="callable"):
        JudgeScorer("not callable")  # type: ignore[arg-type]
    assert JudgeScorer(lambda c, p: 7).score([("a", "b")]) == [1.0]
