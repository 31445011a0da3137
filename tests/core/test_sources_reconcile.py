"""`reconcile`: local BM25 relevance and the LLM judge contract."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite import Source, UsageError
from unicite.sources import reconcile

SOURCES = [
    Source(
        url="https://a.example/launch",
        title="James Webb Space Telescope launch",
        snippet="Webb launched on 25 December 2021 on an Ariane 5 rocket.",
    ),
    Source(
        url="https://b.example/eiffel", title="Eiffel Tower", snippet="The tower is 330 m tall."
    ),
    Source(
        url="https://c.example/mirror",
        title="Webb's mirror",
        snippet="The telescope's primary mirror has 18 hexagonal segments.",
    ),
    Source(
        url="https://d.example/cities",
        title="Largest cities",
        content="Tokyo and Delhi are the largest cities. " * 10,
    ),
]


def test_keeps_relevant_sources_in_input_order_with_scores() -> None:
    notes: list[str] = []
    kept = reconcile(SOURCES, "When did the Webb telescope launch?", diagnostics=notes)
    assert [s.url for s in kept] == ["https://a.example/launch", "https://c.example/mirror"]
    launch, mirror = kept
    assert launch.relevance == 1.0  # the best match of the objective
    assert mirror.relevance is not None
    assert 0.0 < mirror.relevance < 1.0
    assert notes == ["reconcile: kept 2 of 4 sources"]


def test_a_source_relevant_to_any_query_is_kept() -> None:
    kept = reconcile(SOURCES, "Webb launch date", ["height of the eiffel tower"])
    urls = [s.url for s in kept]
    assert "https://b.example/eiffel" in urls
    assert next(s for s in kept if s.url == "https://b.example/eiffel").relevance == 1.0


def test_content_is_scored_when_there_is_no_snippet_and_plurals_match() -> None:
    [cities] = reconcile(SOURCES, "which city is largest")
    assert cities.url == "https://d.example/cities"


def test_min_relevance_and_top_k() -> None:
    objective = "Webb telescope mirror launch"
    everything = reconcile(SOURCES, objective)
    best = max(everything, key=lambda s: s.relevance or 0)
    assert reconcile(SOURCES, objective, top_k=1) == [best]
    assert reconcile(SOURCES, objective, top_k=0) == []
    strict = reconcile(SOURCES, objective, min_relevance=1.0)
    assert all(s.relevance == 1.0 for s in strict)


def test_dicts_are_accepted_and_inputs_are_not_changed() -> None:
    kept = reconcile([{"url": "https://x.example/", "title": "Webb launch"}], "Webb launch")
    assert kept[0].relevance == 1.0
    assert SOURCES[0].relevance is None


def test_cjk_text_is_matched_per_character() -> None:
    sources = [Source(title="东京的人口", snippet="东京是日本的首都"), Source(title="Paris")]
    assert [s.title for s in reconcile(sources, "日本首都")] == ["东京的人口"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"objective": "  "}, "objective"),
        ({"objective": "x", "queries": "one string"}, "queries"),
        ({"objective": "x", "min_relevance": 1.5}, "min_relevance"),
        ({"objective": "x", "top_k": -1}, "top_k"),
        ({"objective": "x", "llm": "gpt"}, "llm"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        reconcile(SOURCES, **kwargs)  # type: ignore[arg-type]


def test_nothing_in_nothing_out() -> None:
    assert reconcile([], "anything") == []


# --- the LLM judge --------------------------------------------------------------------------


def judge(reply: str | Callable[[str], str]) -> tuple[Callable[[str], str], list[str]]:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return reply(prompt) if callable(reply) else reply

    return llm, prompts


def test_llm_prompt_lists_the_task_queries_and_numbered_sources() -> None:
    llm, prompts = judge('{"scores": [{"sid": 1, "relevance": 0.9}]}')
    reconcile(SOURCES, "When did Webb launch?", ["webb launch date"], llm=llm)
    [prompt] = prompts
    assert "When did Webb launch?" in prompt
    assert "webb launch date" in prompt
    assert "[1] James Webb Space Telescope launch" in prompt
    assert "[4] Largest cities" in prompt
    assert '{"scores": [{"sid": 1, "relevance": 0.8}' in prompt  # the contract, shown


def test_llm_scores_replace_local_scores() -> None:
    reply = {
        "scores": [{"sid": n, "relevance": r} for n, r in [(1, 0.2), (2, 0.0), (3, 0.95), (4, 0.5)]]
    }
    llm, _ = judge(json.dumps(reply))
    kept = reconcile(SOURCES, "anything", llm=llm)
    assert [(s.url, s.relevance) for s in kept] == [
        ("https://a.example/launch", 0.2),
        ("https://c.example/mirror", 0.95),
        ("https://d.example/cities", 0.5),
    ]


@pytest.mark.parametrize(
    "reply",
    [
        'Here you go:\n```json\n{"scores": [{"sid": 1, "relevance": 0.7},'
        ' {"sid": 2, "relevance": 0.1}, {"sid": 3, "relevance": 0}, {"sid": 4, "relevance": 0}]}'
        "\n```",
        '[{"id": 1, "score": 0.7}, {"id": 2, "score": 0.1},'
        ' {"id": 3, "score": 0}, {"id": 4, "score": 0}]',
        '{"1": 0.7, "2": "0.1", "3": 0, "4": 0.0}',
    ],
)
def test_llm_reply_shapes(reply: str) -> None:
    llm, _ = judge(reply)
    kept = reconcile(SOURCES, "x", llm=llm)
    assert [(s.url, s.relevance) for s in kept] == [
        ("https://a.example/launch", 0.7),
        ("https://b.example/eiffel", 0.1),
    ]


def test_llm_scores_out_of_range_are_clamped_and_unscored_sources_kept() -> None:
    llm, _ = judge('{"scores": [{"sid": 1, "relevance": 7}, {"sid": 9, "relevance": 1}]}')
    notes: list[str] = []
    kept = reconcile(SOURCES, "x", llm=llm, diagnostics=notes)
    assert [s.relevance for s in kept] == [1.0, None, None, None]
    assert any("clamped" in n for n in notes)
    assert any("sid" in n and "9" in n for n in notes)
    assert any("did not score sids [2, 3, 4]" in n for n in notes)


@pytest.mark.parametrize("reply", ["I think source 1 is best.", "{not json", "42"])
def test_unreadable_llm_reply_falls_back_to_local_scores(reply: str) -> None:
    llm, _ = judge(reply)
    notes: list[str] = []
    objective = "When did the Webb telescope launch?"
    assert reconcile(SOURCES, objective, llm=llm, diagnostics=notes) == reconcile(
        SOURCES, objective
    )
    assert any("LLM judge failed" in n for n in notes)


def test_llm_that_raises_falls_back_to_local_scores() -> None:
    def llm(prompt: str) -> str:
        raise TimeoutError("model busy")

    notes: list[str] = []
    kept = reconcile(SOURCES, "Webb launch", llm=llm, diagnostics=notes)
    assert kept == reconcile(SOURCES, "Webb launch")
    assert any("model busy" in n for n in notes)


words = st.sampled_from(
    ["webb", "launch", "tower", "city", "mirror", "the", "of", "Zürich", "東京"]
)
texts = st.lists(words, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    snippets=st.lists(texts, min_size=1, max_size=8),
    objective=texts.filter(str.strip),
    top_k=st.none() | st.integers(0, 8),
)
def test_scores_are_bounded_and_results_ordered(
    snippets: list[str], objective: str, top_k: int | None
) -> None:
    sources = [Source(id=f"s{n}", title=f"t{n}", snippet=s or None) for n, s in enumerate(snippets)]
    kept = reconcile(sources, objective, top_k=top_k)
    positions = [int(s.id[1:]) for s in kept]
    assert positions == sorted(positions)
    assert all(s.relevance is not None and 0.0 < s.relevance <= 1.0 for s in kept)
    if top_k is not None:
        assert len(kept) <= top_k
    assert kept == reconcile(sources, objective, top_k=top_k)
