"""CitedQueryEngine over a real VectorStoreIndex with a scripted LLM: the marker paths."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _llamaindex_fakes import ScriptedLLM, build_index, corpus_nodes, moved_nodes
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, UsageError, render
from unicite.sources import SourceLedger
from unicite_llamaindex import CitationsEvent, CitedQueryEngine

QUERY = "Quelle est l’amplitude des marées au Mont-Saint-Michel ?"
# Retrieval order for QUERY with the test embedding: marées, habitants, pont, abbaye.
REPLY = (
    "Le Mont a été entouré de nouveau par la mer grâce au pont-passerelle [3]. "
    "Les marées y atteignent 14 mètres d’amplitude [1], et le village compte une "
    "trentaine d’habitants [2][7]."
)


@pytest.fixture(scope="module")
def index() -> Any:
    return build_index(corpus_nodes())


def engine(index: Any, reply: str = REPLY, **kwargs: Any) -> CitedQueryEngine:
    llm = kwargs.pop("llm", None) or ScriptedLLM(reply=reply)
    return CitedQueryEngine.from_args(index, llm=llm, similarity_top_k=4, **kwargs)


def citations(response: Any) -> CitedAnswer:
    answer = response.metadata["citations"]
    assert isinstance(answer, CitedAnswer)
    return answer


def check_spans(answer: CitedAnswer) -> None:
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text
        if c.marker_span is not None:
            marker = answer.text[c.marker_span[0] : c.marker_span[1]]
            numbers = [answer.footnote_number(sid) for sid in c.source_ids]
            assert marker == "".join(f"[{n}]" for n in numbers)


def test_is_a_drop_in_citation_query_engine(index: Any) -> None:
    cited = engine(index)
    assert isinstance(cited, CitationQueryEngine)
    assert cited.retriever.similarity_top_k == 4  # type: ignore[attr-defined]
    response = cited.query(QUERY)
    assert isinstance(response, Response)
    assert len(response.source_nodes) == 4


def test_markers_are_validated_renumbered_and_exact(index: Any) -> None:
    response = engine(index).query(QUERY)
    answer = citations(response)

    # [3] [1] [2] in the model's order become [1] [2] [3]; the unknown [7] is reported.
    assert answer.text == (
        "Le Mont a été entouré de nouveau par la mer grâce au pont-passerelle [1]. "
        "Les marées y atteignent 14 mètres d’amplitude [2], et le village compte une "
        "trentaine d’habitants [3]."
    )
    assert response.response == answer.text
    # Only the cited sources are listed.
    assert [s.id for s in answer.sources] == ["msm-pont", "msm-marees", "msm-habitants"]
    assert [(c.text, c.source_ids, c.origin) for c in answer.citations] == [
        (
            "Le Mont a été entouré de nouveau par la mer grâce au pont-passerelle",
            ["msm-pont"],
            "marker",
        ),
        ("Les marées y atteignent 14 mètres d’amplitude", ["msm-marees"], "marker"),
        ("et le village compte une trentaine d’habitants", ["msm-habitants"], "marker"),
    ]
    at = REPLY.index("[7]")
    assert answer.diagnostics == [f"marker '[7]' at {at}: source 7 out of range (4 sources given)"]
    check_spans(answer)
    # source_nodes follow the answer's numbering, labels included; the uncited node comes last.
    assert [n.node.node_id for n in response.source_nodes] == [
        *(s.id for s in answer.sources),
        "msm-abbaye",
    ]
    assert [n.node.get_content().split("\n", 1)[0] for n in response.source_nodes] == [
        "Source 1:",
        "Source 2:",
        "Source 3:",
        "Source 4:",
    ]
    # Sources carry what the nodes say.
    pont = answer.sources[0]
    assert (pont.url, pont.title) == (
        "https://www.bay-mont-saint-michel.fr/pont-passerelle",
        "Le pont-passerelle",
    )


def test_the_prompt_numbers_the_nodes(index: Any) -> None:
    llm = ScriptedLLM(reply=REPLY)
    engine(index, llm=llm).query(QUERY)
    [prompt] = llm.prompts
    assert "Source 1:\nLes marées de la baie" in prompt
    assert "Source 4:\nL’abbaye bénédictine" in prompt


def test_keep_and_no_renumbering(index: Any) -> None:
    answer = citations(engine(index, on_invalid="keep", renumber=False).query(QUERY))
    assert answer.text == REPLY
    assert [s.id for s in answer.sources] == [
        "msm-marees",
        "msm-habitants",
        "msm-pont",
        "msm-abbaye",
    ]
    assert [c.source_ids for c in answer.citations] == [
        ["msm-pont"],
        ["msm-marees"],
        ["msm-habitants"],
    ]


def test_streaming_gives_the_same_citations_once_consumed(index: Any) -> None:
    expected = citations(engine(index).query(QUERY))
    streaming = engine(index, streaming=True).query(QUERY)
    assert isinstance(streaming, StreamingResponse)
    assert "citations" not in (streaming.metadata or {})
    tokens = list(streaming.response_gen)
    # The text streams already cited: renumbered, without the invalid [7].
    assert "".join(tokens) == expected.text
    final = streaming.get_response()
    assert final.metadata is not None
    assert final.metadata["citations"] == expected
    assert final.response == expected.text
    assert str(streaming) == expected.text


def test_streaming_read_through_get_response_and_str(index: Any) -> None:
    expected = citations(engine(index).query(QUERY))
    assert str(engine(index, streaming=True).query(QUERY)) == expected.text
    final = engine(index, streaming=True).query(QUERY).get_response()
    assert final.metadata is not None
    assert final.metadata["citations"] == expected


def test_async_query_and_async_stream(index: Any) -> None:
    expected = citations(engine(index).query(QUERY))

    async def run() -> tuple[Any, Any, list[str]]:
        plain = await engine(index).aquery(QUERY)
        stream = await engine(index, streaming=True, use_async=True).aquery(QUERY)
        assert isinstance(stream, AsyncStreamingResponse)
        tokens = [t async for t in stream.async_response_gen()]
        return plain, await stream.get_response(), tokens

    plain, final, tokens = asyncio.run(run())
    assert citations(plain) == expected
    assert citations(final) == expected
    assert final.response == expected.text
    assert "".join(tokens) == expected.text


def test_concurrent_queries_do_not_mix(index: Any) -> None:
    questions = [
        ("Combien d’habitants vivent au Mont-Saint-Michel ?", "Une trentaine [1]."),
        ("Quand l’abbaye a-t-elle été fondée ?", "En 966 [2]."),
        (QUERY, "Quatorze mètres [3]."),
    ]
    engines = [engine(index, reply) for _, reply in questions]
    sequential = [citations(e.query(q)) for e, (q, _) in zip(engines, questions, strict=True)]

    def run(k: int) -> CitedAnswer:
        return citations(engines[k % 3].query(questions[k % 3][0]))

    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(run, range(24)))
    assert all(answer == sequential[k % 3] for k, answer in enumerate(threaded))

    async def gather() -> list[Any]:
        return await asyncio.gather(
            *(engines[k % 3].aquery(questions[k % 3][0]) for k in range(12))
        )

    for k, response in enumerate(asyncio.run(gather())):
        assert citations(response) == sequential[k % 3]


class _Nothing(BaseRetriever):
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return []


def test_a_retriever_returning_nothing(index: Any) -> None:
    llm = ScriptedLLM(reply="Sans source [1].")
    response = CitedQueryEngine(retriever=_Nothing(), llm=llm).query(QUERY)
    answer = citations(response)
    assert answer.citations == []
    assert answer.sources == []
    assert answer.text == response.response
    assert "the retriever returned no nodes: there is nothing to cite" in answer.diagnostics
    assert llm.prompts == []  # LlamaIndex answers "Empty Response" without asking

    with pytest.raises(GroundingRequiredError) as caught:
        CitedQueryEngine(retriever=_Nothing(), llm=llm, require="citations").query(QUERY)
    assert caught.value.reason == "no grounding"

    streaming = CitedQueryEngine.from_args(index, llm=llm, retriever=_Nothing(), streaming=True)
    stream = streaming.query(QUERY)
    list(stream.response_gen)
    assert citations(stream.get_response()).citations == []


def test_require_citations(index: Any) -> None:
    assert citations(engine(index, require="citations").query(QUERY)).citations
    uncited = engine(index, "Aucune source n’est citée ici.", require="citations")
    with pytest.raises(GroundingRequiredError) as caught:
        uncited.query(QUERY)
    assert caught.value.reason == "no citations"
    stream = engine(index, "Rien à citer.", require="citations", streaming=True).query(QUERY)
    with pytest.raises(GroundingRequiredError):
        list(stream.response_gen)


def test_lexical_attribution_when_the_answer_has_no_markers(index: Any) -> None:
    reply = "L’écart entre basse et haute mer atteint jusqu’à 14 mètres lors des grandes marées."
    answer = citations(engine(index, reply, attribute="lexical").query(QUERY))
    assert answer.text == reply
    assert answer.citations
    assert {c.origin for c in answer.citations} == {"posthoc-lexical"}
    assert answer.citations[0].source_ids[0] == "msm-marees"
    # Without the option the same answer stays uncited.
    assert citations(engine(index, reply).query(QUERY)).citations == []


def test_llm_attribution_uses_the_engines_llm(index: Any) -> None:
    reply = "Les marées atteignent 14 mètres. Le village a une trentaine d’habitants."
    judgement = json.dumps(
        {
            "citations": [
                {"claim": "Les marées atteignent 14 mètres.", "sourceIndex": 1},
                {"claim": "Le village a une trentaine d’habitants.", "sourceIndex": 2},
            ]
        }
    )
    llm = ScriptedLLM(reply=reply, rules={"You attribute the claims": judgement})
    answer = citations(engine(index, llm=llm, attribute="llm").query(QUERY))
    assert [(c.text, c.source_ids, c.origin) for c in answer.citations] == [
        ("Les marées atteignent 14 mètres.", ["msm-marees"], "posthoc-llm"),
        ("Le village a une trentaine d’habitants.", ["msm-habitants"], "posthoc-llm"),
    ]
    assert len(llm.prompts) == 2

    async def run() -> Any:
        return await engine(index, llm=llm, attribute="llm").aquery(QUERY)

    assert citations(asyncio.run(run())) == answer


def test_long_nodes_become_chunks_with_their_own_ids() -> None:
    text = "".join(
        f"La phrase {n} parle des marées de la baie et de l’abbaye du Mont. " for n in range(80)
    )
    index = build_index([TextNode(id_="guide", text=text, metadata={"title": "Guide"})])
    response = CitedQueryEngine.from_args(
        index,
        llm=ScriptedLLM(reply="Début [1]. Suite [2]."),
        citation_chunk_size=96,
        citation_chunk_overlap=0,
    ).query("Que dit le guide ?")
    answer = citations(response)
    assert len(response.source_nodes) > 2
    first, second = answer.sources[:2]
    for source in (first, second):
        start, end = source.extras["chunk_start"], source.extras["chunk_end"]
        assert source.id == f"guide:{start}-{end}"
        assert text[start:end] == source.content
    assert [c.source_ids for c in answer.citations] == [[first.id], [second.id]]


def test_shared_ledger_numbers_queries_apart(index: Any) -> None:
    ledger = SourceLedger()
    first = engine(index, "Marées [1].", ledger=ledger, renumber=False).query(QUERY)
    second = engine(index, "Abbaye [4], pont [3].", ledger=ledger, renumber=False).query(
        "Quand l’abbaye a-t-elle été fondée ?"
    )
    assert [c.source_ids for c in citations(first).citations] == [["msm-marees"]]
    assert [c.source_ids for c in citations(second).citations] == [["msm-abbaye"], ["msm-pont"]]
    assert [s.id for s in ledger.sources] == [
        "msm-marees",
        "msm-habitants",
        "msm-pont",
        "msm-abbaye",
    ]


class _Collect(BaseEventHandler):
    events: list[Any]

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, CitationsEvent):
            self.events.append(event)


def test_emits_a_citations_event_per_query(index: Any) -> None:
    collect = _Collect(events=[])
    root = get_dispatcher()
    root.add_event_handler(collect)
    try:
        response = engine(index).query(QUERY)
        stream = engine(index, streaming=True).query(QUERY)
        assert len(collect.events) == 1
        list(stream.response_gen)
    finally:
        root.event_handlers = [h for h in root.event_handlers if h is not collect]
    assert [e.answer for e in collect.events] == [citations(response)] * 2
    assert collect.events[0].origin == "marker"


def test_one_capture_handler_however_many_engines(index: Any) -> None:
    for _ in range(3):
        engine(index).query(QUERY)
    handlers = [
        h for h in get_dispatcher().event_handlers if h.class_name() == "UniciteQueryCaptureHandler"
    ]
    assert len(handlers) == 1


def test_disabled_is_citation_query_engine_and_quiet(
    index: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        response = engine(index, enabled=False).query(QUERY)
        stream = engine(index, enabled=False, streaming=True).query(QUERY)
        tokens = list(stream.response_gen)
    plain = CitationQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=4
    ).query(QUERY)
    assert "citations" not in (response.metadata or {})
    assert response.response == plain.response == REPLY
    assert "".join(tokens) == REPLY
    assert [r for r in caplog.records if r.name.startswith("unicite")] == []


def test_bad_options_are_usage_errors(index: Any) -> None:
    with pytest.raises(UsageError):
        engine(index, require="sources")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        engine(index, attribute="magic")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        engine(index, on_invalid="raise")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        engine(index, ledger=[])  # type: ignore[arg-type]


def test_hostile_node_metadata_is_cited_and_rendered_safely() -> None:
    hostile = TextNode(
        id_="hostile",
        text="Les marées de la baie atteignent quatorze mètres.",
        metadata={
            "url": "javascript:alert(document.cookie)",
            "title": "Marées\x1b]8;;https://evil.example\x07 piégées\x1b[2J\u202e\x00",
            "page_label": "\x1b[31m7",
        },
    )
    index = build_index([hostile, *corpus_nodes()])
    response = CitedQueryEngine.from_args(
        index, llm=ScriptedLLM(reply="Quatorze mètres [1]."), similarity_top_k=2
    ).query("Quelle est l’amplitude des marées de la baie ?")
    answer = citations(response)
    [citation] = answer.citations
    source = answer.source(citation.source_ids[0])
    assert source is not None
    assert source.id == "hostile"
    assert source.url is None  # only http(s) metadata becomes a URL
    for fmt in ("terminal", "markdown", "html", "text", "json"):
        out = render(answer, fmt, hyperlinks=True)
        assert "javascript:" not in out.lower()
        assert "\x1b" not in out
        assert "\u202e" not in out
        assert "\x00" not in out


def test_multimodal_engine_cites_the_retrieved_nodes(index: Any) -> None:
    llm = ScriptedLLM(
        reply="Le pont date de 2014 [3]. Les marées : 14 mètres [1].", chat_model=True
    )
    response = CitedQueryEngine.from_args(
        index, llm=llm, similarity_top_k=3, multimodal=True
    ).query(QUERY)
    answer = citations(response)
    assert answer.text == "Le pont date de 2014 [1]. Les marées : 14 mètres [2]."
    # LlamaIndex's multimodal chunks have fresh ids; the sources are the retrieved nodes.
    assert [c.source_ids for c in answer.citations] == [["msm-pont"], ["msm-marees"]]
    assert [n.node.get_content().split("\n", 1)[0] for n in response.source_nodes] == [
        "Source 1:",
        "Source 2:",
        "Source 3:",
    ]
    assert response.source_nodes[0].node.get_content().startswith("Source 1:\nLe pont-passerelle")


def test_a_failing_attribution_model_does_not_break_the_query(index: Any) -> None:
    def unreachable(prompt: str) -> str:
        raise ConnectionError("the attribution model is unreachable")

    reply = "Les marées atteignent 14 mètres."
    response = engine(index, reply, attribute="llm", attribution_llm=unreachable).query(QUERY)
    assert response.response == reply
    answer = citations(response)
    assert answer.citations == []
    assert any("unreachable" in note for note in answer.diagnostics)


# --- options, callback, labels, live text ---------------------------------------------------

LIVE = (
    f"{REPLY} Les grandes marées [1, 3] et l’abbaye [4] ; "
    "rien de plus [0]. Le pont [3][3], enfin [2-4]."
)
"""Lists, ranges, glued and repeated markers, and invalid ones, for chunkings to split."""


def test_sources_all_lists_uncited_nodes_after_the_cited(index: Any) -> None:
    response = engine(index, sources="all").query(QUERY)
    answer = citations(response)
    assert [s.id for s in answer.sources] == [
        "msm-pont",
        "msm-marees",
        "msm-habitants",
        "msm-abbaye",
    ]
    assert [n.node.node_id for n in response.source_nodes] == [s.id for s in answer.sources]


def _labels(response: Any) -> dict[int, str]:
    labels = {}
    for node in response.source_nodes:
        head = node.node.get_content().split("\n", 1)[0]
        labels[int(head.removeprefix("Source ").rstrip(":"))] = node.node.node_id
    return labels


def test_no_label_names_another_source_than_its_marker(index: Any) -> None:
    # Only the third node is cited: it becomes [1], and the nodes the prompt labelled 1 and 2
    # are labelled after it, where no marker points.
    response = engine(index, "Le pont date de 2014 [3].").query(QUERY)
    answer = citations(response)
    assert answer.text == "Le pont date de 2014 [1]."
    assert [s.id for s in answer.sources] == ["msm-pont"]
    assert _labels(response) == {
        1: "msm-pont",
        2: "msm-marees",
        3: "msm-habitants",
        4: "msm-abbaye",
    }
    # Without renumbering the prompt's labels stay, and so do the model's numbers.
    kept = engine(index, "Le pont date de 2014 [3].", renumber=False).query(QUERY)
    assert citations(kept).text == "Le pont date de 2014 [3]."
    assert _labels(kept)[3] == "msm-pont"


def test_options_are_cite_policy_fields(index: Any) -> None:
    policy = CitePolicy(sources="all", on_invalid="keep")
    cited = engine(index, policy=policy, renumber=False)
    assert (cited.policy.sources, cited.policy.on_invalid, cited.policy.renumber) == (
        "all",
        "keep",
        False,
    )
    # The engine's LLM is the default attribution model.
    assert callable(cited.policy.llm)
    answer = citations(cited.query(QUERY))
    assert answer.text == REPLY
    assert [s.id for s in answer.sources] == [
        "msm-marees",
        "msm-habitants",
        "msm-pont",
        "msm-abbaye",
    ]
    # The constructor takes the same names; LlamaIndex's own arguments still reach it.
    direct = CitedQueryEngine(
        retriever=index.as_retriever(similarity_top_k=4),
        llm=ScriptedLLM(reply=REPLY),
        policy=policy,
        renumber=False,
    )
    assert citations(direct.query(QUERY)) == answer
    with pytest.raises(UsageError, match="unknown citation option"):
        CitedQueryEngine(retriever=_Nothing(), llm=ScriptedLLM(), renumbering=False)
    with pytest.raises(UsageError):
        engine(index, policy={"sources": "all"})


def test_attribution_llm_is_an_alias_of_llm(index: Any) -> None:
    def judge(prompt: str) -> str:
        return "{}"

    cited = engine(index, attribute="llm", attribution_llm=judge)
    assert cited.policy.llm is judge
    assert engine(index, policy=CitePolicy(attribute="llm", llm=judge)).policy.llm is judge


def test_require_grounding(index: Any) -> None:
    # Nodes were retrieved: the answer is grounded, even though it cites none of them.
    answer = citations(engine(index, "Rien à citer.", require="grounding").query(QUERY))
    assert answer.citations == []
    with pytest.raises(GroundingRequiredError) as caught:
        CitedQueryEngine(
            retriever=_Nothing(), llm=ScriptedLLM(reply="Rien."), require="grounding"
        ).query(QUERY)
    assert caught.value.reason == "no grounding"


def test_a_grounding_failure_is_published_before_it_raises(index: Any) -> None:
    seen: list[CitedAnswer] = []
    uncited = engine(index, "Rien à citer.", require="citations", on_citations=seen.append)
    with pytest.raises(GroundingRequiredError) as caught:
        uncited.query(QUERY)
    [answer] = seen
    assert answer.text == "Rien à citer."
    assert caught.value.answer == answer


def test_on_citations_gets_the_cited_answer(index: Any) -> None:
    seen: list[Any] = []
    response = engine(index, on_citations=seen.append).query(QUERY)
    assert seen == [citations(response)]
    assert isinstance(seen[0], CitedAnswer)
    stream = engine(index, streaming=True, on_citations=seen.append).query(QUERY)
    assert len(seen) == 1  # a stream is published once it has streamed
    list(stream.response_gen)
    assert seen == [citations(response)] * 2

    def boom(answer: CitedAnswer) -> None:
        raise RuntimeError("callback failed")

    assert engine(index, on_citations=boom).query(QUERY).response == citations(response).text
    with pytest.raises(UsageError):
        engine(index, on_citations="print")


LIVE_OPTIONS = [{}, {"sources": "all"}, {"on_invalid": "keep"}, {"renumber": False}]


@pytest.mark.parametrize("chunk", [1, 5])
@pytest.mark.parametrize("options", LIVE_OPTIONS, ids=str)
def test_live_text_is_the_final_text(index: Any, chunk: int, options: dict[str, Any]) -> None:
    expected = citations(engine(index, LIVE, **options).query(QUERY))
    stream = engine(
        index, llm=ScriptedLLM(reply=LIVE, chunk=chunk), streaming=True, **options
    ).query(QUERY)
    live = list(stream.response_gen)
    final = citations(stream.get_response())
    assert "".join(live) == final.text == expected.text
    assert final == expected


@pytest.mark.parametrize("chunk", [1, 5])
@pytest.mark.parametrize("options", LIVE_OPTIONS, ids=str)
def test_async_live_text_is_the_final_text(index: Any, chunk: int, options: dict[str, Any]) -> None:
    expected = citations(engine(index, LIVE, **options).query(QUERY))

    async def run() -> tuple[list[str], Any]:
        stream = await engine(
            index,
            llm=ScriptedLLM(reply=LIVE, chunk=chunk),
            streaming=True,
            use_async=True,
            **options,
        ).aquery(QUERY)
        assert isinstance(stream, AsyncStreamingResponse)
        live = [t async for t in stream.async_response_gen()]
        return live, await stream.get_response()

    live, response = asyncio.run(run())
    final = citations(response)
    assert "".join(live) == final.text == response.response == expected.text
    assert final == expected


def test_nodes_are_read_once_across_queries(index: Any) -> None:
    cited = engine(index)
    first = citations(cited.query(QUERY))
    second = citations(cited.query(QUERY))
    assert second == first
    # The second query took the sources the first one read: the same objects, not copies.
    assert all(a is b for a, b in zip(first.sources, second.sources, strict=True))


def test_a_node_changed_between_queries_is_read_again() -> None:
    moved = moved_nodes()
    cited = engine(build_index(corpus_nodes()))
    old = citations(cited.query(QUERY))
    # The same engine (and postprocessor) over an index whose nodes changed their URLs.
    cited._retriever = build_index(moved).as_retriever(similarity_top_k=4)
    new = citations(cited.query(QUERY))
    assert [s.id for s in new.sources] == [s.id for s in old.sources]
    assert all(s.url is not None and s.url.endswith("?v=2") for s in new.sources)
    assert not any(s.url is not None and s.url.endswith("?v=2") for s in old.sources)
