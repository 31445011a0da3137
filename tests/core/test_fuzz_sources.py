"""Fuzzing the source extractors, the registry and the ledger with arbitrary tool output.

`from_tool_output` never raises on what a tool returned (JSON, text, bytes, objects whose
serialisation fails, deep nesting); only `UsageError` for a wrong tool name or argument type.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest
from _fuzz import (
    HUGE,
    WRONG_VALUES,
    fuzz_settings,
    hostile_text,
    json_values,
    nested,
    nested_json,
    outcome,
    source_like,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import Source, UsageError
from unicite.sources import (
    EXTRACTORS,
    ExtractorRegistry,
    SourceLedger,
    as_source,
    from_tool_output,
)

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

TOOLS = st.sampled_from(
    [
        "tavily_search",
        "serper",
        "google_search",
        "brave_search",
        "exa",
        "searxng",
        "bing",
        "duckduckgo_search",
        "wikipedia",
        "fetch_url",
        "http_get",
        "retriever",
        "web_search",
        "mcp_tool",
    ]
) | hostile_text.filter(lambda name: bool(name.strip()))


def check_sources(found: object, tool: str, notes: list[str]) -> list[Source]:
    assert isinstance(found, list)
    for source in found:
        assert isinstance(source, Source)
        assert source.origin is not None
        # Lone surrogates in the name are spelled out.
        assert source.origin.tool == tool.strip().encode("utf-8", "backslashreplace").decode()
    assert all(isinstance(note, str) for note in notes)
    return found


def extract_sources(tool: str, output: Any, **options: Any) -> list[Source]:
    notes: list[str] = []
    found = from_tool_output(tool, output, diagnostics=notes, **options)
    return check_sources(found, tool, notes)


@fuzz_settings()
@given(TOOLS, json_values, st.none() | hostile_text, st.none() | json_values.map(json.dumps))
def test_any_json_output(tool: str, output: Any, call_id: str | None, arguments: Any) -> None:
    for value in (output, json.dumps(output), json.dumps(output).encode()):
        extract_sources(tool, value, call_id=call_id, arguments=arguments)


@fuzz_settings()
@given(TOOLS, st.binary(max_size=300) | hostile_text)
def test_any_text_or_bytes_output(tool: str, output: bytes | str) -> None:
    extract_sources(tool, output, arguments={"url": "https://a.example/"})


@dataclasses.dataclass
class _Record:
    url: Any
    title: Any


class _Dumps:
    def __init__(self, value: Any, fails: bool = False) -> None:
        self.value, self.fails = value, fails

    def model_dump(self, **_: Any) -> Any:
        if self.fails:
            raise RuntimeError("cannot dump")
        return self.value


class _Response:
    """An HTTP-client response whose body access raises."""

    status_code = 500
    url = "https://api.example/search"
    headers: Mapping[str, str] = {"content-type": "application/json"}

    @property
    def text(self) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


@fuzz_settings()
@given(TOOLS, json_values, hostile_text)
def test_objects_as_output(tool: str, value: Any, text: str) -> None:
    outputs: list[Any] = [
        _Dumps(value),
        _Dumps(value, fails=True),
        _Record(url=text, title=value),
        [_Record(url="https://a.example/" + text, title=text), _Dumps({"url": text})],
        {"results": [_Dumps(value), None, 3, text]},
        _Response(),
        object(),
        (value, text),
        {1, 2},
        3.5,
    ]
    for output in outputs:
        extract_sources(tool, output)


def test_deep_and_huge_output() -> None:
    for tool in ("tavily_search", "retriever", "fetch", "unknown_tool"):
        for output in (
            nested(10_000),
            nested(10_000, {"url": "https://a.example/"}, "dict"),
            {"results": nested(10_000)},
            {"results": [{"url": "https://a.example/", "title": nested(10_000)}]},
            nested_json(10_000),
            "[" * 100_000,
            HUGE,
            {"results": [{"url": "https://a.example/" + HUGE, "content": HUGE}] * 50},
        ):
            extract_sources(tool, output)
        for arguments in (nested_json(10_000), {"url": nested(10_000)}, "{" * 10_000):
            extract_sources(tool, {"results": []}, arguments=arguments)


@fuzz_settings()
@given(json_values)
def test_custom_extractors_that_misbehave(value: Any) -> None:
    registry = ExtractorRegistry()

    def raises(*_: Any) -> list[Source]:
        raise ValueError("broken extractor")

    def returns(*_: Any) -> Any:
        return value

    def returns_dicts(*_: Any) -> Any:
        return [value, {"url": "https://a.example/", "title": value}, Source(title="t")]

    for pattern, extractor in (("^a$", raises), ("^b$", returns), ("^c$", returns_dicts)):
        registry.register(pattern, extractor)
    for tool in ("a", "b", "c"):
        notes: list[str] = []
        found = from_tool_output(tool, {"results": []}, diagnostics=notes, registry=registry)
        check_sources(found, tool, notes)
    for name, extractor in EXTRACTORS.items():
        check_sources(extractor(name, None, {}, value), name, [])


def test_registry_and_call_misuse_is_a_usage_error() -> None:
    registry = ExtractorRegistry()
    for pattern in ("", "(", None, 3):
        with pytest.raises(UsageError):
            registry.register(pattern, lambda *a: [])  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        registry.register("x", "not callable")  # type: ignore[arg-type]
    for tool in ("", "   ", None, 3, b"tool"):
        with pytest.raises(UsageError):
            from_tool_output(tool, {})  # type: ignore[arg-type]
    for options in ({"call_id": 3}, {"arguments": 3}, {"arguments": [1]}, {"diagnostics": ()}):
        with pytest.raises(UsageError):
            from_tool_output("web_search", {}, **options)


@fuzz_settings()
@given(st.lists(source_like | json_values, max_size=8))
def test_ledger_takes_sources_and_rejects_garbage(items: list[Any]) -> None:
    ledger = SourceLedger()
    for item in items:
        result = outcome(lambda item=item: ledger.add(item), UsageError)  # type: ignore[misc]
        if isinstance(result, UsageError):
            assert not isinstance(item, Source)
            continue
        assert ledger.sources[[s.id for s in ledger.sources].index(result)].id == result
    ids = [s.id for s in ledger.sources]
    assert len(ids) == len(set(ids))


@fuzz_settings()
@given(st.lists(source_like, max_size=5), json_values)
def test_ledger_reads_tool_output(sources: list[Any], output: Any) -> None:
    ledger = SourceLedger()
    ledger.add_all(sources)
    added = ledger.add_tool_output("web_search", output)
    ids = [s.id for s in ledger.sources]
    assert set(added) <= set(ids)
    assert len(ids) == len(set(ids))


def test_as_source_on_wrong_values() -> None:
    for value in WRONG_VALUES:
        if isinstance(value, dict):
            continue
        with pytest.raises(UsageError):
            as_source(value)
    for bad in ({"rank": "first"}, {"kind": "nope"}, {"relevance": 2.0}, {"id": "\ud800"}):
        with pytest.raises(UsageError):
            as_source(bad)
