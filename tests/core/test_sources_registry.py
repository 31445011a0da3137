"""The extractor registry: registration order, custom extractors, and odd or broken output."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import Source, UsageError
from unicite.model import SourceOrigin
from unicite.sources import (
    EXTRACTORS,
    ExtractorRegistry,
    SourceLedger,
    from_tool_output,
    register,
    unregister,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "tools"
SEARCH = (DATA / "tavily_search.json").read_text(encoding="utf-8")


def one_source(
    tool_name: str, call_id: str | None, arguments: Mapping[str, Any], output: Any
) -> list[Source]:
    return [Source(url=f"https://custom.example/{tool_name}", title=str(arguments.get("q")))]


@pytest.fixture
def registry() -> ExtractorRegistry:
    return ExtractorRegistry()


@pytest.fixture
def default_registration() -> Iterator[str]:
    pattern = "^company_search$"
    yield pattern
    unregister(pattern)


def test_registered_extractor_gets_decoded_output_and_arguments(
    registry: ExtractorRegistry,
) -> None:
    seen: list[tuple[str, str | None, dict[str, Any], Any]] = []

    def spy(tool: str, call_id: str | None, arguments: Mapping[str, Any], output: Any) -> list[Any]:
        seen.append((tool, call_id, dict(arguments), output))
        return [{"url": "https://a.example/x", "title": "From a dict"}]

    registry.register("^spy$", spy)
    [source] = registry.extract("spy", '{"hits": [1, 2]}', call_id="c9", arguments='{"q": "x"}')
    assert seen == [("spy", "c9", {"q": "x"}, {"hits": [1, 2]})]
    assert source.title == "From a dict"
    # An extractor that leaves origin unset gets the call's origin.
    assert source.origin == SourceOrigin(tool="spy", call_id="c9")


def test_later_registrations_win(registry: ExtractorRegistry) -> None:
    registry.register("search", lambda *_: [Source(url="https://first.example/")])
    registry.register("company_search", lambda *_: [Source(url="https://second.example/")])
    assert [s.url for s in registry.extract("company_search", "x")] == ["https://second.example/"]
    assert [s.url for s in registry.extract("web_search", "x")] == ["https://first.example/"]


def test_patterns_are_case_insensitive_and_compiled_patterns_are_kept(
    registry: ExtractorRegistry,
) -> None:
    registry.register("^inventory$", one_source)
    assert registry.extractor_for("Inventory") is one_source
    registry.register(re.compile("^Exact$"), EXTRACTORS["auto"])
    assert registry.extractor_for("exact") is not EXTRACTORS["auto"]
    assert registry.extractor_for("Exact") is EXTRACTORS["auto"]


def test_unregister(registry: ExtractorRegistry) -> None:
    registry.register("^mine$", one_source)
    assert registry.unregister("^mine$") is True
    assert registry.unregister("^mine$") is False
    assert registry.extractor_for("mine") is None


def test_a_name_asked_before_a_registration_gets_the_new_extractor(
    registry: ExtractorRegistry,
) -> None:
    before = registry.extractor_for("mine")
    registry.register("^mine$", one_source)
    assert registry.extractor_for("mine") is one_source
    registry.unregister("^mine$")
    assert registry.extractor_for("mine") is before


def test_default_names_pick_their_extractor(registry: ExtractorRegistry) -> None:
    expected = {
        "tavily_search_results_json": "tavily",
        "google_serper": "serper",
        "brave_web_search": "brave",
        "mcp__exa__web_search_exa": "exa",
        "searx_search": "searxng",
        "bing_search": "bing",
        "duckduckgo_results_json": "duckduckgo",
        "wikipedia": "wikipedia",
        "fetch_url": "fetch",
        "requests_get": "http",
        "http_client": "http",
        "retrieve_documents": "documents",
        "mcp__github__get_issue": "mcp",
        "mcp.github__get_issue": "mcp",
        "MCP__notes__read": "mcp",
    }
    assert {tool: registry.extractor_for(tool) for tool in expected} == {
        tool: EXTRACTORS[name] for tool, name in expected.items()
    }
    assert registry.extractor_for("example_tool") is None  # "exa" only as a word
    assert registry.extractor_for("mcp_tool") is None  # MCP names are mcp.<server>__<tool>
    assert ExtractorRegistry(defaults=False).extractor_for("tavily_search") is None


def test_http_and_mcp_extractors_give_api_and_mcp_sources(registry: ExtractorRegistry) -> None:
    record = {"city": "Zürich", "temp_c": 17.5}
    [api] = EXTRACTORS["http"]("my_client", "c1", {}, record)
    [mcp] = EXTRACTORS["mcp"]("github_get_issue", "c1", {}, record)
    [tool] = EXTRACTORS["auto"]("my_client", "c1", {}, record)
    assert (api.kind, mcp.kind, tool.kind) == ("api", "mcp", "tool")
    # Registered under the caller's own names, they tag what they read the same way.
    registry.register("^github_", EXTRACTORS["mcp"])
    registry.register("^weather_api$", EXTRACTORS["http"])
    assert [s.kind for s in registry.extract("github_get_issue", record)] == ["mcp"]
    assert [s.kind for s in registry.extract("weather_api", record)] == ["api"]
    # An MCP tool's result stays an MCP one even when an HTTP-looking name is in it.
    assert [s.kind for s in registry.extract("mcp__web__http_get", record)] == ["mcp"]
    # Search results stay web pages whichever of them reads them.
    for name in ("http", "mcp"):
        found = EXTRACTORS[name]("t", None, {}, SEARCH)
        assert len(found) == 3
        assert {s.kind for s in found} == {"web"}


def test_builtin_extractors_are_callable_with_the_public_signature() -> None:
    found = EXTRACTORS["tavily"]("my_search", "c1", {}, SEARCH)
    assert len(found) == 3
    assert found[0].origin == SourceOrigin(tool="my_search", call_id="c1")


def test_module_level_register(default_registration: str) -> None:
    register(default_registration, EXTRACTORS["tavily"])
    assert len(from_tool_output("company_search", SEARCH)) == 3
    register(default_registration, one_source)
    [source] = from_tool_output("company_search", SEARCH, arguments={"q": "acme"})
    assert (source.url, source.title) == ("https://custom.example/company_search", "acme")


def test_failing_extractor_falls_back_to_sniffing(registry: ExtractorRegistry) -> None:
    def broken(*_: Any) -> list[Source]:
        raise KeyError("results")

    registry.register("^tavily$", broken)
    notes: list[str] = []
    found = registry.extract("tavily", SEARCH, diagnostics=notes)
    assert len(found) == 3
    assert any("broken" in note and "KeyError" in note for note in notes)


def test_invalid_items_from_an_extractor_are_dropped_with_a_diagnostic(
    registry: ExtractorRegistry,
) -> None:
    registry.register("^bad$", lambda *_: [{"url": "https://ok.example/"}, {"rank": "first"}])
    notes: list[str] = []
    found = registry.extract("bad", "x", diagnostics=notes)
    assert [s.url for s in found] == ["https://ok.example/"]
    assert len(notes) == 1
    assert "invalid source" in notes[0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.register("(", one_source), "invalid tool-name pattern"),
        (lambda r: r.register("", one_source), "non-empty"),
        (lambda r: r.register("x", "not callable"), "callable"),
        (lambda r: r.extract("", "x"), "tool_name"),
        (lambda r: r.extract("t", "x", call_id=3), "call_id"),
        (lambda r: r.extract("t", "x", arguments=42), "arguments"),
        (lambda r: r.extract("t", "x", diagnostics="no"), "diagnostics"),
    ],
)
def test_caller_mistakes_raise_usage_error(
    registry: ExtractorRegistry, call: Any, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        call(registry)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Error: 429 Too Many Requests", "failed"),
        ("Traceback (most recent call last):\n  File ...", "failed"),
        ("HTTPError 500 from upstream", "failed"),
        ({"error": "rate limited"}, "rate limited"),
        ({"isError": True, "content": [{"type": "text", "text": "boom"}]}, "boom"),
        ({"success": False, "error": "timeout"}, "timeout"),
        ("No good Wikipedia Search Result was found", "no results"),
        ("No results found.", "no results"),
        ("", "empty"),
        ("   \n", "empty"),
        ({}, "empty"),
        ([], "empty"),
        (b"\xff\xfe\x00", "UTF-8"),
        (object(), "cannot read"),
    ],
)
def test_errors_and_garbage_give_no_sources_and_a_diagnostic(output: Any, expected: str) -> None:
    notes: list[str] = []
    assert from_tool_output("tool", output, diagnostics=notes) == []
    assert len(notes) == 1
    assert expected.lower() in notes[0].lower()
    assert notes[0].startswith("tool: ")


def test_truncated_json_is_read_as_text() -> None:
    [source] = from_tool_output("tavily_search", SEARCH[:200])
    assert (source.kind, source.title, source.content) == ("tool", "tavily_search", SEARCH[:200])


def test_raw_tool_output_is_one_tool_source() -> None:
    [text] = from_tool_output("calculator", "42", call_id="c")
    assert (text.kind, text.title, text.content, text.url) == ("tool", "calculator", "42", None)
    [number] = from_tool_output("calculator", 42)
    assert number.content == "42"
    [record] = from_tool_output("get_weather", {"city": "Zürich", "temp_c": 17.5})
    assert record.kind == "tool"
    assert record.content is not None
    assert json.loads(record.content) == {
        "city": "Zürich",
        "temp_c": 17.5,
    }
    # The same output of the same tool is the same source (a stable content id).
    assert from_tool_output("calculator", "42") == from_tool_output("calculator", "42")


def test_objects_with_model_dump_and_dataclasses() -> None:
    from dataclasses import dataclass

    @dataclass
    class Hit:
        url: str
        title: str
        snippet: str

    @dataclass
    class Page:
        results: list[Hit]

    class Dumpable:
        def model_dump(self, **_: Any) -> dict[str, Any]:
            return json.loads(SEARCH)

    assert len(from_tool_output("search", Dumpable())) == 3
    [hit] = from_tool_output("search", Page([Hit("https://a.example/", "A", "preview")]))
    assert (hit.url, hit.title, hit.snippet, hit.kind) == (
        "https://a.example/",
        "A",
        "preview",
        "web",
    )


def test_a_model_dump_that_raises_is_a_diagnostic() -> None:
    class Broken:
        def model_dump(self, **_: Any) -> dict[str, Any]:
            raise RuntimeError("detached")

    notes: list[str] = []
    assert from_tool_output("search", Broken(), diagnostics=notes) == []
    assert any("detached" in note for note in notes)


def test_list_of_urls_and_generic_results() -> None:
    urls = ["https://a.example/1", "https://b.example/2"]
    assert [s.url for s in from_tool_output("links", urls)] == urls
    generic = {
        "hits": [{"link": "https://c.example/", "name": "C", "description": "<b>bold</b> text"}]
    }
    [hit] = from_tool_output("custom", {"results": generic["hits"]})
    assert (hit.url, hit.title, hit.snippet) == ("https://c.example/", "C", "bold text")


def test_deeply_nested_output_is_bounded() -> None:
    nested: Any = "Error: deep"
    for _ in range(10):
        nested = {"type": "function_call_output", "call_id": "c", "output": json.dumps(nested)}
    # Envelopes are opened a few levels deep; what is left is kept as raw tool output.
    [source] = from_tool_output("t", nested)
    assert source.kind == "tool"
    assert source.content is not None
    assert "Error: deep" in source.content


def test_ledger_add_tool_output_collects_diagnostics() -> None:
    ledger = SourceLedger()
    ids = ledger.add_tool_output("tavily_search", SEARCH, call_id="c1")
    assert ids == [s.id for s in ledger.sources]
    assert ledger.add_tool_output("tavily_search", '{"detail": "Forbidden"}') == []
    assert ledger.diagnostics == ["tavily_search: the tool failed: Forbidden"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "url",
                    "link",
                    "title",
                    "content",
                    "snippet",
                    "results",
                    "organic",
                    "items",
                    "data",
                    "page_content",
                    "metadata",
                    "node",
                    "text",
                    "type",
                    "content_urls",
                    "query",
                    "status",
                    "error",
                    "isError",
                    "web",
                    "webPages",
                    "value",
                    "citations",
                    "position",
                    "score",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=json_values, tool=st.sampled_from(["tavily", "serper", "wiki", "fetch", "x"]))
def test_any_json_never_raises(output: Any, tool: str) -> None:
    notes: list[str] = []
    for value in (output, json.dumps(output)):
        found = from_tool_output(tool, value, diagnostics=notes)
        assert all(isinstance(s, Source) and s.origin is not None for s in found)


@settings(max_examples=150, deadline=None)
@given(output=st.text(max_size=300))
def test_any_text_never_raises(output: str) -> None:
    for tool in ("duckduckgo_search", "wikipedia", "research", "fetch"):
        found = from_tool_output(tool, output, arguments={"url": "https://a.example/"})
        assert all(isinstance(s, Source) for s in found)


class _Unprintable:
    """An object whose str() and repr() raise, as some SDK objects do when half-built."""

    def __str__(self) -> str:
        raise ValueError("cannot print")

    __repr__ = __str__


@pytest.mark.parametrize(
    "output",
    [
        {"results": [{"url": "https://a.example/x", "title": "A", "extra": _Unprintable()}]},
        [_Unprintable(), {"url": "https://a.example/x", "title": "A"}],
        {"weird": _Unprintable()},
        _Unprintable(),
    ],
)
def test_output_holding_unprintable_objects_never_raises(output: object) -> None:
    notes: list[str] = []
    sources = from_tool_output("lookup", output, diagnostics=notes)
    for source in sources:
        assert "cannot be shown" in (source.content or "") or source.url == "https://a.example/x"
    assert sources or notes
    assert not any("internal error" in note for note in notes)


def test_an_extractor_whose_error_cannot_be_printed_falls_back_to_the_shape() -> None:
    registry = ExtractorRegistry()

    def broken(tool: str, call_id: str | None, arguments: object, data: object) -> list[Source]:
        raise _UnprintableError

    registry.register("lookup", broken)
    notes: list[str] = []
    sources = registry.extract(
        "lookup", {"results": [{"url": "https://a.example/x", "title": "A"}]}, diagnostics=notes
    )
    assert [s.url for s in sources] == ["https://a.example/x"]
    assert len(notes) == 1
    assert "_UnprintableError" in notes[0]
    assert "cannot be shown" in notes[0]


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("cannot print")
