"""`cite`: the one decision — native citations, markers, attribution, numbering, policy."""

from __future__ import annotations

import json
import logging

import pytest

import unicite
from unicite import (
    Citation,
    CitedAnswer,
    CitePolicy,
    GroundingRequiredError,
    Source,
    UsageError,
    cite,
)
from unicite.markers import parse_markers, renumber
from unicite.sources import SourceLedger

SOURCES = [
    Source(
        id="bern",
        url="https://www.bern.ch/stadt",
        title="Stadt Bern",
        content="Bern ist die Bundesstadt der Schweiz und zählt rund 146 000 Einwohner.",
    ),
    Source(
        id="zurich",
        url="https://www.stadt-zuerich.ch/",
        title="Stadt Zürich",
        content="Zürich ist die grösste Stadt der Schweiz mit rund 440 000 Einwohnern.",
    ),
    Source(
        id="geneve",
        url="https://www.geneve.ch/",
        title="Ville de Genève",
        content="Genève accueille le siège européen des Nations unies.",
    ),
]

# An Anthropic Message with a char_location citation (documented shape), German text.
ANTHROPIC = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "text", "text": "Laut dem Dokument "},
        {
            "type": "text",
            "text": "zählt Zürich rund 440 000 Einwohner",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "Zürich ist die grösste Stadt der Schweiz mit rund 440 000 "
                    "Einwohnern.",
                    "document_index": 0,
                    "document_title": "Stadt Zürich",
                    "start_char_index": 0,
                    "end_char_index": 67,
                }
            ],
        },
        {"type": "text", "text": "; Genf beherbergt die UNO [3]."},
    ],
    "stop_reason": "end_turn",
}

# An OpenAI Responses answer with a url_citation annotation on an inline link.
OPENAI = {
    "id": "resp_1",
    "object": "response",
    "model": "gpt-5",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": "Bern ist die Bundesstadt ([bern.ch](https://www.bern.ch/stadt)).",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "start_index": 25,
                            "end_index": 63,
                            "url": "https://www.bern.ch/stadt?utm_source=openai",
                            "title": "Stadt Bern",
                        }
                    ],
                }
            ],
        }
    ],
}


def ids(answer: CitedAnswer) -> list[list[str]]:
    return [c.source_ids for c in answer.citations]


def test_text_with_markers_is_parsed_and_renumbered() -> None:
    answer = cite("Zürich ist gross [2]. Bern ist Bundesstadt [1]. Falsch [9].", SOURCES)
    assert answer.text == "Zürich ist gross [1]. Bern ist Bundesstadt [2]. Falsch."
    assert [s.id for s in answer.sources] == ["zurich", "bern"]
    assert ids(answer) == [["zurich"], ["bern"]]
    assert all(c.origin == "marker" for c in answer.citations)
    assert any("9" in note for note in answer.diagnostics)
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text


def test_equals_the_marker_primitives_it_composes() -> None:
    # Ids included: parse_markers gives the ids cite gives.
    text = "Genf [3]. Zürich [2, 3]. Bern [1]."
    composed = renumber(parse_markers(text, SOURCES))
    assert cite(text, SOURCES) == composed
    assert cite(text, SOURCES, policy=CitePolicy(sources="all")) == renumber(
        parse_markers(text, SOURCES), keep_unused=True
    )


def test_every_citation_gets_a_stable_id() -> None:
    answer = cite("Genf [3]. Zürich [2, 3]. Bern [1].", SOURCES)
    assert [c.id for c in answer.citations] == ["ref-0", "ref-1", "ref-2"]
    # Kept through JSON and through citing again; a given id is kept and never reused.
    again = cite(CitedAnswer.from_json(answer.to_json()), SOURCES)
    assert [c.id for c in again.citations] == ["ref-0", "ref-1", "ref-2"]
    given = answer.model_copy(
        update={
            "citations": [
                answer.citations[0].model_copy(update={"id": None}),
                answer.citations[1].model_copy(update={"id": "ref-0"}),
                answer.citations[2].model_copy(update={"id": None}),
            ]
        }
    )
    assert [c.id for c in cite(given, SOURCES).citations] == ["ref-1", "ref-0", "ref-2"]
    # The answer gives the same ids as soon as it is built.
    assert [c.id for c in given.replace().citations] == ["ref-1", "ref-0", "ref-2"]


def test_renumber_off_keeps_every_source_so_numbers_stay_valid() -> None:
    answer = cite("Bern [3].", SOURCES, renumber=False)
    assert answer.text == "Bern [3]."
    assert [s.id for s in answer.sources] == ["bern", "zurich", "geneve"]
    assert answer.footnote_number(answer.citations[0].source_ids[0]) == 3


def test_sources_all_lists_uncited_after_cited() -> None:
    answer = cite("Genf [3].", SOURCES, policy=CitePolicy(sources="all"))
    assert [s.id for s in answer.sources] == ["geneve", "bern", "zurich"]


def test_exclude_inline_drops_uncited_sources_the_text_already_shows() -> None:
    text = "Genf [3]. Mehr unter https://www.bern.ch/stadt"
    kept = cite(text, SOURCES, policy=CitePolicy(sources="all"), exclude_inline=False)
    assert [s.id for s in kept.sources] == ["geneve", "bern", "zurich"]
    dropped = cite(text, SOURCES, policy=CitePolicy(sources="all"))
    assert [s.id for s in dropped.sources] == ["geneve", "zurich"]


def test_native_citations_keep_and_markers_of_given_sources_are_added() -> None:
    answer = cite(ANTHROPIC, SOURCES)
    assert answer.provider == "anthropic"
    by_origin = {c.origin: c for c in answer.citations}
    assert sorted(by_origin) == ["marker", "native"]
    native, marker = by_origin["native"], by_origin["marker"]
    assert native.text == "zählt Zürich rund 440 000 Einwohner"
    assert answer.source(marker.source_ids[0]) == SOURCES[2]
    # Numbered in first-cited order: the native document first, Genève second.
    assert answer.footnote_number(native.source_ids[0]) == 1
    assert answer.footnote_number(marker.source_ids[0]) == 2
    assert "[2]" in answer.text
    assert answer.text.endswith("die UNO [2].")


def test_provider_text_is_not_edited_for_markers_naming_nothing() -> None:
    answer = cite(ANTHROPIC, SOURCES[:1])
    assert [c.origin for c in answer.citations] == ["native"]
    assert answer.text.endswith("die UNO [3].")


def test_provider_sources_adopt_a_given_source_with_the_same_url() -> None:
    answer = cite(OPENAI, SOURCES)
    assert answer.provider == "openai"
    (citation,) = answer.citations
    assert citation.source_ids == ["bern"]
    assert answer.sources == [SOURCES[0]]


def test_adopting_a_given_source_compares_pages_and_keeps_sources_used() -> None:
    # The provider found the bare host with a trailing slash; the prompt showed www. without.
    found = Source(id="p", url="https://bern.ch/stadt/", title="bern.ch")
    other = Source(id="q", url="https://q.example/")
    native = CitedAnswer(
        text="Bern ist Bundesstadt.",
        sources=[found, other],
        citations=[Citation(start=0, end=21, text="Bern ist Bundesstadt.", source_ids=["p"])],
        sources_used=["p", "q"],
    )
    answer = cite(native, SOURCES)
    assert ids(answer) == [["bern"]]
    assert answer.sources_used == ["bern", "q"]


def test_a_provider_marker_is_never_cited_twice() -> None:
    # Perplexity-style: the provider's own [1] already cites its search result.
    native = parse_markers("Bern ist Bundesstadt [1].", [Source(id="p", url="https://p.example/")])
    answer = cite(native, SOURCES)
    assert ids(answer) == [["p"]]


def test_attribution_only_when_asked_and_nothing_is_cited() -> None:
    text = "Zürich ist die grösste Stadt der Schweiz mit rund 440 000 Einwohnern."
    plain = cite(text, SOURCES)
    assert plain.citations == []
    assert any("attribute='lexical'" in note for note in plain.diagnostics)
    attributed = cite(text, SOURCES, attribute="lexical")
    assert attributed.citations
    assert attributed.citations[0].origin == "posthoc-lexical"
    assert attributed.citations[0].source_ids == ["zurich"]
    assert attributed.text == text


def test_attribution_with_an_llm_callable() -> None:
    text = "Genève accueille le siège européen des Nations unies."
    reply = json.dumps({"citations": [{"claim": text, "sourceIndex": 3, "confidence": "full"}]})
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return reply

    answer = cite(text, SOURCES, attribute="llm", llm=llm)
    assert len(prompts) == 1
    assert ids(answer) == [["geneve"]]
    assert answer.citations[0].origin == "posthoc-llm"


def test_markers_win_over_attribution() -> None:
    answer = cite("Bern [1].", SOURCES, attribute="lexical")
    assert [c.origin for c in answer.citations] == ["marker"]


def test_one_marker_style() -> None:
    text = "Bern [1]. Zürich [[S:2]]."
    answer = cite(text, SOURCES, markers="sids")
    assert answer.text == "Bern [1]. Zürich [[S:1]]."
    assert ids(answer) == [["zurich"]]


def test_ledger_numbers_by_sid_and_sparse_maps_cite_only_what_was_shown() -> None:
    ledger = SourceLedger()
    for source in SOURCES:
        ledger.add(source)
    assert ids(cite("Genf [3].", ledger)) == [["geneve"]]
    sparse = {2: SOURCES[1], 5: SOURCES[2]}
    answer = cite("Zürich [2]. Genf [5]. Niemand [3].", sparse)
    assert ids(answer) == [["zurich"], ["geneve"]]
    assert answer.text == "Zürich [1]. Genf [2]. Niemand."


def test_dict_sources_are_accepted() -> None:
    rows = [{"id": s.id, "url": s.url, "title": s.title} for s in SOURCES]
    assert ids(cite("Bern [1].", rows)) == [["bern"]]


def test_disabled_returns_the_text_uncited_and_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    grounded_but_uncited = {**ANTHROPIC, "content": [{"type": "text", "text": "Hallo."}]}
    caplog.set_level(logging.DEBUG)
    answer = cite(grounded_but_uncited, SOURCES, enabled=False)
    assert answer == CitedAnswer(text="Hallo.", provider="anthropic", model="claude-sonnet-4-6")
    assert cite("Bern [1].", SOURCES, enabled=False) == CitedAnswer(text="Bern [1].")
    assert caplog.records == []


def test_require_citations_and_grounding() -> None:
    with pytest.raises(GroundingRequiredError) as caught:
        cite("Nichts.", SOURCES, require="citations")
    assert caught.value.reason == "no citations"
    with pytest.raises(GroundingRequiredError) as caught:
        cite("Nichts.", require="grounding")
    assert caught.value.reason == "no grounding"
    assert cite("Nichts.", SOURCES, require="grounding").citations == []
    assert cite("Bern [1].", SOURCES, require="citations").citations


def test_policy_and_options_compose() -> None:
    policy = CitePolicy(renumber=False, sources="all")
    assert cite("Bern [3].", SOURCES, policy=policy).text == "Bern [3]."
    assert cite("Bern [3].", SOURCES, policy=policy, renumber=True).text == "Bern [1]."
    assert policy.replace(keep=5).keep == 5
    assert policy.replace() is policy


@pytest.mark.parametrize(
    "options",
    [
        {"colour": "red"},
        {"enabled": "yes"},
        {"markers": "roman"},
        {"renumber": 1},
        {"attribute": "magic"},
        {"attribute": "llm"},
        {"llm": "not callable"},
        {"require": "always"},
        {"exclude_inline": None},
        {"keep": 0},
        {"keep": True},
        {"on_invalid": "raise"},
    ],
)
def test_bad_options_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        cite("Bern [1].", SOURCES, **options)


@pytest.mark.parametrize("sources", ["https://a.example/", 42, {"a": SOURCES[0]}, [{"url": 3}]])
def test_bad_sources_are_usage_errors(sources: object) -> None:
    with pytest.raises(UsageError):
        cite("Bern [1].", sources)  # type: ignore[arg-type]


def test_the_sources_option_is_set_through_the_policy() -> None:
    with pytest.raises(UsageError):
        CitePolicy(sources="some")  # type: ignore[arg-type]


def test_policy_is_frozen_and_public() -> None:
    policy = CitePolicy()
    with pytest.raises(AttributeError):
        policy.renumber = False  # type: ignore[misc]
    assert unicite.cite is cite
    assert (policy.enabled, policy.markers, policy.renumber, policy.sources) == (
        True,
        "auto",
        True,
        "cited",
    )


def test_replace_validates() -> None:
    answer = cite("Bern [1].", SOURCES)
    assert answer.replace(model="m").model == "m"
    with pytest.raises(ValueError, match="does not match"):
        answer.replace(text="Zürich [1].")
    with pytest.raises(ValueError, match="unknown source"):
        answer.replace(sources=[])


def test_attribution_with_a_scorer_plug_in() -> None:
    text = "Genève accueille le siège européen des Nations unies."
    asked: list[tuple[str, str]] = []

    def judge(claim: str, passage: str) -> float:
        asked.append((claim, passage))
        return 0.95 if "Nations unies" in passage else 0.05

    answer = cite(text, SOURCES, attribute=unicite.JudgeScorer(judge=judge))
    assert asked
    assert ids(answer) == [["geneve"]]
    assert answer.citations[0].origin == "posthoc-nli"


def test_attribution_cites_weaker_sources_only_when_asked() -> None:
    claim = "Zürich ist die grösste Stadt der Schweiz mit rund 440 000 Einwohnern."
    weaker = Source(
        id="weaker", content="Die grösste Stadt der Schweiz hat rund 440 000 Einwohner."
    )
    sources = [weaker, *SOURCES]
    strongest = cite(claim, sources, attribute="lexical")
    assert ids(strongest) == [["zurich"]]
    assert any("all_supporting=True" in d for d in strongest.diagnostics)
    every = cite(claim, sources, attribute="lexical", all_supporting=True)
    assert ids(every) == [["zurich", "weaker"]]
    with pytest.raises(UsageError, match="all_supporting must be a bool"):
        CitePolicy(all_supporting="yes")  # type: ignore[arg-type]
