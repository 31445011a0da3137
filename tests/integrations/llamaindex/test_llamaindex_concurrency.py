"""32 concurrent runs through one shared engine, handler or postprocessor: no cross-talk.

Every run asks about its own topic: the retriever returns nodes whose ids, URLs and titles
carry the run's number, and the model answers from the prompt it got (refusing a prompt that
mixes runs). Threads meet at barriers inside the retriever and the model, and tasks at a gate
awaited there, so all 32 runs are in flight at once; each run's `CitedAnswer` must then cite
exactly its own nodes, as the same run does alone.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

import asyncio
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from llama_index.core import get_response_synthesizer
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT
from llama_index.core.query_engine import CitationQueryEngine, RetrieverQueryEngine
from llama_index.core.query_engine.citation_query_engine import (
    CITATION_QA_TEMPLATE,
    CITATION_REFINE_TEMPLATE,
)
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import FunctionTool

from unicite import CitedAnswer
from unicite_llamaindex import CitationEventHandler, CitationPostprocessor, CitedQueryEngine

RUNS = 32
NODES = 3
TIMEOUT = 30.0
_RUN = re.compile(r"\b[Rr]un[- ](\d{2})\b")
T = TypeVar("T")


# --- each run's own data ------------------------------------------------------------------


def node_id(k: int, j: int) -> str:
    return f"run{k:02d}-n{j}"


def node_url(k: int, j: int) -> str:
    return f"https://run{k:02d}.example.org/doc/{j}"


def run_nodes(k: int) -> list[NodeWithScore]:
    return [
        NodeWithScore(
            node=TextNode(
                id_=node_id(k, j),
                text=f"Run {k:02d} passage {j}: what source {j} of topic {k} says.",
                metadata={"url": node_url(k, j), "title": f"Run {k:02d} document {j}"},
            ),
            score=1.0 - j / 10,
        )
        for j in range(NODES)
    ]


def question(k: int) -> str:
    return f"What do the sources of run-{k:02d} say?"


def run_of(text: str) -> int:
    """The one run a prompt or an answer is about (it must not mention another)."""
    runs = {int(n) for n in _RUN.findall(text)}
    assert len(runs) == 1, f"text mixes runs {sorted(runs)}: {text!r}"
    return runs.pop()


def marker_reply(k: int) -> str:
    """Cites the second node shown, then the first (renumbered first-cited: [1], [2])."""
    return f"Run {k:02d}: the second passage holds [2]. The first passage agrees [1]."


def native_reply(k: int) -> tuple[str, dict[str, Any]]:
    """An OpenAI Responses answer whose url_citations name the run's second and first node."""
    first, second = f"Run {k:02d}: the second passage holds.", "The first passage agrees."
    text = f"{first} {second}"
    annotations = [
        {
            "type": "url_citation",
            "start_index": start,
            "end_index": end,
            "url": node_url(k, j),
            "title": f"Run {k:02d} document {j}",
        }
        for start, end, j in ((0, len(first), 1), (len(first) + 1, len(text), 0))
    ]
    payload = {
        "id": f"resp_{k:02d}",
        "object": "response",
        "status": "completed",
        "model": "gpt-scripted",
        "output": [
            {
                "type": "message",
                "id": f"msg_{k:02d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": annotations}],
            }
        ],
    }
    return text, payload


def check_own(answer: CitedAnswer, k: int) -> None:
    """The answer cites the run's second then first node, and knows no other run's source."""
    ids = [s.id for s in answer.sources]
    # The cited sources, in first-cited order: the third node, uncited, is not listed.
    assert ids == [node_id(k, 1), node_id(k, 0)], f"run {k} got sources {ids}"
    assert all(
        s.url is not None and s.url.startswith(f"https://run{k:02d}.") for s in answer.sources
    )
    assert [c.source_ids for c in answer.citations] == [[node_id(k, 1)], [node_id(k, 0)]]
    assert run_of(answer.text) == k
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text
        if citation.marker_span is not None and citation.origin == "marker":
            start, end = citation.marker_span
            numbers = [answer.footnote_number(sid) for sid in citation.source_ids]
            assert answer.text[start:end] == "".join(f"[{n}]" for n in numbers)
    assert answer.diagnostics == []


# --- a retriever and a model that make runs overlap ---------------------------------------


class _TaskGate:
    """Holds each task that arrives until `parties` tasks have (an asyncio barrier)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.opened = asyncio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived >= self.parties:
            self.opened.set()
        await asyncio.wait_for(self.opened.wait(), TIMEOUT)


class _Gates:
    """Where concurrent runs wait for each other: a barrier for threads, a gate for tasks."""

    def __init__(self) -> None:
        self.barrier: threading.Barrier | None = None
        self.gate: _TaskGate | None = None

    def wait(self) -> None:
        if self.barrier is not None:
            self.barrier.wait()

    async def await_(self) -> None:
        await asyncio.sleep(0)
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(0)


class RunRetriever(BaseRetriever):
    """Returns the nodes of the run the query names."""

    def __init__(self) -> None:
        super().__init__()
        self.gates = _Gates()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        k = run_of(query_bundle.query_str)
        self.gates.wait()
        return run_nodes(k)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        k = run_of(query_bundle.query_str)
        await self.gates.await_()
        return run_nodes(k)


class RunLLM(CustomLLM):
    """Answers the run its prompt is about, with markers or OpenAI-native citations."""

    native: bool = False
    _gates: _Gates = PrivateAttr(default_factory=_Gates)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="run-scripted")

    @property
    def gates(self) -> _Gates:
        return self._gates

    def _respond(self, prompt: str) -> CompletionResponse:
        k = run_of(prompt)
        if self.native:
            text, raw = native_reply(k)
            return CompletionResponse(text=text, raw=raw)
        return CompletionResponse(text=marker_reply(k))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._gates.wait()
        return self._respond(prompt)

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        await self._gates.await_()
        return self._respond(prompt)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        reply = self._respond(prompt).text
        gates = self._gates

        def gen() -> CompletionResponseGen:
            text = ""
            for n, delta in enumerate(_pieces(reply)):
                if n == 1:
                    gates.wait()  # every run has streamed its first token
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return gen()

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        reply = self._respond(prompt).text
        gates = self._gates

        async def gen() -> CompletionResponseAsyncGen:
            text = ""
            for n, delta in enumerate(_pieces(reply)):
                if n == 1:
                    await gates.await_()
                await asyncio.sleep(0)
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return gen()


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[n : n + size] for n in range(0, len(text), size)]


# --- running 32 at once --------------------------------------------------------------------


def in_threads(retriever: RunRetriever, llm: RunLLM, run: Callable[[int], T]) -> list[T]:
    """`run(k)` for every run in its own thread, all meeting in the retriever and the model."""
    retriever.gates.barrier = threading.Barrier(RUNS, timeout=TIMEOUT)
    llm.gates.barrier = threading.Barrier(RUNS, timeout=TIMEOUT)
    try:
        with ThreadPoolExecutor(max_workers=RUNS) as pool:
            return list(pool.map(run, range(RUNS)))
    finally:
        retriever.gates.barrier = llm.gates.barrier = None


def in_tasks(
    retriever: RunRetriever, llm: RunLLM, run: Callable[[int], Any], gated: bool = True
) -> list[Any]:
    """`await run(k)` for every run, gathered, all meeting in the retriever and the model."""

    async def main() -> list[Any]:
        if gated:
            retriever.gates.gate = _TaskGate(RUNS)
            llm.gates.gate = _TaskGate(RUNS)
        try:
            return list(await asyncio.gather(*(run(k) for k in range(RUNS))))
        finally:
            retriever.gates.gate = llm.gates.gate = None

    return asyncio.run(main())


def cited(response: Any) -> CitedAnswer:
    metadata = response.metadata or {}
    answer = metadata.get("citations")
    assert isinstance(answer, CitedAnswer)
    return answer


def by_run(published: Sequence[CitedAnswer]) -> dict[int, CitedAnswer]:
    """The answer of each run, from those published: exactly one per run."""
    answers: dict[int, CitedAnswer] = {}
    for answer in published:
        k = run_of(answer.text)
        assert k not in answers, f"run {k} was cited twice"
        answers[k] = answer
    assert sorted(answers) == list(range(RUNS))
    return answers


@pytest.fixture
def retriever() -> RunRetriever:
    return RunRetriever()


@pytest.fixture
def events() -> Iterator[tuple[CitationEventHandler, list[CitedAnswer]]]:
    seen: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=seen.append, history=RUNS) as handler:
        yield handler, seen
    assert handler._state_size() == 0


# --- CitedQueryEngine ----------------------------------------------------------------------

MODES = ["markers", "native", "stream"]


def cited_engine(
    retriever: RunRetriever, llm: RunLLM, mode: str, *, use_async: bool = False
) -> CitedQueryEngine:
    synthesizer = get_response_synthesizer(
        llm=llm,
        text_qa_template=CITATION_QA_TEMPLATE,
        refine_template=CITATION_REFINE_TEMPLATE,
        streaming=mode == "stream",
        use_async=use_async,
    )
    return CitedQueryEngine(retriever=retriever, llm=llm, response_synthesizer=synthesizer)


@pytest.mark.parametrize("mode", MODES)
def test_cited_query_engine_in_32_threads(
    retriever: RunRetriever,
    mode: str,
    events: tuple[CitationEventHandler, list[CitedAnswer]],
) -> None:
    llm = RunLLM(native=mode == "native")
    engine = cited_engine(retriever, llm, mode)

    def query(k: int) -> CitedAnswer:
        response = engine.query(question(k))
        if isinstance(response, StreamingResponse):
            live = "".join(response.response_gen)
            response = response.get_response()
            assert live == cited(response).text
        return cited(response)

    alone = [query(k) for k in range(RUNS)]
    _, seen = events
    seen.clear()
    together = in_threads(retriever, llm, query)
    for k, answer in enumerate(together):
        check_own(answer, k)
        assert answer == alone[k]
    # The handler on the dispatcher saw each engine's answer once, in its own run.
    assert by_run(seen) == dict(enumerate(together))
    # No cited query is left active here: the handler still cites a plain engine's answer.
    seen.clear()
    citation_engine(retriever, RunLLM(), "markers").query(question(0))
    assert [run_of(a.text) for a in seen] == [0]


@pytest.mark.parametrize("mode", MODES)
def test_cited_query_engine_in_32_tasks(retriever: RunRetriever, mode: str) -> None:
    llm = RunLLM(native=mode == "native")
    engine = cited_engine(retriever, llm, mode, use_async=True)

    async def query(k: int) -> CitedAnswer:
        response = await engine.aquery(question(k))
        if isinstance(response, AsyncStreamingResponse):
            tokens = [token async for token in response.async_response_gen()]
            answer = cited(await response.get_response())
            assert "".join(tokens) == answer.text
            return answer
        return cited(response)

    alone = in_tasks(retriever, llm, query, gated=False)
    together = in_tasks(retriever, llm, query)
    for k, answer in enumerate(together):
        check_own(answer, k)
        assert answer == alone[k]


# --- CitationEventHandler around LlamaIndex's own engines -----------------------------------


def citation_engine(retriever: RunRetriever, llm: RunLLM, mode: str) -> CitationQueryEngine:
    synthesizer = get_response_synthesizer(
        llm=llm,
        text_qa_template=CITATION_QA_TEMPLATE,
        refine_template=CITATION_REFINE_TEMPLATE,
        streaming=mode == "stream",
    )
    return CitationQueryEngine(retriever=retriever, llm=llm, response_synthesizer=synthesizer)


@pytest.mark.parametrize("mode", MODES)
def test_handler_in_32_threads(
    retriever: RunRetriever,
    mode: str,
    events: tuple[CitationEventHandler, list[CitedAnswer]],
) -> None:
    llm = RunLLM(native=mode == "native")
    engine = citation_engine(retriever, llm, mode)
    handler, seen = events

    def query(k: int) -> str:
        response = engine.query(question(k))
        if isinstance(response, StreamingResponse):
            return "".join(response.response_gen)
        assert isinstance(response, Response)
        return str(response.response)

    for k in range(RUNS):
        query(k)
    alone = by_run(seen)
    seen.clear()
    texts = in_threads(retriever, llm, query)
    assert texts == [
        native_reply(k)[0] if mode == "native" else marker_reply(k) for k in range(RUNS)
    ]
    together = by_run(seen)
    for k in range(RUNS):
        check_own(together[k], k)
        assert together[k] == alone[k]
    assert handler._state_size() == 0
    # One answer kept per run (history=32), each under its own run's root span.
    assert sorted(run_of(a.text) for a in handler.answers.values()) == list(range(RUNS))


@pytest.mark.parametrize("mode", ["markers", "native"])
def test_handler_in_32_tasks(
    retriever: RunRetriever,
    mode: str,
    events: tuple[CitationEventHandler, list[CitedAnswer]],
) -> None:
    llm = RunLLM(native=mode == "native")
    engine = citation_engine(retriever, llm, mode)
    handler, seen = events

    async def query(k: int) -> str:
        response = await engine.aquery(question(k))
        assert isinstance(response, Response)
        return str(response.response)

    in_tasks(retriever, llm, query, gated=False)
    alone = by_run(seen)
    seen.clear()
    in_tasks(retriever, llm, query)
    together = by_run(seen)
    for k in range(RUNS):
        check_own(together[k], k)
        assert together[k] == alone[k]
    assert handler._state_size() == 0


def test_shared_postprocessor_under_the_handler_in_32_threads(
    retriever: RunRetriever, events: tuple[CitationEventHandler, list[CitedAnswer]]
) -> None:
    # One CitationPostprocessor numbers every run's nodes for a plain RetrieverQueryEngine.
    llm = RunLLM()
    postprocessor = CitationPostprocessor()
    engine = RetrieverQueryEngine.from_args(
        retriever,
        llm=llm,
        node_postprocessors=[postprocessor],
        text_qa_template=DEFAULT_TEXT_QA_PROMPT,
    )
    handler, seen = events
    texts = in_threads(retriever, llm, lambda k: str(engine.query(question(k))))
    assert texts == [marker_reply(k) for k in range(RUNS)]
    answers = by_run(seen)
    for k in range(RUNS):
        check_own(answers[k], k)
    assert handler._state_size() == 0


# --- an agent whose tool awaits ------------------------------------------------------------


# llama-index-workflows inspects the agent's members, touching pydantic's deprecated attributes.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
def test_one_agent_32_runs_in_tasks(
    events: tuple[CitationEventHandler, list[CitedAnswer]],
) -> None:
    gate: list[_TaskGate] = []

    async def search(query: str) -> str:
        """Search the run's documents."""
        await asyncio.sleep(0)
        await gate[0].wait()
        k = run_of(query)
        return f"Run {k:02d} search result: see https://run{k:02d}.example.org/tool for topic {k}."

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        k = run_of(" ".join(m.content or "" for m in messages if m.role == "user"))
        if not any(m.role == "tool" for m in messages):
            # The same call id in every run: runs must not share what they have seen.
            call = ToolCallBlock(
                tool_call_id="call_1", tool_name="search", tool_kwargs={"query": question(k)}
            )
            return ChatMessage(role="assistant", blocks=[call])
        return ChatMessage(role="assistant", content=f"Run {k:02d}: the search says so [1].")

    agent = FunctionAgent(
        tools=[FunctionTool.from_defaults(async_fn=search)],
        llm=MockFunctionCallingLLM(response_generator=respond, is_chat_model=True),
    )
    handler, seen = events

    async def main() -> list[str]:
        gate.append(_TaskGate(RUNS))
        outputs = await asyncio.gather(*(agent.run(question(k)) for k in range(RUNS)))
        return [str(output) for output in outputs]

    outputs = asyncio.run(main())
    assert outputs == [f"Run {k:02d}: the search says so [1]." for k in range(RUNS)]
    answers = by_run([a for a in seen if a.text])
    for k, answer in answers.items():
        [source] = answer.sources
        assert source.kind == "tool"
        assert source.content is not None
        assert run_of(source.content) == k
        assert [c.source_ids for c in answer.citations] == [[source.id]]
        assert answer.diagnostics == []
    assert handler._state_size() == 0
