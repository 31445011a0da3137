"""Bedrock Converse reader: citationsContent blocks, Nova's citation-only blocks, the stream.

The cases are the responses and event streams of the boto3 cassettes (``test_bedrock_sdk``),
read here as plain data: stream events as boto3 yields them, ``{"<event type>": payload}``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from providers._fixtures import CASSETTES
from providers.contract import ProviderContract

from unicite import CharLocation, PageLocation, testing
from unicite.providers import (
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)
from unicite.providers.bedrock import BEDROCK_CONVERSE

yaml = pytest.importorskip("yaml")


def recorded(name: str) -> list[Any]:
    """A cassette's responses: parsed bodies, or event streams as boto3's event dicts."""
    path = CASSETTES / "providers" / "test_bedrock_sdk" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    bodies = []
    for item in data["interactions"]:
        response = item["response"]
        if "events" in response:
            bodies.append([{entry["event"]: entry["payload"]} for entry in response["events"]])
        else:
            bodies.append(response["parsed_body"])
    return bodies


def final(name: str, n: int = 0) -> Any:
    return copy.deepcopy(recorded(name)[n])


def stream(name: str, n: int = 0) -> list[Any]:
    events: list[Any] = copy.deepcopy(recorded(f"{name}_stream")[n])
    return events


class TestBedrockConverseContract(ProviderContract):
    provider = "bedrock"
    mutation_budget = 300

    def final_cases(self) -> dict[str, Any]:
        return {
            "claude-documents": final("test_claude_documents"),
            "nova-web-grounding": final("test_nova_web_grounding"),
            "tool-call": final("test_tool_round", 0),
            "search-results": final("test_tool_round", 1),
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {
            "claude-documents": (stream("test_claude_documents"), final("test_claude_documents")),
            "nova-web-grounding": (
                stream("test_nova_web_grounding"),
                final("test_nova_web_grounding"),
            ),
            "tool-call": (stream("test_tool_round", 0), final("test_tool_round", 0)),
            "search-results": (stream("test_tool_round", 1), final("test_tool_round", 1)),
        }


def converse(*blocks: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": list(blocks)}},
        "stopReason": stop,
    }


def web(url: str) -> dict[str, Any]:
    return {"location": {"web": {"url": url}}}


def test_detected_beside_the_other_providers() -> None:
    assert detect_provider(final("test_claude_documents")) == "bedrock"
    # OpenAI Responses also has an "output", a list of items.
    assert detect_provider({"object": "response", "output": []}) == "openai"
    assert extract({"output": {"message": {"content": "no list"}}}).provider is None


def test_citations_without_text_before_them_keep_their_sources() -> None:
    answer = extract(
        converse(
            {"citationsContent": {"citations": [web("https://zürich.example/météo")]}},
            {"text": "Il fait beau ☀️."},
        )
    )
    assert answer.text == "Il fait beau ☀️."
    assert answer.citations == []
    assert [s.url for s in answer.sources] == ["https://zürich.example/météo"]
    assert answer.diagnostics == [
        "response.output.message.content[0].citationsContent: citations without text and "
        "with no text block before them; their sources are kept, no text is cited"
    ]


def test_a_citation_only_block_after_a_tool_call_cites_nothing() -> None:
    tool = {"toolUse": {"toolUseId": "t1", "name": "météo", "input": {}}}
    answer = extract(
        converse(
            {"text": "Je cherche… "},
            tool,
            {"citationsContent": {"citations": [web("https://a.example/é")]}},
        )
    )
    assert answer.citations == []
    assert len(answer.diagnostics) == 1


def test_consecutive_citation_blocks_cite_the_same_text() -> None:
    answer = extract(
        converse(
            {"text": "  Grüezi 🇨🇭  "},
            {"citationsContent": {"citations": [web("https://a.example/1")]}},
            {"citationsContent": {"citations": [web("https://b.example/2")]}},
        )
    )
    # The block's surrounding spaces are not cited; the flag is two code points.
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (2, 11, "Grüezi 🇨🇭"),
        (2, 11, "Grüezi 🇨🇭"),
    ]
    assert answer.diagnostics == []


def test_an_unknown_location_is_kept_not_guessed() -> None:
    item = {"title": "x", "location": {"documentSection": {"documentIndex": 0}}}
    answer = extract(
        converse({"citationsContent": {"content": [{"text": "Été"}], "citations": [item]}})
    )
    assert answer.text == "Été"
    assert answer.citations == []
    assert answer.extras["unknown"] == [
        {"path": "response.output.message.content[0].citationsContent.citations[0]", "data": item}
    ]
    assert "unknown citation location 'documentSection'" in answer.diagnostics[0]


def test_a_search_result_cited_under_two_sources_is_left_uncited() -> None:
    def cite(source: str) -> dict[str, Any]:
        return {
            "source": source,
            "location": {"searchResultLocation": {"searchResultIndex": 0, "start": 0, "end": 1}},
        }

    answer = extract(
        converse(
            {"citationsContent": {"content": [{"text": "Un"}], "citations": [cite("kb://a")]}},
            {"citationsContent": {"content": [{"text": " deux"}], "citations": [cite("kb://b")]}},
        )
    )
    assert [c.text for c in answer.citations] == ["Un"]
    assert "search result 0 is cited as 'kb://b', earlier as 'kb://a'" in answer.diagnostics[0]


def test_document_locations_are_locations_in_the_document() -> None:
    def cite(kind: str) -> dict[str, Any]:
        return {"location": {kind: {"documentIndex": 2, "start": 1, "end": 4}}}

    answer = extract(
        converse(
            {
                "citationsContent": {
                    "content": [{"text": "Ça"}],
                    "citations": [cite("documentChar"), cite("documentPage")],
                }
            }
        ),
        strict=True,
    )
    assert [c.location for c in answer.citations] == [
        CharLocation(start=1, end=4, document_index=2),
        PageLocation(start_page=1, end_page=4, document_index=2),
    ]
    assert [s.id for s in answer.sources] == ["document:2"]


def test_a_stream_as_llamaindex_passes_it_on() -> None:
    # LlamaIndex yields only block starts, deltas and the metadata.
    events = [
        e
        for e in stream("test_claude_documents")
        if not {"messageStart", "contentBlockStop", "messageStop"} & set(e)
    ]
    whole = extract(final("test_claude_documents"))
    collector = StreamCollector()
    announced = [item for event in events for item in collector.feed(event)]
    answer = collector.result()
    assert announced == []  # no block closed: nothing is announced before the end
    assert (answer.text, answer.citations, answer.sources) == (
        whole.text,
        whole.citations,
        whole.sources,
    )
    assert answer.diagnostics == ["stream ended before messageStop"]


def test_stream_errors_and_bad_tool_input_are_said() -> None:
    events = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": "t", "name": "f"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"é": '}}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"throttlingException": {"message": "Trop de requêtes"}},
    ]
    answer = collect_stream(events)
    assert answer.provider == "bedrock"
    assert "stream error: throttlingException: Trop de requêtes" in answer.diagnostics
    assert any(d.startswith("content block 0: tool input is not JSON") for d in answer.diagnostics)
    assert "stream ended before messageStop" in answer.diagnostics


def test_langchain_aws_content_reads_like_the_response() -> None:
    # What langchain-aws keeps of a Converse message: snake_case keys, a text block per
    # citationsContent block with its citations, an index on streamed blocks.
    whole = extract(final("test_claude_documents"))
    response = final("test_claude_documents")
    blocks: list[Any] = []
    for n, block in enumerate(response["output"]["message"]["content"]):
        if "text" in block:
            blocks.append({"type": "text", "text": block["text"], "index": n})
            continue
        body = block["citationsContent"]
        [part] = body["content"]
        [citation] = body["citations"]
        [(kind, where)] = citation["location"].items()
        snake = {"documentChar": "document_char", "documentPage": "document_page"}[kind]
        blocks.append(
            {
                "type": "text",
                "text": part["text"],
                "citations": [
                    {
                        "title": citation["title"],
                        "source_content": citation["sourceContent"],
                        "location": {
                            snake: {
                                "document_index": where["documentIndex"],
                                "start": where["start"],
                                "end": where["end"],
                            }
                        },
                    }
                ],
                "index": n,
            }
        )
    # The LangChain adapter names the provider (langchain-aws says "bedrock_converse").
    answer = extract_content(blocks, "bedrock", fields={"stopReason": "end_turn"})
    assert answer.provider == "bedrock"
    assert BEDROCK_CONVERSE.detect_content(blocks, {})
    assert answer.citations == whole.citations
    assert answer.sources == whole.sources
    assert answer.text == whole.text
    assert answer.diagnostics == []


def test_converse_content_blocks_are_read_as_they_are() -> None:
    blocks = final("test_nova_web_grounding")["output"]["message"]["content"]
    answer = extract_content(blocks)
    assert answer.provider == "bedrock"
    assert answer.citations == extract(final("test_nova_web_grounding")).citations


def raw_body(name: str) -> bytes:
    """The binary event-stream body a streamed cassette replays."""
    path = CASSETTES / "providers" / "test_bedrock_sdk" / f"{name}.yaml"
    cassette = testing.deserialize(path.read_text(encoding="utf-8"))
    body: bytes = cassette["interactions"][0]["response"]["body"]["string"]
    return body


def test_a_raw_event_stream_body_reads_like_its_events() -> None:
    pytest.importorskip("vcr")
    body = raw_body("test_nova_web_grounding_stream")
    assert body[:4] != b"data"  # binary framing, not SSE
    whole = extract(final("test_nova_web_grounding"))
    assert collect_stream(body) == whole
    assert extract(body) == whole
    assert collect_stream(bytearray(body)) == whole


def test_a_corrupt_event_stream_body_stops_with_a_diagnostic() -> None:
    pytest.importorskip("vcr")
    body = raw_body("test_claude_documents_stream")
    flipped = bytearray(body)
    flipped[200] ^= 0xFF  # inside a message: its checksum no longer matches
    answer = collect_stream(bytes(flipped))
    assert any("checksum mismatch; stopped" in d for d in answer.diagnostics)
    # The last message (the metadata) cut short: what came before it is read.
    cut = collect_stream(body[: len(body) - 7])
    assert cut.diagnostics == ["event-stream message 21: cut short or corrupt; stopped"]
    assert cut.citations == extract(final("test_claude_documents")).citations


def test_shapes_seen_in_the_wild_read_with_a_diagnostic() -> None:
    # A block holding its text beside citationsContent, and citationsContent as a bare list
    # of citations: not the API's shapes, read for what they plainly say.
    answer = extract(
        converse(
            {"text": "Grüezi ", "citationsContent": {"citations": [web("https://a.example/ä")]}},
            {"text": "Zürich ☀️"},
            {"citationsContent": [web("https://b.example/ö")]},
        )
    )
    assert answer.text == "Grüezi Zürich ☀️"
    assert [(c.text, answer.source(c.source_ids[0]).url) for c in answer.citations] == [
        ("Grüezi", "https://a.example/ä"),
        ("Zürich ☀️", "https://b.example/ö"),
    ]
    assert answer.diagnostics == [
        "response.output.message.content[0]: text beside citationsContent; the text is what "
        "it cites",
        "response.output.message.content[2].citationsContent: a list, not the API's object; "
        "read as its citations",
    ]


def test_grounding_forensics_name_the_first_content_block(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("UNICITE_DEBUG_GROUNDING", "1")
    with caplog.at_level("INFO", logger="unicite.grounding"):
        extract(final("test_nova_web_grounding"))
    [record] = [r for r in caplog.records if r.name == "unicite.grounding"]
    facts = record.unicite_grounding  # type: ignore[attr-defined]
    assert (facts["first_output_item"], facts["tool_calls"], facts["citations"]) == (
        "toolUse",
        1,
        3,
    )


def payloads(name: str) -> list[Any]:
    """A streamed cassette's payloads as the wire frames them: no event type, padding kept."""
    path = CASSETTES / "providers" / "test_bedrock_sdk" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [entry["payload"] for entry in data["interactions"][0]["response"]["events"]]


def test_payloads_logged_without_their_event_type_read_like_the_stream() -> None:
    events = payloads("test_claude_documents_stream")
    assert events[0] == {"role": "assistant"}
    assert any("p" in event for event in events)  # the wire's padding field
    assert collect_stream(events) == extract(final("test_claude_documents"))
    collector = StreamCollector()
    announced = [item.citation for event in events for item in collector.feed(event)]
    assert announced == collector.result().citations
    # A payload alone says too little to be taken for a Bedrock event.
    assert detect_provider({"role": "assistant"}) is None
    assert extract({"stopReason": "end_turn"}).provider is None
