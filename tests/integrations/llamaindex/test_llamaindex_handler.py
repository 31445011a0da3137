"""CitationEventHandler: citations from instrumentation for engines, workflows and agents."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

import asyncio
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _llamaindex_fakes import ScriptedLLM, build_index, corpus_nodes, moved_nodes
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.schema import NodeWithScore
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Event, StartEvent, StopEvent, Workflow, step

from unicite import CitedAnswer, CitePolicy, UsageError
from unicite_llamaindex import (
    CitationEventHandler,
    CitationPostprocessor,
    CitationsEvent,
    CitedQueryEngine,
)

LINGERING = 64
"""Finished runs the handler keeps while one of their streams has not been consumed."""

QUERY = "Quelle est l’amplitude des marées au Mont-Saint-Michel ?"
REPLY = "La mer entoure de nouveau le Mont [3]. L’écart atteint 14 mètres [1]."


@pytest.fixture(scope="module")
def index() -> Any:
    return build_index(corpus_nodes())


class _Collect(BaseEventHandler):
    events: list[Any]

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, CitationsEvent):
            self.events.append(event)


@pytest.fixture
def events() -> Iterator[list[CitationsEvent]]:
    """The `CitationsEvent`s dispatched while a default handler is attached."""
    collect = _Collect(events=[])
    root = get_dispatcher()
    root.add_event_handler(collect)
    try:
        with CitationEventHandler():
            yield collect.events
    finally:
        root.event_handlers = [h for h in root.event_handlers if h is not collect]


def test_cites_llamaindex_own_citation_query_engine(
    index: Any, events: list[CitationsEvent]
) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    response = engine.query(QUERY)
    assert response.response == REPLY
    [event] = events
    answer = event.answer
    # The numbers are those of the prompt's "Source N:" nodes, renumbered first-cited.
    assert answer.text == "La mer entoure de nouveau le Mont [1]. L’écart atteint 14 mètres [2]."
    assert [c.source_ids for c in answer.citations] == [["msm-pont"], ["msm-marees"]]
    assert [s.url for s in answer.sources[:2]] == [
        "https://www.bay-mont-saint-michel.fr/pont-passerelle",
        "https://www.ot-montsaintmichel.com/decouvrir/les-marees",
    ]
    assert event.origin == "marker"
    assert event.root_span_id is not None
    assert event.root_span_id.startswith("CitationQueryEngine.query-")


def test_streaming_engine_is_cited_when_the_stream_ends(
    index: Any, events: list[CitationsEvent]
) -> None:
    engine = CitationQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3, streaming=True
    )
    stream = engine.query(QUERY)
    assert "".join(stream.response_gen) == REPLY
    [event] = events
    assert [c.source_ids for c in event.answer.citations] == [["msm-pont"], ["msm-marees"]]


def test_cited_query_engine_reports_its_own_queries(
    index: Any, events: list[CitationsEvent]
) -> None:
    response = CitedQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3
    ).query(QUERY)
    [event] = events
    assert event.answer == response.metadata["citations"]


class _Retrieved(Event):
    nodes: list[NodeWithScore]


class _RAG(Workflow):
    def __init__(self, index: Any, llm: ScriptedLLM) -> None:
        super().__init__(timeout=30)
        self.index = index
        self.llm = llm

    @step
    async def retrieve(self, ev: StartEvent) -> _Retrieved:
        nodes = await self.index.as_retriever(similarity_top_k=3).aretrieve(ev.query)
        return _Retrieved(nodes=CitationPostprocessor().postprocess_nodes(nodes))

    @step
    async def answer(self, ev: _Retrieved) -> StopEvent:
        context = "\n".join(n.node.get_content() for n in ev.nodes)
        reply = await self.llm.acomplete(f"{context}\nQuestion : {QUERY}")
        return StopEvent(result=reply.text)


def test_workflow(index: Any, events: list[CitationsEvent]) -> None:
    async def run() -> Any:
        return await _RAG(index, ScriptedLLM(reply=REPLY)).run(query=QUERY)

    result = asyncio.run(run())
    assert result == REPLY
    [event] = events
    # Labels come from the CitationPostprocessor run inside the workflow.
    assert [c.source_ids for c in event.answer.citations] == [["msm-pont"], ["msm-marees"]]
    assert event.root_span_id is not None
    assert event.root_span_id.startswith("_RAG.run-")


def _agent(index: Any) -> FunctionAgent:
    retriever = index.as_retriever(similarity_top_k=2)

    def search_docs(query: str) -> str:
        """Search the Mont-Saint-Michel documents."""
        found = retriever.retrieve(query)
        return "\n".join(f"{n.node.metadata['title']}: {n.node.get_content()}" for n in found)

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        if not any(m.role == "tool" for m in messages):
            call = ToolCallBlock(
                tool_call_id="call_1", tool_name="search_docs", tool_kwargs={"query": "marées"}
            )
            return ChatMessage(role="assistant", blocks=[call])
        return ChatMessage(role="assistant", content="Jusqu’à 14 mètres d’écart [1].")

    llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
    return FunctionAgent(tools=[FunctionTool.from_defaults(search_docs)], llm=llm)


# llama-index-workflows inspects the agent's members, touching pydantic's deprecated attributes.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
def test_agent_with_a_retrieving_tool(index: Any, events: list[CitationsEvent]) -> None:
    async def run() -> Any:
        return await _agent(index).run(QUERY)

    output = asyncio.run(run())
    assert str(output) == "Jusqu’à 14 mètres d’écart [1]."
    answer = events[-1].answer
    assert [c.source_ids for c in answer.citations] == [["msm-marees"]]
    # Only the cited source is listed.
    assert [(s.id, s.kind) for s in answer.sources] == [("msm-marees", "document")]
    assert events[-1].root_span_id is not None
    assert events[-1].root_span_id.startswith("FunctionAgent.run-")


@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
def test_agent_with_every_source_listed(index: Any) -> None:
    seen: list[CitedAnswer] = []

    async def run() -> Any:
        return await _agent(index).run(QUERY)

    with CitationEventHandler(sources="all", on_citations=seen.append):
        asyncio.run(run())
    answer = seen[-1]
    kinds = {s.id: s.kind for s in answer.sources}
    # The retrieved nodes and the tool's own output are the run's sources, the cited first.
    assert answer.sources[0].id == "msm-marees"
    assert "tool" in kinds.values()


def test_memory_is_freed_per_run(index: Any) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    streaming = CitationQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3, streaming=True
    )
    with CitationEventHandler(history=4) as handler:
        for _ in range(150):
            engine.query(QUERY)
        for _ in range(20):
            list(streaming.query(QUERY).response_gen)
        # Streams never consumed are kept only for a bounded number of runs.
        for _ in range(100):
            streaming.query(QUERY)
        # At most 64 finished runs wait for their stream, each with its pending LLM call.
        assert handler._state_size() <= 2 * LINGERING
        assert len(handler.answers) == 4
    assert handler.answer is not None


def test_threads_share_one_handler_without_mixing(index: Any) -> None:
    replies = {
        "Combien d’habitants vivent au Mont-Saint-Michel ?": "Une trentaine [1].",
        "Quand l’abbaye a-t-elle été fondée ?": "En 966 [2].",
        QUERY: "Quatorze mètres [1].",
    }
    engines = {
        q: CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=r), similarity_top_k=3)
        for q, r in replies.items()
    }
    questions = list(replies) * 10
    seen: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=seen.append) as handler:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda q: engines[q].query(q), questions))
        assert handler._state_size() == 0
    assert len(seen) == len(questions)
    expected = {}
    for question, reply in replies.items():
        with CitationEventHandler() as alone:
            engines[question].query(question)
        assert alone.answer is not None
        expected[reply] = alone.answer
    for answer in seen:
        # Every answer matches the answer of its own query run alone.
        original = next(r for r in replies.values() if r.split(" [")[0] in answer.text)
        assert answer == expected[original]


def test_a_raising_callback_does_not_break_the_run(index: Any) -> None:
    def boom(answer: CitedAnswer) -> None:
        raise RuntimeError("callback failed")

    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    with CitationEventHandler(on_citations=boom) as handler:
        assert engine.query(QUERY).response == REPLY
    assert handler.answer is not None


def test_disabled_does_nothing_and_logs_nothing(
    index: Any, caplog: pytest.LogCaptureFixture
) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    seen: list[CitedAnswer] = []
    root = get_dispatcher()
    before = list(root.span_handlers)
    with (
        caplog.at_level(logging.DEBUG),
        CitationEventHandler(enabled=False, on_citations=seen.append) as handler,
    ):
        engine.query(QUERY)
        assert list(root.span_handlers) == before
    assert seen == []
    assert handler.answer is None
    assert [r for r in caplog.records if r.name.startswith("unicite")] == []


def test_attach_and_detach(index: Any) -> None:
    root = get_dispatcher()
    handler = CitationEventHandler()
    assert handler.attach() is handler
    handler.attach()
    assert sum(h is handler for h in root.event_handlers) == 1
    handler.detach()
    assert not any(h is handler for h in root.event_handlers)
    assert not any(h is handler._tracker for h in root.span_handlers)


def test_added_by_hand_it_tracks_spans_itself(index: Any) -> None:
    root = get_dispatcher()
    handler = CitationEventHandler()
    root.add_event_handler(handler)
    try:
        engine = CitationQueryEngine.from_args(
            index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3
        )
        engine.query(QUERY)  # the first events attach the span tracker
        engine.query(QUERY)
        assert handler.answer is not None
        assert [c.source_ids for c in handler.answer.citations] == [["msm-pont"], ["msm-marees"]]
    finally:
        root.event_handlers = [h for h in root.event_handlers if h is not handler]
        handler.detach()


def test_a_copy_of_the_handler_reports_to_the_same_state(index: Any) -> None:
    # A pydantic copy shares the handler's state (its private attributes), not its slots.
    handler = CitationEventHandler()
    copy = handler.model_copy()
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    with copy:
        engine.query(QUERY)
    assert copy.answer is not None
    assert handler.answer is copy.answer
    assert [c.source_ids for c in copy.answer.citations] == [["msm-pont"], ["msm-marees"]]
    assert copy._state_size() == 0


def test_llm_attribution_needs_a_model() -> None:
    with pytest.raises(UsageError):
        CitationEventHandler(attribute="llm")
    with pytest.raises(UsageError):
        CitationEventHandler(on_invalid="raise")  # type: ignore[arg-type]


def test_on_citations_gets_the_cited_answer(index: Any) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    cited = CitedQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    seen: list[Any] = []
    with CitationEventHandler(on_citations=seen.append) as handler:
        engine.query(QUERY)
        response = cited.query(QUERY)
    assert all(isinstance(answer, CitedAnswer) for answer in seen)
    assert seen[0] == handler.answers[next(iter(handler.answers))]
    # A CitedQueryEngine's own answer reaches the handler's callback too.
    assert seen[1] == response.metadata["citations"] == handler.answer


def test_options_are_cite_policy_fields(index: Any) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    policy = CitePolicy(sources="all", on_invalid="keep")
    with CitationEventHandler(policy=policy, renumber=False) as handler:
        engine.query(QUERY)
    assert handler.policy == policy.replace(renumber=False)
    assert handler.answer is not None
    assert handler.answer.text == REPLY
    assert [s.id for s in handler.answer.sources] == ["msm-marees", "msm-habitants", "msm-pont"]
    with pytest.raises(UsageError, match="unknown citation option"):
        CitationEventHandler(renumbering=False)
    with pytest.raises(UsageError):
        CitationEventHandler(policy={"sources": "all"})  # type: ignore[arg-type]


def test_older_names_are_aliases() -> None:
    def judge(prompt: str) -> str:
        return "{}"

    handler = CitationEventHandler(attribute="llm", attribution_llm=judge, history=4)
    assert (handler.policy.llm, handler.policy.keep) == (judge, 4)
    with pytest.raises(UsageError, match="twice"):
        CitationEventHandler(keep=3, history=4)


def test_require_is_refused_it_cannot_be_enforced() -> None:
    with pytest.raises(UsageError, match="require"):
        CitationEventHandler(require="citations")
    with pytest.raises(UsageError, match="require"):
        CitationEventHandler(policy=CitePolicy(require="grounding"))


def test_a_llamaindex_llm_attributes_and_is_not_cited_itself(index: Any) -> None:
    reply = "Les marées atteignent 14 mètres. Le pont-passerelle est ouvert depuis 2014."
    judgement = (
        '{"citations": [{"claim": "Les marées atteignent 14 mètres.", "sourceIndex": 1}, '
        '{"claim": "Le pont-passerelle est ouvert depuis 2014.", "sourceIndex": 3}]}'
    )
    judge = ScriptedLLM(reply=judgement)
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=reply), similarity_top_k=3)
    seen: list[CitedAnswer] = []
    with CitationEventHandler(attribute="llm", llm=judge, on_citations=seen.append):
        engine.query(QUERY)
    [answer] = seen  # the judge's reply is no answer of the run
    assert len(judge.prompts) == 1
    assert [(c.source_ids, c.origin) for c in answer.citations] == [
        (["msm-marees"], "posthoc-llm"),
        (["msm-pont"], "posthoc-llm"),
    ]


def test_nodes_are_read_once_across_runs(index: Any) -> None:
    engine = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    with CitationEventHandler() as handler:
        engine.query(QUERY)
        first = handler.answer
        engine.query(QUERY)
        second = handler.answer
    assert first is not None
    assert second is not None
    assert second is not first
    assert second == first
    # The second run took the sources the first one read: the same objects, not equal copies.
    assert all(a is b for a, b in zip(first.sources, second.sources, strict=True))


def test_a_node_changed_between_runs_is_read_again() -> None:
    before = build_index(corpus_nodes())
    moved = moved_nodes()
    after = build_index(moved)
    with CitationEventHandler() as handler:
        CitationQueryEngine.from_args(
            before, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3
        ).query(QUERY)
        old = handler.answer
        CitationQueryEngine.from_args(
            after, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3
        ).query(QUERY)
        new = handler.answer
    assert old is not None
    assert new is not None
    assert [s.id for s in new.cited_sources()] == [s.id for s in old.cited_sources()]
    assert all(s.url is not None and s.url.endswith("?v=2") for s in new.cited_sources())
    assert not any(s.url is not None and s.url.endswith("?v=2") for s in old.sources)


def test_what_was_odd_about_a_node_is_said_on_every_run() -> None:
    odd = build_index(corpus_nodes(title=1789))
    engine = CitationQueryEngine.from_args(odd, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    with CitationEventHandler() as handler:
        answers = []
        for _ in range(2):
            engine.query(QUERY)
            assert handler.answer is not None
            answers.append(handler.answer)
    for answer in answers:
        assert any("metadata 'title' is not text" in d for d in answer.diagnostics), answer
