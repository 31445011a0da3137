"""verify(): every citation re-checked against its sources, whatever produced it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import unicite
from unicite import Citation, CitedAnswer, Source, UsageError
from unicite.attribution import JudgeScorer, attribute, verify

DEMO = Path(unicite.__file__).parent / "_demo_data" / "anthropic_document_citations.json"

PAGE = (
    "The Eiffel Tower's height changed several times. It's 330 metres tall since a new antenna "
    "was added in March 2022, six metres more than before. When it opened in 1889 it was 312 "
    "metres tall. Its iron expands in the summer heat, so its height varies by about 15 cm."
)
WEB = Source(
    id="web", url="https://www.toureiffel.paris/fr/le-monument/chiffres-cles", title="Chiffres clés"
)


def cited(
    text: str, claim: str, quote: str | None, source: Source, origin: str = "native"
) -> CitedAnswer:
    start = text.index(claim)
    return CitedAnswer(
        text=text,
        sources=[source],
        citations=[
            Citation(
                start=start,
                end=start + len(claim),
                text=claim,
                source_ids=[source.id],
                quote=quote,
                origin=origin,  # type: ignore[arg-type]
            )
        ],
    )


def test_anthropic_document_citations_verify_against_the_supplied_document() -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    answer = unicite.extract(data)
    document = "".join(
        c["cited_text"] for block in data["content"] for c in block.get("citations", [])
    )
    # The response carries no document text: nothing can be checked without it.
    unchecked = verify(answer)
    assert {c.verified for c in unchecked.citations} == {None}
    assert unchecked.diagnostics[-1].startswith("5 citation(s) not checked")

    checked = verify(answer, sources=[{"id": "document:0", "content": document}])
    assert [c.verified for c in checked.citations] == [True] * 5
    assert all(c.support is not None and 0.0 <= c.support <= 1.0 for c in checked.citations)
    # The French claims share their words with the quotes; the Japanese quote does not.
    assert checked.citations[0].support > checked.citations[2].support  # type: ignore[operator]
    assert checked.diagnostics == answer.diagnostics
    assert answer.citations[0].verified is None  # the input is not modified


def test_fabricated_quote_is_flagged() -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    answer = unicite.extract(data)
    document = "".join(
        c["cited_text"] for block in data["content"] for c in block.get("citations", [])
    )
    forged = answer.citations[0].model_copy(
        update={"quote": "Le café ouvre à 6 h et ne ferme jamais."}
    )
    answer = answer.model_copy(update={"citations": [forged, *answer.citations[1:]]})

    checked = verify(answer, sources=[Source(id="document:0", content=document)])
    assert [c.verified for c in checked.citations] == [False, True, True, True, True]
    assert any(
        d.startswith("citation 0: quote not found in 'document:0'") and "fabricated" in d
        for d in checked.diagnostics
    )


def test_web_search_quote_with_html_entities_and_ellipsis_truncation() -> None:
    text = "The tower is now 330 metres tall, six metres more than before."
    quote = (
        "It&#x27;s 330 metres tall since a new antenna was added in March 2022, six metres mo..."
    )
    answer = cited(text, text, quote, WEB)

    checked = verify(
        answer,
        sources=[
            {
                "url": "https://www.toureiffel.paris/fr/le-monument/chiffres-cles?utm_source=x",
                "content": PAGE,
            }
        ],
    )
    [citation] = checked.citations
    assert citation.verified is True
    assert citation.support is not None
    assert citation.support > 0.5

    gap = (
        "The Eiffel Tower&#39;s height changed several times. ... "
        "When it opened in 1889 it was 312 metres"
    )
    assert quote_found(gap)
    out_of_order = (
        "When it opened in 1889 it was 312 metres tall. ... The Eiffel Tower's height changed"
    )
    assert not quote_found(out_of_order)


def quote_found(quote: str) -> bool:
    """Whether `verify` finds a citation's quote in `PAGE`; says why when it does not."""
    text = "The tower is now 330 metres tall."
    page = Source(id="page", url="https://example.org/tower", content=PAGE)
    checked = verify(cited(text, text, quote, page))
    [citation] = checked.citations
    assert citation.verified is not None
    missing = [d for d in checked.diagnostics if d.startswith("citation 0: quote not found")]
    assert bool(missing) is not citation.verified
    return citation.verified


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("It's 330 metres tall since a new antenna", True),
        ("IT\u2019S 330   METRES TALL, since a new antenna", True),  # case, apostrophe, spaces
        ("&amp;#x27;s 330 metres tall", True),  # escaped twice
        ("\u201cits iron expands in the summer heat\u201d", True),
        ("When it opened in 1889 it was 321 metres tall.", True),  # a digit swap: fuzzy
        ("height (metres)* [varies]+ by about 15 cm", False),  # regex metacharacters, not present
        ("The tower was painted gold in 1999.", False),
        ("...", False),
    ],
)
def test_quotes_are_found_despite_case_spacing_escapes_and_small_slips(
    quote: str, found: bool
) -> None:
    assert quote_found(quote) is found


def test_openai_citations_over_snippets_only() -> None:
    text = "When it opened in 1889 the Eiffel Tower was 312 metres tall."
    supported = Source(
        id="a",
        url="https://example.org/a",
        snippet="When it opened in 1889 it was 312 metres tall.",
    )
    unrelated = Source(
        id="b", url="https://example.org/b", snippet="Paris has many bakeries and cafés."
    )

    ok = verify(cited(text, text, None, supported))
    assert ok.citations[0].verified is True
    bad = verify(cited(text, text, None, unrelated))
    assert bad.citations[0].verified is False
    assert bad.citations[0].support is not None
    assert bad.citations[0].support < 0.5
    assert "checked against snippets only" in bad.diagnostics[0]
    assert bad.diagnostics[0].startswith("citation 0: claim not supported by 'b'")


def test_marker_and_posthoc_citations_are_checked_too() -> None:
    source = Source(id="page", content=PAGE)
    answer = attribute(
        "The Eiffel Tower is 330 metres tall since 2022. Its height varies by about 15 cm.",
        [source],
    )
    assert len(answer.citations) == 2
    checked = verify(answer)
    assert [c.verified for c in checked.citations] == [True, True]
    for before, after in zip(answer.citations, checked.citations, strict=True):
        assert after.support == before.confidence
        assert after.origin == "posthoc-lexical"

    marker = verify(
        cited("Bananas are berries [1].", "Bananas are berries", None, source, origin="marker")
    )
    assert marker.citations[0].verified is False
    assert "claim not supported by 'page'" in marker.diagnostics[0]


def test_verify_is_idempotent_and_judges_plug_in() -> None:
    source = Source(id="page", content=PAGE)
    answer = cited("Bananas are berries.", "Bananas are berries.", None, source)
    once = verify(answer)
    assert verify(once).diagnostics == once.diagnostics

    judged = verify(answer, scorer=JudgeScorer(lambda claim, passage: 1.0))
    assert judged.citations[0].verified is True
    assert judged.citations[0].support == 1.0


def test_usage_errors() -> None:
    with pytest.raises(UsageError, match="CitedAnswer"):
        verify({"text": "x"})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="threshold"):
        verify(CitedAnswer(), threshold=-0.1)
    with pytest.raises(UsageError, match="sources must be"):
        verify(CitedAnswer(), sources="text")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Scorer"):
        verify(CitedAnswer(), scorer=lambda c, p: 1.0)  # type: ignore[arg-type]
    assert verify(CitedAnswer()) == CitedAnswer()
