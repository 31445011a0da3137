"""Fuzzing post-hoc attribution and verification with hostile text, sources and model replies.

`attribute` and `verify` return valid answers for any text and sources; a model or scorer
that returns garbage gives diagnostics or a `UsageError` naming what it returned, never a
crash inside.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest
from _fuzz import (
    HUGE,
    check_answer,
    cited_answers,
    fuzz_settings,
    hostile_text,
    json_values,
    nested_json,
    outcome,
    source_like,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import (
    CitedAnswer,
    EmbeddingScorer,
    JudgeScorer,
    Scorer,
    UsageError,
    attribute,
    verify,
)

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

claims = st.lists(
    st.one_of(
        hostile_text,
        st.sampled_from(
            [
                "The Rhine flows through Basel. ",
                "Paris is the capital of France.\n\n",
                "- Mont Blanc is 4805 m high\n",
                "```\ncode()\n```\n",
                "| a | b |\n|---|---|\n| 1 | 2 |\n",
            ]
        ),
    ),
    max_size=8,
).map("".join)
documents = st.lists(
    st.one_of(
        source_like,
        st.just({"title": "Rhine", "content": "The Rhine flows through Basel and Strasbourg."}),
        st.just({"url": "https://fr.example/", "content": "Paris is the capital of France."}),
    ),
    max_size=5,
)


@fuzz_settings()
@given(claims, documents)
def test_lexical_attribution_of_any_text(text: str, sources: list[Any]) -> None:
    answer = check_answer(attribute(text, sources))
    assert answer.text == text
    assert all(c.origin == "posthoc-lexical" for c in answer.citations)
    check_answer(verify(answer), render=False)


replies = st.one_of(
    json_values.map(json.dumps),
    hostile_text,
    st.builds(
        lambda claim, sid: json.dumps({"citations": [{"claim": claim, "sources": sid}]}),
        hostile_text,
        json_values,
    ),
    st.sampled_from(
        [
            '{"citations": [{"claim": "The Rhine flows through Basel.", "sources": [1]}',
            '```json\n[{"claim": "Paris", "sources": [2, 99, -1, "x"]}]\n```',
            nested_json(5_000),
            "{" * 5_000,
            "",
        ]
    ),
)


@fuzz_settings()
@given(claims, documents, replies, st.sampled_from(["str", "message", "object", "raise"]))
def test_llm_attribution_with_any_reply(
    text: str, sources: list[Any], reply: str, shape: str
) -> None:
    def llm(prompt: str) -> Any:
        assert isinstance(prompt, str)
        if shape == "message":
            return SimpleNamespace(content=reply)
        if shape == "object":
            return {"content": reply}
        return reply

    result = outcome(lambda: attribute(text, sources, "llm", llm=llm), UsageError)
    if isinstance(result, UsageError):
        assert shape == "object", result
        return
    answer = check_answer(result)
    assert answer.text == text
    assert all(c.origin == "posthoc-llm" for c in answer.citations)


garbage_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.none(),
    hostile_text,
    st.lists(st.floats(allow_nan=True), max_size=3),
)


@fuzz_settings()
@given(claims, documents, garbage_numbers, st.booleans())
def test_scorers_returning_garbage(
    text: str, sources: list[Any], value: Any, batched: bool
) -> None:
    def judge(*args: Any) -> Any:
        return [value] * len(args[0]) if batched else value

    def embed(texts: list[str]) -> Any:
        return [value] * len(texts)

    scorers: list[Scorer] = [JudgeScorer(judge, batched=batched), EmbeddingScorer(embed)]
    for scorer in scorers:
        result = outcome(partial(attribute, text, sources, scorer=scorer), UsageError)
        if not isinstance(result, UsageError):
            check_answer(result, render=False)


@fuzz_settings()
@given(cited_answers(), st.none() | documents)
def test_verify_any_answer(answer: CitedAnswer, sources: list[Any] | None) -> None:
    checked = check_answer(verify(answer, sources=sources), render=False)
    assert checked.text == answer.text
    assert [(c.start, c.end) for c in checked.citations] == [
        (c.start, c.end) for c in answer.citations
    ]
    for c in checked.citations:
        assert c.support is None or 0.0 <= c.support <= 1.0


def test_huge_inputs() -> None:
    source = {"title": "big", "content": HUGE}
    check_answer(attribute(HUGE[:5_000], [source, {"content": HUGE[::-1]}]), render=False)
    check_answer(attribute("Lorem ipsum dolor sit amet.", [source]), render=False)


def test_wrong_arguments_are_usage_errors() -> None:
    calls: list[Callable[[], object]] = [
        lambda: attribute(None, []),  # type: ignore[arg-type]
        lambda: attribute(b"text", []),  # type: ignore[arg-type]
        lambda: attribute("x", None),  # type: ignore[arg-type]
        lambda: attribute("x", [None]),  # type: ignore[list-item]
        lambda: attribute("x", ["https://a.example/"]),  # type: ignore[list-item]
        lambda: attribute("x", [{"rank": "first"}]),
        lambda: attribute("x", [], "magic"),  # type: ignore[arg-type]
        lambda: attribute("x", [], "llm"),
        lambda: attribute("x", [], threshold=2),
        lambda: attribute("x", [], max_sources=-1),
        lambda: attribute("x", [], batch_chars=0),
        lambda: verify("x"),  # type: ignore[arg-type]
        lambda: verify(CitedAnswer(text="x"), threshold=float("nan")),
        lambda: verify(CitedAnswer(text="x"), sources=[3]),  # type: ignore[list-item]
    ]
    for call in calls:
        with pytest.raises(UsageError):
            call()
