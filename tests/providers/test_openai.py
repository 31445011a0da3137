"""OpenAI Responses and Chat Completions readers, on plain data (no SDK needed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from providers._fixtures import cassette_bodies, sse_events
from providers.contract import ProviderContract, assert_same_answer

from unicite import CitationError, GroundingRequiredError, UrlLocation
from unicite.providers import (
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)

SDK = "providers/test_openai_sdk/"


def bodies(name: str) -> list[Any]:
    return cassette_bodies(f"{SDK}{name}.yaml")


FINALS = (
    "test_responses_web_search",
    "test_responses_web_search_stream",
    "test_responses_web_search_async",
    "test_responses_web_search_without_annotations",
    "test_responses_file_search",
    "test_responses_code_interpreter",
    "test_responses_multi_message_stream",
    "test_responses_payload_the_sdk_types_reject",
    "test_chat_search_preview",
)
STREAMS = (
    "test_responses_web_search_stream",
    "test_responses_web_search_async",
    "test_responses_multi_message_stream",
    "test_chat_search_preview",
)


class TestOpenAIContract(ProviderContract):
    provider = "openai"

    def final_cases(self) -> dict[str, Any]:
        return {name.removeprefix("test_"): bodies(name)[0] for name in FINALS}

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        cases = {}
        for name in STREAMS:
            final, stream = bodies(name)[:2]
            cases[name.removeprefix("test_")] = (sse_events(stream), final)
        return cases


# --- builders for small hand-made responses -------------------------------------------------


def response(*output: Any, **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_0123",
        "object": "response",
        "created_at": 1771000000,
        "status": "completed",
        "model": "gpt-5.2-2025-12-11",
        "output": list(output),
        **fields,
    }


def message(*parts: Any) -> dict[str, Any]:
    return {
        "id": "msg_0123",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": list(parts),
    }


def text_part(text: str, *annotations: Any) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": list(annotations), "logprobs": []}


def url_citation(text: str, covered: str, url: str, title: str = "A page") -> dict[str, Any]:
    start = text.index(covered)
    return {
        "type": "url_citation",
        "start_index": start,
        "end_index": start + len(covered),
        "title": title,
        "url": url,
    }


def web_search(**action: Any) -> dict[str, Any]:
    return {"id": "ws_0123", "type": "web_search_call", "status": "completed", "action": action}


def chat(
    content: str, annotations: list[Any], model: str = "gpt-4o-search-preview"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-0123",
        "object": "chat.completion",
        "created": 1771000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "refusal": None,
                    "annotations": annotations,
                },
                "finish_reason": "stop",
            }
        ],
    }


# --- Responses: url citations ---------------------------------------------------------------


def test_url_citation_keeps_the_link_as_marker_and_cites_the_sentence_it_closes() -> None:
    final = bodies("test_responses_web_search")[0]
    answer = extract(final, strict=True)
    annotations = final["output"][2]["content"][0]["annotations"]
    first = answer.citations[0]
    assert (first.start, first.end) == (0, 178)
    assert first.text.startswith("🗼 La tour Eiffel mesure aujourd’hui **330 mètres**")
    assert first.text.endswith("l’a fait grandir de six mètres.")
    assert first.marker_span == (179, 276)
    assert answer.text[179:276] == (
        "([toureiffel.paris](https://www.toureiffel.paris/fr/le-monument/chiffres-cles"
        "?utm_source=openai))"
    )
    assert first.raw == annotations[0]
    assert first.location == UrlLocation(
        url="https://www.toureiffel.paris/fr/le-monument/chiffres-cles?utm_source=openai"
    )
    assert first.origin == "native"
    assert first.quote is None
    # After a paragraph break the next claim starts on its own line.
    third = answer.citations[2]
    assert answer.text[third.start - 2 : third.start] == "\n\n"
    assert third.text.startswith("À noter")


def test_offsets_are_code_points_even_after_astral_characters() -> None:
    answer = extract(bodies("test_responses_web_search")[0])
    # 🗼 opens the text: one code point, two UTF-16 units, so every later UTF-16 offset is one more.
    assert answer.utf16_span(answer.citations[0]) == (0, answer.citations[0].end + 1)
    for citation in answer.citations[1:]:
        assert answer.utf16_span(citation) == (citation.start + 1, citation.end + 1)
    for citation in answer.citations:
        assert citation.marker_span is not None
        assert answer.text[citation.marker_span[0] : citation.marker_span[0] + 2] == "(["
        assert answer.text[citation.marker_span[1] - 2 : citation.marker_span[1]] == "))"


def test_chat_offsets_after_an_emoji_with_variation_selector() -> None:
    answer = extract(bodies("test_chat_search_preview")[0], strict=True)
    second = answer.citations[1]
    assert second.text == "A região metropolitana ultrapassa 20 milhões de pessoas 🏙️."
    assert second.text[-3:] == "\U0001f3d9\ufe0f."
    # 🏙️ is two code points (U+1F3D9 U+FE0F) and three UTF-16 units.
    assert second.marker_span == (234, 318)
    assert answer.text[234:318].startswith("([pt.wikipedia.org](")
    assert answer.utf16_span(second) == (174, 234)


def test_an_annotation_covering_claim_text_is_the_claim() -> None:
    text = "The tallest mountain in Alberta is Mount Columbia."
    final = response(
        message(
            text_part(text, url_citation(text, "Mount Columbia", "https://example.org/columbia"))
        )
    )
    [citation] = extract(final, strict=True).citations
    assert (citation.start, citation.end, citation.text) == (35, 49, "Mount Columbia")
    assert citation.marker_span is None


def test_a_bare_markdown_link_is_a_marker() -> None:
    text = (
        "Mount Columbia is Alberta's highest point. [britannica.com](https://www.britannica.com/x)"
    )
    final = response(
        message(
            text_part(
                text,
                url_citation(
                    text,
                    "[britannica.com](https://www.britannica.com/x)",
                    "https://www.britannica.com/x",
                ),
            )
        )
    )
    [citation] = extract(final, strict=True).citations
    assert citation.text == "Mount Columbia is Alberta's highest point."
    assert citation.marker_span == (43, len(text))


def test_a_link_that_opens_the_text_claims_what_follows() -> None:
    text = "([example.org](https://example.org/a)) Snow fell on the peak overnight."
    final = response(
        message(
            text_part(
                text,
                url_citation(
                    text, "([example.org](https://example.org/a))", "https://example.org/a"
                ),
            )
        )
    )
    [citation] = extract(final, strict=True).citations
    assert citation.text == "Snow fell on the peak overnight."
    assert citation.marker_span == (0, 38)


def test_urls_deduplicate_by_normalized_url_and_keep_the_first_url_as_given() -> None:
    text = (
        "One. ([a](https://Example.org/p?utm_source=openai)) Two. ([a](https://example.org/p#top))"
    )
    final = response(
        web_search(
            type="search", query="q", sources=[{"type": "url", "url": "https://EXAMPLE.org/p"}]
        ),
        message(
            text_part(
                text,
                url_citation(
                    text,
                    "([a](https://Example.org/p?utm_source=openai))",
                    "https://Example.org/p?utm_source=openai",
                    "P",
                ),
                url_citation(
                    text, "([a](https://example.org/p#top))", "https://example.org/p#top", "P"
                ),
            )
        ),
    )
    answer = extract(final, strict=True)
    [source] = answer.sources
    assert source.url == "https://EXAMPLE.org/p"
    assert (source.title, source.domain, source.rank) == ("P", "example.org", 0)
    assert [c.source_ids for c in answer.citations] == [[source.id], [source.id]]
    assert [c.text for c in answer.citations] == ["One.", "Two."]
    # The citations keep the URL each annotation gave.
    assert [c.location for c in answer.citations] == [
        UrlLocation(url="https://Example.org/p?utm_source=openai"),
        UrlLocation(url="https://example.org/p#top"),
    ]


def test_a_span_outside_its_part_keeps_the_source_and_says_so() -> None:
    text = "Short answer."
    bad = {
        "type": "url_citation",
        "start_index": 5,
        "end_index": 90,
        "title": "T",
        "url": "https://example.org/",
    }
    final = response(message(text_part(text, bad)))
    answer = extract(final)
    assert answer.citations == []
    assert [s.url for s in answer.sources] == ["https://example.org/"]
    assert answer.diagnostics == [
        "response.output[0].content[0].annotations[0]: span 5..90 is outside its text part "
        "(0..13); source kept without a span"
    ]
    with pytest.raises(CitationError):
        extract(final, strict=True)


def test_empty_annotation_lists_give_no_citations_and_no_diagnostics() -> None:
    final = response(message(text_part("Plain text, nothing cited. ")))
    answer = extract(final, strict=True)
    assert (answer.text, answer.citations, answer.sources) == (
        "Plain text, nothing cited. ",
        [],
        [],
    )


# --- Responses: files -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "claim"),
    [
        (30, "Paris is the capital of France."),  # the final ".", as OpenAI sends it
        (31, "Paris is the capital of France."),  # just after it
        (68, "It has about 2.1 million inhabitants."),  # the last ".", the usual case
        (69, "It has about 2.1 million inhabitants."),  # the end of the text
        (20, "Paris is the capital"),  # mid-sentence: the text up to the index
    ],
)
def test_file_citation_claims_the_sentence_ending_at_its_index(index: int, claim: str) -> None:
    text = "Paris is the capital of France. It has about 2.1 million inhabitants."
    annotation = {
        "type": "file_citation",
        "file_id": "file-1",
        "filename": "paris.txt",
        "index": index,
    }
    answer = extract(response(message(text_part(text, annotation))), strict=True)
    [citation] = answer.citations
    assert citation.text == claim
    assert citation.marker_span is None
    assert citation.extras == {"index": index}
    [source] = answer.sources
    assert (source.id, source.kind, source.title, source.provider_id) == (
        "file-1",
        "file",
        "paris.txt",
        "file-1",
    )


def test_file_search_results_fill_the_file_sources() -> None:
    answer = extract(bodies("test_responses_file_search")[0], strict=True)
    policy, faq = answer.sources
    assert policy.snippet == (
        "Dispone de 30 días naturales desde la recepción del pedido para solicitar la devolución a "
        "través de su área de cliente."
    )
    assert policy.content == (
        policy.snippet
        + "\n\n"
        + "Los gastos de envío de la devolución corren a cargo del cliente, "
        "salvo en productos defectuosos o envíos erróneos."
    )
    assert policy.extras == {
        "score": 0.9132,
        "vector_store_id": "vs_68c1f0a2b7d48191b0e5c1d2a3f4e5d6",
        "chunks": [
            {"text": policy.snippet, "score": 0.9132},
            {
                "text": "Los gastos de envío de la devolución corren a cargo del cliente, salvo en "
                "productos defectuosos o envíos erróneos.",
                "score": 0.8421,
            },
        ],
    }
    assert isinstance(policy.raw, list)
    assert len(policy.raw) == 2
    assert faq.content == faq.snippet
    assert faq.raw["filename"] == "preguntas_frecuentes.md"
    assert [c.text[-1] for c in answer.citations] == [".", ".", "."]


def test_file_citation_without_search_results_still_names_the_file() -> None:
    final = bodies("test_responses_file_search")[0]
    final = copy.deepcopy(final)
    final["output"][0]["results"] = None  # include=["file_search_call.results"] not asked
    answer = extract(final, strict=True)
    assert [(s.id, s.title, s.content) for s in answer.sources] == [
        ("file-7Ux3mQw2Jk9Lr1NbVt5Ce8", "política_de_devoluciones.pdf", None),
        ("file-Q8vTt4ZcYd3Hn6WsPa2Rk1", "preguntas_frecuentes.md", None),
    ]
    assert len(answer.citations) == 3


def test_container_file_citations_zero_width_and_over_a_link_target() -> None:
    answer = extract(bodies("test_responses_code_interpreter")[0], strict=True)
    chart, csv = answer.citations
    assert chart.text == "I also saved a bar chart of the values."
    assert csv.text == "sandbox:/mnt/data/squares.csv"
    assert answer.text[csv.start - 1 : csv.end + 1] == "(sandbox:/mnt/data/squares.csv)"
    assert {s.extras["container_id"] for s in answer.sources} == {
        "cntr_69a1f9c2d0e48190a3b5c7d9e1f3a5b70c2e4f6a8b0d2f4a"
    }


def test_file_path_annotation_is_a_source_without_a_span() -> None:
    annotation = {"type": "file_path", "file_id": "file-out-1", "index": 0}
    answer = extract(response(message(text_part("Here is the file.", annotation))), strict=True)
    assert answer.citations == []
    [source] = answer.sources
    assert (source.id, source.kind, source.extras) == ("file-out-1", "file", {"file_path_index": 0})


# --- Responses: items, parts, joining -----------------------------------------------------------


def test_messages_and_parts_join_like_the_sdk_output_text() -> None:
    final = bodies("test_responses_multi_message_stream")[0]
    answer = extract(final, strict=True)
    parts = [
        part["text"]
        for item in final["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    ]
    assert answer.text == "".join(parts)
    assert answer.text.startswith(
        "Je vérifie les horaires d’ouverture du musée d’Orsay… 🔎\n\nLe musée"
    )
    second = final["output"][3]["content"][1]["annotations"][0]
    offset = len(parts[0]) + len(parts[1])
    assert answer.citations[1].marker_span == (
        offset + second["start_index"],
        offset + second["end_index"],
    )


def test_refusal_is_kept_apart_from_the_answer_text() -> None:
    final = response(
        message(
            text_part("Voici ce que je peux dire. "),
            {"type": "refusal", "refusal": "Je ne peux pas aider avec le reste."},
        )
    )
    answer = extract(final, strict=True)
    assert answer.text == "Voici ce que je peux dire. "
    assert answer.extras["refusal"] == "Je ne peux pas aider avec le reste."


def test_reasoning_and_tool_call_items_are_read_quietly() -> None:
    final = response(
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Thinking."}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_1",
            "name": "f",
            "arguments": "{}",
        },
        {
            "id": "ci_1",
            "type": "code_interpreter_call",
            "status": "completed",
            "code": "1+1",
            "container_id": "c",
            "outputs": None,
        },
        {"id": "ig_1", "type": "image_generation_call", "status": "completed", "result": None},
        {"id": "mcp_1", "type": "mcp_call", "name": "t", "arguments": "{}", "server_label": "s"},
        message(text_part("Done.")),
    )
    answer = extract(final, strict=True)
    assert answer.text == "Done."
    assert answer.diagnostics == []


def test_unknown_item_part_and_annotation_types_are_diagnosed_and_kept() -> None:
    item = {"id": "x_1", "type": "hologram_call", "status": "completed"}
    part = {"type": "output_hologram", "data": "…"}
    annotation = {"type": "page_citation", "page": 3, "start_index": 0, "end_index": 4}
    final = response(item, message(text_part("Text.", annotation), part))
    answer = extract(final)
    assert answer.text == "Text."
    assert answer.diagnostics == [
        "response.output[0]: unknown output item type 'hologram_call'; kept in extras['unknown']",
        "response.output[1].content[0].annotations[0]: unknown annotation type 'page_citation'; "
        "kept in extras['unknown']",
        "response.output[1].content[1]: unknown content part type 'output_hologram'; "
        "kept in extras['unknown']",
    ]
    assert answer.extras["unknown"] == [
        {"path": "response.output[0]", "value": item},
        {"path": "response.output[1].content[0].annotations[0]", "value": annotation},
        {"path": "response.output[1].content[1]", "value": part},
    ]
    with pytest.raises(CitationError) as caught:
        extract(final, strict=True)
    assert caught.value.provider == "openai"
    assert len(caught.value.diagnostics) == 3


def test_web_search_queries_actions_and_sources() -> None:
    final = response(
        web_search(type="search", query="alpha", queries=["alpha", "beta"]),
        web_search(type="search", query="gamma"),
        web_search(type="open_page", url="https://example.org/opened"),
        web_search(type="find_in_page", url="https://example.org/found", pattern="x"),
        web_search(
            type="search",
            sources=[
                {"type": "api", "name": "oai-finance"},
                {"type": "url", "url": "https://example.org/s"},
            ],
        ),
        message(text_part("Answer.")),
    )
    answer = extract(final, strict=True)
    assert answer.extras["web_search_queries"] == ["alpha", "beta", "gamma"]
    assert [(s.kind, s.url, s.title) for s in answer.sources] == [
        ("web", "https://example.org/opened", None),
        ("web", "https://example.org/found", None),
        ("tool", None, "oai-finance"),
        ("web", "https://example.org/s", None),
    ]
    unknown = response(web_search(type="teleport"), message(text_part("Answer.")))
    assert extract(unknown).diagnostics == [
        "response.output[0].action: unknown web search action 'teleport'; kept in extras['unknown']"
    ]


def test_incomplete_response_reports_its_status() -> None:
    final = response(
        message(text_part("Half an ans")),
        status="incomplete",
        incomplete_details={"reason": "max_output_tokens"},
    )
    answer = extract(final, strict=True)
    assert answer.extras == {
        "response_id": "resp_0123",
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }


def test_payload_the_sdk_types_reject_is_read_as_data() -> None:
    final = bodies("test_responses_payload_the_sdk_types_reject")[0]
    # Older usage shape (no *_tokens_details) and an `api` search source: fine as data.
    assert set(final["usage"]) == {"input_tokens", "output_tokens", "total_tokens"}
    answer = extract(final, strict=True)
    web, tool = answer.sources
    # ...&utm_source=openai on the cited URL: the same page as the searched one.
    assert web.url == "https://www.ine.pt/xportal/xmain?xpid=INE&xpgid=censos2021"
    assert (tool.kind, tool.title) == ("tool", "oai-knowledge")
    assert answer.citations[0].source_ids == [web.id]


# --- grounding policy ----------------------------------------------------------------------------


def test_require_citations_after_a_search_without_annotations() -> None:
    final = bodies("test_responses_web_search_without_annotations")[0]
    answer = extract(final, strict=True)
    [source] = answer.sources
    assert (source.kind, source.title, source.url, source.rank) == ("tool", "oai-weather", None, 0)
    assert source.raw == {"type": "api", "name": "oai-weather"}
    # Its id comes from its content, so the same API source gets the same id on every run.
    assert source.id.startswith("h-")
    assert source.id == extract(copy.deepcopy(final)).sources[0].id
    assert answer.extras["web_search_queries"] == ["weather: Montréal, Québec, Canada"]
    with pytest.raises(GroundingRequiredError) as caught:
        extract(final, require="citations")
    assert (caught.value.reason, caught.value.provider) == ("no citations", "openai")


def test_require_citations_on_a_plain_answer() -> None:
    with pytest.raises(GroundingRequiredError) as caught:
        extract(response(message(text_part("Hello."))), require="citations")
    assert (caught.value.reason, caught.value.provider) == ("no grounding", "openai")
    with pytest.raises(GroundingRequiredError) as caught:
        extract(chat("Hello.", [], model="gpt-4o-mini"), require="citations")
    assert caught.value.reason == "no grounding"
    with pytest.raises(GroundingRequiredError) as caught:
        extract(chat("Hello.", [], model="gpt-4o-mini-search-preview"), require="citations")
    assert caught.value.reason == "no citations"


def test_require_citations_passes_when_there_are_some() -> None:
    answer = extract(bodies("test_responses_web_search")[0], require="citations")
    assert len(answer.citations) == 3


# --- Chat Completions -----------------------------------------------------------------------------


def test_chat_nested_and_flat_annotations_read_alike() -> None:
    nested = bodies("test_chat_search_preview")[0]
    flat = copy.deepcopy(nested)
    message_ = flat["choices"][0]["message"]
    message_["annotations"] = [
        {"type": "url_citation", **a["url_citation"]} for a in message_["annotations"]
    ]
    a, b = extract(nested, strict=True), extract(flat, strict=True)
    assert [(c.start, c.end, c.marker_span, c.source_ids) for c in a.citations] == [
        (c.start, c.end, c.marker_span, c.source_ids) for c in b.citations
    ]
    assert [s.url for s in a.sources] == [s.url for s in b.sources]
    assert a.citations[0].raw == nested["choices"][0]["message"]["annotations"][0]


def test_chat_detection() -> None:
    completion = chat("Hi.", [])
    assert detect_provider(completion) == "openai"
    del completion["object"]
    assert detect_provider(completion) == "openai"
    assert extract(completion, strict=True).text == "Hi."


def test_chat_refusal_and_missing_content() -> None:
    completion = chat("", [])
    completion["choices"][0]["message"].update(content=None, refusal="I can't help with that.")
    answer = extract(completion, strict=True)
    assert answer.text == ""
    assert answer.extras["refusal"] == "I can't help with that."


def test_chat_without_choices_is_diagnosed() -> None:
    completion = chat("Hi.", [])
    completion["choices"] = []
    assert extract(completion).diagnostics == ["completion.choices: no choice 0"]


def test_a_choice_indexed_false_is_not_choice_zero() -> None:
    completion = chat("Grüezi.", [])
    first = completion["choices"][0]
    other = {**first, "index": False, "message": {**first["message"], "content": "Falsch."}}
    completion["choices"] = [other, first]
    assert extract(completion).text == "Grüezi."


# --- streams --------------------------------------------------------------------------------------


def stream_case(name: str) -> tuple[list[Any], Any]:
    final, stream = bodies(name)[:2]
    return sse_events(stream), final


def announcements(events: list[Any]) -> list[tuple[int, str, Any]]:
    collector = StreamCollector(strict=True)
    out = []
    for n, event in enumerate(events):
        for item in collector.feed(event):
            out.append((n, event.get("type") or event.get("object"), item))
    collector.result()
    return out


def test_responses_stream_announces_citations_as_annotations_arrive() -> None:
    events, final = stream_case("test_responses_web_search_stream")
    expected = extract(final)
    announced = announcements(events)
    assert [kind for _, kind, _ in announced] == ["response.output_text.annotation.added"] * 3
    assert [item.citation for _, _, item in announced] == expected.citations
    text_done = next(n for n, e in enumerate(events) if e["type"] == "response.output_text.done")
    assert all(n < text_done for n, _, _ in announced)
    for _, _, item in announced:
        assert [s.id for s in item.sources] == item.citation.source_ids


def test_responses_stream_waits_for_text_an_annotation_points_past() -> None:
    events, final = stream_case("test_responses_web_search_stream")
    # Move each annotation before the delta that brings its link.
    annotations = [e for e in events if e["type"] == "response.output_text.annotation.added"]
    reordered = [e for e in events if e["type"] != "response.output_text.annotation.added"]
    first_delta = next(
        n for n, e in enumerate(reordered) if e["type"] == "response.output_text.delta"
    )
    reordered[first_delta:first_delta] = annotations
    announced = announcements(reordered)
    assert [item.citation for _, _, item in announced] == extract(final).citations
    assert collect_stream(reordered) == extract(final)


def test_responses_stream_with_parts_in_two_messages() -> None:
    events, _ = stream_case("test_responses_multi_message_stream")
    announced = announcements(events)
    assert [item.citation.start for _, _, item in announced] == [57, 228]


def test_responses_stream_cut_short_says_so() -> None:
    events, final = stream_case("test_responses_web_search_stream")
    cut = [e for e in events if e["type"] != "response.completed"]
    answer = collect_stream(cut)
    assert answer.diagnostics == ["stream ended before response.completed"]
    assert answer.text == extract(final).text
    assert answer.citations == extract(final).citations
    with pytest.raises(CitationError):
        collect_stream(cut, strict=True)


def test_responses_stream_completed_without_output_uses_the_items() -> None:
    events, final = stream_case("test_responses_web_search_stream")
    events = copy.deepcopy(events)
    events[-1]["response"]["output"] = None
    assert_same_answer(collect_stream(events), extract(final))


def test_responses_stream_ignores_sdk_helper_snapshots() -> None:
    events, final = stream_case("test_responses_web_search_stream")
    events = copy.deepcopy(events)
    snapshot = ""
    for event in events:
        if event["type"] == "response.output_text.delta":
            snapshot += event["delta"]
            event["snapshot"] = snapshot
    assert collect_stream(events) == extract(final)


def test_responses_stream_error_and_unknown_events_are_diagnosed() -> None:
    events, _ = stream_case("test_responses_web_search_stream")
    noisy = [
        *events[:3],
        {"type": "response.hologram.delta", "sequence_number": 99},
        {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error",
            "sequence_number": 100,
        },
        *events[3:],
    ]
    answer = collect_stream(noisy)
    assert answer.diagnostics == [
        "unknown Responses stream event 'response.hologram.delta'",
        "stream error event: The server had an error",
    ]


def test_chat_stream_announces_late_annotations_on_their_chunk() -> None:
    events, final = stream_case("test_chat_search_preview")
    announced = announcements(events)
    late = next(n for n, e in enumerate(events) if e["choices"][0]["delta"].get("annotations"))
    assert [n for n, _, _ in announced] == [late, late]
    assert [item.citation for _, _, item in announced] == extract(final).citations


def test_chat_stream_helper_events_are_read_once() -> None:
    events, final = stream_case("test_chat_search_preview")
    wrapped: list[Any] = []
    content = ""
    for chunk in events:
        wrapped.append({"type": "chunk", "chunk": chunk, "snapshot": {"choices": []}})
        delta = chunk["choices"][0]["delta"].get("content")
        if delta:
            content += delta
            wrapped.append(
                {"type": "content.delta", "delta": delta, "snapshot": content, "parsed": None}
            )
    wrapped.append({"type": "content.done", "content": content, "parsed": None})
    assert collect_stream(wrapped) == extract(final)


def test_chat_stream_cut_short_says_so() -> None:
    events, _ = stream_case("test_chat_search_preview")
    answer = collect_stream(events[:-1])
    assert answer.diagnostics == ["stream ended before a finish_reason"]


def test_stream_events_are_detected_by_shape() -> None:
    responses_events, _ = stream_case("test_responses_web_search_stream")
    chat_events, _ = stream_case("test_chat_search_preview")
    assert collect_stream(responses_events).provider == "openai"
    assert collect_stream(chat_events).provider == "openai"
    assert collect_stream(responses_events, provider="openai") == collect_stream(responses_events)


def test_back_to_back_links_share_their_claim() -> None:
    text = "Lyon is France's third city. ([a.fr](https://a.fr/lyon)) ([b.fr](https://b.fr/lyon))"
    final = response(
        message(
            text_part(
                text,
                url_citation(text, "([a.fr](https://a.fr/lyon))", "https://a.fr/lyon"),
                url_citation(text, "([b.fr](https://b.fr/lyon))", "https://b.fr/lyon"),
            )
        )
    )
    answer = extract(final, strict=True)
    assert [(c.text, c.marker_span) for c in answer.citations] == [
        ("Lyon is France's third city.", (29, 56)),
        ("Lyon is France's third city.", (57, 84)),
    ]
    assert [s.url for s in answer.sources] == ["https://a.fr/lyon", "https://b.fr/lyon"]


def test_list_items_claim_their_own_text() -> None:
    text = (
        "Deux options :\n\n"
        "1. Le train, en 2 h 10 depuis Paris. ([sncf-connect.com](https://www.sncf-connect.com/a))\n"
        "2. L’avion, plus cher. ([airfrance.fr](https://www.airfrance.fr/b))"
    )
    final = response(
        message(
            text_part(
                text,
                url_citation(
                    text,
                    "([sncf-connect.com](https://www.sncf-connect.com/a))",
                    "https://www.sncf-connect.com/a",
                ),
                url_citation(
                    text,
                    "([airfrance.fr](https://www.airfrance.fr/b))",
                    "https://www.airfrance.fr/b",
                ),
            )
        )
    )
    answer = extract(final, strict=True)
    assert [c.text for c in answer.citations] == [
        "Le train, en 2 h 10 depuis Paris.",
        "L’avion, plus cher.",
    ]


def events_for(final: dict[str, Any], middle: list[dict[str, Any]]) -> list[dict[str, Any]]:
    start = {**final, "status": "in_progress", "output": []}
    return [
        {"type": "response.created", "response": start, "sequence_number": 0},
        *middle,
        {"type": "response.completed", "response": final, "sequence_number": 99},
    ]


def test_responses_stream_with_a_refusal_part() -> None:
    refusal = "Je ne peux pas aider avec cela."
    final = response(message({"type": "refusal", "refusal": refusal}))
    where = {"item_id": "msg_0123", "output_index": 0, "content_index": 0}
    events = events_for(
        final,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": None},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**message(), "status": "in_progress"},
            },
            {
                "type": "response.content_part.added",
                **where,
                "part": {"type": "refusal", "refusal": ""},
            },
            {"type": "response.refusal.delta", **where, "delta": "Je ne peux pas "},
            {"type": "response.refusal.delta", **where, "delta": "aider avec cela."},
            {"type": "response.refusal.done", **where, "refusal": refusal},
            {
                "type": "response.content_part.done",
                **where,
                "part": final["output"][0]["content"][0],
            },
            {"type": "response.output_item.done", "output_index": 0, "item": final["output"][0]},
        ],
    )
    answer = collect_stream(events, strict=True)
    assert answer == extract(final)
    assert (answer.text, answer.extras["refusal"]) == ("", refusal)
    # Cut before the end, the rebuilt part still holds the refusal.
    assert collect_stream(events[:-1]).extras["refusal"] == refusal


def test_responses_stream_that_failed() -> None:
    failed = response(
        message(text_part("Partial")),
        status="failed",
        error={"code": "server_error", "message": "The model failed."},
    )
    events = [
        {"type": "response.created", "response": {**failed, "status": "in_progress", "output": []}},
        {"type": "response.failed", "response": failed},
    ]
    answer = collect_stream(events)
    assert answer == extract(failed)
    assert answer.text == "Partial"
    assert answer.diagnostics == [
        "response failed (server_error: The model failed.): the answer may be missing or cut short"
    ]
    with pytest.raises(CitationError):
        collect_stream(events, strict=True)
    assert answer.extras["status"] == "failed"
    assert answer.extras["error"] == {"code": "server_error", "message": "The model failed."}


@pytest.mark.parametrize(
    ("status", "detail", "expected"),
    [
        ("failed", {"error": {"code": "server_error", "message": "boom"}}, "server_error: boom"),
        ("cancelled", {}, "response cancelled"),
    ],
)
def test_failed_response_says_why(status: str, detail: dict[str, object], expected: str) -> None:
    body = {
        "object": "response",
        "id": "resp_1",
        "model": "gpt-4.1",
        "status": status,
        **detail,
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Die Brücke ist", "annotations": []}],
            }
        ],
    }
    answer = extract(body)
    assert answer.text == "Die Brücke ist"
    assert len(answer.diagnostics) == 1
    assert expected in answer.diagnostics[0]
    assert f"response {status}" in answer.diagnostics[0]
    with pytest.raises(CitationError):
        extract(body, strict=True)
    completed = extract({**body, "status": "completed"})
    assert completed.diagnostics == []


# --- what frameworks keep of a response -------------------------------------------------------

LINKED = "Le viaduc de Millau culmine à 343 mètres ([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Viaduc_de_Millau))."
MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"


def millau_response() -> dict[str, Any]:
    return response(
        web_search(type="search", query="hauteur viaduc de Millau"),
        message(text_part(LINKED, url_citation(LINKED, LINKED[LINKED.index("([") :][:-1], MILLAU))),
    )


def test_a_terminal_stream_event_reads_as_the_response_it_carries() -> None:
    final = millau_response()
    for kind in ("response.completed", "response.incomplete", "response.failed"):
        event = {"type": kind, "sequence_number": 12, "response": final}
        assert detect_provider(event) == "openai"
        assert extract(event) == extract(final)


def test_flat_output_blocks_read_like_the_response() -> None:
    # LangChain's Responses content: parts flattened into text blocks carrying their item id,
    # tool items as blocks, an `index` on every block from stream merging.
    final = millau_response()
    search, item = final["output"]
    part = item["content"][0]
    blocks = [
        {**search, "index": 0},
        {
            "type": "text",
            "text": part["text"],
            "annotations": part["annotations"],
            "id": item["id"],
            "index": 1,
        },
    ]
    fields = {
        "id": final["id"],
        "model": final["model"],
        "status": "completed",
        "service_tier": "x",
    }
    answer = extract_content(blocks, "openai", fields=fields)
    assert answer == extract(final)
    assert answer.citations[0].text == "Le viaduc de Millau culmine à 343 mètres"
    assert extract_content(blocks, fields=fields) == answer  # detected by its shapes


def test_v1_standard_blocks_read_like_the_response() -> None:
    final = millau_response()
    ann = final["output"][1]["content"][0]["annotations"][0]
    blocks = [
        {
            "type": "server_tool_call",
            "name": "web_search",
            "id": "ws_0123",
            "args": {"type": "search", "query": "hauteur viaduc de Millau"},
        },
        {
            "type": "server_tool_result",
            "tool_call_id": "ws_0123",
            "status": "success",
            "output": {},
        },
        {
            "type": "text",
            "text": LINKED,
            "id": "msg_0123",
            "annotations": [
                {
                    "type": "citation",
                    "url": MILLAU,
                    "title": ann["title"],
                    "start_index": ann["start_index"],
                    "end_index": ann["end_index"],
                }
            ],
        },
        {"type": "reasoning", "reasoning": "Chercher la hauteur."},
    ]
    answer = extract_content(blocks, "openai", fields={"status": "completed"})
    expected = extract(final)
    assert [(c.start, c.end, c.marker_span) for c in answer.citations] == [
        (c.start, c.end, c.marker_span) for c in expected.citations
    ]
    assert answer.extras["web_search_queries"] == ["hauteur viaduc de Millau"]
    assert answer.diagnostics == []


def test_a_search_models_text_gets_its_links_back_as_annotations() -> None:
    # Frameworks keep a completion's text and drop its annotations: the links give them back.
    ann = url_citation(LINKED, LINKED[LINKED.index("([") :][:-1], MILLAU, "fr.wikipedia.org")
    expected = extract(chat(LINKED, [ann]))
    fields = {"model": "gpt-4o-search-preview", "finish_reason": "stop", "id": "chatcmpl-0123"}
    answer = extract_content(LINKED, "openai", fields=fields)
    assert [(c.start, c.end, c.marker_span) for c in answer.citations] == [
        (c.start, c.end, c.marker_span) for c in expected.citations
    ]
    assert answer.citations[0].extras == {"recovered_from": "inline_link"}
    assert answer.extras["finish_reason"] == "stop"
    # Not a search model: the links are only links.
    plain = extract_content(LINKED, "openai", fields={"model": "gpt-5.2"})
    assert (plain.provider, plain.citations) == ("openai", [])


def test_a_link_after_an_offer_paragraph_is_announced_live_with_the_statement_before() -> None:
    statement = "La Fête des Lumières attire environ 2 millions de visiteurs chaque décembre."
    link = "([lyon-france.com](https://www.lyon-france.com/fete?utm_source=openai))"
    text = f"{statement}\n\nSi vous voulez, je peux ouvrir ces articles. {link}"
    annotation = url_citation(text, link, "https://www.lyon-france.com/fete?utm_source=openai")
    final = response(message(text_part(text, annotation)))
    where = {"item_id": "msg_0123", "output_index": 0, "content_index": 0}
    deltas = [text[:40], text[40 : len(text) - len(link)], link]
    events = events_for(
        final,
        [
            *({"type": "response.output_text.delta", **where, "delta": d} for d in deltas),
            {"type": "response.output_text.annotation.added", **where}
            | {"annotation_index": 0, "annotation": annotation},
            {"type": "response.output_text.done", **where, "text": text},
        ],
    )
    announced = announcements(events)
    assert [kind for _, kind, _ in announced] == ["response.output_text.annotation.added"]
    [(_, _, item)] = announced
    assert item.citation.text == statement
    assert [item.citation] == extract(final).citations
