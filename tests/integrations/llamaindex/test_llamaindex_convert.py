"""from_llamaindex_response, to_citation_blocks and back, on LlamaIndex's own types."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from typing import Any

from _llamaindex_fakes import ScriptedLLM, build_index, corpus_nodes
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CitationBlock,
    CompletionResponse,
    TextBlock,
    ThinkingBlock,
)
from llama_index.core.base.response.schema import PydanticResponse, Response, StreamingResponse
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from pydantic import BaseModel

from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitedAnswer,
    CitePolicy,
    PageLocation,
    SearchResultLocation,
    Source,
    UrlLocation,
    UsageError,
    cite,
)
from unicite_llamaindex import (
    from_citation_blocks,
    from_llamaindex_response,
    to_citation_blocks,
)

# --- CitationBlocks ---------------------------------------------------------------------------


def anthropic_style_message() -> ChatMessage:
    """Blocks as LlamaIndex's Anthropic integration builds them for search-result citations."""
    return ChatMessage(
        role="assistant",
        blocks=[
            TextBlock(text="L’abbaye a été fondée "),
            TextBlock(text="en 966 "),
            CitationBlock(
                cited_content=TextBlock(text="L’abbaye bénédictine a été fondée en 966"),
                source="https://fr.wikipedia.org/wiki/Abbaye_du_Mont-Saint-Michel",
                title="Abbaye du Mont-Saint-Michel — Wikipédia",
                additional_location_info={
                    "start_block_index": 0,
                    "end_block_index": 1,
                    "search_result_index": 0,
                },
            ),
            ThinkingBlock(content="(réflexion)"),
            TextBlock(text="; le pont date de 2014 🌉"),
            CitationBlock(
                cited_content="Le pont-passerelle, ouvert en 2014",
                source="doc-pont",
                title="Le pont-passerelle",
                additional_location_info={"search_result_index": 1},
            ),
            TextBlock(text="."),
        ],
    )


def test_citation_blocks_from_an_llm_message() -> None:
    answer = from_llamaindex_response(anthropic_style_message())
    assert answer.text == "L’abbaye a été fondée en 966 ; le pont date de 2014 🌉."
    # Each citation covers the text block before it, without its spaces.
    assert [(c.text, c.quote) for c in answer.citations] == [
        ("en 966", "L’abbaye bénédictine a été fondée en 966"),
        ("; le pont date de 2014 🌉", "Le pont-passerelle, ouvert en 2014"),
    ]
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text
    assert answer.citations[0].location == SearchResultLocation(
        search_result_index=0, start_block=0, end_block=1
    )
    wiki, pont = answer.sources
    assert (wiki.url, wiki.kind) == (
        "https://fr.wikipedia.org/wiki/Abbaye_du_Mont-Saint-Michel",
        "web",
    )
    assert (pont.id, pont.url, pont.title) == ("doc-pont", None, "Le pont-passerelle")


def test_citation_block_before_any_text_is_dropped_with_a_diagnostic() -> None:
    blocks = [
        CitationBlock(cited_content="x", source="s", title="t", additional_location_info={}),
        TextBlock(text="Texte."),
    ]
    answer = from_citation_blocks(blocks)
    assert answer.citations == []
    assert answer.diagnostics == ["citation block for 's' has no text to cite; dropped"]


def sample_answer() -> CitedAnswer:
    text = "Les marées atteignent 14 mètres [1]. Le pont date de 2014 [2]. Fin."
    sources = [
        Source(id="msm-marees", url="https://example.org/marees", title="Marées"),
        Source(id="msm-pont", title="Pont", content="Le pont date de 2014."),
        Source(id="unused", title="Jamais cité"),
    ]
    first = text.index("[1]")
    second = text.index("[2]")
    citations = [
        Citation(
            start=0,
            end=first - 1,
            text=text[: first - 1],
            source_ids=["msm-marees"],
            quote="jusqu’à 14 mètres",
            location=CharLocation(start=10, end=27, document_index=0),
            origin="marker",
            marker_span=(first, first + 3),
        ),
        Citation(
            start=first + 5,
            end=second - 1,
            text=text[first + 5 : second - 1],
            source_ids=["msm-pont", "msm-marees"],
            location=PageLocation(start_page=3, end_page=4),
            origin="native",
        ),
    ]
    return CitedAnswer(text=text, sources=sources, citations=citations)


def test_to_citation_blocks_places_each_citation_after_its_span() -> None:
    answer = sample_answer()
    blocks = to_citation_blocks(answer)
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == [
        "TextBlock",
        "CitationBlock",
        "TextBlock",
        "TextBlock",
        "CitationBlock",
        "CitationBlock",
        "TextBlock",
    ]
    assert "".join(b.text for b in blocks if isinstance(b, TextBlock)) == answer.text
    first = blocks[1]
    assert isinstance(first, CitationBlock)
    assert first.source == "https://example.org/marees"
    assert first.title == "Marées"
    assert first.cited_content == TextBlock(text="jusqu’à 14 mètres")
    info = first.additional_location_info
    assert (info["answer_start"], info["answer_end"]) == (0, answer.citations[0].end)
    assert (info["start_char_index"], info["end_char_index"], info["document_index"]) == (10, 27, 0)
    second = blocks[4]
    assert isinstance(second, CitationBlock)
    assert second.source == "msm-pont"  # no URL: the id names it


def test_round_trip_keeps_what_both_hold() -> None:
    answer = sample_answer()
    back = from_citation_blocks(to_citation_blocks(answer), sources=answer.sources)
    assert back.text == answer.text
    assert back.citations == answer.citations
    assert back.sources == answer.cited_sources()


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        to_citation_blocks("not an answer")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        from_citation_blocks("not blocks")
    with pytest.raises(UsageError):
        from_llamaindex_response(42)


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60
)


@st.composite
def answers(draw: st.DrawFn) -> CitedAnswer:
    text = draw(_TEXT)
    count = draw(st.integers(1, 4))
    sources = []
    for k in range(count):
        url = draw(st.sampled_from([None, f"https://example.org/{k}", f"http://site{k}.fr/p"]))
        title = draw(st.sampled_from([None, f"Titre {k}", "Ünïcödé 🌊"]))
        sources.append(Source(id=f"s{k}", url=url, title=title))
    citations = []
    for _ in range(draw(st.integers(0, 5))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        ids = draw(
            st.lists(st.sampled_from([s.id for s in sources]), min_size=1, max_size=3, unique=True)
        )
        location = draw(
            st.sampled_from(
                [
                    None,
                    CharLocation(start=1, end=4),
                    PageLocation(start_page=2, end_page=3, document_index=1),
                    BlockLocation(start_block=0, end_block=2),
                    SearchResultLocation(search_result_index=1),
                    SearchResultLocation(search_result_index=0, start_block=1, end_block=2),
                ]
            )
        )
        if location is None and draw(st.booleans()):
            url_source = next((s for s in sources if s.id == ids[0] and s.url), None)
            location = UrlLocation(url=url_source.url) if url_source and url_source.url else None
        marker = None
        if draw(st.booleans()):
            m0 = draw(st.integers(0, len(text)))
            marker = (m0, draw(st.integers(m0, len(text))))
        citations.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=ids,
                quote=draw(st.sampled_from([None, "cité", "« extrait »"])),
                location=location,
                origin=draw(st.sampled_from(["native", "marker", "posthoc-lexical", "manual"])),
                marker_span=marker,
            )
        )
    return CitedAnswer(text=text, sources=sources, citations=citations)


def _facts(answer: CitedAnswer) -> set[tuple[Any, ...]]:
    return {
        (c.start, c.end, c.quote, c.location, c.origin, c.marker_span, sid)
        for c in answer.citations
        for sid in c.source_ids
    }


@settings(max_examples=60, deadline=None)
@given(answers())
def test_round_trip_property(answer: CitedAnswer) -> None:
    back = from_citation_blocks(to_citation_blocks(answer), sources=answer.sources)
    assert back.text == answer.text
    assert _facts(back) == _facts(answer)
    assert {s.id for s in back.sources} == {s.id for s in answer.cited_sources()}


# --- responses --------------------------------------------------------------------------------


def test_chat_response_with_openai_annotations_but_no_raw() -> None:
    text = "La mer monte vite. ([wikipedia.org](https://fr.wikipedia.org/wiki/Mont?utm_source=x))"
    link = text.index("([")
    response = ChatResponse(
        message=ChatMessage(role="assistant", content=text),
        additional_kwargs={
            "annotations": [
                {
                    "type": "url_citation",
                    "start_index": link,
                    "end_index": len(text),
                    "url": "https://fr.wikipedia.org/wiki/Mont?utm_source=x",
                    "title": "Mont — Wikipédia",
                }
            ]
        },
    )
    answer = from_llamaindex_response(response)
    assert answer.provider == "openai"
    [citation] = answer.citations
    assert citation.text == "La mer monte vite."
    assert citation.marker_span == (link, len(text))
    assert answer.sources[0].url == "https://fr.wikipedia.org/wiki/Mont?utm_source=x"
    assert "read from the annotations in additional_kwargs" in answer.diagnostics[-1]


def test_plain_completion_with_markers_against_given_sources() -> None:
    sources = [Source(id="a", title="A"), Source(id="b", title="B")]
    response = CompletionResponse(text="Premier [2]. Second [1]. Aucun [3].")
    answer = from_llamaindex_response(response, sources=sources)
    # unicite.cite decides: renumbered first-cited, the invalid [3] dropped.
    assert answer == cite("Premier [2]. Second [1]. Aucun [3].", sources)
    assert answer.text == "Premier [1]. Second [2]. Aucun."
    assert [c.source_ids for c in answer.citations] == [["b"], ["a"]]
    # The policy's options apply.
    kept = from_llamaindex_response(response, sources=sources, renumber=False, on_invalid="keep")
    assert kept.text == "Premier [2]. Second [1]. Aucun [3]."
    policy = CitePolicy(renumber=False)
    assert from_llamaindex_response(response, sources=sources, policy=policy).text == (
        "Premier [2]. Second [1]. Aucun."
    )
    with pytest.raises(UsageError, match="unknown citation option"):
        from_llamaindex_response(response, sources=sources, renumbering=False)
    # Without sources or options the response is read as it is: its text untouched.
    unread = from_llamaindex_response(CompletionResponse(text="Sans [1]."))
    assert (unread.text, unread.citations) == ("Sans [1].", [])


class _Unreadable(TextNode):
    """A node whose text cannot be read (its store went away, a broken subclass)."""

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        raise RuntimeError("the store is gone")


def test_a_node_whose_text_cannot_be_read_is_still_a_numbered_source() -> None:
    nodes = [
        NodeWithScore(
            node=TextNode(
                id_="pont",
                text="Source 1:\nLe pont-passerelle relie le Mont au continent.\n",
                metadata={"url": "https://www.bay-mont-saint-michel.fr/pont-passerelle"},
            ),
            score=0.9,
        ),
        NodeWithScore(
            node=_Unreadable(id_="marees", text="Source 2:\nLa marée monte.\n"), score=0.8
        ),
    ]
    response = Response(
        response="Le pont relie le Mont [1]. La marée monte [2].", source_nodes=nodes
    )
    for _ in range(2):  # an unreadable node is never taken from a cache: it is read again
        answer = from_llamaindex_response(response)
        assert [(c.text, c.source_ids) for c in answer.citations] == [
            ("Le pont relie le Mont", ["pont"]),
            ("La marée monte", ["marees"]),  # no label could be read: its place numbers it
        ]
        assert [(s.id, s.content) for s in answer.sources] == [
            ("pont", "Le pont-passerelle relie le Mont au continent."),
            ("marees", None),
        ]
        assert answer.diagnostics == ["node marees: its text could not be read (RuntimeError)"]


def test_gemini_candidate_dump_is_read_as_a_response() -> None:
    # The shape llama-index-llms-google-genai keeps in ChatResponse.raw: the first candidate's
    # dump with the usage merged in (which alone looks like a whole response).
    raw = {
        "content": {"parts": [{"text": "Réponse."}], "role": "model"},
        "finish_reason": "STOP",
        "grounding_metadata": None,
        "usage_metadata": {"prompt_token_count": 3},
    }
    response = ChatResponse(message=ChatMessage(role="assistant", content="Réponse."), raw=raw)
    answer = from_llamaindex_response(response)
    assert (answer.provider, answer.text) == ("gemini", "Réponse.")
    assert answer.extras["usage_metadata"] == {"promptTokenCount": 3}


def test_raw_dicts_holding_sdk_objects_are_read() -> None:
    # The Anthropic integration keeps `dict(message)`: its values are still SDK objects.
    class Block(BaseModel):
        type: str
        text: str

    raw = {"type": "message", "role": "assistant", "content": [Block(type="text", text="Été.")]}
    response = ChatResponse(message=ChatMessage(role="assistant", content="Été."), raw=raw)
    answer = from_llamaindex_response(response)
    assert (answer.provider, answer.text) == ("anthropic", "Été.")


def test_query_engine_responses() -> None:
    index = build_index(corpus_nodes())
    reply = "Le pont date de 2014 [3]. Les marées atteignent 14 mètres [1]."
    response = CitationQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=reply), similarity_top_k=3
    ).query("Quelle est l’amplitude des marées au Mont-Saint-Michel ?")
    answer = from_llamaindex_response(response)
    # The Source N labels of LlamaIndex's own engine number the sources; then renumbered.
    assert answer.text == "Le pont date de 2014 [1]. Les marées atteignent 14 mètres [2]."
    assert [s.url for s in answer.sources] == [
        "https://www.bay-mont-saint-michel.fr/pont-passerelle",
        "https://www.ot-montsaintmichel.com/decouvrir/les-marees",
    ]
    # With sources="all" the uncited node follows.
    every = from_llamaindex_response(response, policy=CitePolicy(sources="all"))
    assert len(every.sources) == 3

    unread = StreamingResponse(response_gen=iter(["a"]))  # type: ignore[arg-type]
    assert from_llamaindex_response(unread).diagnostics == [
        "the streaming response has not been consumed yet"
    ]
    structured = PydanticResponse(response=None)
    assert from_llamaindex_response(structured).diagnostics == [
        "a structured (Pydantic) response has no text to cite"
    ]
    cited = CitedAnswer(text="x")
    assert from_llamaindex_response(Response("x", metadata={"citations": cited})) is cited
