"""`from_ai_message` on each provider's LangChain shape, and the v1 `Citation` round trip."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from unicite import (
    CharLocation,
    Citation,
    CitationError,
    CitedAnswer,
    PageLocation,
    Source,
    UrlLocation,
    UsageError,
    extract,
)
from unicite_langchain import from_ai_message, to_citation_annotations

EIFFEL = "https://fr.wikipedia.org/wiki/Tour_Eiffel"


def without_raw(answer: CitedAnswer) -> dict[str, Any]:
    return answer.model_dump(
        mode="json", exclude={"sources": {"__all__": {"raw"}}, "citations": {"__all__": {"raw"}}}
    )


# --- no provider ------------------------------------------------------------------------------


def test_plain_message_has_text_and_no_citations() -> None:
    answer = from_ai_message(AIMessage("Bonjour 👋 [1]"))
    assert answer.text == "Bonjour 👋 [1]"
    assert answer.citations == []
    assert answer.provider is None
    assert answer.diagnostics == []


def test_not_a_message() -> None:
    with pytest.raises(UsageError):
        from_ai_message({"content": "hi"})  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        to_citation_annotations("text")  # type: ignore[arg-type]


# --- OpenAI -----------------------------------------------------------------------------------

TEXT = "La tour Eiffel mesure 330 mètres ([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel))."
LINK_START = TEXT.index("([")
URL_CITATION = {
    "type": "url_citation",
    "start_index": LINK_START,
    "end_index": len(TEXT) - 1,
    "title": "Tour Eiffel — Wikipédia",
    "url": EIFFEL,
}
WEB_SEARCH = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {
        "type": "search",
        "query": "hauteur tour Eiffel",
        "sources": [{"type": "url", "url": EIFFEL}],
    },
}


def responses_api(text: str, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    """The Responses API body the LangChain message below stands for."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-5.2",
        "output": [
            WEB_SEARCH,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": annotations}],
            },
        ],
    }


def test_openai_v03_message_with_tool_outputs() -> None:
    """langchain-openai 0.3 ("v0" output) kept web search calls in additional_kwargs."""
    message = AIMessage(
        content=[{"type": "text", "text": TEXT, "annotations": [URL_CITATION]}],
        additional_kwargs={"tool_outputs": [WEB_SEARCH]},
        response_metadata={
            "model_provider": "openai",
            "id": "resp_1",
            "model_name": "gpt-5.2",
            "status": "completed",
        },
        id="msg_1",
    )
    answer = from_ai_message(message)
    assert without_raw(answer) == without_raw(extract(responses_api(TEXT, [URL_CITATION])))
    assert answer.citations[0].text == "La tour Eiffel mesure 330 mètres"
    assert answer.citations[0].marker_span == (LINK_START, len(TEXT) - 1)
    assert answer.extras["web_search_queries"] == ["hauteur tour Eiffel"]


def test_openai_file_citation_index_is_restored() -> None:
    """LangChain renames a file citation's ``index`` to ``file_index``; it is renamed back."""
    text = "Le rapport fixe le budget à 12 M€."
    raw = {
        "type": "file_citation",
        "file_id": "file-1",
        "filename": "rapport.pdf",
        "index": len(text) - 1,
    }
    lc = {k: v for k, v in raw.items() if k != "index"} | {"file_index": len(text) - 1}
    message = AIMessage(
        content=[{"type": "text", "text": text, "annotations": [lc], "id": "msg_1"}],
        response_metadata={
            "model_provider": "openai",
            "model_name": "gpt-5.2",
            "id": "resp_1",
            "status": "completed",
        },
    )
    answer = from_ai_message(message)
    expected = extract(responses_api(text, [raw]))
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (c.start, c.end, c.text) for c in expected.citations
    ]
    assert answer.citations[0].text == "Le rapport fixe le budget à 12 M€."
    assert answer.sources[0].title == "rapport.pdf"


def test_openai_streamed_chunks_add_up_to_the_same_answer() -> None:
    """Responses stream chunks as langchain-openai emits them (text deltas, annotation added)."""
    half = TEXT.index("330")
    chunks = [
        AIMessageChunk(content=[{"type": "text", "text": TEXT[:half], "index": 0, "id": "msg_1"}]),
        AIMessageChunk(content=[{"type": "text", "text": TEXT[half:], "index": 0}]),
        AIMessageChunk(
            content=[{"type": "text", "text": "", "annotations": [URL_CITATION], "index": 0}]
        ),
        AIMessageChunk(
            content=[], response_metadata={"model_provider": "openai"}, chunk_position="last"
        ),
    ]
    merged = chunks[0] + chunks[1:]
    whole = AIMessage(
        content=[{"type": "text", "text": TEXT, "annotations": [URL_CITATION], "id": "msg_1"}],
        response_metadata={"model_provider": "openai"},
    )
    assert from_ai_message(merged).citations == from_ai_message(whole).citations
    assert from_ai_message(merged).citations


def test_strict_raises_on_odd_provider_data() -> None:
    message = AIMessage(
        content=[{"type": "text", "text": "x", "annotations": [{"type": "mystery_citation"}]}],
        response_metadata={"model_provider": "openai"},
    )
    assert from_ai_message(message).diagnostics
    with pytest.raises(CitationError):
        from_ai_message(message, strict=True)


# --- Anthropic --------------------------------------------------------------------------------


def test_anthropic_web_search_blocks() -> None:
    content: list[str | dict[str, Any]] = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "hauteur tour Eiffel"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [
                {
                    "type": "web_search_result",
                    "url": EIFFEL,
                    "title": "Tour Eiffel — Wikipédia",
                    "encrypted_content": "e1",
                    "page_age": None,
                },
                {
                    "type": "web_search_result",
                    "url": "https://www.toureiffel.paris/fr",
                    "title": "Site officiel",
                    "encrypted_content": "e2",
                    "page_age": None,
                },
            ],
        },
        {"type": "text", "text": "D'après mes recherches, "},
        {
            "type": "text",
            "text": "la tour mesure 330 mètres.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": EIFFEL,
                    "title": "Tour Eiffel — Wikipédia",
                    "cited_text": "Elle mesure 330 mètres avec ses antennes.",
                    "encrypted_index": "Eo8BCioI",
                }
            ],
        },
    ]
    message = AIMessage(content=content, response_metadata={"model_provider": "anthropic"})
    answer = from_ai_message(message)
    assert answer.text == message.text == "D'après mes recherches, la tour mesure 330 mètres."
    [citation] = answer.citations
    assert citation.text == "la tour mesure 330 mètres."
    assert citation.quote == "Elle mesure 330 mètres avec ses antennes."
    assert citation.location == UrlLocation(url=EIFFEL)
    assert [s.rank for s in answer.sources] == [0, 1]
    assert answer.extras["search_queries"] == ["hauteur tour Eiffel"]


def test_anthropic_page_citation_in_v1_output() -> None:
    """v1 keeps a page citation's fields in extras: the citation type comes back from them."""
    message = AIMessage(
        content=[
            {
                "type": "text",
                "text": "Le chiffre d'affaires a doublé.",
                "annotations": [
                    {
                        "type": "citation",
                        "title": "rapport.pdf",
                        "cited_text": "Le chiffre d'affaires a doublé en 2024.",
                        "extras": {
                            "document_index": 0,
                            "start_page_number": 3,
                            "end_page_number": 4,
                        },
                    }
                ],
            }
        ],
        response_metadata={"model_provider": "anthropic", "output_version": "v1"},
    )
    answer = from_ai_message(message)
    [citation] = answer.citations
    assert citation.location == PageLocation(start_page=3, end_page=4, document_index=0)
    assert answer.sources[0].title == "rapport.pdf"
    assert answer.diagnostics == []


# --- Gemini -----------------------------------------------------------------------------------


def test_gemini_parts_with_thoughts_keep_their_indices() -> None:
    """A thought part comes first: segment partIndex 2 is the second text part, in bytes."""
    first, second = "Der Kölner Dom ist 157 Meter hoch. ", "Er wurde 1880 vollendet."
    message = AIMessage(
        content=[
            {"type": "thinking", "thinking": "Höhe und Baujahr nachsehen…"},
            {"type": "text", "text": first},
            {"type": "text", "text": second},
        ],
        response_metadata={
            "model_provider": "google_genai",
            "model_name": "gemini-2.5-flash",
            "grounding_metadata": {
                "grounding_chunks": [
                    {
                        "web": {
                            "uri": "https://de.wikipedia.org/wiki/K%C3%B6lner_Dom",
                            "title": "wikipedia.org",
                        }
                    }
                ],
                "grounding_supports": [
                    {
                        "segment": {
                            "part_index": 1,
                            "start_index": 0,
                            "end_index": len(first.strip().encode()),
                            "text": first.strip(),
                        },
                        "grounding_chunk_indices": [0],
                        "confidence_scores": None,
                    },
                    {
                        "segment": {
                            "part_index": 2,
                            "start_index": 9,
                            "end_index": len(second.encode()),
                            "text": "1880 vollendet.",
                        },
                        "grounding_chunk_indices": [0],
                        "confidence_scores": None,
                    },
                ],
                "web_search_queries": ["Kölner Dom Höhe"],
            },
        },
    )
    answer = from_ai_message(message)
    assert [c.text for c in answer.citations] == [
        "Der Kölner Dom ist 157 Meter hoch.",
        "1880 vollendet.",
    ]
    assert answer.extras["thoughts"] == ["Höhe und Baujahr nachsehen…"]
    assert answer.provider == "gemini"
    assert answer.model == "gemini-2.5-flash"


# --- the v1 round trip ----------------------------------------------------------------------

WORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12
)


@st.composite
def answers(draw: st.DrawFn) -> CitedAnswer:
    text = draw(st.lists(WORDS, min_size=1, max_size=12).map(" ".join))
    count = draw(st.integers(1, 3))
    sources = [
        Source(
            url=draw(st.none() | st.just(f"https://site{n}.example/page-é/{n}")),
            title=draw(st.none() | WORDS),
            snippet=draw(st.none() | WORDS),
            kind=draw(st.sampled_from(["web", "document", "tool"])),
            rank=draw(st.none() | st.integers(0, 9)),
            provider_id=f"p{n}",
        )
        for n in range(count)
    ]
    citations = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        cited = draw(
            st.lists(st.sampled_from(sources), min_size=1, max_size=count, unique_by=lambda s: s.id)
        )
        citations.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=[s.id for s in cited],
                quote=draw(st.none() | WORDS),
                location=draw(st.none() | st.just(CharLocation(start=0, end=3))),
                origin=draw(st.sampled_from(["native", "marker", "posthoc-lexical"])),
                confidence=draw(st.none() | st.floats(0, 1)),
                marker_span=draw(st.none() | st.just((end, end))),
            )
        )
    return CitedAnswer(text=text, sources=sources, citations=citations)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers())
def test_v1_annotations_round_trip(answer: CitedAnswer) -> None:
    annotations = to_citation_annotations(answer)
    assert all(a["type"] == "citation" for a in annotations)
    spans = {(c.start, c.end) for c in answer.citations}
    for annotation in annotations:
        # The standard fields index the response text, as LangChain's v1 type says.
        assert (annotation["start_index"], annotation["end_index"]) in spans  # type: ignore[typeddict-item]
    message = AIMessage(
        content=[{"type": "text", "text": answer.text, "annotations": annotations}],
        response_metadata={"output_version": "v1"},
    )
    # LangChain itself reads them as standard annotations.
    assert message.content_blocks[0]["annotations"] == annotations  # type: ignore[typeddict-item]
    back = from_ai_message(message)
    assert back.text == answer.text
    assert without_raw(back)["citations"] == without_raw(answer)["citations"]
    assert {s.id: s.model_dump(exclude={"raw"}) for s in back.sources} == {
        s.id: s.model_dump(exclude={"raw"}) for s in answer.cited_sources()
    }
    assert back.diagnostics == []


def test_annotations_of_a_native_answer() -> None:
    answer = extract(responses_api(TEXT, [URL_CITATION]))
    [annotation] = to_citation_annotations(answer)
    assert annotation["url"] == EIFFEL  # type: ignore[typeddict-item]
    assert annotation["title"] == "Tour Eiffel — Wikipédia"  # type: ignore[typeddict-item]
    start, end = annotation["start_index"], annotation["end_index"]  # type: ignore[typeddict-item]
    assert answer.text[start:end] == "La tour Eiffel mesure 330 mètres"
    message = AIMessage(
        content=[{"type": "text", "text": answer.text, "annotations": [annotation]}]
    )
    assert without_raw(from_ai_message(message))["citations"] == without_raw(answer)["citations"]


def test_v1_annotation_without_span_cites_its_block() -> None:
    message = AIMessage(
        content=[
            {"type": "text", "text": "Intro. "},
            {
                "type": "text",
                "text": "  Claim with a source.  ",
                "annotations": [{"type": "citation", "url": EIFFEL, "title": "T"}],
            },
        ],
        response_metadata={"model_provider": "someone"},
    )
    answer = from_ai_message(message)
    assert [c.text for c in answer.citations] == ["Claim with a source."]
    assert answer.provider == "someone"


def test_v1_annotation_out_of_range_is_a_diagnostic() -> None:
    message = AIMessage(
        content=[
            {
                "type": "text",
                "text": "Short.",
                "annotations": [
                    {"type": "citation", "url": EIFFEL, "start_index": 2, "end_index": 99},
                    {"type": "non_standard_annotation", "value": {"k": 1}},
                ],
            }
        ]
    )
    answer = from_ai_message(message)
    assert answer.citations == []
    assert [s.url for s in answer.sources] == [EIFFEL]
    assert len(answer.diagnostics) == 2


def test_human_message_text_is_read_as_is() -> None:
    assert from_ai_message(HumanMessage("Frage?")).text == "Frage?"
