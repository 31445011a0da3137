"""What every provider reader must satisfy, written once and subclassed per provider.

A subclass names its provider and its cases (final responses, and streams paired with the final
response they end in); the tests here check exact offsets, resolvable ids, stream/final parity,
determinism, and that truncated or mistyped data never raises (and raises `CitationError` in
strict mode exactly when it yields diagnostics).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

import unicite
from unicite import CitationError, CitedAnswer
from unicite.providers import StreamCollector, collect_stream, extract

_WRONG_VALUES: tuple[Any, ...] = (None, 7, "x", [], {}, -1, 1.5, True)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield (*prefix, n)
            yield from _paths(item, (*prefix, n))


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    mutated = copy.deepcopy(data)
    target = mutated
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return mutated


def check_invariants(answer: CitedAnswer) -> None:
    """Offsets slice to the cited text and every cited id resolves (beyond the model's check)."""
    ids = {s.id for s in answer.sources}
    assert len(ids) == len(answer.sources)
    for c in answer.citations:
        assert 0 <= c.start <= c.end <= len(answer.text)
        assert answer.text[c.start : c.end] == c.text
        assert set(c.source_ids) <= ids
        if c.marker_span is not None:
            assert 0 <= c.marker_span[0] <= c.marker_span[1] <= len(answer.text)
    assert [(c.start, c.end) for c in answer.citations] == sorted(
        (c.start, c.end) for c in answer.citations
    )


def assert_same_answer(got: CitedAnswer, expected: CitedAnswer) -> None:
    """Field-by-field equality with a readable first difference."""
    for field in ("text", "provider", "model", "diagnostics", "extras"):
        assert getattr(got, field) == getattr(expected, field), field
    assert [s.model_dump() for s in got.sources] == [s.model_dump() for s in expected.sources]
    assert [c.model_dump() for c in got.citations] == [c.model_dump() for c in expected.citations]
    assert got == expected


class ProviderContract:
    """Base class: subclasses set `provider` and implement `final_cases` / `stream_cases`."""

    provider: ClassVar[str]
    noisy_cases: ClassVar[frozenset[str]] = frozenset()
    """Case ids whose data is odd on purpose: they may carry diagnostics."""
    mutation_budget: ClassVar[int] = 400
    """How many (path, wrong value) mutations to try per case."""

    def final_cases(self) -> dict[str, Any]:
        """Case id -> final response (a plain dict as the provider's JSON)."""
        return {}

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        """Case id -> (stream events as dicts, the final response they end in)."""
        return {}

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "final_case" in metafunc.fixturenames:
            cases = self.final_cases()
            metafunc.parametrize("final_case", list(cases.items()), ids=list(cases))
        if "stream_case" in metafunc.fixturenames:
            streams = self.stream_cases()
            metafunc.parametrize("stream_case", list(streams.items()), ids=list(streams))

    # --- final responses ------------------------------------------------------------------

    def test_offsets_slice_and_ids_resolve(self, final_case: tuple[str, Any]) -> None:
        name, final = final_case
        answer = extract(final)
        check_invariants(answer)
        assert answer.provider == self.provider
        if name not in self.noisy_cases:
            assert answer.diagnostics == []

    def test_detected_and_explicit_provider_agree(self, final_case: tuple[str, Any]) -> None:
        _, final = final_case
        assert unicite.providers.detect_provider(final) == self.provider
        assert extract(final, provider=self.provider) == extract(final)

    def test_json_text_and_bytes_read_like_the_dict(self, final_case: tuple[str, Any]) -> None:
        _, final = final_case
        text = json.dumps(final, ensure_ascii=False)
        assert extract(text) == extract(final)
        assert extract(text.encode()) == extract(final)

    def test_deterministic(self, final_case: tuple[str, Any]) -> None:
        _, final = final_case
        assert extract(copy.deepcopy(final)).to_json() == extract(final).to_json()

    def test_every_prefix_of_the_json_never_raises(self, final_case: tuple[str, Any]) -> None:
        _, final = final_case
        text = json.dumps(final, ensure_ascii=False)
        for cut in range(len(text)):
            answer = extract(text[:cut], provider=self.provider)
            assert answer.diagnostics, cut
            with pytest.raises(CitationError):
                extract(text[:cut], provider=self.provider, strict=True)

    def test_wrong_types_never_raise(self, final_case: tuple[str, Any]) -> None:
        _, final = final_case
        paths = list(_paths(final))
        tried = 0
        for n, path in enumerate(paths):
            for m, value in enumerate(_WRONG_VALUES):
                if (n + m) % max(1, len(paths) * len(_WRONG_VALUES) // self.mutation_budget):
                    continue
                mutated = _replace(final, path, value)
                answer = extract(mutated, provider=self.provider)
                check_invariants(answer)
                if answer.diagnostics:
                    with pytest.raises(CitationError):
                        extract(mutated, provider=self.provider, strict=True)
                else:
                    assert extract(mutated, provider=self.provider, strict=True) == answer
                tried += 1
        assert tried > 0

    def test_strict_mode_is_silent_on_clean_data(self, final_case: tuple[str, Any]) -> None:
        name, final = final_case
        if name in self.noisy_cases:
            with pytest.raises(CitationError):
                extract(final, strict=True)
        else:
            assert extract(final, strict=True) == extract(final)

    # --- streams --------------------------------------------------------------------------

    def test_stream_equals_final(self, stream_case: tuple[str, tuple[list[Any], Any]]) -> None:
        _, (events, final) = stream_case
        assert_same_answer(collect_stream(events), extract(final))

    def test_stream_events_announce_the_final_citations(
        self, stream_case: tuple[str, tuple[list[Any], Any]]
    ) -> None:
        _, (events, final) = stream_case
        collector = StreamCollector()
        announced = []
        for event in events:
            for item in collector.feed(event):
                announced.append(item.citation)
                assert [s.id for s in item.sources] == item.citation.source_ids
        answer = collector.result()
        assert sorted(announced, key=lambda c: (c.start, c.end)) == answer.citations
        assert answer == extract(final)

    def test_every_prefix_of_a_stream_never_raises(
        self, stream_case: tuple[str, tuple[list[Any], Any]]
    ) -> None:
        _, (events, final) = stream_case
        whole = extract(final)
        for cut in range(len(events) + 1):
            answer = collect_stream(events[:cut], provider=self.provider)
            check_invariants(answer)
            if cut < len(events):
                # Only trailing events that carry nothing the answer holds may go unnoticed
                # (Anthropic's message_stop, after the message_delta with the stop reason).
                assert answer.diagnostics or answer == whole, (
                    f"a stream cut after {cut} events must say so"
                )
