"""One `CitationCallbackHandler` (and one `with_citations` runnable) shared by 32 concurrent runs.

Each run retrieves its own documents (their URLs and titles carry the run's number) plus one
document every run shares, and answers with its own markers or native citations. Threads meet
at barriers and coroutines at gates inside retrievers and tools and after the model, so all 32
runs are in flight at once. Every answer must hold exactly its own run's sources, none lost and
none borrowed, and the handler must forget every run once it ends.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID, uuid4

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough, chain
from langchain_core.tools import BaseTool, StructuredTool

from unicite import CitedAnswer
from unicite_langchain import (
    CITATIONS_EVENT,
    CitationCallbackHandler,
    cite_tools,
    number_sources,
    with_citations,
)

RUNS = 32
SHARED = "https://shared.example.org/glossaire"
"""A page every run retrieves: each answer lists it once, from its own retrieval."""

Rendezvous = Callable[[], object]
"""Blocks (a thread) until every run has reached the same point."""


# --- per-run data -----------------------------------------------------------------------------


def own_url(run: int, page: int) -> str:
    return f"https://run{run}.example.org/page-{page}"


def documents_for(run: int) -> list[Document]:
    own = [
        Document(
            id=f"run{run}-{page}",
            page_content=f"Run {run}, fact {page}: the deck of bridge {run} spans {run + page} m.",
            metadata={"source": own_url(run, page), "title": f"Run {run} page {page}"},
        )
        for page in range(3)
    ]
    glossary = Document(
        id="glossary",
        page_content="Glossaire : un tablier est la partie d'un pont qui porte la chaussée.",
        metadata={"source": SHARED, "title": "Glossaire des ponts"},
    )
    return [*own, glossary]


def run_of(text: str) -> int:
    found = re.search(r"Run (\d+)", text)
    assert found is not None, text
    return int(found.group(1))


def marker_answer(run: int) -> str:
    """The question, which the parrot model repeats: it cites the run's prompt numbers."""
    return f"Run {run}: the deck spans {run} m [1]. Piers and cables [2, 3]. A glossary [4]."


def expected_urls(run: int) -> list[str]:
    return [own_url(run, 0), own_url(run, 1), own_url(run, 2), SHARED]


def cited_urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def assert_offsets(answer: CitedAnswer) -> None:
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text
        assert all(answer.source(sid) is not None for sid in citation.source_ids)


def assert_forgotten(handler: CitationCallbackHandler) -> None:
    """Nothing of any run outlives it inside the handler."""
    assert handler.active_runs == 0
    assert handler._runs.roots == {}
    assert len(handler._runs) == 0


# --- rendezvous points --------------------------------------------------------------------------


class Overlap:
    """Where all runs must meet, and what the handler tracked at the moment they all did."""

    def __init__(self, handler: CitationCallbackHandler | None) -> None:
        self.handler = handler
        self.tracked: list[tuple[int, int]] = []

    def snapshot(self) -> None:
        if self.handler is not None:
            self.tracked.append((len(self.handler._runs.roots), self.handler.active_runs))

    def barrier(self) -> Rendezvous:
        """For threads: every run waits until all RUNS arrive (a timeout fails the test)."""
        barrier = threading.Barrier(RUNS, action=self.snapshot, timeout=30)
        return barrier.wait

    def gate(self) -> Callable[[], Any]:
        """For coroutines: every run awaits until all RUNS arrive."""
        arrived = 0
        opened = asyncio.Event()

        async def wait() -> None:
            nonlocal arrived
            arrived += 1
            if arrived == RUNS:
                self.snapshot()
                opened.set()
            await asyncio.wait_for(opened.wait(), timeout=30)

        return wait


class RunRetriever(BaseRetriever):
    """Returns the documents of the run named in the query, once every run is retrieving."""

    meet: Any = None
    ameet: Any = None

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        if self.meet is not None:
            self.meet()
        return documents_for(run_of(query))

    async def _aget_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        await asyncio.sleep(0)
        if self.ameet is not None:
            await self.ameet()
        return documents_for(run_of(query))


def meeting_point(meet: Rendezvous | None, ameet: Callable[[], Any] | None) -> Runnable[Any, Any]:
    """A pass-through step where every run waits for the others (sync and async)."""

    def through(value: Any) -> Any:
        if meet is not None:
            meet()
        return value

    async def athrough(value: Any) -> Any:
        await asyncio.sleep(0)
        if ameet is not None:
            await ameet()
        return value

    return RunnableLambda(through, afunc=athrough, name="meeting_point")


# --- the chains ---------------------------------------------------------------------------------


def marker_rag(retriever: BaseRetriever, after_model: Runnable[Any, Any]) -> Runnable[Any, str]:
    """Numbered sources in the system prompt; the parrot answers with the question's markers."""
    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()
        | after_model
        | StrOutputParser()
    )


def as_document_blocks(inputs: dict[str, Any]) -> list[BaseMessage]:
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


def native_reply(run: int) -> AIMessage:
    """What langchain-anthropic makes of an answer citing document 1 of the request."""
    cited = documents_for(run)[1].page_content
    return AIMessage(
        content=[
            {"type": "text", "text": f"Run {run}: "},
            {
                "type": "text",
                "text": f"the deck spans {run + 1} m.",
                "citations": [
                    {
                        "type": "char_location",
                        "cited_text": cited,
                        "document_index": 1,
                        "document_title": f"Run {run} page 1",
                        "start_char_index": 0,
                        "end_char_index": len(cited),
                    }
                ],
            },
        ],
        response_metadata={"model_provider": "anthropic", "stop_reason": "end_turn"},
    )


def native_rag(retriever: BaseRetriever, after_model: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """Documents sent as request blocks; each run's scripted model cites its document 1."""

    def model_for(messages: list[BaseMessage]) -> GenericFakeChatModel:
        question = messages[0].content[-1]["text"]  # type: ignore[index]
        return GenericFakeChatModel(messages=iter([native_reply(run_of(question))]))

    @chain
    def answer(messages: list[BaseMessage], config: Any) -> BaseMessage:
        return model_for(messages).invoke(messages, config)

    @chain
    async def aanswer(messages: list[BaseMessage], config: Any) -> BaseMessage:
        await asyncio.sleep(0)
        return await model_for(messages).ainvoke(messages, config)

    step = RunnableLambda(answer.invoke, afunc=aanswer.ainvoke, name="anthropic")
    return (
        {"documents": retriever, "question": RunnablePassthrough()}
        | RunnableLambda(as_document_blocks)
        | step
        | after_model
    )


def check_marker_answer(answer: CitedAnswer, run: int) -> None:
    assert answer.text == marker_answer(run)
    assert [s.url for s in answer.sources] == expected_urls(run)
    urls = expected_urls(run)
    assert cited_urls(answer) == [[urls[0]], [urls[1], urls[2]], [urls[3]]]
    assert {c.origin for c in answer.citations} == {"marker"}
    assert answer.diagnostics == []
    assert_offsets(answer)


def check_native_answer(answer: CitedAnswer, run: int) -> None:
    assert answer.text == f"Run {run}: the deck spans {run + 1} m."
    assert answer.extras["citation_origin"] == "native"
    # Document 1 of this run's request is this run's second retrieved page.
    assert cited_urls(answer) == [[own_url(run, 1)]]
    assert answer.citations[0].quote == documents_for(run)[1].page_content
    assert [s.url for s in answer.sources] == [own_url(run, 1)]  # the cited source only
    assert answer.provider == "anthropic"
    assert_offsets(answer)


CHAINS = {
    "markers": (marker_rag, check_marker_answer, marker_answer),
    "native": (native_rag, check_native_answer, lambda run: f"Run {run}: quelle portée ?"),
}


class EventLog(BaseCallbackHandler):
    """Records the handler's custom events, to check each went to its own run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[UUID, dict[str, Any]]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if name == CITATIONS_EVENT:
            with self.lock:
                self.events.append((run_id, data))


def check_delivery(
    handler: CitationCallbackHandler,
    ids: list[UUID],
    log: EventLog,
    called: list[CitedAnswer],
) -> None:
    """Each run's answer reached `answers`, ``on_citations`` and its own custom event once."""
    assert len(handler.answers) == RUNS
    by_run = {run_id: data for run_id, data in log.events}
    assert len(log.events) == RUNS
    assert set(by_run) == set(ids)
    for run_id in ids:
        answer = handler.answers[run_id]
        assert answer.extras["langchain_run_id"] == str(run_id)
        assert by_run[run_id]["answer"] is answer
        assert by_run[run_id]["run_id"] == str(run_id)
    assert sorted(a.extras["langchain_run_id"] for a in called) == sorted(map(str, ids))


# --- threads ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_threads_share_one_handler(kind: str) -> None:
    build, check, question = CHAINS[kind]
    called: list[CitedAnswer] = []
    handler = CitationCallbackHandler(on_citations=called.append)
    log = EventLog()
    retrieving, answered = Overlap(handler), Overlap(handler)
    # Every run is inside the retriever at once; then every model has answered before any
    # run ends, so all 32 answers sit in the handler together.
    pipeline = build(
        RunRetriever(meet=retrieving.barrier()), meeting_point(answered.barrier(), None)
    )
    ids = [uuid4() for _ in range(RUNS)]

    def work(run: int) -> Any:
        return pipeline.invoke(
            question(run), config={"callbacks": [handler, log], "run_id": ids[run]}
        )

    with ThreadPoolExecutor(RUNS) as pool:
        outputs = list(pool.map(work, range(RUNS)))

    # All 32 root runs (and their children) were tracked at the same time.
    assert retrieving.tracked[0][0] == RUNS
    assert retrieving.tracked[0][1] >= 2 * RUNS
    assert answered.tracked[0][0] == RUNS
    for run in range(RUNS):
        answer = handler.answers[ids[run]]
        check(answer, run)
        if kind == "markers":
            assert outputs[run] == marker_answer(run)
    check_delivery(handler, ids, log, called)
    assert_forgotten(handler)


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_coroutines_share_one_handler(kind: str) -> None:
    build, check, question = CHAINS[kind]
    called: list[CitedAnswer] = []
    handler = CitationCallbackHandler(on_citations=called.append)
    log = EventLog()
    retrieving, answered = Overlap(handler), Overlap(handler)
    ids = [uuid4() for _ in range(RUNS)]

    async def go() -> list[Any]:
        pipeline = build(
            RunRetriever(ameet=retrieving.gate()), meeting_point(None, answered.gate())
        )
        return await asyncio.gather(
            *(
                pipeline.ainvoke(
                    question(run), config={"callbacks": [handler, log], "run_id": ids[run]}
                )
                for run in range(RUNS)
            )
        )

    outputs = asyncio.run(go())
    assert retrieving.tracked[0][0] == RUNS
    assert answered.tracked[0][0] == RUNS
    for run in range(RUNS):
        check(handler.answers[ids[run]], run)
        if kind == "markers":
            assert outputs[run] == marker_answer(run)
    check_delivery(handler, ids, log, called)
    assert_forgotten(handler)


# --- an agent with cited tools ------------------------------------------------------------------


def search_results(query: str) -> list[dict[str, str]]:
    run = run_of(query)
    return [
        {"url": own_url(run, 0), "title": f"Run {run} page 0", "content": f"Bridge {run}."},
        {"url": SHARED, "title": "Glossaire des ponts", "content": "Un tablier porte la route."},
    ]


def search_tool(meet: Rendezvous | None, ameet: Callable[[], Any] | None) -> BaseTool:
    def search(query: str) -> list[dict[str, str]]:
        if meet is not None:
            meet()
        return search_results(query)

    async def asearch(query: str) -> list[dict[str, str]]:
        await asyncio.sleep(0)
        if ameet is not None:
            await ameet()
        return search_results(query)

    return StructuredTool.from_function(
        func=search, coroutine=asearch, name="web_search", description="Search the web."
    )


def agent_reply(run: int, step: int) -> AIMessage:
    if step == 0:
        call = {
            "name": "web_search",
            "args": {"query": f"Run {run} deck"},
            "id": f"call_{run}",
            "type": "tool_call",
        }
        return AIMessage("", tool_calls=[call])
    return AIMessage(f"Run {run}: the deck [1]. The glossary [2].")


def make_agent(tool: BaseTool, transcripts: dict[int, list[BaseMessage]]) -> Runnable[str, str]:
    """One shared tool-calling loop; each run's scripted model asks for its own search."""

    def model_for(question: str) -> GenericFakeChatModel:
        run = run_of(question)
        return GenericFakeChatModel(messages=iter([agent_reply(run, 0), agent_reply(run, 1)]))

    @chain
    def agent(question: str, config: Any) -> str:
        model = model_for(question)
        messages: list[BaseMessage] = [HumanMessage(question)]
        transcripts[run_of(question)] = messages
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            messages.extend(tool.invoke(call, config) for call in reply.tool_calls)

    @chain
    async def aagent(question: str, config: Any) -> str:
        model = model_for(question)
        messages: list[BaseMessage] = [HumanMessage(question)]
        transcripts[run_of(question)] = messages
        while True:
            reply = await model.ainvoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                messages.append(await tool.ainvoke(call, config))

    return RunnableLambda(agent.invoke, afunc=aagent.ainvoke, name="agent")


def check_agent_run(answer: CitedAnswer, run: int, transcript: list[BaseMessage]) -> None:
    # The agent saw its own results numbered by its own run's ledger.
    [seen] = [m for m in transcript if isinstance(m, ToolMessage)]
    assert isinstance(seen.content, str)
    assert seen.content.startswith(f"[sid:1] Run {run} page 0\n")
    assert "[sid:2] Glossaire des ponts" in seen.content
    assert cited_urls(answer) == [[own_url(run, 0)], [SHARED]]
    assert [s.url for s in answer.sources] == [own_url(run, 0), SHARED]
    # Every source came from this run's own tool call.
    assert [s.origin.call_id for s in answer.sources] == [f"call_{run}"] * 2  # type: ignore[union-attr]
    assert answer.diagnostics == []
    assert_offsets(answer)


@pytest.mark.parametrize("mode", ["threads", "coroutines"])
def test_agents_with_cited_tools_share_one_handler(mode: str) -> None:
    handler = CitationCallbackHandler()
    overlap = Overlap(handler)
    transcripts: dict[int, list[BaseMessage]] = {}
    ids = [uuid4() for _ in range(RUNS)]

    def config(run: int) -> Any:
        return {"callbacks": [handler], "run_id": ids[run]}

    if mode == "threads":
        [tool] = cite_tools([search_tool(overlap.barrier(), None)])
        agent = make_agent(tool, transcripts)
        with ThreadPoolExecutor(RUNS) as pool:
            outputs = list(pool.map(lambda r: agent.invoke(f"Run {r}?", config(r)), range(RUNS)))
    else:

        async def go() -> list[str]:
            [tool] = cite_tools([search_tool(None, overlap.gate())])
            agent = make_agent(tool, transcripts)
            return await asyncio.gather(
                *(agent.ainvoke(f"Run {r}?", config(r)) for r in range(RUNS))
            )

        outputs = asyncio.run(go())

    assert overlap.tracked[0][0] == RUNS  # every agent was inside its tool at once
    for run in range(RUNS):
        assert outputs[run] == f"Run {run}: the deck [1]. The glossary [2]."
        check_agent_run(handler.answers[ids[run]], run, transcripts[run])
    assert_forgotten(handler)


# --- one with_citations runnable ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["threads", "coroutines"])
def test_one_cited_runnable_serves_concurrent_calls(mode: str) -> None:
    """`with_citations` keeps each call's answer apart, streamed or not."""
    overlap = Overlap(None)
    if mode == "threads":
        cited = with_citations(
            marker_rag(RunRetriever(meet=overlap.barrier()), RunnablePassthrough())
        )

        def work(run: int) -> dict[str, Any]:
            question = marker_answer(run)
            if run % 2:
                return cited.invoke(question)
            total: dict[str, Any] = {}
            for chunk in cited.stream(question):
                for key, value in chunk.items():
                    total[key] = total.get(key, "") + value if key == "answer" else value
            return total

        with ThreadPoolExecutor(RUNS) as pool:
            results = list(pool.map(work, range(RUNS)))
    else:

        async def one(cited: Any, run: int) -> dict[str, Any]:
            question = marker_answer(run)
            if run % 2:
                return dict(await cited.ainvoke(question))
            chunks = [chunk async for chunk in cited.astream(question)]
            return {
                "answer": "".join(c.get("answer", "") for c in chunks),
                "citations": chunks[-1]["citations"],
            }

        async def go() -> list[dict[str, Any]]:
            cited = with_citations(
                marker_rag(RunRetriever(ameet=overlap.gate()), RunnablePassthrough())
            )
            return await asyncio.gather(*(one(cited, run) for run in range(RUNS)))

        results = asyncio.run(go())

    for run, result in enumerate(results):
        assert result["answer"] == marker_answer(run)
        check_marker_answer(result["citations"], run)


# --- runs cancelled while others go on ----------------------------------------------------------


def test_cancelled_runs_leave_nothing_behind() -> None:
    """Half the runs are cancelled mid-retrieval; the others still get their own answers."""
    handler = CitationCallbackHandler()
    ids = [uuid4() for _ in range(RUNS)]

    async def go() -> list[Any]:
        arrived = 0
        everyone, release = asyncio.Event(), asyncio.Event()

        async def meet() -> None:
            nonlocal arrived
            arrived += 1
            if arrived == RUNS:
                everyone.set()
            await release.wait()

        pipeline = marker_rag(RunRetriever(ameet=meet), RunnablePassthrough())
        tasks = [
            asyncio.create_task(
                pipeline.ainvoke(
                    marker_answer(run), config={"callbacks": [handler], "run_id": ids[run]}
                )
            )
            for run in range(RUNS)
        ]
        await asyncio.wait_for(everyone.wait(), timeout=30)
        assert len(handler._runs.roots) == RUNS
        for run in range(1, RUNS, 2):
            tasks[run].cancel()
        release.set()
        return await asyncio.gather(*tasks, return_exceptions=True)

    outcomes = asyncio.run(go())
    for run, outcome in enumerate(outcomes):
        if run % 2:
            assert isinstance(outcome, asyncio.CancelledError)
            assert ids[run] not in handler.answers
        else:
            assert outcome == marker_answer(run)
            check_marker_answer(handler.answers[ids[run]], run)
    assert len(handler.answers) == RUNS // 2
    assert_forgotten(handler)
