"""Real RAG chains over ChatOpenAI, ChatAnthropic and ChatGoogleGenerativeAI, replaying cassettes.

Each chain retrieves from an in-memory vector store and asks a provider that cites natively
(web search, document citations, Google Search grounding). The handler must give the same
citations as `unicite.extract` on the raw HTTP response, when invoked and when streamed, and in
LangChain's v1 output format too.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")
pytest.importorskip("langchain_google_genai")
pytest.importorskip("vcr")

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI

from unicite import CharLocation, CitedAnswer, extract, normalize_url
from unicite_langchain import (
    CitationCallbackHandler,
    citation_prompt,
    from_ai_message,
    number_sources,
)

OPENAI_KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")
ANTHROPIC_KEY = os.getenv("ANTHROPIC_API_KEY", "mock-api-key")
GEMINI_KEY = os.getenv("GEMINI_API_KEY", "mock-api-key")
MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"

OUTPUT_VERSIONS = pytest.mark.parametrize("version", [None, "v1"])
"""Streams read the same in LangChain's default output and in its v1 standard blocks."""


@pytest.fixture(autouse=True)
def _httpx_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    # google-genai prefers httpx2 when it is installed, and vcrpy patches httpx and aiohttp only.
    monkeypatch.setenv("GOOGLE_GENAI_HTTP_CLIENT", "httpx")


# --- the chains -------------------------------------------------------------------------------


def numbered_rag(retriever: Runnable[Any, Any], model: Runnable[Any, Any]) -> Runnable[Any, str]:
    """Retrieved documents numbered in the system prompt, the model's answer as text."""
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | StrOutputParser()
    )


def openai_responses(**options: Any) -> Runnable[Any, Any]:
    model = ChatOpenAI(model="gpt-5.2", use_responses_api=True, api_key=OPENAI_KEY, **options)
    return model.bind_tools([{"type": "web_search"}])


def openai_chat_search(**options: Any) -> Runnable[Any, Any]:
    return ChatOpenAI(model="gpt-4o-search-preview", api_key=OPENAI_KEY, **options)


def gemini(**options: Any) -> Runnable[Any, Any]:
    model = ChatGoogleGenerativeAI(model="gemini-2.5-flash", api_key=GEMINI_KEY, **options)
    return model.bind_tools([{"google_search": {}}])


def as_documents(inputs: dict[str, Any]) -> list[HumanMessage]:
    """Retrieved documents as Anthropic ``document`` blocks with citations enabled."""
    blocks: list[str | dict[str, Any]] = [
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": doc.page_content},
            "title": doc.metadata["title"],
            "citations": {"enabled": True},
        }
        for doc in inputs["documents"]
    ]
    blocks.append({"type": "text", "text": inputs["question"]})
    return [HumanMessage(content=blocks)]


def anthropic_rag(retriever: Runnable[Any, Any], **options: Any) -> Runnable[Any, str]:
    model = ChatAnthropic(
        model="claude-sonnet-4-6", max_tokens=1024, api_key=ANTHROPIC_KEY, **options
    )
    return (
        {"documents": retriever, "question": RunnablePassthrough()}
        | RunnableLambda(as_documents)
        | model
        | StrOutputParser()
    )


# --- what the handler must agree with ----------------------------------------------------------


def raw_response(vcr: Any) -> Any:
    """The provider's own response body in the cassette (JSON, or the SSE text)."""
    body = vcr.responses[0]["body"]["string"]
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    return text if text.lstrip().startswith(("event:", "data:")) else json.loads(text)


def spans(answer: CitedAnswer) -> list[tuple[int, int, str, list[str]]]:
    """Each citation with the URLs (or titles) of its sources: comparable across readings."""
    out = []
    for citation in answer.citations:
        names = []
        for sid in citation.source_ids:
            source = answer.source(sid)
            assert source is not None
            names.append(source.url or source.title or sid)
        # Sorted: `unicite.cite` lists a citation's sources by their (renumbered) order.
        out.append((citation.start, citation.end, citation.text, sorted(names)))
    return out


def comparable(answer: CitedAnswer) -> dict[str, Any]:
    """An answer without what differs between two runs of the same chain (run ids)."""
    data = answer.model_dump(mode="json", exclude={"extras"})
    for source in data["sources"]:
        source.pop("origin")
        source.pop("raw")
    for citation in data["citations"]:
        citation.pop("raw")
    return data


def run(chain: Runnable[Any, str], question: str, *, stream: bool) -> tuple[str, CitedAnswer]:
    handler = CitationCallbackHandler()
    config = {"callbacks": [handler]}
    if stream:
        text = "".join(chain.stream(question, config=config))
    else:
        text = chain.invoke(question, config=config)
    assert handler.answer is not None
    assert handler.active_runs == 0
    return text, handler.answer


# --- OpenAI -----------------------------------------------------------------------------------


@pytest.mark.vcr
def test_openai_responses_web_search(vcr: Any, retriever: Any, question: str) -> None:
    text, answer = run(numbered_rag(retriever, openai_responses()), question, stream=False)

    assert answer.text == text
    assert answer.provider == "openai"
    assert answer.extras["citation_origin"] == "native"
    assert {c.origin for c in answer.citations} == {"native"}
    # The same citations as the core reads from the raw Responses API body.
    assert spans(answer) == spans(extract(raw_response(vcr)))
    assert [c.text for c in answer.citations] == [
        "Le viaduc de Millau culmine à 343 mètres au sommet de son plus haut pylône",
        "Il a été inauguré le 14 décembre 2004",
    ]
    first = answer.sources[0]
    # The web page the model cited is the retrieved document: one source, with its text.
    assert first.url is not None
    assert first.url.startswith(MILLAU)
    assert first.content is not None
    assert first.content.startswith("Le viaduc de Millau culmine")
    # Only the cited sources are listed (unicite.cite's default, sources="cited").
    assert len(answer.sources) == len({sid for c in answer.citations for sid in c.source_ids})


@pytest.mark.vcr
@pytest.mark.default_cassette("test_openai_responses_web_search_stream.yaml")
@OUTPUT_VERSIONS
def test_openai_responses_web_search_stream(
    vcr: Any, retriever: Any, question: str, version: str | None
) -> None:
    model = openai_responses(output_version=version)
    text, answer = run(numbered_rag(retriever, model), question, stream=True)
    assert answer.text == text
    invoked = extract(raw_response(vcr))
    assert spans(answer) == spans(invoked)
    assert answer.extras["citation_origin"] == "native"


@pytest.mark.vcr
def test_openai_responses_v1_output(vcr: Any, retriever: Any, question: str) -> None:
    """``output_version="v1"`` standard blocks: annotations and web search read back."""
    model = openai_responses(output_version="v1")
    _, answer = run(numbered_rag(retriever, model), question, stream=False)
    assert spans(answer) == spans(extract(raw_response(vcr)))
    assert answer.extras["web_search_queries"] == ["viaduc de Millau hauteur inauguration"]


@pytest.mark.vcr
def test_openai_chat_search_links(vcr: Any, retriever: Any, question: str) -> None:
    """langchain-openai drops Chat Completions annotations: the inline links give them back."""
    text, answer = run(numbered_rag(retriever, openai_chat_search()), question, stream=False)
    raw = extract(raw_response(vcr))
    assert answer.text == text == raw.text
    assert [(c.start, c.end, c.marker_span) for c in answer.citations] == [
        (c.start, c.end, c.marker_span) for c in raw.citations
    ]
    # A cited page that was retrieved too is the retrieved source (the same normalized URL).
    assert [normalize_url(answer.source(c.source_ids[0]).url) for c in answer.citations] == [  # type: ignore[arg-type,union-attr]
        normalize_url(raw.source(c.source_ids[0]).url)  # type: ignore[arg-type,union-attr]
        for c in raw.citations
    ]
    assert all(c.extras.get("recovered_from") == "inline_link" for c in answer.citations)


@pytest.mark.vcr
def test_openai_chat_search_links_stream(vcr: Any, retriever: Any, question: str) -> None:
    _, streamed = run(numbered_rag(retriever, openai_chat_search()), question, stream=True)
    raw = extract(raw_response(vcr))
    assert [(c.start, c.end) for c in streamed.citations] == [
        (c.start, c.end) for c in raw.citations
    ]


# --- Anthropic --------------------------------------------------------------------------------


@pytest.mark.vcr
def test_anthropic_document_citations(vcr: Any, retriever: Any, question: str) -> None:
    text, answer = run(anthropic_rag(retriever), question, stream=False)

    assert answer.text == text
    assert answer.provider == "anthropic"
    raw = extract(raw_response(vcr))
    assert [(c.start, c.end, c.text, c.quote) for c in answer.citations] == [
        (c.start, c.end, c.text, c.quote) for c in raw.citations
    ]
    # document_index 0 of the request is the first retrieved document: the citation names
    # the retrieved source itself (URL, title, text), not an anonymous "document 0".
    millau = answer.source(answer.citations[0].source_ids[0])
    assert millau is not None
    assert millau.url == MILLAU
    assert millau.title == "Viaduc de Millau — Wikipédia"
    location = answer.citations[0].location
    assert isinstance(location, CharLocation)
    assert millau.content is not None
    assert millau.content[location.start : location.end] == answer.citations[0].quote
    assert len(answer.sources) == 1  # the cited source only


@pytest.mark.vcr
@pytest.mark.default_cassette("test_anthropic_document_citations_stream.yaml")
@OUTPUT_VERSIONS
def test_anthropic_document_citations_stream(
    vcr: Any, retriever: Any, question: str, version: str | None
) -> None:
    """citations_delta chunks merged by LangChain give the answer a final message gives."""
    chain = anthropic_rag(retriever, output_version=version)
    text, streamed = run(chain, question, stream=True)
    assert streamed.text == text
    raw = extract(raw_response(vcr))
    assert [(c.start, c.end, c.quote) for c in streamed.citations] == [
        (c.start, c.end, c.quote) for c in raw.citations
    ]
    assert streamed.source(streamed.citations[0].source_ids[0]).url == MILLAU  # type: ignore[union-attr]


@pytest.mark.vcr
def test_anthropic_v1_output(vcr: Any, retriever: Any, question: str) -> None:
    _, answer = run(anthropic_rag(retriever, output_version="v1"), question, stream=False)
    raw = extract(raw_response(vcr))
    assert [(c.start, c.end, c.quote, c.location) for c in answer.citations] == [
        (c.start, c.end, c.quote, c.location) for c in raw.citations
    ]
    assert answer.source(answer.citations[0].source_ids[0]).url == MILLAU  # type: ignore[union-attr]


# --- Gemini -----------------------------------------------------------------------------------


@pytest.mark.vcr
def test_gemini_grounding(vcr: Any, retriever: Any, question: str) -> None:
    model = gemini()
    handler = CitationCallbackHandler()
    chain = {"sources": retriever | number_sources(), "question": RunnablePassthrough()} | (
        citation_prompt() | model
    )
    message = chain.invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert isinstance(message, AIMessage)

    raw = extract(raw_response(vcr))
    assert spans(answer) == spans(raw)
    assert answer.extras["citation_origin"] == "native"
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text
    # Segment offsets are UTF-8 bytes: LangChain's own v1 translation uses them as str
    # indices, which miss on this French text; unicite converts them.
    lc_citations = [
        a for b in message.content_blocks if b["type"] == "text" for a in b.get("annotations", [])
    ]
    assert lc_citations
    for lc in lc_citations:
        # (A segment starting at 0 has no startIndex in the JSON: LangChain leaves it out too.)
        start, end = lc.get("start_index", 0), lc["end_index"]  # type: ignore[typeddict-item]
        assert answer.text[start:end] != lc["cited_text"]  # type: ignore[typeddict-item]
        assert any(c.text == lc["cited_text"] for c in answer.citations)  # type: ignore[typeddict-item]


@pytest.mark.vcr
@pytest.mark.default_cassette("test_gemini_grounding_stream.yaml")
@OUTPUT_VERSIONS
def test_gemini_grounding_stream(
    vcr: Any, retriever: Any, question: str, version: str | None
) -> None:
    model = gemini(output_version=version)
    text, streamed = run(numbered_rag(retriever, model), question, stream=True)
    assert streamed.text == text
    raw = extract(raw_response(vcr))
    assert spans(streamed) == spans(raw)


@pytest.mark.vcr
def test_gemini_v1_output(vcr: Any, retriever: Any, question: str) -> None:
    """v1 content keeps ``grounding_metadata`` in the response metadata: offsets stay right."""
    _, answer = run(numbered_rag(retriever, gemini(output_version="v1")), question, stream=False)
    assert spans(answer) == spans(extract(raw_response(vcr)))


def test_gemini_v1_annotations_without_metadata() -> None:
    """A v1 message whose grounding metadata is gone: the byte offsets in the annotations are
    still read as bytes of the text they index."""
    text = "Le viaduc de Millau culmine à 343 mètres. Il a été inauguré en 2004."
    first = "Le viaduc de Millau culmine à 343 mètres."
    second = "Il a été inauguré en 2004."
    b1 = len(first.encode())
    b2 = len(text.encode())
    message = AIMessage(
        content=[
            {
                "type": "text",
                "text": text,
                "annotations": [
                    {
                        "type": "citation",
                        "url": MILLAU,
                        "title": "wikipedia.org",
                        "start_index": 0,
                        "end_index": b1,
                        "cited_text": first,
                        "extras": {"google_ai_metadata": {"grounding_chunk_index": 0}},
                    },
                    {
                        "type": "citation",
                        "url": MILLAU,
                        "title": "wikipedia.org",
                        "start_index": b1 + 1,
                        "end_index": b2,
                        "cited_text": second,
                        "extras": {"google_ai_metadata": {"grounding_chunk_index": 0}},
                    },
                ],
            }
        ],
        response_metadata={"model_provider": "google_genai", "output_version": "v1"},
    )
    answer = from_ai_message(message)
    assert [c.text for c in answer.citations] == [first, second]
    assert answer.diagnostics == []


@pytest.mark.vcr
@pytest.mark.default_cassette("test_openai_chat_search_links.yaml")
def test_openai_chat_search_links_v1_output(vcr: Any, retriever: Any, question: str) -> None:
    """Chat Completions in v1 blocks is still text with links: they are read the same way."""
    model = openai_chat_search(output_version="v1")
    _, answer = run(numbered_rag(retriever, model), question, stream=False)
    raw = extract(raw_response(vcr))
    assert [(c.start, c.end) for c in answer.citations] == [(c.start, c.end) for c in raw.citations]
