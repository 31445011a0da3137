"""llama-index-llms-google-genai replaying cassettes: Gemini grounding through LlamaIndex."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.google_genai")
pytest.importorskip("google.genai")

import os
from typing import Any

import google.genai
from _llamaindex_fakes import build_index, corpus_nodes
from google.genai import types
from llama_index.core.llms import ChatMessage
from llama_index.llms.google_genai import GoogleGenAI

from unicite import render
from unicite_llamaindex import CitationEventHandler, CitedQueryEngine, from_llamaindex_response

# google-genai 2.x (what llama-index-llms-google-genai 0.11 accepts) calls /v1beta/...;
# 3.x calls /v1/..., so these cassettes replay only with 2.x.
pytestmark = pytest.mark.skipif(
    int(google.genai.__version__.split(".")[0]) != 2,
    reason="the cassettes hold google-genai 2.x requests (llama-index-llms-google-genai "
    "0.11 needs google-genai<3)",
)

KEY = os.getenv("GOOGLE_API_KEY", "mock-api-key")
QUERY = "Pourquoi la mer entoure-t-elle de nouveau le Mont-Saint-Michel ?"
FIRST = (
    "Depuis 2014, un pont-passerelle a remplacé la digue-route de 1879 : la mer peut ainsi "
    "entourer de nouveau le Mont lors des grandes marées."
)
SECOND = (
    "Les travaux de rétablissement du caractère maritime ont coûté environ 230 millions d’euros 💶."
)


def engine(**kwargs: Any) -> CitedQueryEngine:
    llm = GoogleGenAI(
        model="gemini-2.5-flash",
        api_key=KEY,
        max_tokens=1024,
        context_window=1_048_576,
        built_in_tool=types.Tool(google_search=types.GoogleSearch()),
    )
    return CitedQueryEngine.from_args(
        build_index(corpus_nodes()), llm=llm, similarity_top_k=3, **kwargs
    )


@pytest.mark.vcr
def test_query_engine_google_search() -> None:
    response = engine().query(QUERY)
    answer = response.metadata["citations"]
    assert answer.text == f"{FIRST} {SECOND}"
    assert response.response == answer.text
    assert answer.provider == "gemini"
    # Gemini's segment offsets count UTF-8 bytes; the spans are exact str offsets.
    assert [(c.text, c.confidence) for c in answer.citations] == [
        (FIRST, 0.9412),
        (SECOND, 0.8833),
    ]
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text
        assert c.origin == "native"
    bay, wiki = answer.sources
    assert answer.citations[0].source_ids == [bay.id, wiki.id]
    assert answer.citations[1].source_ids == [wiki.id]
    # Vertex redirect URLs hide the site; the domain comes from the chunk's title.
    assert (bay.redirect, bay.domain) == (True, "bay-mont-saint-michel.fr")
    assert (wiki.redirect, wiki.domain) == (True, "wikipedia.org")
    assert answer.extras["web_search_queries"] == [
        "Mont-Saint-Michel pont-passerelle mer",
        "rétablissement caractère maritime Mont-Saint-Michel coût",
    ]
    assert "bay-mont-saint-michel.fr" in render(answer, "text")


@pytest.mark.vcr
def test_query_engine_stream_matches_query() -> None:
    expected = engine().query(QUERY).metadata["citations"]
    stream = engine(streaming=True).query(QUERY)
    assert "".join(stream.response_gen) == expected.text
    assert stream.get_response().metadata["citations"] == expected


@pytest.mark.vcr
def test_stream_chat_through_handler() -> None:
    llm = GoogleGenAI(
        model="gemini-2.5-flash",
        api_key=KEY,
        max_tokens=1024,
        context_window=1_048_576,
        built_in_tool=types.Tool(google_search=types.GoogleSearch()),
    )
    with CitationEventHandler() as handler:
        chunks = list(llm.stream_chat([ChatMessage(role="user", content=QUERY)]))
    answer = handler.answer
    assert answer is not None
    assert answer.text == f"{FIRST} {SECOND}"
    assert [c.text for c in answer.citations] == [FIRST, SECOND]
    # The grounding comes with the last chunk but indexes the whole streamed text: read alone,
    # that chunk cannot place it.
    last = from_llamaindex_response(chunks[-1])
    assert last.text == " environ 230 millions d’euros 💶."
    assert last.citations == []
