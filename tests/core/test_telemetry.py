"""OpenTelemetry metrics and span attributes of `unicite.cite` (the ``unicite[otel]`` extra).

The metrics go through the global meter provider, which a process sets once: this module sets
one with an in-memory reader the first time it is needed and every test reads the change its
own `cite` calls made. Spans need no global provider: a local tracer provider's span is made
current around the call. Without OpenTelemetry (the core-only environment) only the tests
that run in a fresh interpreter, with the import made to fail, run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import unicite
from unicite import CitedAnswer, Source

Totals = dict[tuple[str, frozenset[tuple[str, Any]]], Any]

ZURICH = Source(
    url="https://www.stadt-zuerich.ch/",
    title="Stadt Zürich",
    content="Zürich zählt rund 440 000 Einwohner.",
)
BERN = Source(
    url="https://www.bern.ch/", title="Stadt Bern", content="Bern zählt rund 146 000 Einwohner."
)

_TEXT = "Le café à Zürich coûte 5 francs. Bern ist günstiger."
_FIRST = "Le café à Zürich coûte 5 francs."


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def gemini(*, supports: bool = True, readable: bool = True) -> dict[str, Any]:
    """A Gemini response grounded by Google Search (segment offsets are UTF-8 bytes)."""
    chunks: list[dict[str, Any]] = [
        {"web": {"uri": "https://example.ch/cafe", "title": "example.ch"}},
        {"web": {"uri": "https://bern.example.ch/", "title": "bern.example.ch"}},
    ]
    if not readable:
        chunks[1] = {"web": {"title": "bern.example.ch"}}
    metadata: dict[str, Any] = {"webSearchQueries": ["prix café Zürich"], "groundingChunks": chunks}
    if supports:
        second = _utf8(_FIRST) + 1
        metadata["groundingSupports"] = [
            {
                "segment": {"startIndex": 0, "endIndex": _utf8(_FIRST), "text": _FIRST},
                "groundingChunkIndices": [0],
            },
            {
                "segment": {
                    "startIndex": second,
                    "endIndex": _utf8(_TEXT),
                    "text": "Bern ist günstiger.",
                },
                "groundingChunkIndices": [1],
            },
        ]
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": _TEXT}], "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": metadata,
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def openai_searched_uncited() -> dict[str, Any]:
    """An OpenAI Responses answer: a web search ran, the message carries no annotations."""
    return {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-4.1",
        "status": "completed",
        "output": [
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "café Zürich"},
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": _TEXT, "annotations": []}],
            },
        ],
    }


# --- reading the global meter provider -----------------------------------------------------

_READER: Any = None


@pytest.fixture(scope="module")
def reader() -> Any:
    """The in-memory reader of the global meter provider (set once per process)."""
    global _READER
    pytest.importorskip("opentelemetry.sdk.metrics")
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    if _READER is None:
        candidate = InMemoryMetricReader()
        provider = MeterProvider(metric_readers=[candidate])
        metrics.set_meter_provider(provider)
        if metrics.get_meter_provider() is not provider:
            pytest.skip("another global meter provider is set in this process")
        _READER = candidate
    return _READER


def totals(reader: Any) -> Totals:
    """Every unicite data point: counters' values, histograms' (count, sum)."""
    out: Totals = {}
    data = reader.get_metrics_data()
    if data is None:
        return out
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            if scope.scope.name != "unicite":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, frozenset(point.attributes.items()))
                    if hasattr(point, "bucket_counts"):
                        out[key] = (point.count, point.sum)
                    else:
                        out[key] = point.value
    return out


def changes(before: Totals, after: Totals) -> dict[tuple[str, frozenset[tuple[str, Any]]], Any]:
    """What changed between two readings (histograms as a (count, sum) difference)."""
    out = {}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, tuple):
            old = old or (0, 0)
            diff: Any = (value[0] - old[0], value[1] - old[1])
            if diff != (0, 0):
                out[key] = diff
        elif value != (old or 0):
            out[key] = value - (old or 0)
    return out


def point(name: str, **attributes: str) -> tuple[str, frozenset[tuple[str, Any]]]:
    """A data point key: ``point("citations.generated", provider="gemini")``."""
    return name, frozenset((f"unicite.{k}", v) for k, v in attributes.items())


Changes = Callable[[], dict[tuple[str, frozenset[tuple[str, Any]]], Any]]


@pytest.fixture
def measure(reader: Any) -> Changes:
    """Reads what changed since the test started: the test's own `cite` calls."""
    before = totals(reader)
    return lambda: changes(before, totals(reader))


# --- counters ------------------------------------------------------------------------------


def test_marker_citations_count_as_injected(measure: Changes) -> None:
    answer = unicite.cite("Zürich zählt rund 440 000 Einwohner [2]. Bern [1].", [BERN, ZURICH])
    assert len(answer.citations) == 2
    assert measure() == {
        point("citations.generated", provider="none", origin="marker"): 2,
        point("citations.markers.injected", provider="none"): 1,
        point("citations.sources.per_answer", provider="none"): (1, 2),
    }


def test_native_citations_without_markers_count_as_missing(measure: Changes) -> None:
    answer = unicite.cite(gemini())
    assert [c.marker_span for c in answer.citations] == [None, None]
    assert measure() == {
        point("citations.generated", provider="gemini", origin="native"): 2,
        point("citations.markers.missing", provider="gemini"): 1,
        point("citations.sources.per_answer", provider="gemini"): (1, 2),
    }


def test_native_citations_with_given_markers_count_as_injected(measure: Changes) -> None:
    # The provider's text carries a [1] naming a given source: a marker citation is added.
    response = gemini()
    response["candidates"][0]["content"]["parts"][0]["text"] = _TEXT + " Genf [1]."
    answer = unicite.cite(response, [ZURICH])
    assert sorted(c.origin for c in answer.citations) == ["marker", "native", "native"]
    assert measure() == {
        point("citations.generated", provider="gemini", origin="native"): 2,
        point("citations.generated", provider="gemini", origin="marker"): 1,
        point("citations.markers.injected", provider="gemini"): 1,
        point("citations.sources.per_answer", provider="gemini"): (1, 3),
    }


def test_grounding_metadata_without_supports(measure: Changes) -> None:
    answer = unicite.cite(gemini(supports=False))
    assert answer.citations == []
    assert len(answer.sources) == 2
    assert measure() == {
        point("citations.grounding.without_citations", provider="gemini"): 1,
        point("citations.markers.missing", provider="gemini"): 1,
        point("citations.sources.per_answer", provider="gemini"): (1, 2),
    }


def test_web_search_without_annotations_is_grounded_without_citations(
    measure: Changes,
) -> None:
    answer = unicite.cite(openai_searched_uncited())
    assert answer.citations == []
    assert answer.sources == []
    assert measure() == {
        point("citations.grounding.without_citations", provider="openai"): 1,
        point("citations.sources.per_answer", provider="openai"): (1, 0),
    }


def test_given_sources_cited_by_none(measure: Changes) -> None:
    answer = unicite.cite("Zürich ist gross.", [ZURICH, BERN])
    assert answer.citations == []
    assert measure() == {
        point("citations.grounding.without_citations", provider="none"): 1,
        point("citations.markers.missing", provider="none"): 1,
        point("citations.sources.per_answer", provider="none"): (1, 2),
    }


def test_sources_without_any_marker_count_as_missing(measure: Changes) -> None:
    # Seed 002's handler counts metadata without inline markers whether or not anything is
    # cited: sources given to cite, or read from the provider, and a text with no marker.
    given = unicite.cite("Zürich ist gross.", [ZURICH, BERN])
    read = unicite.cite(gemini(supports=False))
    assert (given.citations, read.citations) == ([], [])
    assert (len(given.sources), len(read.sources)) == (2, 2)
    missing = {k: v for k, v in measure().items() if k[0] == "citations.markers.missing"}
    assert missing == {
        point("citations.markers.missing", provider="none"): 1,
        point("citations.markers.missing", provider="gemini"): 1,
    }


def test_no_sources_no_missing_markers(measure: Changes) -> None:
    # A search ran but the provider listed no source: there is no metadata to mark.
    unicite.cite(openai_searched_uncited())
    unicite.cite("Zürich ist gross.")
    assert not [k for k in measure() if k[0] == "citations.markers.missing"]


def test_posthoc_citations_have_no_markers(measure: Changes) -> None:
    answer = unicite.cite("Zürich zählt rund 440 000 Einwohner.", [ZURICH], attribute="lexical")
    assert [c.origin for c in answer.citations] == ["posthoc-lexical"]
    assert measure() == {
        point("citations.generated", provider="none", origin="posthoc-lexical"): 1,
        point("citations.markers.missing", provider="none"): 1,
        point("citations.sources.per_answer", provider="none"): (1, 1),
    }


def test_markers_without_metadata(measure: Changes) -> None:
    answer = unicite.cite("Zürich ist grösser [2] als Bern [1]. Code: `a[3]`.")
    # parse_markers already says why, marker by marker.
    assert answer.diagnostics == [
        "marker '[2]' at 19: source 2 out of range (0 sources given)",
        "marker '[1]' at 32: source 1 out of range (0 sources given)",
    ]
    assert measure() == {
        point("citations.markers.unresolved", provider="none"): 1,
        point("citations.sources.per_answer", provider="none"): (1, 0),
    }


def test_plain_text_counts_only_the_answer(measure: Changes) -> None:
    unicite.cite("Grüezi mitenand, a[1] is an index.")
    assert measure() == {point("citations.sources.per_answer", provider="none"): (1, 0)}


def test_unreadable_response_is_an_extraction_failure(measure: Changes) -> None:
    answer = unicite.cite({"answer": "Zürich"})
    assert answer.diagnostics
    assert answer.provider is None
    assert measure() == {
        point("citations.extraction.failures", provider="none", failure="unreadable"): 1,
        point("citations.sources.per_answer", provider="none"): (1, 0),
    }


def test_partly_unreadable_response_is_a_partial_failure(measure: Changes) -> None:
    answer = unicite.cite(gemini(readable=False))
    assert len(answer.citations) == 1
    assert answer.diagnostics
    assert measure() == {
        point("citations.generated", provider="gemini", origin="native"): 1,
        point("citations.markers.missing", provider="gemini"): 1,
        point("citations.extraction.failures", provider="gemini", failure="partial"): 1,
        point("citations.sources.per_answer", provider="gemini"): (1, 1),
    }


def test_a_given_answer_keeps_its_reading_diagnostics(measure: Changes) -> None:
    # Adapters extract first and cite the answer: the reader's diagnostics still count.
    read = unicite.extract(gemini(readable=False))
    unicite.cite(read)
    unicite.cite(CitedAnswer(text="Zürich", diagnostics=["made by hand"]))
    failures = {k: v for k, v in measure().items() if "failures" in k[0]}
    assert failures == {
        point("citations.extraction.failures", provider="gemini", failure="partial"): 1
    }


def test_provider_names_stay_low_cardinality(measure: Changes) -> None:
    unicite.cite(CitedAnswer(text="Zürich", provider="Some Gateway / v2 (beta)"))
    unicite.cite(CitedAnswer(text="Zürich", provider="openrouter", model="x-" * 40))
    assert measure() == {
        point("citations.sources.per_answer", provider="other"): (1, 0),
        point("citations.sources.per_answer", provider="openrouter"): (1, 0),
    }


def test_disabled_emits_nothing(measure: Changes) -> None:
    unicite.cite(gemini(), enabled=False)
    unicite.cite("Zürich [1].", [ZURICH], policy=unicite.CitePolicy(enabled=False))
    assert measure() == {}


def test_require_failures_are_counted_before_raising(measure: Changes) -> None:
    with pytest.raises(unicite.GroundingRequiredError):
        unicite.cite(gemini(supports=False), require="citations")
    assert point("citations.grounding.without_citations", provider="gemini") in measure()


def test_a_failing_instrument_never_breaks_cite(
    measure: Changes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.sdk.metrics import Counter, Histogram

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("exporter down")

    monkeypatch.setattr(Counter, "add", boom)
    monkeypatch.setattr(Histogram, "record", boom)
    answer = unicite.cite("Zürich zählt rund 440 000 Einwohner [1].", [ZURICH])
    assert len(answer.citations) == 1
    assert measure() == {}


# --- span attributes -----------------------------------------------------------------------


@pytest.fixture
def tracer() -> Iterator[tuple[Any, Any]]:
    """A local tracer and the exporter holding its finished spans."""
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter
    provider.shutdown()


def test_span_attributes_of_a_native_answer(reader: Any, tracer: tuple[Any, Any]) -> None:
    trace, exporter = tracer
    with trace.start_as_current_span("answer"):
        unicite.cite(gemini())
    (span,) = exporter.get_finished_spans()
    assert dict(span.attributes) == {
        "unicite.provider": "gemini",
        "unicite.model": "gemini-2.5-flash",
        "unicite.citations": 2,
        "unicite.sources": 2,
        "unicite.markers.injected": False,
        "unicite.markers.missing": True,
        "unicite.markers.unresolved": False,
        "unicite.grounding.without_citations": False,
        "unicite.extraction.failed": False,
        "unicite.diagnostics": 0,
    }


def test_span_attributes_of_markers_without_metadata(reader: Any, tracer: tuple[Any, Any]) -> None:
    trace, exporter = tracer
    with trace.start_as_current_span("answer"):
        unicite.cite("Zürich [1].")
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes)
    assert attributes["unicite.provider"] == "none"
    assert "unicite.model" not in attributes
    assert attributes["unicite.markers.unresolved"] is True
    assert attributes["unicite.diagnostics"] == 1


def test_no_span_attributes_when_disabled(reader: Any, tracer: tuple[Any, Any]) -> None:
    trace, exporter = tracer
    with trace.start_as_current_span("answer"):
        unicite.cite(gemini(), enabled=False)
    (span,) = exporter.get_finished_spans()
    assert not span.attributes


def test_a_failing_span_never_breaks_cite(measure: Changes) -> None:
    from opentelemetry import trace

    class Broken(trace.NonRecordingSpan):
        def is_recording(self) -> bool:
            return True

        def set_attributes(self, attributes: object) -> None:
            raise RuntimeError("span gone")

    with trace.use_span(Broken(trace.INVALID_SPAN_CONTEXT)):
        answer = unicite.cite("Zürich [1].", [ZURICH])
    assert len(answer.citations) == 1
    # The metrics were recorded before the span failed.
    assert point("citations.markers.injected", provider="none") in measure()


# --- in a fresh interpreter ----------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.pop("UNICITE_DEBUG_GROUNDING", None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_without_opentelemetry_cite_works_and_emits_nothing() -> None:
    result = _python(
        """
        import json, sys
        sys.modules["opentelemetry"] = None  # `import opentelemetry...` now fails
        import unicite

        for _ in range(3):
            answer = unicite.cite("Zürich [1].", [{"url": "https://www.stadt-zuerich.ch/"}])
        otel = sorted(m for m in sys.modules if m.startswith("opentelemetry.") )
        print(json.dumps([len(answer.citations), otel]))
        """
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [1, []]
    assert result.stderr == ""


def test_importing_unicite_does_not_import_opentelemetry() -> None:
    result = _python(
        """
        import sys
        import unicite
        print(any(m == "opentelemetry" or m.startswith("opentelemetry.") for m in sys.modules))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_meter_provider_set_after_the_first_answer_gets_the_counts() -> None:
    pytest.importorskip("opentelemetry.sdk.metrics")
    result = _python(
        """
        import json
        import unicite
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        sources = [{"url": "https://www.stadt-zuerich.ch/"}]
        unicite.cite("Zürich [1].", sources)  # instruments made on the proxy provider
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        unicite.cite("Zürich [1].", sources)
        unicite.cite("Bern [1].", sources)
        found = {}
        for resource in reader.get_metrics_data().resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for p in metric.data.data_points:
                        found[metric.name] = getattr(p, "value", None) or p.count
        print(json.dumps(found, sort_keys=True))
        """
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "citations.generated": 2,
        "citations.markers.injected": 2,
        "citations.sources.per_answer": 2,
    }
