"""Fuzzing `collect_stream`, `acollect_stream` and `StreamCollector` with recorded streams.

Every recorded SSE body is cut at byte positions (every one near its ends and around every
event boundary, mid-UTF-8 sequences included) and its events are mutated. A stream cut short
either says so in ``diagnostics`` or has lost nothing of the answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _fuzz import (
    Payload,
    check_answer,
    fuzz_settings,
    json_values,
    mutate,
    nested,
    sse_payloads,
    to_sse,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import (
    CitationError,
    CitedAnswer,
    StreamCollector,
    UsageError,
    acollect_stream,
    collect_stream,
)


def stream_cuts(raw: bytes, stride: int = 40) -> tuple[list[int], set[int]]:
    """Cut positions: the first and last 200 bytes, around each event boundary, a sample.

    Returns the sorted cuts and the event boundaries (cuts right after a blank line).
    """
    size = len(raw)
    boundaries: set[int] = set()
    at = raw.find(b"\n\n")
    while at != -1:
        boundaries.add(at + 2)
        at = raw.find(b"\n\n", at + 1)
    every = set(range(min(size, 200))) | set(range(max(0, size - 200), size))
    every |= {b + d for b in boundaries for d in (-2, -1, 0, 1) if 0 <= b + d < size}
    sample = range(0, size, max(1, size // stride))
    every.update(sample)
    # Inside multi-byte characters: the cut leaves half a UTF-8 sequence behind.
    every.update(n + 1 for n in sample if n + 1 < size and raw[n + 1] & 0xC0 == 0x80)
    return sorted(every), boundaries


@pytest.mark.parametrize("payload", sse_payloads(), ids=lambda p: p.name)
def test_every_prefix_of_an_sse_body_is_reported_or_complete(payload: Payload) -> None:
    full = check_answer(collect_stream(payload.raw))
    assert full.diagnostics == [], full.diagnostics
    assert collect_stream(payload.text) == full
    cuts, boundaries = stream_cuts(payload.raw)
    for cut in cuts:
        prefix = payload.raw[:cut]
        # Building the answer checked its invariants (spans, ids); the rest is checked below.
        answer = collect_stream(prefix)
        if not answer.diagnostics and _ends_unmarked(payload):
            # A stream with no closing event cannot tell a cut: it is then a prefix of the whole.
            assert full.text.startswith(answer.text), cut
            assert all(c in full.citations for c in answer.citations), cut
        elif not answer.diagnostics:
            # Silent only when nothing of the answer was lost (e.g. a trailing usage chunk).
            assert (answer.text, answer.citations) == (full.text, full.citations), cut
        if cut in boundaries:
            check_answer(answer, render=False)
            strict = _strict(prefix)
            if answer.diagnostics:
                assert isinstance(strict, CitationError)
                assert strict.diagnostics == answer.diagnostics
            else:
                assert strict == answer


_UNMARKED_END = frozenset({"output", "citation", "guardrail"})
"""Bedrock's ``RetrieveAndGenerateStream`` events: the stream has no event that closes it."""


def _ends_unmarked(payload: Payload) -> bool:
    events = payload.data if isinstance(payload.data, list) else []
    return bool(events) and all(isinstance(e, dict) and set(e) <= _UNMARKED_END for e in events)


def _strict(events: Any) -> CitedAnswer | CitationError:
    try:
        return collect_stream(events, strict=True)
    except CitationError as err:
        return err


@st.composite
def mutated_streams(draw: st.DrawFn) -> list[Any]:
    payload: Payload = draw(st.sampled_from(sse_payloads()))
    events = draw(mutate(payload.data))
    if draw(st.booleans()):
        # Events out of order, or foreign ones mixed in.
        events = list(events) if isinstance(events, list) else [events]
        if len(events) > 1 and draw(st.booleans()):
            i, j = draw(st.integers(0, len(events) - 1)), draw(st.integers(0, len(events) - 1))
            events[i], events[j] = events[j], events[i]
        else:
            events.insert(draw(st.integers(0, len(events))), draw(json_values))
    return events if isinstance(events, list) else [events]


@fuzz_settings()
@given(mutated_streams())
def test_mutated_streams_give_valid_answers(events: list[Any]) -> None:
    answer = check_answer(collect_stream(events))
    strict = _strict(events)
    if answer.diagnostics:
        assert isinstance(strict, CitationError)
    else:
        assert strict == answer
    # The SSE text of the same events reads the same.
    assert collect_stream(to_sse(events)).to_json() == answer.to_json()


@fuzz_settings()
@given(mutated_streams())
def test_collector_announces_citations_it_keeps(events: list[Any]) -> None:
    collector = StreamCollector()
    announced = []
    for event in events:
        for item in collector.feed(event):
            assert [s.id for s in item.sources] == item.citation.source_ids
            announced.append(item.citation)
    answer = check_answer(collector.result(), render=False)
    # A stream read whole announces nothing, so it notes no revision of what it announced.
    kept = [d for d in answer.diagnostics if "announced while streaming" not in d]
    whole = answer.model_copy(update={"diagnostics": kept})
    assert whole.to_json() == collect_stream(events).to_json()
    if not answer.diagnostics:
        # What was announced is final: every announced citation is in the answer. (Closing
        # events may still add citations whose text the deltas never carried.)
        final = [c.model_dump_json() for c in answer.citations]
        for citation in announced:
            assert citation.model_dump_json() in final, citation


async def _aiter(events: list[Any]) -> AsyncIterator[Any]:
    for event in events:
        yield event


@fuzz_settings(0.3)
@given(mutated_streams())
def test_async_collection_equals_sync(events: list[Any]) -> None:
    answer = asyncio.run(acollect_stream(_aiter(events)))
    assert answer.to_json() == collect_stream(events).to_json()


@fuzz_settings()
@given(st.lists(json_values, max_size=8), st.sampled_from([None, "openai", "gemini", "cohere"]))
def test_arbitrary_events_give_valid_answers(events: list[Any], provider: str | None) -> None:
    check_answer(collect_stream(events, provider))
    check_answer(collect_stream(to_sse(events), provider))


@fuzz_settings()
@given(st.binary(max_size=400))
def test_arbitrary_bytes_as_an_sse_log(raw: bytes) -> None:
    check_answer(collect_stream(b"data: " + raw + b"\n\n"))
    check_answer(collect_stream(raw))


def test_deep_and_huge_events() -> None:
    deep = nested(10_000, {"type": "message_start"})
    events: list[Any] = [
        deep,
        {"type": "message_start", "message": nested(10_000, {}, "dict")},
        {"type": "response.created", "response": {"output": deep}},
        {"candidates": [{"content": {"parts": [{"text": "x" * 1_000_000}]}}]},
    ]
    for cut in range(len(events) + 1):
        check_answer(collect_stream(events[:cut]), render=cut < 3)
    payload = next(p for p in sse_payloads() if "anthropic" in p.name)
    spliced = [*payload.data[:3], deep, *payload.data[3:]]
    answer = check_answer(collect_stream(spliced))
    assert answer.diagnostics
    log = json.dumps(payload.data[0]) + "\n" + "[" * 10_000 + "\n"
    check_answer(collect_stream(log))


def test_wrong_arguments_are_usage_errors() -> None:
    for bad in ({"provider": "nope"}, {"provider": 1}, {"require": "all"}):
        with pytest.raises(UsageError):
            collect_stream([], **bad)
        with pytest.raises(UsageError):
            StreamCollector(**bad)
    for events in (None, 5, object()):
        with pytest.raises(UsageError):
            collect_stream(events)  # type: ignore[arg-type]
