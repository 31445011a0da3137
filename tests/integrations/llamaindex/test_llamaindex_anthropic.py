"""llama-index-llms-anthropic replaying cassettes: Anthropic's native citations via LlamaIndex."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.anthropic")
pytest.importorskip("anthropic")

import os
from typing import Any

import anthropic
from _llamaindex_fakes import CORPUS, build_index, corpus_nodes
from llama_index.core.base.llms.types import CitableBlock, CitationBlock, TextBlock
from llama_index.core.llms import ChatMessage
from llama_index.llms.anthropic import Anthropic

from unicite import CitedAnswer, SearchResultLocation
from unicite_llamaindex import CitationEventHandler, CitedQueryEngine, from_llamaindex_response

pytestmark = pytest.mark.skipif(
    int(anthropic.__version__.split(".")[0]) >= 2,
    reason="llama-index-llms-anthropic 0.12 fails on every call with anthropic 2.x "
    "(TypeError: Cannot instantiate typing.Union); these cassettes run with anthropic<2",
)

KEY = os.getenv("ANTHROPIC_API_KEY", "mock-api-key")
# A model llama-index-llms-anthropic sends no temperature for: anthropic 1.x refuses one.
MODEL = "claude-opus-4-7"
WEB_SEARCH = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]


@pytest.mark.vcr
def test_query_engine_web_search() -> None:
    engine = CitedQueryEngine.from_args(
        build_index(corpus_nodes()),
        llm=Anthropic(model=MODEL, api_key=KEY, tools=WEB_SEARCH),
        similarity_top_k=3,
    )
    response = engine.query("Combien de visiteurs le Mont-Saint-Michel reçoit-il chaque année ?")
    answer = response.metadata["citations"]
    visitors = "près de trois millions de visiteurs par an"
    august = "Le pic de fréquentation a lieu en août 🏖️"
    assert answer.text == (
        f"D’après les chiffres publiés, le Mont-Saint-Michel accueille {visitors}, pour une "
        f"trentaine d’habitants seulement. {august}."
    )
    # LlamaIndex joins Anthropic's text blocks with newlines; the cited answer is the real text.
    assert response.response == answer.text
    assert answer.provider == "anthropic"
    assert answer.model == MODEL
    assert [(c.text, c.origin) for c in answer.citations] == [
        (visitors, "native"),
        (august, "native"),
    ]
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text
    insee, tourism = answer.sources
    # The web page the search found is the retrieved node: one source, with the node's text.
    assert answer.citations[0].source_ids == ["msm-habitants"]
    assert insee.id == "msm-habitants"
    assert insee.content is not None
    assert answer.citations[0].quote is not None
    assert answer.citations[0].quote.endswith("visiteurs par an.")
    assert (tourism.url, tourism.kind) == (
        "https://www.normandie-tourisme.fr/mont-saint-michel-frequentation",
        "web",
    )
    assert answer.extras["search_queries"] == ["Mont-Saint-Michel fréquentation visiteurs par an"]


def _messages() -> list[ChatMessage]:
    abbaye, pont = (next(c for c in CORPUS if c[0] == name) for name in ("msm-abbaye", "msm-pont"))
    return [
        ChatMessage(
            role="user",
            blocks=[
                CitableBlock(
                    title=abbaye[2], source=abbaye[1], content=[TextBlock(text=abbaye[3])]
                ),
                CitableBlock(title=pont[2], source=pont[1], content=[TextBlock(text=pont[3])]),
                TextBlock(
                    text="Quand l’abbaye a-t-elle été fondée, et qu’est-ce que la « Merveille » ?"
                ),
            ],
        )
    ]


@pytest.mark.vcr
def test_citable_blocks_chat_and_stream_through_handler() -> None:
    llm = Anthropic(model=MODEL, api_key=KEY)
    answers: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=answers.append):
        response = llm.chat(_messages())
        chunks = list(llm.stream_chat(_messages()))
    chat, streamed = answers

    founded = "en 966, à la demande du duc Richard Ier"
    built = "bâti au XIIIe siècle"
    assert chat.text == (
        f"L’abbaye a été fondée {founded} ; la « Merveille » est l’ensemble gothique {built} "
        "sur le flanc nord du rocher ⛪."
    )
    assert [(c.text, c.location) for c in chat.citations] == [
        (founded, SearchResultLocation(search_result_index=0, start_block=0, end_block=1)),
        (built, SearchResultLocation(search_result_index=0, start_block=0, end_block=1)),
    ]
    [source] = chat.sources
    assert source.url == "https://fr.wikipedia.org/wiki/Abbaye_du_Mont-Saint-Michel"
    # The integration passes neither message_start nor the blocks' starts on when streaming:
    # they are rebuilt, and the stream gives the same citations.
    assert streamed.text == chat.text
    assert [(c.start, c.end, c.source_ids, c.quote, c.location) for c in streamed.citations] == [
        (c.start, c.end, c.source_ids, c.quote, c.location) for c in chat.citations
    ]
    assert streamed.sources == chat.sources
    # LlamaIndex's last streamed chunk keeps the citations in a flat list; its CitationBlocks
    # (search results only) come before the text they support, unlike in a chat response, and
    # a passage cited twice gets one block: the second citation is only in the stream.
    last: Any = chunks[-1]
    assert sum(isinstance(b, CitationBlock) for b in last.message.blocks) == 1
    assert [c.text for c in from_llamaindex_response(last).citations] == [founded]
    # The chat response itself, read directly, agrees with the handler.
    direct = from_llamaindex_response(response)
    assert [(c.start, c.end) for c in direct.citations] == [
        (c.start, c.end) for c in chat.citations
    ]
    # Without the raw message only LlamaIndex's CitationBlocks are left: one per distinct
    # citation, so the passage's second use is lost; what remains has the same span.
    blocks_only = from_llamaindex_response(response.model_copy(update={"raw": None}))
    first = chat.citations[0]
    assert [(c.start, c.end, c.quote) for c in blocks_only.citations] == [
        (first.start, first.end, first.quote)
    ]
