"""xAI (Grok): the Agent Tools API's Responses answers and Live Search chat completions.

The cases are the project's own cassettes of ``tests/providers/test_xai_sdk.py`` (written from
xAI's documented format: ``url_citation`` annotations titled with the marker number around
``[[n]](url)`` links, a top-level ``citations`` list, ``web_search_call`` / ``x_search_call``
items with JSON ``arguments``; on Chat Completions the links and ``citations`` alone, the
``citations`` of a stream in its last chunk), and the older fixture
``tests/data/providers/xai_responses_web_search.json``.
"""

from __future__ import annotations

import copy
from typing import Any

from providers._fixtures import cassette_bodies, load_json, sse_events
from providers.contract import ProviderContract, assert_same_answer, check_invariants

from unicite.providers import StreamCollector, collect_stream, detect_provider, extract

SDK = "providers/test_xai_sdk"


def responses_final() -> dict[str, Any]:
    [body] = cassette_bodies(f"{SDK}/test_responses_agent_tools.yaml")
    return dict(body)


def responses_stream() -> tuple[list[Any], dict[str, Any]]:
    [body] = cassette_bodies(f"{SDK}/test_responses_agent_tools_stream.yaml")
    events = sse_events(body)
    return events, events[-1]["response"]


def chat_final() -> dict[str, Any]:
    [body] = cassette_bodies(f"{SDK}/test_chat_live_search.yaml")
    return dict(body)


def chat_stream() -> tuple[list[Any], dict[str, Any]]:
    """The chunks, and the completion they add up to (its ``citations`` from the last chunk)."""
    [body] = cassette_bodies(f"{SDK}/test_chat_live_search_stream.yaml")
    chunks = sse_events(body)
    last = chunks[-1]
    final = {
        "id": last["id"],
        "object": "chat.completion",
        "created": last["created"],
        "model": last["model"],
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "".join(c["choices"][0]["delta"]["content"] for c in chunks),
                },
                "finish_reason": "stop",
            }
        ],
        "usage": last["usage"],
        "citations": last["citations"],
    }
    return chunks, final


class TestXAIContract(ProviderContract):
    provider = "xai"

    def final_cases(self) -> dict[str, Any]:
        return {
            "responses-agent-tools": responses_final(),
            "responses-stream-final": responses_stream()[1],
            "responses-web-search": load_json("providers/xai_responses_web_search.json"),
            "chat-live-search": chat_final(),
            "chat-stream-final": chat_stream()[1],
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {"responses-agent-tools": responses_stream(), "chat-live-search": chat_stream()}


def test_agent_tools_links_cite_the_claims_they_close() -> None:
    data = responses_final()
    answer = extract(data, strict=True)
    check_invariants(answer)
    assert answer.provider == "xai"
    wiki, post, status, counts, lemonde = data["citations"]
    assert [
        (
            c.text,
            answer.text[c.marker_span[0] : c.marker_span[1]],
            answer.source(c.source_ids[0]).url,
        )
        for c in answer.citations
        if c.marker_span
    ] == [
        ("La tour Eiffel mesure aujourd’hui 330 mètres, antenne comprise", f"[[1]]({wiki})", wiki),
        ("Sur X, la Société d’exploitation a fêté ses 136 ans 🎉", f"[[2]]({post})", post),
        ("Sur X, la Société d’exploitation a fêté ses 136 ans 🎉", f"[[3]]({status})", status),
        (
            "Elle reste le monument payant le plus visité au monde, avec près de 6,3 millions "
            "de visiteurs en 2024",
            f"[[4]]({counts})",
            counts,
        ),
    ]
    assert [c.extras for c in answer.citations] == [{"marker_number": n} for n in (1, 2, 3, 4)]
    # Every URL the search met is a source; the one no link cites comes last.
    assert [s.url for s in answer.sources] == data["citations"]
    assert answer.sources[-1].url == lemonde
    assert [s.extras.get("x_post_id") for s in answer.sources] == [
        None,
        "1909876543210987654",
        "1909912345678901234",
        None,
        None,
    ]
    assert answer.extras["tool_calls"] == 2
    assert answer.extras["web_search_queries"] == ["hauteur tour Eiffel antenne 2022"]
    assert answer.extras["x_search_queries"] == ["tour Eiffel 136 ans"]
    assert answer.extras["grounded_effective"] is True


def test_live_search_links_are_the_citations_and_adjacent_links_one_marker() -> None:
    data = chat_final()
    answer = extract(data, strict=True)
    check_invariants(answer)
    wiki, news, post, guide = data["citations"]
    assert [
        (c.text, [answer.source(s).url for s in c.source_ids], c.extras) for c in answer.citations
    ] == [
        (
            "京都の清水寺は778年に創建されたと伝えられています",
            [wiki],
            {"marker_number": 1, "recovered_from": "inline_link"},
        ),
        (
            "本堂の「清水の舞台」は2020年に檜皮葺の屋根の葺き替えを終えました",
            [news, post],
            {"marker_number": 2, "recovered_from": "inline_link"},
        ),
    ]
    second = answer.citations[1]
    assert second.marker_span is not None
    assert answer.text[second.marker_span[0] : second.marker_span[1]] == (
        f"[[2]]({news})[[3]]({post})"
    )
    # The sentence no link closes stays uncited; the page no link names stays a source.
    assert "拝観料は大人500円です。" not in "".join(c.text for c in answer.citations)
    assert answer.sources[-1].url == guide
    assert answer.extras["grounded_effective"] is True
    assert "tool_calls" not in answer.extras


def test_chat_stream_citations_come_in_the_last_chunk_and_are_announced_there() -> None:
    chunks, final = chat_stream()
    assert all("citations" not in chunk for chunk in chunks[:-1])
    collector = StreamCollector(strict=True)
    announced = {n: collector.feed(chunk) for n, chunk in enumerate(chunks)}
    answer = collector.result()
    assert [n for n, got in announced.items() if got] == [len(chunks) - 1]
    assert [item.citation for item in announced[len(chunks) - 1]] == answer.citations
    assert_same_answer(answer, extract(final))
    assert len(answer.citations) == 3
    assert answer.sources[-1].url == "https://www.koelner-dom.de/besuchen"


def test_responses_stream_announces_the_final_citations_at_its_end() -> None:
    events, final = responses_stream()
    collector = StreamCollector()
    announced = [(n, item.citation) for n, e in enumerate(events) for item in collector.feed(e)]
    answer = collector.result()
    assert {n for n, _ in announced} == {len(events) - 1}
    assert [c for _, c in announced] == answer.citations == extract(final).citations
    # The second link to the same page cites it again.
    assert [c.extras["marker_number"] for c in answer.citations] == [1, 2, 1]
    assert answer.citations[0].source_ids == answer.citations[2].source_ids


def test_without_inline_citations_annotations_are_sources_only() -> None:
    data = responses_final()
    part = data["output"][2]["content"][0]
    # include=["no_inline_citations"]: no links in the text, annotations without offsets.
    for annotation in part["annotations"]:
        del annotation["start_index"], annotation["end_index"]
    part["text"] = (
        "La tour Eiffel mesure aujourd’hui 330 mètres, antenne comprise. Elle reste le "
        "monument payant le plus visité au monde."
    )
    answer = extract(data, strict=True)
    assert answer.citations == []
    assert [s.url for s in answer.sources] == data["citations"]
    assert answer.extras["grounded_effective"] is True


def test_a_link_without_its_annotation_still_cites_its_url() -> None:
    data = responses_final()
    part = data["output"][2]["content"][0]
    dropped = part["annotations"].pop(3)
    answer = extract(data, strict=True)
    last = answer.citations[-1]
    assert last.text.startswith("Elle reste le monument payant")
    assert answer.source(last.source_ids[0]).url == dropped["url"]
    assert last.extras == {"marker_number": 4, "recovered_from": "inline_link"}
    assert last.marker_span == (dropped["start_index"], dropped["end_index"])


def test_numbered_links_are_not_read_in_openai_answers() -> None:
    data = responses_final()
    data["model"] = "gpt-5.2"
    del data["citations"]
    data["output"][2]["content"][0]["annotations"] = []
    answer = extract(data)
    assert answer.provider == "openai"
    assert answer.citations == []


def test_detection_and_the_grok_alias() -> None:
    assert detect_provider(responses_final()) == "xai"
    assert detect_provider(chat_final()) == "xai"
    perplexity = chat_final()
    perplexity["model"] = "sonar-pro"
    # A completion with `citations` and another model stays Perplexity's.
    assert detect_provider(perplexity) == "perplexity"
    assert extract(chat_final(), provider="grok") == extract(chat_final())
    # Forced through the OpenAI reader, an xAI answer still says where it came from.
    assert extract(responses_final(), provider="openai").provider == "xai"


def test_an_unknown_xai_tool_item_is_kept_and_said() -> None:
    data = responses_final()
    data["output"].insert(0, {"type": "holodeck_call", "id": "hc_1", "status": "completed"})
    answer = extract(data)
    assert answer.diagnostics == [
        "response.output[0]: unknown output item type 'holodeck_call'; kept in extras['unknown']"
    ]
    assert len(answer.citations) == 4


def test_stream_of_chat_chunks_cut_before_the_citations() -> None:
    chunks, _ = chat_stream()
    answer = collect_stream(copy.deepcopy(chunks[:-1]))
    assert answer.diagnostics == ["stream ended before a finish_reason"]
    # Without the last chunk, the links still cite their URLs.
    assert len(answer.citations) == 3
