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
    assert "[1] webb launch date" in prompt  # queries numbered by qid
    # Seed 004's contract, shown.
    assert '[{"sid": 1, "o_relevance": 0.93, "q_relevance": [{"qid": "1", "score": 0.9}]' in prompt
    assert "leaving irrelevant sources out" in prompt


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


def test_llm_scores_out_of_range_are_clamped_and_sources_left_out_dropped() -> None:
    # Unlike before seed 004's contract, a source the judge leaves out is judged irrelevant.
    llm, _ = judge('{"scores": [{"sid": 1, "relevance": 7}, {"sid": 9, "relevance": 1}]}')
    notes: list[str] = []
    kept = reconcile(SOURCES, "x", llm=llm, diagnostics=notes)
    assert [(s.url, s.relevance) for s in kept] == [("https://a.example/launch", 1.0)]
    assert any("clamped" in n for n in notes)
    assert any("sid" in n and "9" in n for n in notes)
    assert "reconcile: the LLM left out sids [2, 3, 4] (judged irrelevant); dropped" in notes


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


# --- per-query relevance and reasoning (seed 004 §3.2) --------------------------------------

LYON = [
    Source(
        url="https://lyon.example/fete",
        title="Fête des Lumières",
        snippet="Every December, Lyon lights up for four nights.",
    ),
    Source(
        url="https://meteo.example/lyon",
        title="Lyon weather",
        snippet="Cold, grey winters in the Rhône valley.",
    ),
    Source(url="https://paris.example/", title="Paris museums", snippet="The Louvre and Orsay."),
]
LYON_TASK = ("What happens in Lyon in December?", ["fête lumières", "Lyon weather"])

# Seed-004 rows: sids that are not positions, non-ASCII text.
ROWS = [
    {
        "sid": 3,
        "title": "Zürich Hauptbahnhof",
        "url": "https://zh.example/hb",
        "text": "Der Zürcher Bahnhof ist der größte der Schweiz.",
    },
    {
        "sid": 7,
        "title": "東京駅",
        "url": "https://tokyo.example/",
        "text": "東京駅は日本の鉄道の中心です。",
    },
    {
        "sid": 12,
        "title": "Gare de Lyon",
        "url": "https://gdl.example/",
        "text": "Une gare très fréquentée.",
    },
]


def test_local_query_relevance_and_reasoning() -> None:
    notes: list[str] = []
    fete, weather = reconcile(LYON, *LYON_TASK, diagnostics=notes)
    assert notes == ["reconcile: kept 2 of 3 sources"]
    # Each query's BM25 scores are divided by its top score: its best source gets 1.0.
    assert fete.extras["query_relevance"][0] == {"qid": "1", "score": 1.0}
    assert weather.extras["query_relevance"] == [
        {"qid": "1", "score": 0.0},
        {"qid": "2", "score": 1.0},
    ]
    assert 0.0 < fete.extras["query_relevance"][1]["score"] < 1.0
    # Relevance is the best normalised score of the objective and the queries.
    assert fete.relevance == weather.relevance == 1.0
    assert fete.extras["reasoning"] == (
        "Matches 'fête', 'lumières' (query 1), 'Lyon' (query 2)"
        " and the objective's 'Lyon', 'December'."
    )
    assert (
        weather.extras["reasoning"]
        == "Matches 'Lyon', 'weather' (query 2) and the objective's 'Lyon'."
    )


def test_relevance_from_a_query_alone_and_blank_queries_keep_their_numbers() -> None:
    [tower] = reconcile(SOURCES, "Webb launch date", ["", "height of the eiffel tower"])[1:2]
    assert tower.url == "https://b.example/eiffel"
    assert tower.relevance == 1.0
    assert tower.extras["query_relevance"] == [{"qid": "2", "score": 1.0}]
    assert tower.extras["reasoning"] == "Matches 'eiffel', 'tower' (query 2)."


def test_local_reasoning_is_at_most_320_characters() -> None:
    many = [" ".join(f"word{n}x{m}" for m in range(8)) for n in range(30)]
    text = " ".join(many)
    [kept] = reconcile([Source(title="t", snippet=text)], text, many)
    assert len(kept.extras["reasoning"]) <= 320
    assert kept.extras["reasoning"].endswith("…")


def test_seed_rows_in_and_out_locally() -> None:
    kept = reconcile(ROWS, "größte Bahnhof Zürich", ["東京 駅"])
    assert [(s.extras["sid"], s.title) for s in kept] == [(3, "Zürich Hauptbahnhof"), (7, "東京駅")]
    zurich, tokyo = kept
    assert zurich.extras["reasoning"] == "Matches the objective's 'größte', 'Bahnhof', 'Zürich'."
    assert tokyo.extras["reasoning"] == "Matches '東', '京', '駅' (query 1)."
    assert tokyo.extras["query_relevance"] == [{"qid": "1", "score": 1.0}]
    # A row's earlier annotations are replaced by this reconciliation's.
    stale = {**ROWS[0], "objective_relevance": 0.1, "query_relevance": 0.5, "reasoning": "Alt."}
    [again] = reconcile([stale], "Zürich")
    assert again.relevance == 1.0
    assert again.extras == {
        "sid": 3,
        "query_relevance": [],
        "reasoning": "Matches the objective's 'Zürich'.",
    }


# --- the LLM judge, seed 004's contract ------------------------------------------------------


def seed_reply(*entries: tuple[int, float, list[tuple[str, float]], str]) -> str:
    return json.dumps(
        [
            {
                "sid": sid,
                "o_relevance": o,
                "q_relevance": [{"qid": q, "score": s} for q, s in qs],
                "reasoning": why,
            }
            for sid, o, qs, why in entries
        ],
        ensure_ascii=False,
    )


VALID = seed_reply(
    (1, 0.93, [("1", 0.9), ("2", 0.1)], "The festival itself, in Lyon, in December."),
    (2, 0.4, [("2", 0.95)], "Lyon's weather, not the event."),
)


def test_valid_seed_reply() -> None:
    llm, prompts = judge(VALID)
    notes: list[str] = []
    kept = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert len(prompts) == 1
    assert [(s.url, s.relevance) for s in kept] == [
        ("https://lyon.example/fete", 0.93),
        ("https://meteo.example/lyon", 0.4),
    ]
    assert kept[0].extras["query_relevance"] == [
        {"qid": "1", "score": 0.9},
        {"qid": "2", "score": 0.1},
    ]
    assert kept[1].extras["query_relevance"] == [{"qid": "2", "score": 0.95}]
    assert kept[0].extras["reasoning"] == "The festival itself, in Lyon, in December."
    # The source the judge omitted was irrelevant: dropped.
    assert notes == [
        "reconcile: the LLM left out sids [3] (judged irrelevant); dropped",
        "reconcile: kept 2 of 3 sources",
    ]


def test_code_fenced_seed_reply() -> None:
    llm, _ = judge(f"Sure! Here is my judgement:\n```json\n{VALID}\n```\nHope it helps.")
    assert reconcile(LYON, *LYON_TASK, llm=llm) == reconcile(LYON, *LYON_TASK, llm=judge(VALID)[0])


def test_a_source_scored_zero_is_dropped() -> None:
    reply = seed_reply((1, 0.8, [], "Yes."), (2, 0.0, [], "Off topic."), (3, 0.0, [], "No."))
    llm, _ = judge(reply)
    assert [s.url for s in reconcile(LYON, *LYON_TASK, llm=llm)] == ["https://lyon.example/fete"]


def test_an_empty_list_means_nothing_is_relevant() -> None:
    llm, prompts = judge("[]")
    notes: list[str] = []
    assert reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes) == []
    assert len(prompts) == 1
    assert "reconcile: kept 0 of 3 sources" in notes


def test_malformed_then_valid_is_retried_once_with_the_error() -> None:
    replies = iter(["I'd keep the first two.", VALID])
    llm, prompts = judge(lambda prompt: next(replies))
    notes: list[str] = []
    kept = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert [s.relevance for s in kept] == [0.93, 0.4]
    first, second = prompts
    assert second.startswith(first)
    assert "Your previous reply could not be used: it holds no JSON list or object." in second
    assert any("first reply was malformed" in n and "no JSON" in n for n in notes)


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ('{"verdict": "relevant"}', 'an object with no "sid" and no list of sources'),
        ('[{"o_relevance": 0.9}]', 'entry 1 has no "sid"'),
        ("[1, 2]", "entry 1 of the list is a number, not an object"),
        ('"sources 1 and 2"', "no JSON list or object"),
        ('[{"sid": "first", "o_relevance": 0.5}]', 'entry 1 has "sid" "first", not an integer'),
        ('[{"sid": 1, "o_relevance": "high"}]', 'entry 1 (sid 1) has "o_relevance" "high"'),
        ('[{"sid": 1}]', 'entry 1 (sid 1) has "o_relevance" null, not a number'),
        (
            '[{"sid": 40, "o_relevance": 0.5}]',
            "none of its sids [40] is a source listed ([1, 2, 3])",
        ),
    ],
)
def test_each_malformed_shape_is_told_to_the_model(bad: str, error: str) -> None:
    replies = iter([bad, VALID])
    llm, prompts = judge(lambda prompt: next(replies))
    kept = reconcile(LYON, *LYON_TASK, llm=llm)
    assert [s.relevance for s in kept] == [0.93, 0.4]
    assert error in prompts[1]


def test_malformed_twice_falls_back_to_local_scores() -> None:
    replies = iter(["{broken", "[1, 2, 3]"])
    llm, prompts = judge(lambda prompt: next(replies))
    notes: list[str] = []
    kept = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert len(prompts) == 2
    assert kept == reconcile(LYON, *LYON_TASK)
    assert kept[0].extras["reasoning"].startswith("Matches 'fête'")
    assert notes[0] == (
        "reconcile: LLM judge failed (malformed reply twice: it holds no JSON list or object;"
        " then entry 1 of the list is a number, not an object); used local BM25 scores"
    )


def test_an_llm_that_raises_is_not_retried() -> None:
    calls: list[str] = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        raise ConnectionError("offline")

    notes: list[str] = []
    assert reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes) == reconcile(LYON, *LYON_TASK)
    assert len(calls) == 1
    assert notes[0] == "reconcile: LLM judge failed (offline); used local BM25 scores"


def test_out_of_range_scores_are_clamped() -> None:
    reply = seed_reply((1, 1.7, [("1", -0.2), ("2", 3)], "Yes."), (2, -1, [], "No."))
    llm, _ = judge(reply)
    notes: list[str] = []
    [fete] = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert fete.relevance == 1.0
    assert fete.extras["query_relevance"] == [
        {"qid": "1", "score": 0.0},
        {"qid": "2", "score": 1.0},
    ]
    assert "reconcile: LLM score for sid 1 1.7 clamped to [0, 1] (1)" in notes
    assert "reconcile: LLM score for qid 1 of sid 1 -0.2 clamped to [0, 1] (0)" in notes
    assert "reconcile: LLM score for sid 2 -1 clamped to [0, 1] (0)" in notes


def test_unknown_sid_is_ignored() -> None:
    reply = seed_reply((1, 0.9, [], "Yes."), (99, 0.9, [], "A source that was never shown."))
    llm, prompts = judge(reply)
    notes: list[str] = []
    kept = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert [s.url for s in kept] == ["https://lyon.example/fete"]
    assert len(prompts) == 1
    assert "reconcile: ignored the LLM's entries for unknown sids [99]" in notes


def test_unknown_qid_is_ignored() -> None:
    reply = seed_reply((1, 0.9, [("1", 0.8), ("3", 0.5), ("q2", 0.4)], "Yes."))
    llm, _ = judge(reply)
    notes: list[str] = []
    [fete] = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert fete.extras["query_relevance"] == [{"qid": "1", "score": 0.8}]
    assert 'reconcile: ignored the LLM\'s score for unknown qid "3" (sid 1)' in notes
    assert 'reconcile: ignored the LLM\'s score for unknown qid "q2" (sid 1)' in notes


def test_reasoning_is_cut_to_320_characters() -> None:
    reply = seed_reply((1, 0.9, [], "Très pertinent. " * 40))
    llm, _ = judge(reply)
    notes: list[str] = []
    [fete] = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert len(fete.extras["reasoning"]) <= 320
    assert fete.extras["reasoning"].startswith("Très pertinent.")
    assert fete.extras["reasoning"].endswith("…")
    assert "reconcile: the LLM's reasoning for sid 1 cut to 320 characters" in notes


def test_missing_reasoning_is_replaced_by_the_local_one() -> None:
    llm, _ = judge('[{"sid": 2, "o_relevance": 0.5}]')
    notes: list[str] = []
    [weather] = reconcile(LYON, *LYON_TASK, llm=llm, diagnostics=notes)
    assert (
        weather.extras["reasoning"]
        == "Matches 'Lyon', 'weather' (query 2) and the objective's 'Lyon'."
    )
    assert weather.extras["query_relevance"] == []
    assert "reconcile: the LLM gave no reasoning for sids [2]; used the local one" in notes
    # A source kept by the judge that shares no word with the task says so.
    llm, _ = judge('[{"sid": 3, "o_relevance": 0.5}]')
    [paris] = reconcile(LYON, *LYON_TASK, llm=llm)
    assert paris.extras["reasoning"] == (
        "No word of the objective or of the queries appears in its title or text."
    )


def test_seed_rows_are_numbered_by_their_sids_with_a_judge() -> None:
    reply = seed_reply(
        (12, 0.3, [("1", 0.2)], "Une gare à Paris, pas à Zürich."),
        (3, 0.95, [("1", 0.0)], "Zürich HB ist der größte Bahnhof."),
    )
    llm, prompts = judge(reply)
    kept = reconcile(ROWS, "größter Bahnhof der Schweiz", ["東京 駅"], llm=llm)
    [prompt] = prompts
    assert "[3] Zürich Hauptbahnhof" in prompt
    assert "[7] 東京駅" in prompt
    assert "[12] Gare de Lyon" in prompt
    assert '"sid": 3, "o_relevance": 0.93' in prompt  # the example names a real sid
    assert [(s.extras["sid"], s.relevance) for s in kept] == [(3, 0.95), (12, 0.3)]
    assert kept[0].extras["reasoning"] == "Zürich HB ist der größte Bahnhof."
    assert kept[0].url == "https://zh.example/hb"
    assert ROWS[0].get("reasoning") is None  # the rows are not changed


def test_seed_rows_position_numbers_are_unknown_sids() -> None:
    llm, prompts = judge(seed_reply((1, 0.9, [], "?"), (2, 0.9, [], "?")))
    notes: list[str] = []
    reconcile(ROWS, "Bahnhof", llm=llm, diagnostics=notes)
    assert len(prompts) == 2
    assert "none of its sids [1, 2] is a source listed ([3, 7, 12])" in prompts[1]


def test_seed_rows_with_repeated_sids_are_refused_with_a_judge() -> None:
    rows = [{**ROWS[0]}, {**ROWS[1], "sid": 3}]
    with pytest.raises(UsageError, match="sids"):
        reconcile(rows, "Bahnhof", llm=judge("[]")[0])


def test_an_invoke_object_returning_a_message_is_a_judge() -> None:
    class Message:
        def __init__(self, content: object) -> None:
            self.content = content

    class ChatModel:
        def __init__(self) -> None:
            self.prompts: list[str] = []

        def invoke(self, prompt: str) -> Message:
            self.prompts.append(prompt)
            return Message([{"type": "text", "text": VALID}])

    model = ChatModel()
    kept = reconcile(LYON, *LYON_TASK, llm=model)
    assert [s.relevance for s in kept] == [0.93, 0.4]
    assert len(model.prompts) == 1
