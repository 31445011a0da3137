"""llama-index-llms-openai replaying cassettes: OpenAI's native citations through LlamaIndex."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.openai")

import asyncio
import os
from typing import Any

from _llamaindex_fakes import build_index, corpus_nodes
from llama_index.core.llms import ChatMessage
from llama_index.llms.openai import OpenAIResponses

from unicite import CitedAnswer, render
from unicite_llamaindex import CitationEventHandler, CitedQueryEngine, from_llamaindex_response

KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")
QUERY = "Quelle est l’amplitude des marées au Mont-Saint-Michel ?"
CLAIM = (
    "Au Mont-Saint-Michel, l’écart entre basse et haute mer atteint jusqu’à 14 mètres lors "
    "des grandes marées"
)
GALLOP = "La mer y monte, dit-on, « à la vitesse d’un cheval au galop » 🐎."
LINK_MARKEES = (
    "([ot-montsaintmichel.com](https://www.ot-montsaintmichel.com/decouvrir/les-marees"
    "?utm_source=openai))"
)
LINK_WIKI = (
    "([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Mont-Saint-Michel?utm_source=openai))"
)


def llm() -> OpenAIResponses:
    return OpenAIResponses(
        model="gpt-5.2", api_key=KEY, built_in_tools=[{"type": "web_search"}], temperature=0.1
    )


def engine(**kwargs: Any) -> CitedQueryEngine:
    return CitedQueryEngine.from_args(
        build_index(corpus_nodes()), llm=llm(), similarity_top_k=3, **kwargs
    )


def check_answer(answer: CitedAnswer) -> None:
    text = answer.text
    assert text == f"{CLAIM} [1]. {LINK_MARKEES} {GALLOP} {LINK_WIKI}"
    assert answer.provider == "openai"
    assert answer.model == "gpt-5.2-2025-12-11"
    marker = text.index("[1]")
    # The node the model cited as [1] and the page the web search found are one source.
    assert [(c.text, c.source_ids, c.origin, c.marker_span) for c in answer.citations] == [
        (CLAIM, ["msm-marees"], "native", (text.index(LINK_MARKEES), text.index(GALLOP) - 1)),
        (CLAIM, ["msm-marees"], "marker", (marker, marker + 3)),
        (GALLOP, [answer.sources[1].id], "native", (text.index(LINK_WIKI), len(text))),
    ]
    for c in answer.citations:
        assert text[c.start : c.end] == c.text
    marees, wiki = answer.sources[:2]
    assert marees.url == "https://www.ot-montsaintmichel.com/decouvrir/les-marees"
    assert marees.content is not None
    assert marees.content.startswith("Les marées de la baie")
    assert (wiki.url, wiki.kind) == (
        "https://fr.wikipedia.org/wiki/Mont-Saint-Michel?utm_source=openai",
        "web",
    )
    # Only the cited sources are listed: the retrieved nodes nobody cited are not.
    assert len(answer.sources) == 2
    assert answer.diagnostics == []


@pytest.mark.vcr
def test_query_engine_web_search_native_and_markers() -> None:
    response = engine().query(QUERY)
    answer = response.metadata["citations"]
    check_answer(answer)
    assert response.response == answer.text
    assert [n.node.node_id for n in response.source_nodes] == [
        "msm-marees",
        "msm-habitants",
        "msm-pont",
    ]
    # [2] is the web page: the uncited nodes are labelled after it, never as a cited number.
    assert [n.node.get_content().split("\n", 1)[0] for n in response.source_nodes] == [
        "Source 1:",
        "Source 3:",
        "Source 4:",
    ]
    shown = render(answer, "markdown")
    assert (
        "[Mont-Saint-Michel — Wikipédia](https://fr.wikipedia.org/wiki/Mont-Saint-Michel" in shown
    )


@pytest.mark.vcr
def test_query_engine_stream_matches_query() -> None:
    expected = engine().query(QUERY).metadata["citations"]
    stream = engine(streaming=True).query(QUERY)
    tokens = list(stream.response_gen)
    assert "".join(tokens) == expected.text
    assert stream.get_response().metadata["citations"] == expected


@pytest.mark.vcr
def test_query_engine_async() -> None:
    async def run() -> Any:
        return await engine().aquery(QUERY)

    check_answer(asyncio.run(run()).metadata["citations"])


@pytest.mark.vcr
def test_chat_through_handler() -> None:
    with CitationEventHandler() as handler:
        response = llm().chat([ChatMessage(role="user", content=QUERY)])
    answer = handler.answer
    assert answer is not None
    # The handler's answer went through unicite.cite, which keeps the ids reading gave.
    read = from_llamaindex_response(response)
    assert [c.id for c in answer.citations] == ["ref-0", "ref-1"]
    assert answer == read
    # No retrieval here: the web pages are the only sources, and [1] names nothing.
    assert [(c.text, c.origin) for c in answer.citations] == [
        (CLAIM, "native"),
        (GALLOP, "native"),
    ]
    # Without the raw response, the annotations LlamaIndex copies to additional_kwargs
    # give the same spans.
    fallback = from_llamaindex_response(response.model_copy(update={"raw": None}))
    assert [(c.start, c.end, c.marker_span) for c in fallback.citations] == [
        (c.start, c.end, c.marker_span) for c in answer.citations
    ]
