"""Cohere v2 chat reader: citations with character offsets, document and tool sources.

Its SDK is not a dependency: the cases are JSON fixtures under ``tests/data/providers``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from providers._fixtures import load_json
from providers.contract import ProviderContract

from unicite import GroundingRequiredError
from unicite.model import PageLocation
from unicite.providers import StreamCollector, collect_stream, detect_provider, extract
from unicite.providers.cohere import COHERE


def fixture(name: str) -> Any:
    return load_json(f"providers/{name}.json")


class TestCohereContract(ProviderContract):
    provider = "cohere"
    noisy_cases = frozenset({"misplaced-citation"})

    def final_cases(self) -> dict[str, Any]:
        noisy = fixture("cohere_chat_v2_rag")
        noisy["message"]["citations"][2]["start"] += 2
        noisy["message"]["citations"][2]["end"] += 2
        return {"rag": fixture("cohere_chat_v2_rag"), "misplaced-citation": noisy}

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {"rag": (fixture("cohere_chat_v2_rag_stream"), fixture("cohere_chat_v2_rag"))}


def chat(text: str, *citations: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "co-1",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "citations": list(citations),
        },
        "finish_reason": "COMPLETE",
    }


def document(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "document",
        "id": f"doc:{n}",
        "document": {"id": f"doc:{n}", "text": "source text", **fields},
    }


def test_offsets_index_the_text_in_code_points() -> None:
    answer = extract(fixture("cohere_chat_v2_rag"), strict=True)
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (14, 34, "culmine à 4 805,59 m"),
        (44, 61, "mesure de 2023 🏔️"),
        (63, 81, "富士山の標高は3,776メートルです"),
        (101, 148, "first climbed in 1865 by Edward Whymper's party"),
    ]
    assert answer.extras == {
        "response_id": "5d2b7c1e-8f3a-4c6d-9e0b-1a2f3e4d5c6b",
        "finish_reason": "COMPLETE",
    }


def test_document_and_tool_sources() -> None:
    data = fixture("cohere_chat_v2_rag")
    answer = extract(data)
    mont_blanc, fuji, matterhorn = answer.sources
    assert (mont_blanc.id, mont_blanc.kind, mont_blanc.url, mont_blanc.domain) == (
        "doc:0",
        "document",
        "https://alpes-info.example.fr/mont-blanc-2023",
        "example.fr",
    )
    assert mont_blanc.content is not None
    assert mont_blanc.content.startswith("Mesure 2023")
    assert mont_blanc.extras == {"date": "2023-10-05"}
    assert (fuji.title, fuji.url, fuji.extras) == ("富士山", None, {})
    assert (matterhorn.kind, matterhorn.title, matterhorn.url) == (
        "tool",
        "Matterhorn first ascent",
        "https://peaks.example.com/matterhorn/history",
    )
    assert matterhorn.extras == {
        "tool_output": data["message"]["citations"][3]["sources"][0]["tool_output"]
    }
    assert [c.source_ids for c in answer.citations] == [
        ["doc:0"],
        ["doc:0"],
        ["doc:1"],
        [matterhorn.id],
    ]


def test_a_citation_whose_text_does_not_match_its_offsets_is_moved() -> None:
    text = "Paris est la capitale de la France. Lyon est célèbre pour sa cuisine."
    cited = {
        "start": 40,
        "end": 60,
        "text": "célèbre pour sa cuisine",
        "sources": [document(0)],
        "type": "TEXT_CONTENT",
    }
    answer = extract(chat(text, cited))
    [citation] = answer.citations
    assert citation.text == "célèbre pour sa cuisine"
    assert answer.diagnostics == [
        "response.message.citations[0]: text 'célèbre pour sa cuisine' does not match "
        "text[40:60]; moved to 45..68"
    ]
    missing = {**cited, "text": "Marseille"}
    answer = extract(chat(text, missing))
    assert answer.citations == []
    assert answer.diagnostics[0].endswith("and is not in the answer; dropped")


def test_plan_citations_and_unknown_types() -> None:
    plan = {"start": 0, "end": 4, "text": "I will", "sources": [document(0)], "type": "PLAN"}
    odd = {"start": 0, "end": 4, "text": "Oui.", "sources": [document(0)], "type": "IMAGE_CONTENT"}
    odd_source = {
        "start": 0,
        "end": 4,
        "text": "Oui.",
        "sources": [{"type": "hologram", "id": "h"}],
    }
    data = chat("Oui.", plan, odd, odd_source)
    answer = extract(data)
    assert answer.citations == []
    assert answer.extras["plan_citations"] == [plan]
    assert [u["path"] for u in answer.extras["unknown"]] == [
        "response.message.citations[1]",
        "response.message.citations[2].sources[0]",
    ]
    assert answer.diagnostics[:2] == [
        "response.message.citations[1]: unknown citation type 'IMAGE_CONTENT'; "
        "kept in extras['unknown']",
        "response.message.citations[2].sources[0]: unknown source type 'hologram'; "
        "kept in extras['unknown']",
    ]


def test_detection_and_grounding() -> None:
    assert detect_provider(fixture("cohere_chat_v2_rag")) == "cohere"
    assert COHERE.detect_event({"type": "content-delta", "index": 0})
    assert not COHERE.detect_event({"type": "content_block_delta", "index": 0})
    with pytest.raises(GroundingRequiredError) as info:
        extract(chat("Bonjour."), require="citations")
    assert (info.value.provider, info.value.reason) == ("cohere", "no grounding")


def test_stream_citations_arrive_once_their_text_has() -> None:
    events = fixture("cohere_chat_v2_rag_stream")
    collector = StreamCollector()
    announced = []
    for event in events:
        got = collector.feed(event)
        if got:
            assert event["type"] in ("citation-start", "content-delta")
        announced.extend(item.citation for item in got)
    answer = collector.result()
    assert announced == answer.citations
    assert answer == extract(fixture("cohere_chat_v2_rag"))


def test_a_cohere_stream_without_message_end_says_so() -> None:
    events = fixture("cohere_chat_v2_rag_stream")
    answer = collect_stream(events[:-1])
    assert answer.diagnostics == ["stream ended before message-end"]
    assert len(answer.citations) == 4


def test_cohere_stream_citation_before_its_text_waits_for_it() -> None:
    events = copy.deepcopy(fixture("cohere_chat_v2_rag_stream"))
    starts = [n for n, e in enumerate(events) if e["type"] == "citation-start"]
    # Move the last citation right after the content start, before any text.
    moved = events.pop(starts[-1])
    events.insert(2, moved)
    collector = StreamCollector()
    announced_at = {}
    for n, event in enumerate(events):
        for item in collector.feed(event):
            announced_at[item.citation.start] = n
    assert announced_at[101] > 2
    assert collector.result() == extract(fixture("cohere_chat_v2_rag"))


def test_an_anthropic_message_start_event_is_not_a_cohere_response() -> None:
    event = {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        },
    }
    answer = extract(event)
    assert answer.provider == "anthropic"
    assert answer.diagnostics == ["stream ended before message_stop"]


# --- pages ----------------------------------------------------------------------------------


def cited(text: str, *sources: dict[str, Any]) -> dict[str, Any]:
    return {"start": 0, "end": len(text), "text": text, "sources": list(sources)}


@pytest.mark.parametrize(
    ("fields", "page"),
    [
        ({"page_number": 12}, 12),  # 1-based by name
        ({"page_number": "12"}, 12),  # document fields often arrive as text
        ({"page": 11, "page_label": "12"}, 12),  # LangChain PDF loader metadata: 0-based page
        ({"page": "11", "page_label": "xii"}, 12),
    ],
)
def test_a_document_with_a_page_is_cited_at_that_page(fields: dict[str, Any], page: int) -> None:
    text = "Revenue grew 14%."
    answer = extract(chat(text, cited(text, document(0, **fields))), strict=True)
    [source] = answer.sources
    assert source.extras["page_number"] == page
    [citation] = answer.citations
    assert citation.location == PageLocation(start_page=page, end_page=page + 1)


@pytest.mark.parametrize(
    "fields",
    [{}, {"page": 3}, {"page_number": 0}, {"page_number": "twelve"}, {"page_number": True}],
)
def test_no_page_location_without_an_unambiguous_page(fields: dict[str, Any]) -> None:
    # A lone "page" may count from 0 or from 1: it is kept as it is, and not guessed.
    text = "Revenue grew 14%."
    answer = extract(chat(text, cited(text, document(0, **fields))))
    [source] = answer.sources
    assert "page_number" not in source.extras or source.extras["page_number"] == fields.get(
        "page_number"
    )
    assert {k: source.extras[k] for k in fields} == fields
    assert answer.citations[0].location is None


def test_the_page_is_the_first_cited_documents() -> None:
    text = "Revenue grew 14%."
    tool = {"type": "tool", "id": "t:0", "tool_output": {"text": "14%", "page_number": 2}}
    first_tool = extract(chat(text, cited(text, tool, document(0, page_number=5))))
    assert first_tool.citations[0].location is None  # a tool's output is not a page of a file
    first_doc = extract(chat(text, cited(text, document(0, page_number=5), tool)))
    assert first_doc.citations[0].location == PageLocation(start_page=5, end_page=6)


def test_streamed_citations_carry_the_page() -> None:
    text = "Revenue grew 14%."
    citation = cited(text, document(0, page_number=7))
    events = [
        {"type": "message-start", "id": "co-1", "delta": {"message": {"role": "assistant"}}},
        {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text"}}}},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": text}}}},
        {"type": "citation-start", "index": 0, "delta": {"message": {"citations": citation}}},
        {"type": "citation-end", "index": 0},
        {"type": "content-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    ]
    collector = StreamCollector()
    announced = [item.citation for event in events for item in collector.feed(event)]
    page = PageLocation(start_page=7, end_page=8)
    assert [c.location for c in announced] == [page]
    assert collector.result().citations[0].location == page
