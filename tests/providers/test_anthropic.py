"""Anthropic Messages reader: the provider contract on our cassettes, and every citation quirk.

No SDK import here: the cases are the cassettes' JSON and SSE bodies, read as plain data.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from providers._fixtures import cassette_bodies, sse_events
from providers.contract import ProviderContract, check_invariants

from unicite import (
    BlockLocation,
    CharLocation,
    CitationError,
    GroundingRequiredError,
    PageLocation,
    SearchResultLocation,
    UrlLocation,
)
from unicite.providers import (
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)

CASSETTES = "providers/test_anthropic_sdk"
FINALS = [
    "test_plain_text_document_char_location",
    "test_pdf_document_page_location",
    "test_custom_content_document_block_location",
    "test_search_result_blocks_search_result_location",
    "test_web_search_server_tool",
    "test_async_client",
]
STREAMS = ["test_stream_raw_events", "test_messages_stream_helper", "test_async_client"]


def body(name: str, n: int = 0) -> Any:
    return cassette_bodies(f"{CASSETTES}/{name}.yaml")[n]


def stream(name: str) -> list[dict[str, Any]]:
    return sse_events(
        next(b for b in cassette_bodies(f"{CASSETTES}/{name}.yaml") if isinstance(b, str))
    )


def accumulate(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The `Message` raw events add up to, accumulated the way the SDK's `MessageStream` does."""
    message: dict[str, Any] = {}
    buffers: dict[int, str] = {}
    for event in events:
        kind = event["type"]
        if kind == "message_start":
            message = copy.deepcopy(event["message"])
        elif kind == "content_block_start":
            message["content"].append(copy.deepcopy(event["content_block"]))
        elif kind == "content_block_delta":
            index, delta = event["index"], event["delta"]
            block = message["content"][index]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
            elif delta["type"] == "input_json_delta":
                buffers[index] = buffers.get(index, "") + delta["partial_json"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
        elif kind == "content_block_stop" and event["index"] in buffers:
            message["content"][event["index"]]["input"] = json.loads(buffers[event["index"]])
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"].update(event["usage"])
    return message


class TestAnthropicContract(ProviderContract):
    provider = "anthropic"
    noisy_cases = frozenset({"unknown-block-and-citation"})

    def final_cases(self) -> dict[str, Any]:
        cases = {name: body(name) for name in FINALS}
        noisy = copy.deepcopy(body("test_plain_text_document_char_location"))
        noisy["content"].append({"type": "hologram", "frames": 3})
        noisy["content"][1]["citations"].append({"type": "smell_location", "cited_text": "café"})
        cases["unknown-block-and-citation"] = noisy
        return cases

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        cases = {}
        for name in STREAMS:
            events = stream(name)
            cases[name] = (events, accumulate(events))
        return cases


# --- final responses ------------------------------------------------------------------------


def message(*content: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": list(content),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        **fields,
    }


def text(value: str, *citations: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if citations:
        block["citations"] = list(citations)
    return block


def char_citation(start: int, end: int, quote: str = "quoted", **extra: Any) -> dict[str, Any]:
    return {
        "type": "char_location",
        "cited_text": quote,
        "document_index": 0,
        "document_title": "notes.txt",
        "start_char_index": start,
        "end_char_index": end,
        **extra,
    }


def web_citation(url: str, quote: str = "quoted") -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "cited_text": quote,
        "url": url,
        "title": "A page",
        "encrypted_index": "Eo8BCioIBxgC",
    }


def test_spans_index_the_text_blocks_joined_without_separator() -> None:
    data = body("test_plain_text_document_char_location")
    answer = extract(data)
    blocks = [b["text"] for b in data["content"]]
    assert answer.text == "".join(blocks)
    expected = []
    for n, block in enumerate(data["content"]):
        start = len("".join(blocks[:n])) + len(block["text"]) - len(block["text"].lstrip())
        span = (start, start + len(block["text"].strip()))
        expected.extend([span] * len(block.get("citations", [])))
    assert [(c.start, c.end) for c in answer.citations] == expected
    # Each emoji is one str index but two UTF-16 code units: JavaScript spans differ.
    last = answer.citations[-1]
    assert last.text == "Le café est fermé le dimanche 😴"
    assert (last.start, last.end) == (245, 276)
    assert answer.utf16_span(last) == (246, 278)


def test_every_citation_type_has_its_location() -> None:
    locations = {name: [c.location for c in extract(body(name)).citations] for name in FINALS[:5]}
    assert locations["test_plain_text_document_char_location"][0] == CharLocation(
        start=0, end=53, document_index=0
    )
    assert locations["test_pdf_document_page_location"][1] == PageLocation(
        start_page=3, end_page=5, document_index=0
    )
    assert locations["test_custom_content_document_block_location"][0] == BlockLocation(
        start_block=0, end_block=2, document_index=0
    )
    assert locations["test_search_result_blocks_search_result_location"][2] == SearchResultLocation(
        search_result_index=1, start_block=0, end_block=1
    )
    assert locations["test_web_search_server_tool"][2] == UrlLocation(
        url="https://kansai-now.example.com/news/2025/04/maruyama-park-full-bloom"
    )


def test_quotes_are_kept_verbatim_but_web_search_entities_are_decoded() -> None:
    data = body("test_web_search_server_tool")
    answer = extract(data)
    quotes = [c.quote or "" for c in answer.citations]
    # Web search quotes arrive HTML-escaped: decoded once; `raw` keeps what was sent.
    assert "Kyoto's official" in quotes[0]
    assert "&#x27;" not in quotes[0]
    assert "Kyoto&#x27;s official" in answer.citations[0].raw["cited_text"]
    assert quotes[0].endswith("...")
    assert extract(body("test_pdf_document_page_location")).citations[1].quote == (
        "Émissions de CO₂ (scopes 1 et 2) : \u22128 % sur les sites de Lyon, Lille et Nantes.\r\n"
    )


def test_web_search_results_are_ranked_sources_with_their_extras() -> None:
    data = body("test_web_search_server_tool")
    answer = extract(data)
    results = data["content"][2]["content"]
    by_url = {s.url: s for s in answer.sources}
    for rank, result in enumerate(results):
        source = by_url[result["url"]]
        assert (source.kind, source.title, source.rank) == ("web", result["title"], rank)
        assert source.extras["encrypted_content"] == result["encrypted_content"]
        assert source.extras.get("page_age") == result["page_age"]
        assert source.raw == result
    assert answer.extras == {
        "message_id": data["id"],
        "stop_reason": "end_turn",
        "grounded_effective": True,
        "tool_calls": 1,
        "search_queries": ["Kyoto cherry blossom full bloom date 2025"],
    }
    first = answer.citations[0]
    assert first.extras == {"encrypted_index": first.raw["encrypted_index"]}


def test_documents_and_search_results_become_sources() -> None:
    answer = extract(body("test_custom_content_document_block_location"))
    [document] = answer.sources
    assert (document.id, document.kind, document.provider_id, document.title) == (
        "document:0",
        "document",
        "document:0",
        "Conditions de garantie — Vélo électrique Ébène",
    )
    garden = extract(body("test_search_result_blocks_search_result_location"))
    assert [(s.id, s.kind, s.url, s.rank) for s in garden.sources] == [
        (
            "search_result:0",
            "search_result",
            "https://jardin-facile.example.org/compost/demarrer",
            0,
        ),
        ("search_result:1", "search_result", None, 1),
    ]


def search_citation(index: int, source: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "cited_text": "Le compost mûrit en six mois.",
        "source": source,
        "title": "Compost",
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 0,
    }


def test_one_search_result_cited_with_two_sources_is_left_uncited() -> None:
    first = "https://jardin-facile.example.org/compost"
    other = "https://autre.example.net/compost"
    data = message(
        text("Le compost mûrit.", search_citation(0, first)),
        text(" Six mois.", search_citation(0, other)),
        text(" Deux tas.", search_citation(0, first)),
    )
    answer = extract(data)
    assert [s.url for s in answer.sources] == [first]
    assert [c.text for c in answer.citations] == ["Le compost mûrit.", "Deux tas."]
    assert answer.diagnostics == [
        f"message.content[1].citations[0]: search result 0 is cited as {other!r}, "
        f"earlier as {first!r}; left uncited"
    ]


def test_same_source_cited_from_several_blocks_is_one_source() -> None:
    data = message(
        text("Première affirmation", char_citation(0, 5)),
        text(" et "),
        text("seconde", char_citation(5, 9)),
        text(". "),
        text("Web one", web_citation("https://Example.com/page?utm_source=chat#top")),
        text(" / "),
        text("web two", web_citation("https://example.com/page")),
    )
    answer = extract(data, strict=True)
    assert answer.sources[0].id == "document:0"
    assert len(answer.sources) == 2
    assert [c.source_ids for c in answer.citations][:2] == [["document:0"], ["document:0"]]
    assert answer.citations[2].source_ids == answer.citations[3].source_ids


def test_several_citations_of_one_block_share_its_trimmed_span() -> None:
    data = message(
        text("Intro. "),
        text("  Né à Zürich 🇨🇭 en 1879.\n", char_citation(0, 4), char_citation(9, 12)),
    )
    answer = extract(data, strict=True)
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        # The flag is two code points (regional indicators).
        (9, 32, "Né à Zürich 🇨🇭 en 1879."),
        (9, 32, "Né à Zürich 🇨🇭 en 1879."),
    ]


def test_a_whitespace_only_cited_block_keeps_its_whole_range() -> None:
    answer = extract(message(text("Yes."), text("  ", char_citation(0, 1))), strict=True)
    assert [(c.start, c.end) for c in answer.citations] == [(4, 6)]


def test_file_ids_and_unknown_citation_fields_go_to_extras() -> None:
    cited = char_citation(0, 3, file_id="file_011CNha8iCJcU1wXNR6q4V8w", confidence_hint="high")
    answer = extract(message(text("abc", cited)), strict=True)
    [citation] = answer.citations
    assert citation.extras == {
        "file_id": "file_011CNha8iCJcU1wXNR6q4V8w",
        "confidence_hint": "high",
    }
    assert citation.raw == cited
    assert answer.sources[0].extras == {"file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}


def test_empty_cited_text_is_no_quote() -> None:
    answer = extract(message(text("abc", char_citation(0, 3, quote=""))), strict=True)
    assert answer.citations[0].quote is None


def test_a_backwards_location_is_dropped_but_the_citation_kept() -> None:
    answer = extract(message(text("abc", char_citation(9, 2))))
    [citation] = answer.citations
    assert citation.location is None
    assert answer.diagnostics == [
        "message.content[0].citations[0]: unusable location "
        "(Value error, char location start 9 > end 2)"
    ]


@pytest.mark.parametrize("index", ["²", "--3", "٣", "1" * 5000, "1_0"])
def test_an_index_that_only_looks_like_digits_is_diagnosed(index: str) -> None:
    # str.isdigit() holds for each; int() rejects each: the reader says so, not a crash.
    answer = extract(message(text("abc", char_citation(0, 3, document_index=index))))
    assert answer.text == "abc"
    assert answer.citations == []
    assert any("document_index" in line and "an integer" in line for line in answer.diagnostics)


def test_digit_strings_still_read_as_integers() -> None:
    answer = extract(message(text("abc", char_citation(" 0 ", "3"))))  # type: ignore[arg-type]
    [citation] = answer.citations
    assert (citation.start, citation.end) == (0, 3)


def test_a_citation_naming_no_document_is_dropped() -> None:
    cited = char_citation(0, 3)
    del cited["document_index"]
    answer = extract(message(text("abc", cited)))
    assert answer.citations == []
    assert answer.diagnostics == ["message.content[0].citations[0]: citation names no document"]


def test_unknown_block_and_citation_types_are_diagnosed_and_kept() -> None:
    hologram = {"type": "hologram", "frames": 3}
    odd = {"type": "smell_location", "cited_text": "café"}
    data = message(text("Bonjour", odd), hologram)
    answer = extract(data)
    assert answer.text == "Bonjour"
    assert answer.diagnostics == [
        "message.content[0].citations[0]: unknown citation type 'smell_location'; "
        "kept in extras['unknown']",
        "message.content[1]: unknown content block type 'hologram'; kept in extras['unknown']",
    ]
    assert answer.extras["unknown"] == [
        {"path": "message.content[0].citations[0]", "data": odd},
        {"path": "message.content[1]", "data": hologram},
    ]
    with pytest.raises(CitationError) as info:
        extract(data, strict=True)
    assert info.value.provider == "anthropic"
    assert len(info.value.diagnostics) == 2


def test_blocks_without_answer_text_and_empty_citation_lists_are_quiet() -> None:
    data = message(
        {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkgIAR"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Québec"}},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_02",
            "name": "code_execution",
            "input": {"code": "1+1"},
        },
        {
            "type": "code_execution_tool_result",
            "tool_use_id": "srvtoolu_02",
            "content": {
                "type": "code_execution_result",
                "stdout": "2",
                "stderr": "",
                "return_code": 0,
            },
        },
        {"type": "container_upload", "file_id": "file_03"},
        text("Il fait 3 °C."),
        {"type": "text", "text": " Bonne journée", "citations": []},
        {"type": "text", "text": " !", "citations": None},
    )
    answer = extract(data, strict=True)
    assert answer.text == "Il fait 3 °C. Bonne journée !"
    assert answer.citations == []
    assert answer.sources == []
    assert answer.extras == {
        "message_id": "msg_test",
        "stop_reason": "end_turn",
        "grounded_effective": False,
        "tool_calls": 1,  # the code execution
    }


def test_web_search_errors_are_data_and_the_answer_is_grounded() -> None:
    data = message(
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "météo Lyon"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        },
        text("Je n'ai pas pu chercher."),
    )
    answer = extract(data, strict=True)
    assert answer.diagnostics == []
    assert answer.extras["web_search_errors"] == [
        {"tool_use_id": "srvtoolu_1", "error_code": "max_uses_exceeded"}
    ]
    assert answer.extras["search_queries"] == ["météo Lyon"]
    with pytest.raises(GroundingRequiredError) as info:
        extract(data, require="citations")
    assert (info.value.provider, info.value.reason) == ("anthropic", "no citations")


def test_require_citations_on_an_ungrounded_answer() -> None:
    with pytest.raises(GroundingRequiredError) as info:
        extract(message(text("Hello.")), require="citations")
    assert (info.value.provider, info.value.reason) == ("anthropic", "no grounding")


def test_web_fetch_results_become_sources_with_their_text() -> None:
    fetched = {
        "type": "web_fetch_result",
        "url": "https://blog.example.net/ete-2025",
        "retrieved_at": "2025-07-01T08:30:00Z",
        "content": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "L'été 2025 fut chaud."},
            "title": "Bilan de l'été",
            "citations": {"enabled": True},
        },
    }
    data = message(
        {
            "type": "server_tool_use",
            "id": "srvtoolu_9",
            "name": "web_fetch",
            "input": {"url": fetched["url"]},
        },
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_9", "content": fetched},
        {
            "type": "web_fetch_tool_result",
            "tool_use_id": "srvtoolu_10",
            "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"},
        },
        text("L'été fut chaud."),
    )
    answer = extract(data, strict=True)
    [source] = answer.sources
    assert (source.url, source.title, source.content) == (
        fetched["url"],
        "Bilan de l'été",
        "L'été 2025 fut chaud.",
    )
    assert source.extras == {"retrieved_at": "2025-07-01T08:30:00Z"}
    assert answer.extras["web_fetch_errors"] == [
        {"tool_use_id": "srvtoolu_10", "error_code": "url_not_accessible"}
    ]


def test_detection() -> None:
    assert detect_provider(message(text("x"))) == "anthropic"
    assert detect_provider({**message(text("x")), "role": "user"}) is None
    openai_item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    assert detect_provider(openai_item) != "anthropic"


# --- streams --------------------------------------------------------------------------------


def events_for(*blocks: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    start = message()
    start.update(stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for n, (block, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": n, "content_block": block})
        events.extend({"type": "content_block_delta", "index": n, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": n})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        }
    )
    events.append({"type": "message_stop"})
    return events


def test_citations_delta_before_its_text_and_with_an_empty_quote() -> None:
    events = events_for(
        (
            {"type": "text", "text": "", "citations": []},
            [{"type": "text_delta", "text": "Voilà : "}],
        ),
        (
            {"type": "text", "text": "", "citations": []},
            [
                {"type": "citations_delta", "citation": char_citation(0, 12, quote="")},
                {"type": "text_delta", "text": "le résumé "},
                {"type": "text_delta", "text": "📄"},
            ],
        ),
    )
    collector = StreamCollector()
    announced = [item for event in events for item in collector.feed(event)]
    answer = collector.result()
    assert answer == extract(accumulate(events))
    assert answer.diagnostics == []
    [citation] = answer.citations
    assert (citation.start, citation.end, citation.text, citation.quote) == (
        8,
        19,
        "le résumé 📄",
        None,
    )
    assert [item.citation for item in announced] == [citation]
    assert [s.id for s in announced[0].sources] == ["document:0"]


def test_citation_events_come_at_block_stop_with_final_offsets() -> None:
    events = stream("test_stream_raw_events")
    collector = StreamCollector()
    announced_at = {}
    for n, event in enumerate(events):
        for item in collector.feed(event):
            announced_at.setdefault(n, []).append(item.citation)
    answer = collector.result()
    assert all(events[n]["type"] == "content_block_stop" for n in announced_at)
    assert [c for n in sorted(announced_at) for c in announced_at[n]] == answer.citations
    check_invariants(answer)


def test_sdk_helper_events_are_ignored() -> None:
    events = stream("test_messages_stream_helper")
    final = accumulate(events)
    noisy: list[dict[str, Any]] = []
    for event in events:
        noisy.append(event)
        delta = event.get("delta", {})
        if delta.get("type") == "text_delta":
            noisy.append({"type": "text", "text": delta["text"], "snapshot": "…"})
        elif delta.get("type") == "citations_delta":
            noisy.append(
                {"type": "citation", "citation": delta["citation"], "snapshot": [delta["citation"]]}
            )
        elif delta.get("type") == "thinking_delta":
            noisy.append({"type": "thinking", "thinking": delta["thinking"], "snapshot": "…"})
        elif delta.get("type") == "input_json_delta":
            noisy.append(
                {"type": "input_json", "partial_json": delta["partial_json"], "snapshot": {}}
            )
        elif delta.get("type") == "signature_delta":
            noisy.append({"type": "signature", "signature": delta["signature"]})
    # The helper's stop events also carry snapshots of the block and of the message.
    noisy = [
        {**e, "content_block": final["content"][e["index"]]}
        if e["type"] == "content_block_stop"
        else e
        for e in noisy
    ]
    noisy[-1] = {**noisy[-1], "message": final}
    answer = collect_stream(noisy)
    assert answer == collect_stream(events) == extract(final)
    assert answer.diagnostics == []
    assert answer.extras["search_queries"] == ["Kyoto cherry blossom full bloom date 2025"]


def test_an_sse_log_reads_like_its_events() -> None:
    log = next(
        b for b in cassette_bodies(f"{CASSETTES}/test_stream_raw_events.yaml") if isinstance(b, str)
    )
    assert extract(log) == collect_stream(log) == collect_stream(sse_events(log))


def test_a_stream_cut_short_keeps_its_text_and_says_so() -> None:
    events = stream("test_stream_raw_events")
    cut = next(
        n for n, e in enumerate(events) if e["type"] == "content_block_stop" and e["index"] == 3
    )
    answer = collect_stream(events[:cut])
    assert answer.diagnostics == ["stream ended before message_stop"]
    assert answer.text.endswith("la tarte Tatin aux pommes caramélisées 🍎")
    assert len(answer.citations) == 2


def test_stream_error_events_and_broken_tool_input_are_diagnosed() -> None:
    events = events_for(
        (
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            [{"type": "input_json_delta", "partial_json": '{"query": "Lyon'}],
        ),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "…"}]),
    )
    events.insert(
        -1, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    answer = collect_stream(events)
    assert answer.text == "…"
    assert answer.diagnostics == [
        "content block 0: tool input is not JSON "
        "(Unterminated string starting at: line 1 column 11 (char 10))",
        "stream error event: overloaded_error: Overloaded",
    ]


def test_unknown_stream_events_and_deltas_are_diagnosed() -> None:
    events = events_for(
        (
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": "ok"}, {"type": "hum_delta"}],
        )
    )
    events.insert(2, {"type": "message_hum"})
    answer = collect_stream(events)
    assert answer.text == "ok"
    assert answer.diagnostics == [
        "unknown stream event type 'message_hum'",
        "content_block_delta 0: unknown delta type 'hum_delta'",
    ]


# --- what frameworks keep of a response -------------------------------------------------------

QUOTE = "L’abbaye fut fondée en 966 à la demande du duc Richard Ier."
CLAIM = "l’abbaye fut fondée en 966"
CHAR_CITATION = {
    "type": "char_location",
    "cited_text": QUOTE,
    "document_index": 0,
    "document_title": "Histoire du Mont-Saint-Michel",
    "start_char_index": 0,
    "end_char_index": len(QUOTE),
}


def documented_message() -> dict[str, Any]:
    """A Message with a document citation, as the Messages API documents it."""
    return {
        "id": "msg_01Abc",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [
            {"type": "text", "text": "D’après le document, "},
            {"type": "text", "text": CLAIM, "citations": [CHAR_CITATION]},
            {"type": "text", "text": " ⛪."},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 410, "output_tokens": 31},
    }


def documented_stream() -> list[dict[str, Any]]:
    """The raw events of `documented_message`, as the streaming documentation lays them out."""
    final = documented_message()
    start = {
        **final,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 410, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for n, block in enumerate(final["content"]):
        opened = {"type": "text", "text": ""} | ({"citations": []} if "citations" in block else {})
        events.append({"type": "content_block_start", "index": n, "content_block": opened})
        for citation in block.get("citations", []):
            delta = {"type": "citations_delta", "citation": citation}
            events.append({"type": "content_block_delta", "index": n, "delta": delta})
        delta = {"type": "text_delta", "text": block["text"]}
        events.append({"type": "content_block_delta", "index": n, "delta": delta})
        events.append({"type": "content_block_stop", "index": n})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 31},
        }
    )
    events.append({"type": "message_stop"})
    return events


def test_the_documented_stream_equals_its_message() -> None:
    assert collect_stream(documented_stream()) == extract(documented_message())


def test_a_stream_without_its_starts_is_rebuilt_from_its_deltas() -> None:
    # LlamaIndex passes on block deltas, block stops and message deltas only.
    kept = [
        e
        for e in documented_stream()
        if e["type"] in ("content_block_delta", "content_block_stop", "message_delta")
    ]
    collector = StreamCollector()
    announced = [item.citation for event in kept for item in collector.feed(event)]
    answer = collector.result()
    expected = extract(documented_message())
    assert (answer.text, answer.citations, answer.sources) == (
        expected.text,
        expected.citations,
        expected.sources,
    )
    assert announced == expected.citations
    assert answer.citations[0].text == CLAIM
    # No message_start: no id.
    assert answer.extras == {"stop_reason": "end_turn", "grounded_effective": True, "tool_calls": 0}
    assert answer.diagnostics == []


def test_blocks_a_filtered_stream_cannot_rebuild_are_diagnosed() -> None:
    events = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "Mont"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "text_delta", "text": "Réponse."},
        },
        {"type": "content_block_stop", "index": 2},
    ]
    answer = collect_stream(events)
    assert answer.text == "Réponse."
    assert [d.split(":")[0] for d in answer.diagnostics] == [
        "content block 0",
        "stream ended before message_stop",
        "content_block_stop 1",
    ]


def test_content_blocks_read_like_the_message() -> None:
    # LangChain's Anthropic content: the message's blocks with an `index` from stream merging,
    # and a block a citations_delta chunk made without text.
    final = documented_message()
    blocks = [{**block, "index": n} for n, block in enumerate(final["content"])]
    blocks.insert(2, {"type": "text", "citations": [], "index": 1})
    fields = {"id": final["id"], "model": final["model"], "stop_reason": "end_turn", "usage": {}}
    answer = extract_content(blocks, "anthropic", fields=fields)
    assert answer == extract(final)
    assert extract_content(blocks, fields=fields) == answer  # detected by its citations
    assert extract_content("Bonjour 👋", "anthropic").text == "Bonjour 👋"


def test_v1_standard_blocks_read_like_the_message() -> None:
    final = documented_message()
    annotation = {
        "type": "citation",
        "title": CHAR_CITATION["document_title"],
        "cited_text": QUOTE,
        "extras": {
            k: CHAR_CITATION[k] for k in ("document_index", "start_char_index", "end_char_index")
        },
    }
    blocks = [
        {"type": "reasoning", "reasoning": "Lire le document."},
        {"type": "text", "text": "D’après le document, "},
        {"type": "text", "text": CLAIM, "annotations": [annotation]},
        {"type": "text", "text": " ⛪."},
    ]
    answer = extract_content(blocks, "anthropic", fields={"model": final["model"]})
    expected = extract(final)
    assert (answer.text, [(c.start, c.end, c.location) for c in answer.citations]) == (
        expected.text,
        [(c.start, c.end, c.location) for c in expected.citations],
    )
    assert answer.diagnostics == []


# --- web search quotes arrive HTML-escaped --------------------------------------------------

ESCAPED_QUOTE = (
    "Aujourd&#x27;hui à Montréal : « neige &amp; verglas », dit l&#39;&quot;avis&quot;..."
)
DECODED_QUOTE = "Aujourd'hui à Montréal : « neige & verglas », dit l'\"avis\"..."
# After one unescape this holds a literal "&amp;": it must stay so (never decoded twice).
LITERAL_QUOTE = "Écrire &amp;amp; en HTML donne « &amp; » à l&#x27;écran."
LITERAL_DECODED = "Écrire &amp; en HTML donne « & » à l'écran."
METEO = "https://météo.example.ca/montréal/aujourd-hui"


def meteo_citation(quote: str, url: str = METEO) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": "Météo de Montréal",
        "encrypted_index": "EpMBCioIAhgB",
        "cited_text": quote,
    }


def web_search_message(*quotes: str) -> dict[str, Any]:
    return message(
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01",
            "name": "web_search",
            "input": {"query": "météo Montréal aujourd'hui"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01",
            "content": [
                {
                    "type": "web_search_result",
                    "url": METEO,
                    "title": "Météo de Montréal",
                    "encrypted_content": "EqgfCioIAhgB",
                    "page_age": "2 heures",
                }
            ],
        },
        text("Selon le bulletin, "),
        text("il neige et il y a du verglas.", *(meteo_citation(q) for q in quotes)),
    )


def test_web_search_quotes_are_unescaped_exactly_once() -> None:
    data = web_search_message(ESCAPED_QUOTE, LITERAL_QUOTE)
    answer = extract(data, strict=True)
    assert [c.quote for c in answer.citations] == [DECODED_QUOTE, LITERAL_DECODED]
    # The untouched provider object keeps the escaped text, for forensics.
    assert [c.raw["cited_text"] for c in answer.citations] == [ESCAPED_QUOTE, LITERAL_QUOTE]
    # Reading the answer's JSON back decodes nothing more.
    again = type(answer).from_json(answer.to_json())
    assert [c.quote for c in again.citations] == [DECODED_QUOTE, LITERAL_DECODED]


def test_document_quotes_are_never_unescaped() -> None:
    quote = "Le tarif « A&amp;B » s&#x27;applique."
    answer = extract(message(text("Le tarif A&B.", char_citation(0, 20, quote=quote))))
    assert answer.citations[0].quote == quote


def test_a_streamed_web_search_quote_is_unescaped_once_like_the_message() -> None:
    data = web_search_message(ESCAPED_QUOTE, LITERAL_QUOTE)
    events = events_for(
        (data["content"][0], []),
        (data["content"][1], []),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Selon le bulletin, "}]),
        (
            {"type": "text", "text": "", "citations": []},
            [
                {"type": "citations_delta", "citation": meteo_citation(ESCAPED_QUOTE)},
                {"type": "citations_delta", "citation": meteo_citation(LITERAL_QUOTE)},
                {"type": "text_delta", "text": "il neige et il y a du verglas."},
            ],
        ),
    )
    collector = StreamCollector()
    announced = [item.citation for event in events for item in collector.feed(event)]
    answer = collector.result()
    assert [c.quote for c in announced] == [DECODED_QUOTE, LITERAL_DECODED]
    assert [c.quote for c in answer.citations] == [DECODED_QUOTE, LITERAL_DECODED]
    final = extract(data)
    assert (answer.text, answer.citations, answer.sources) == (
        final.text,
        final.citations,
        final.sources,
    )
    assert answer.extras["grounded_effective"] is True
    assert answer.extras["tool_calls"] == 1


def test_html_rendering_escapes_a_decoded_quote_once() -> None:
    from unicite import render

    answer = extract(web_search_message(ESCAPED_QUOTE))
    html = render(answer, "html")
    assert "neige &amp; verglas" in html
    assert "&amp;amp;" not in html
    assert "&amp;#x27;" not in html
    assert "&#x27;" not in render(answer, "markdown")


def test_grounded_effective_and_tool_calls() -> None:
    searched = extract(web_search_message())
    assert searched.citations == []
    assert (searched.extras["grounded_effective"], searched.extras["tool_calls"]) == (True, 1)

    fetched = extract(
        message(
            {
                "type": "server_tool_use",
                "id": "srvtoolu_02",
                "name": "web_fetch",
                "input": {"url": METEO},
            },
            {
                "type": "server_tool_use",
                "id": "srvtoolu_03",
                "name": "code_execution",
                "input": {"code": "print('é')"},
            },
            text("Page lue."),
        )
    )
    assert (fetched.extras["grounded_effective"], fetched.extras["tool_calls"]) == (True, 2)

    documents = extract(message(text("Le résumé.", char_citation(0, 9))))
    assert documents.citations
    assert (documents.extras["grounded_effective"], documents.extras["tool_calls"]) == (True, 0)

    plain = extract(message(text("Bonjour, ça va ?")))
    assert (plain.extras["grounded_effective"], plain.extras["tool_calls"]) == (False, 0)
    assert isinstance(plain.extras["grounded_effective"], bool)
