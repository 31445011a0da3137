"""Gemini / Vertex reader without the SDK: the provider contract on the project's cassettes, and
each quirk of ``groundingMetadata`` and ``citationMetadata`` in focus."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from providers._fixtures import cassette_bodies, sse_events
from providers.contract import ProviderContract, assert_same_answer, check_invariants

from unicite import CitationError, GroundingRequiredError, PageLocation
from unicite.providers import (
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)

CASSETTES = "providers/test_gemini_sdk"
_SNAKE = re.compile(r"(?<=[a-z0-9])([A-Z])")
FINALS = (
    "test_generate_content_google_search",
    "test_stream_matches_generate_content",
    "test_async_generate_content",
    "test_async_stream_matches_generate_content",
    "test_file_search",
    "test_maps_grounding",
    "test_multi_part_answer",
    "test_recitation_citation_metadata",
    "test_vertex_recitation_noisy",
    "test_multiple_candidates",
    "test_blocked_prompt",
)
STREAMS = ("test_stream_matches_generate_content", "test_async_stream_matches_generate_content")


def final(name: str) -> Any:
    """The (first) generateContent response body of a cassette, as a fresh dict."""
    return copy.deepcopy(cassette_bodies(f"{CASSETTES}/{name}.yaml")[0])


def stream(name: str) -> list[Any]:
    """The streamGenerateContent chunks of a cassette (its second interaction)."""
    return sse_events(cassette_bodies(f"{CASSETTES}/{name}.yaml")[1])


def candidate(response: Any, n: int = 0) -> Any:
    return response["candidates"][n]


def grounding(response: Any, n: int = 0) -> Any:
    return candidate(response, n)["groundingMetadata"]


def part_text(response: Any, n: int = 0) -> str:
    return str(candidate(response)["content"]["parts"][n]["text"])


# Fields the SDK's model_dump() writes as null when the response left them out.
_SDK_NULLS = {
    "parts": {"function_call": None, "thought": None, "inline_data": None, "video_metadata": None},
    "candidates": {"citation_metadata": None, "finish_message": None, "url_context_metadata": None},
}


def snake_case(value: Any, within: str | None = None) -> Any:
    """The SDK's ``model_dump()`` shape: snake_case keys and a null for every unset field."""
    if isinstance(value, dict):
        out = {_SNAKE.sub(r"_\1", k).lower(): snake_case(v, k) for k, v in value.items()}
        return {**_SDK_NULLS.get(within or "", {}), **out}
    if isinstance(value, list):
        return [snake_case(item, within) for item in value]
    return value


class TestGeminiContract(ProviderContract):
    provider = "gemini"
    noisy_cases = frozenset({"vertex_recitation_noisy"})

    def final_cases(self) -> dict[str, Any]:
        return {name.removeprefix("test_"): final(name) for name in FINALS}

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {name.removeprefix("test_"): (stream(name), final(name)) for name in STREAMS}


# --- offsets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FINALS)
def test_every_segment_maps_to_its_byte_range(name: str) -> None:
    """Each citation's UTF-8 byte span within its part is exactly the segment's byte range."""
    response = final(name)
    for n in range(len(response.get("candidates", []))):
        answer = extract(response, candidate=n)
        parts = candidate(response, n)["content"]["parts"]
        starts, offset = {}, 0
        for index, part in enumerate(parts):
            if "text" in part and not part.get("thought"):
                starts[index] = offset
                offset += len(part["text"])
        supports = candidate(response, n).get("groundingMetadata", {}).get("groundingSupports", [])
        assert len(supports) == len([c for c in answer.citations if "recitation" not in c.extras])
        for support in supports:
            (citation,) = [c for c in answer.citations if c.raw == support]
            segment = support["segment"]
            part = parts[segment.get("partIndex", 0)]["text"]
            start = starts[segment.get("partIndex", 0)]
            # A segment cut inside a word is widened to it; the provider's span is kept.
            first, last = citation.extras.get("provider_span", (citation.start, citation.end))
            local = first - start, last - start
            assert len(part[: local[0]].encode()) == segment.get("startIndex", 0)
            assert len(part[: local[1]].encode()) == segment["endIndex"]
            assert answer.text[first:last] == segment["text"]
            assert segment["text"] in citation.text
            widened = answer.text[citation.start : first] + answer.text[last : citation.end]
            assert all(ch.isalnum() for ch in widened)


def test_french_answer_exact_spans() -> None:
    answer = extract(final("test_generate_content_google_search"))
    assert [(c.start, c.end) for c in answer.citations] == [
        (83, 146),
        (147, 169),
        (170, 233),
        (289, 362),
        (363, 385),
        (386, 405),
        (460, 518),
    ]
    assert (
        answer.citations[0].text
        == "*   **Hauteur :** son pylône le plus haut culmine à 343 mètres."
    )


def test_naive_reading_of_byte_offsets_is_wrong() -> None:
    response = final("test_stream_matches_generate_content")
    text = part_text(response)
    segment = grounding(response)["groundingSupports"][1]["segment"]
    assert (segment["startIndex"], segment["endIndex"]) == (81, 136)
    assert text[81:136] != segment["text"]  # byte offsets used as str indices
    citation = extract(response).citations[1]
    assert (citation.start, citation.end) == (30, 51)
    assert citation.text == segment["text"] == "最後の噴火は1707年の宝永大噴火でした。"


def test_missing_start_index_means_zero() -> None:
    response = final("test_stream_matches_generate_content")
    assert "startIndex" not in grounding(response)["groundingSupports"][0]["segment"]
    assert extract(response).citations[0].start == 0


def test_segment_starting_mid_word_is_widened_to_the_word() -> None:
    answer = extract(final("test_generate_content_google_search"), strict=True)
    last = answer.citations[-1]
    # The segment starts inside "460": the claim starts with the whole number, and the
    # provider's own span is kept next to it.
    assert answer.text[454:461] == "sur 2 4"
    assert (last.start, last.text[:10]) == (460, "460 mètres")
    assert last.extras["provider_span"] == [461, 518]


def test_same_segment_text_at_two_offsets_follows_the_offsets() -> None:
    answer = extract(final("test_generate_content_google_search"))
    twins = [c for c in answer.citations if c.text == "*   **Inauguration :**"]
    assert [(c.start, c.end) for c in twins] == [(147, 169), (363, 385)]
    assert twins[0].source_ids != twins[1].source_ids


def test_part_index_offsets_count_from_the_part() -> None:
    response = final("test_multi_part_answer")
    answer = extract(response, strict=True)
    first_text = part_text(response, 1)
    citation = answer.citations[1]
    segment = grounding(response)["groundingSupports"][1]["segment"]
    assert segment["partIndex"] == 4
    part = part_text(response, 4)
    assert citation.start == len(first_text) + len(part.encode()[: segment["startIndex"]].decode())
    assert citation.text == "Lisboa é a capital mais ocidental da Europa continental."


def test_part_index_naming_a_non_text_part_falls_back_to_the_text() -> None:
    response = final("test_multi_part_answer")
    grounding(response)["groundingSupports"][1]["segment"]["partIndex"] = 2  # the executableCode
    answer = extract(response)
    assert answer.citations[1].text == "Lisboa é a capital mais ocidental da Europa continental."
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.groundingSupports[1].segment: "
        "partIndex 2 is not an answer text part; located its text at 191..247 instead"
    ]


def test_segment_text_that_differs_from_the_offsets_is_located() -> None:
    response = final("test_async_generate_content")
    grounding(response)["groundingSupports"][0]["segment"]["text"] = "Die Zugspitze"
    answer = extract(response)
    # The text is the stronger evidence: it is cited where it occurs, with a diagnostic.
    assert (answer.citations[0].start, answer.citations[0].text) == (0, "Die Zugspitze")
    (diagnostic,) = answer.diagnostics
    assert "text 'Die Zugspitze' differs from" in diagnostic
    assert diagnostic.endswith("; located its text at 0..13 instead")
    with pytest.raises(CitationError):
        extract(response, strict=True)


def _inside_o_umlaut(text: str) -> int:
    return len(text[: text.index("Österreich")].encode()) + 1


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"endIndex": 10_000}, "byte offsets 74..10000 do not fit the part ({size} bytes)"),
        ({"endIndex": _inside_o_umlaut}, "byte offsets 74..{inside} fall inside a character"),
        ({"endIndex": None}, "no endIndex"),
        ({"startIndex": 200, "endIndex": 100}, "byte offsets 200..100 do not fit the part"),
    ],
    ids=["past-the-part", "inside-a-character", "no-end", "inverted"],
)
def test_unusable_offsets_fall_back_to_locating_the_text(
    change: dict[str, Any], problem: str
) -> None:
    response = final("test_async_generate_content")
    text = part_text(response)
    segment = grounding(response)["groundingSupports"][1]["segment"]
    for key, value in change.items():
        if value is None:
            del segment[key]
        else:
            segment[key] = value(text) if callable(value) else value
    answer = extract(response)
    assert (
        answer.citations[1].text
        == "Sie liegt im Wettersteingebirge, direkt an der Grenze zu Österreich."
    )
    (diagnostic,) = answer.diagnostics
    assert problem.format(size=len(text.encode()), inside=_inside_o_umlaut(text)) in diagnostic
    assert diagnostic.endswith("; located its text at 69..137 instead")


def test_unusable_offsets_and_unknown_text_drop_the_citation() -> None:
    response = final("test_async_generate_content")
    segment = grounding(response)["groundingSupports"][1]["segment"]
    segment["endIndex"] = 10_000
    segment["text"] = "Nicht im Text."
    answer = extract(response)
    assert len(answer.citations) == 2
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.groundingSupports[1].segment: "
        f"byte offsets 74..10000 do not fit the part ({len(part_text(response).encode())} bytes), "
        "and its text 'Nicht im Text.' is not in the answer"
    ]


# --- chunks and sources -------------------------------------------------------------------------


def test_redirect_urls_are_kept_and_the_domain_comes_from_the_title() -> None:
    response = final("test_generate_content_google_search")
    answer = extract(response)
    chunks = grounding(response)["groundingChunks"]
    assert [s.url for s in answer.sources] == [c["web"]["uri"] for c in chunks]
    assert all(s.redirect for s in answer.sources)
    assert [s.domain for s in answer.sources] == [c["web"]["title"] for c in chunks]
    assert answer.sources[0].raw == chunks[0]


def test_a_title_that_is_not_a_domain_leaves_the_domain_unknown() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingChunks"][0]["web"]["title"] = "Viaduc de Millau — Wikipédia"
    source = extract(response).sources[0]
    assert (source.title, source.domain, source.redirect) == (
        "Viaduc de Millau — Wikipédia",
        None,
        True,
    )


def test_vertex_web_domain_is_used_as_given() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingChunks"][1]["web"]["domain"] = "leviaducdemillau.com"
    grounding(response)["groundingChunks"][1]["web"]["title"] = (
        "Le Viaduc de Millau : chiffres clés"
    )
    answer = extract(response, strict=True)
    assert answer.sources[1].domain == "leviaducdemillau.com"


def test_identical_url_less_chunks_are_one_source() -> None:
    response = final("test_file_search")
    supports = grounding(response)["groundingSupports"]
    supports[0]["groundingChunkIndices"] = [1]  # the twin of chunk 0
    answer = extract(response, strict=True)
    twin = extract(final("test_file_search")).citations[0].source_ids
    assert answer.citations[0].source_ids == twin
    assert len(answer.sources) == 2
    assert answer.citations[1].source_ids == [answer.sources[1].id, answer.sources[0].id]
    assert answer.sources[0].rank == 0


def test_file_search_chunks_are_documents_with_their_store_and_page() -> None:
    answer = extract(final("test_file_search"))
    manual, errors = answer.sources
    assert (manual.kind, manual.url, manual.title, manual.domain) == ("document", None, None, None)
    assert errors.extras == {
        "file_search_store": "fileSearchStores/manuale-caldaia-7k2m9q4x1b3c",
        "page_number": 14,
    }
    assert answer.citations[1].location == PageLocation(start_page=14, end_page=15)


def test_rag_chunk_page_span_and_vertex_search_fields() -> None:
    response = final("test_file_search")
    grounding(response)["groundingChunks"][2] = {
        "retrievedContext": {
            "uri": "gs://manuali-tecnici/caldaia-c24.pdf",
            "title": "caldaia-c24.pdf",
            "text": "Codici di errore. E10: pressione insufficiente.",
            "ragChunk": {
                "text": "Codici di errore.",
                "pageSpan": {"firstPage": 14, "lastPage": 15},
            },
            "documentName": "projects/p/locations/eu/collections/c/dataStores/d/documents/7",
        }
    }
    answer = extract(response, strict=True)
    source = answer.source(answer.citations[1].source_ids[0])
    assert source is not None
    assert (source.kind, source.url, source.title) == (
        "document",
        "gs://manuali-tecnici/caldaia-c24.pdf",
        "caldaia-c24.pdf",
    )
    assert source.content == "Codici di errore. E10: pressione insufficiente."
    assert set(source.extras) == {"rag_chunk", "document_name"}
    assert answer.citations[1].location == PageLocation(start_page=14, end_page=16)


def test_maps_chunks_are_places() -> None:
    answer = extract(final("test_maps_grounding"))
    assert [(s.kind, s.provider_id, s.domain) for s in answer.sources] == [
        ("place", "places/ChIJx3Kp5H4oQg0RhVv7Yd2sTQk", "google.com"),
        ("place", "places/ChIJ5cFq0X0oQg0R8mJc3bXkP1A", "google.com"),
    ]


def test_maps_text_and_answer_sources_are_kept() -> None:
    response = final("test_maps_grounding")
    grounding(response)["groundingChunks"][0]["maps"].update(
        {
            "text": "Taberna castiza fundada en 1860, célebre por sus croquetas de bacalao.",
            "placeAnswerSources": {
                "reviewSnippets": [{"reviewId": "r1", "title": "¡Croquetas top!"}]
            },
        }
    )
    source = extract(response, strict=True).sources[0]
    assert (
        source.content == "Taberna castiza fundada en 1860, célebre por sus croquetas de bacalao."
    )
    assert source.extras == {
        "place_answer_sources": {"reviewSnippets": [{"reviewId": "r1", "title": "¡Croquetas top!"}]}
    }


def test_image_chunks_are_web_sources() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingChunks"][2] = {
        "image": {
            "sourceUri": "https://www.normandie-tourisme.fr/pont-de-normandie/",
            "imageUri": "https://www.normandie-tourisme.fr/img/pont.jpg",
            "title": "Le pont de Normandie",
            "domain": "normandie-tourisme.fr",
        }
    }
    answer = extract(response, strict=True)
    source = next(s for s in answer.sources if s.title == "Le pont de Normandie")
    assert (source.kind, source.url, source.domain, source.redirect) == (
        "web",
        "https://www.normandie-tourisme.fr/pont-de-normandie/",
        "normandie-tourisme.fr",
        False,
    )
    assert source.extras == {"image_uri": "https://www.normandie-tourisme.fr/img/pont.jpg"}


def test_unknown_chunk_type_is_a_diagnostic_and_kept() -> None:
    response = final("test_maps_grounding")
    grounding(response)["groundingChunks"][1] = {"hologram": {"uri": "holo://lhardy"}}
    answer = extract(response)
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.groundingChunks[1]: "
        "unknown grounding chunk type (hologram); kept in extras",
        "candidates[0].groundingMetadata.groundingSupports[1]: cites no readable grounding chunk",
    ]
    assert answer.extras["unknown_grounding_chunks"] == [
        {"index": 1, "chunk": {"hologram": {"uri": "holo://lhardy"}}}
    ]
    # The support citing chunks 0 and 1 keeps chunk 0.
    assert [len(c.source_ids) for c in answer.citations] == [1, 1]


def test_out_of_range_chunk_index_is_a_diagnostic() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingSupports"][0]["groundingChunkIndices"] = [0, 9]
    grounding(response)["groundingSupports"][0]["confidenceScores"] = [0.9341, 0.5]
    grounding(response)["groundingSupports"][1]["groundingChunkIndices"] = [-1]
    answer = extract(response)
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.groundingSupports[0].groundingChunkIndices[1]: "
        "chunk 9 is out of range (4 grounding chunks)",
        "candidates[0].groundingMetadata.groundingSupports[1].groundingChunkIndices[0]: "
        "chunk -1 is out of range (4 grounding chunks)",
        "candidates[0].groundingMetadata.groundingSupports[1]: cites no readable grounding chunk",
    ]
    assert len(answer.citations) == 6
    assert answer.citations[0].source_ids == [answer.sources[0].id]


# --- confidence ---------------------------------------------------------------------------------


def test_confidence_is_the_max_and_the_scores_are_kept() -> None:
    answer = extract(final("test_stream_matches_generate_content"))
    second = answer.citations[1]
    assert second.confidence == 0.9287
    assert second.extras == {"confidence_scores": [0.9287, 0.8813]}
    assert second.raw["groundingChunkIndices"] == [1, 0]


def test_no_confidence_scores_means_no_confidence() -> None:
    answer = extract(final("test_maps_grounding"))
    assert [c.confidence for c in answer.citations] == [None, None, None]
    assert [c.extras for c in answer.citations] == [{}, {}, {}]


def test_confidence_scores_that_do_not_match_the_indices() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingSupports"][0]["confidenceScores"] = [0.9341]
    answer = extract(response)
    assert answer.citations[0].confidence == 0.9341
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.groundingSupports[0]: "
        "1 confidence scores for 2 chunk indices"
    ]


# --- answer-level data --------------------------------------------------------------------------


def test_search_queries_entry_point_and_model_go_to_the_answer() -> None:
    response = final("test_stream_matches_generate_content")
    answer = extract(response)
    assert answer.model == "gemini-2.5-flash"
    assert answer.extras["web_search_queries"] == ["富士山 標高", "富士山 最後の噴火"]
    assert (
        answer.extras["search_entry_point"]
        == grounding(response)["searchEntryPoint"]["renderedContent"]
    )
    assert answer.extras["response_id"] == response["responseId"]
    assert answer.extras["finish_reason"] == "STOP"


def test_retrieval_metadata_goes_to_the_answer() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["retrievalMetadata"] = {"googleSearchDynamicRetrievalScore": 0.8126}
    answer = extract(response, strict=True)
    assert answer.extras["retrieval_metadata"] == {"googleSearchDynamicRetrievalScore": 0.8126}


def test_empty_retrieval_metadata_is_left_out() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["retrievalMetadata"] = {}
    assert "retrieval_metadata" not in extract(response, strict=True).extras


def test_safety_finish_is_data_not_an_error() -> None:
    response = final("test_async_generate_content")
    chosen = candidate(response)
    chosen["finishReason"] = "SAFETY"
    chosen["safetyRatings"] = [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "MEDIUM", "blocked": True}
    ]
    del chosen["content"]
    del chosen["groundingMetadata"]
    answer = extract(response, strict=True)
    assert (answer.text, answer.citations, answer.diagnostics) == ("", [], [])
    assert answer.extras["finish_reason"] == "SAFETY"
    assert answer.extras["safety_ratings"][0]["blocked"] is True


def test_blocked_prompt_is_data_not_an_error() -> None:
    response = final("test_blocked_prompt")
    answer = extract(response, strict=True)
    assert answer.extras["prompt_feedback"]["blockReason"] == "SAFETY"
    assert detect_provider(response) == "gemini"
    with pytest.raises(GroundingRequiredError) as info:
        extract(response, require="citations")
    assert (info.value.provider, info.value.reason) == ("gemini", "no grounding")


def test_search_without_supports_fails_require_citations() -> None:
    response = final("test_generate_content_google_search")
    grounding(response)["groundingSupports"] = []
    answer = extract(response, strict=True)
    assert answer.citations == []
    assert len(answer.sources) == 4
    with pytest.raises(GroundingRequiredError) as info:
        extract(response, require="citations")
    assert (info.value.provider, info.value.reason) == ("gemini", "no citations")


def test_empty_grounding_metadata_is_not_grounding() -> None:
    response = final("test_async_generate_content")
    candidate(response)["groundingMetadata"] = {
        "groundingChunks": [],
        "groundingSupports": [],
        "webSearchQueries": [],
        "retrievalMetadata": {},
    }
    answer = extract(response, strict=True)
    assert (answer.citations, answer.sources) == ([], [])
    assert "web_search_queries" not in answer.extras
    with pytest.raises(GroundingRequiredError) as info:
        extract(response, require="citations")
    assert info.value.reason == "no grounding"


# --- parts --------------------------------------------------------------------------------------


def test_thoughts_and_code_are_not_answer_text() -> None:
    response = final("test_multi_part_answer")
    answer = extract(response, strict=True)
    assert answer.text == part_text(response, 1) + part_text(response, 4)
    assert answer.extras["thoughts"] == [part_text(response, 0)]
    assert [p["partIndex"] for p in answer.extras["non_text_parts"]] == [2, 3]


def test_function_calls_are_kept_in_extras() -> None:
    response = final("test_async_generate_content")
    parts = candidate(response)["content"]["parts"]
    parts.append({"functionCall": {"name": "get_weather", "args": {"ville_cible": "Garmisch"}}})
    answer = extract(response, strict=True)
    assert answer.extras["non_text_parts"] == [
        {
            "partIndex": 1,
            "functionCall": {"name": "get_weather", "args": {"ville_cible": "Garmisch"}},
        }
    ]


def test_unknown_part_type_is_a_diagnostic_and_kept() -> None:
    response = final("test_async_generate_content")
    candidate(response)["content"]["parts"].append({"hapticFeedback": {"pattern": "buzz"}})
    answer = extract(response)
    assert answer.diagnostics == [
        "candidates[0].content.parts[1]: unknown part type hapticFeedback; kept in extras"
    ]
    assert answer.extras["non_text_parts"] == [
        {"partIndex": 1, "hapticFeedback": {"pattern": "buzz"}}
    ]
    assert len(answer.citations) == 3


# --- recitation (citationMetadata) --------------------------------------------------------------


def test_recitation_byte_offsets() -> None:
    answer = extract(final("test_recitation_citation_metadata"), strict=True)
    (citation,) = answer.citations
    assert (citation.start, citation.end) == (62, 252)
    assert answer.byte_span(citation) == (67, 257)
    assert citation.extras == {"recitation": True, "license": "mit"}
    assert [s.url for s in answer.sources] == [
        "https://github.com/lumen-tools/lumen-cli/blob/main/LICENSE",
        "https://opensource.org/license/mit",
    ]


def test_vertex_noisy_recitation_is_one_summary_diagnostic() -> None:
    response = final("test_vertex_recitation_noisy")
    entries = candidate(response)["citationMetadata"]["citations"]
    assert len(entries) == 13
    assert entries.count({}) == 4
    answer = extract(response)
    assert answer.diagnostics == [
        "candidates[0].citationMetadata.citations: skipped 4 empty citation entries"
    ]
    assert len(answer.sources) == 2  # 8 uri-only entries, 2 distinct URLs
    (citation,) = answer.citations
    assert citation.text == "España se constituye en un Estado social y democrático de Derecho"
    assert citation.extras["publication_date"] == {"year": 1978, "month": 12, "day": 29}
    with pytest.raises(CitationError):
        extract(response, strict=True)


def test_recitation_with_invalid_indices_is_a_diagnostic() -> None:
    response = final("test_recitation_citation_metadata")
    entry = candidate(response)["citationMetadata"]["citationSources"][0]
    entry["endIndex"] = 9_999
    answer = extract(response)
    assert answer.citations == []
    assert len(answer.sources) == 2
    assert answer.diagnostics == [
        "candidates[0].citationMetadata.citationSources[0]: byte offsets 67..9999 do not fit the "
        f"answer text ({len(part_text(response).encode())} bytes)"
    ]


# --- candidates ---------------------------------------------------------------------------------


def test_candidate_option() -> None:
    response = final("test_multiple_candidates")
    first, second = extract(response), extract(response, candidate=1)
    assert first.text.startswith("Amsterdam heeft")
    assert second.text.startswith("In Amsterdam liggen")
    assert first.diagnostics == second.diagnostics == []
    assert extract(response, candidate=5).diagnostics == [
        "candidate 5 is out of range: the response has 2 candidate(s)"
    ]
    assert extract(response, candidate=-1).diagnostics == [
        "candidate -1 is out of range: the response has 2 candidate(s)"
    ]


# --- shapes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FINALS)
def test_snake_case_with_nulls_reads_like_camel_case(name: str) -> None:
    response = final(name)
    assert_same_answer(extract(snake_case(response)), extract(response))


def test_detection() -> None:
    assert detect_provider({"usageMetadata": {"promptTokenCount": 3}}) == "gemini"
    assert detect_provider({"prompt_feedback": {"block_reason": "OTHER"}}) == "gemini"
    assert detect_provider({"candidates": []}) == "gemini"
    assert detect_provider({"candidates": "none"}) is None


def test_no_candidates_without_feedback_is_a_diagnostic() -> None:
    answer = extract({"candidates": [], "modelVersion": "gemini-2.5-flash"})
    assert answer.diagnostics == ["response has no candidates"]


# --- streams ------------------------------------------------------------------------------------


def test_stream_as_sse_text_and_as_a_json_array() -> None:
    name = "test_stream_matches_generate_content"
    expected = extract(final(name))
    sse = cassette_bodies(f"{CASSETTES}/{name}.yaml")[1]
    assert extract(sse) == expected
    assert collect_stream(sse) == expected
    # REST streamGenerateContent without alt=sse answers one JSON array of chunks.
    assert extract(json.dumps(stream(name), ensure_ascii=False)) == expected


def test_stream_cut_short_says_so() -> None:
    events = stream("test_stream_matches_generate_content")
    answer = collect_stream(events[:-1])
    assert answer.text == "".join(
        e["candidates"][0]["content"]["parts"][0]["text"] for e in events[:-1]
    )
    assert answer.citations == []
    assert answer.diagnostics == [
        "stream ended before a chunk with finishReason for candidate(s) 0: "
        "the answer may be cut short"
    ]
    check_invariants(answer)


def test_stream_metadata_split_over_chunks_is_merged() -> None:
    name = "test_async_stream_matches_generate_content"
    events = stream(name)
    early = events[1]["candidates"][0]["groundingMetadata"]
    assert set(early) == {"webSearchQueries", "searchEntryPoint"}
    assert_same_answer(collect_stream(events), extract(final(name)))


def test_stream_metadata_sent_in_pieces_is_merged() -> None:
    name = "test_stream_matches_generate_content"
    events = stream(name)
    metadata = events[-1]["candidates"][0]["groundingMetadata"]
    # Chunks and queries come one chunk early; the last chunk only adds the supports.
    events[-2]["candidates"][0]["groundingMetadata"] = {
        k: v for k, v in metadata.items() if k != "groundingSupports"
    }
    events[-1]["candidates"][0]["groundingMetadata"] = {
        "groundingSupports": metadata["groundingSupports"]
    }
    assert_same_answer(collect_stream(events), extract(final(name)))


def test_stream_grounding_before_the_last_text() -> None:
    name = "test_stream_matches_generate_content"
    events = stream(name)
    last = events[-1]["candidates"][0]
    events[-2]["candidates"][0]["groundingMetadata"] = last.pop("groundingMetadata")
    collector = StreamCollector()
    counts = [len(collector.feed(event)) for event in events]
    # The third support ends in the last chunk's text: it is announced when that text arrives.
    assert counts == [0, 0, 2, 1]
    assert_same_answer(collector.result(), extract(final(name)))


def test_stream_thoughts_stay_apart_from_the_answer() -> None:
    name = "test_stream_matches_generate_content"
    events = stream(name)
    thought = {"text": "**富士山について調べる**", "thought": True}
    events[0]["candidates"][0]["content"]["parts"].insert(0, thought)
    answer = collect_stream(events, strict=True)
    assert answer.extras["thoughts"] == ["**富士山について調べる**"]
    assert answer.text == extract(final(name)).text


def test_stream_of_several_candidates_reads_the_chosen_one() -> None:
    response = final("test_multiple_candidates")
    events = []
    for n, chosen in enumerate(response["candidates"]):
        text = chosen["content"]["parts"][0]["text"]
        head = {"content": {"parts": [{"text": text[:20]}], "role": "model"}, "index": n}
        tail = {
            **copy.deepcopy(chosen),
            "content": {"parts": [{"text": text[20:]}], "role": "model"},
        }
        events.append({"candidates": [head], "modelVersion": response["modelVersion"]})
        events.append({"candidates": [tail], "modelVersion": response["modelVersion"]})
    events[-1].update(usageMetadata=response["usageMetadata"], responseId=response["responseId"])
    for n in (0, 1):
        assert collect_stream(events, candidate=n) == extract(response, candidate=n)
    assert collect_stream(events[:-1], candidate=0).diagnostics == [
        "stream ended before a chunk with finishReason for candidate(s) 1: "
        "the answer may be cut short"
    ]


# --- what frameworks keep of a response -------------------------------------------------------

FIRST = "Le Mont-Saint-Michel accueille près de trois millions de visiteurs par an."
SECOND = "L’abbaye date du XIe siècle ⛪."
ANSWER = f"{FIRST} {SECOND}"
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"


def documented_grounding() -> dict[str, Any]:
    """``groundingMetadata`` as the API documents it: segment offsets in UTF-8 bytes."""
    first_end = len(FIRST.encode())
    return {
        "webSearchQueries": ["Mont-Saint-Michel fréquentation"],
        "searchEntryPoint": {"renderedContent": "<div>…</div>"},
        "groundingChunks": [
            {"web": {"uri": f"{REDIRECT}AbC", "title": "ot-montsaintmichel.com"}},
            {"web": {"uri": f"{REDIRECT}DeF", "title": "fr.wikipedia.org"}},
        ],
        "groundingSupports": [
            {
                "segment": {"endIndex": first_end, "text": FIRST},
                "groundingChunkIndices": [0],
                "confidenceScores": [0.93],
            },
            {
                "segment": {
                    "startIndex": first_end + 1,
                    "endIndex": len(ANSWER.encode()),
                    "text": SECOND,
                },
                "groundingChunkIndices": [1],
            },
        ],
    }


def documented_response() -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": ANSWER}]},
                "finishReason": "STOP",
                "groundingMetadata": documented_grounding(),
            }
        ],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 31, "totalTokenCount": 40},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-0123",
    }


def bare_candidate(**candidate: Any) -> dict[str, Any]:
    """A candidate's python-mode dump with response fields merged in, as LlamaIndex keeps it."""
    return snake_case(
        {
            **candidate,
            "usageMetadata": {
                "promptTokenCount": 9,
                "candidatesTokenCount": 31,
                "totalTokenCount": 40,
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r-0123",
        }
    )


def test_a_bare_candidate_reads_like_its_response() -> None:
    expected = extract(documented_response())
    assert [c.text for c in expected.citations] == [FIRST, SECOND]
    bare = bare_candidate(**candidate(documented_response()))
    assert detect_provider(bare) == "gemini"
    assert extract(bare) == expected


def test_a_stream_of_bare_candidates_reads_like_the_response() -> None:
    chunks = [
        bare_candidate(content={"role": "model", "parts": [{"text": FIRST + " "}]}),
        bare_candidate(
            content={"role": "model", "parts": [{"text": SECOND}]},
            finishReason="STOP",
            groundingMetadata=documented_grounding(),
        ),
    ]
    assert_same_answer(collect_stream(chunks), extract(documented_response()))


def test_content_items_and_grounding_fields_read_like_the_response() -> None:
    # LangChain's Gemini message: typed content items and snake_case grounding metadata.
    expected = extract(documented_response())
    fields = {
        "grounding_metadata": snake_case(documented_grounding()),
        "finish_reason": "STOP",
        "model": "gemini-2.5-flash",
        "safety_ratings": [],
    }
    items = [{"type": "thinking", "thinking": "Chercher la fréquentation."}, ANSWER]
    answer = extract_content(items, "gemini", fields=fields)
    assert (answer.text, answer.citations, answer.sources, answer.model) == (
        expected.text,
        expected.citations,
        expected.sources,
        expected.model,
    )
    assert answer.extras["thoughts"] == ["Chercher la fréquentation."]
    assert extract_content(ANSWER, fields=fields).citations == expected.citations  # detected


def test_v1_citations_give_the_grounding_back() -> None:
    # LangChain's v1 Gemini citations keep the byte offsets and the chunk index in extras.
    supports = documented_grounding()["groundingSupports"]
    annotations = [
        {
            "type": "citation",
            "url": f"{REDIRECT}AbC",
            "title": "ot-montsaintmichel.com",
            "start_index": supports[0]["segment"].get("startIndex", 0),
            "end_index": supports[0]["segment"]["endIndex"],
            "cited_text": FIRST,
            "extras": {"google_ai_metadata": {"grounding_chunk_index": 0}},
        }
    ]
    answer = extract_content(
        [{"type": "text", "text": ANSWER, "annotations": annotations}], "gemini"
    )
    assert [c.text for c in answer.citations] == [FIRST]
    assert answer.diagnostics == []
