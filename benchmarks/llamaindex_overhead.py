"""CitedQueryEngine against LlamaIndex's CitationQueryEngine: what citations cost per query.

Both engines query the same 20-node VectorStoreIndex with the same scripted LLM, whose answer
cites eight of the nodes out of order and one that does not exist, so the cited engine does
all its work: labelling, capturing the LLM call, parsing and validating the markers,
renumbering and rewriting the response. Also measured: a streamed query read to the end (the
cited engine streams the text already renumbered, through `unicite.MarkerStream`), and
`CitationEventHandler` attached while the plain engine runs.

Concurrency: 32 queries started together (threads meeting at a barrier, or tasks gathered)
through one shared engine, or LlamaIndex's engine under one shared `CitationEventHandler`,
against the same 32 queries through LlamaIndex's engine alone; and the cost ratio of the
cited engine and of the handler in 32 threads against their ratio one query at a time, which
would grow if runs waited on each other (lock contention). The floor of any handler that
cites: the same 32 threads under a handler that only calls `unicite.cite` on each answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _harness import Figure
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMCompletionEndEvent
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.schema import TextNode

import unicite
from unicite import Source
from unicite_llamaindex import CitationEventHandler, CitedQueryEngine

NODES = 20
QUESTION = "Which harbours did the survey visit, and what did it find there?"
ANSWER = " ".join(
    f"The survey found {topic} at the harbour of site {n} [{n}]."
    for n, topic in zip(
        (7, 2, 15, 4, 11, 19, 1, 9, 23),
        (
            "eroded quays",
            "new moorings",
            "silted channels",
            "a rebuilt lighthouse",
            "seagrass beds",
            "a closed fish market",
            "record tides",
            "a ferry terminal",
            "nothing",
        ),
        strict=True,
    )
)
TARGET = "≤ 1.10×"
RUNS = 32
CONTENTION_TARGET = "≤ 1.2×"


class _WordEmbedding(BaseEmbedding):
    """Hashed bag-of-words vectors, so retrieval is real and offline."""

    @classmethod
    def class_name(cls) -> str:
        return "WordEmbedding"

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * 64
        for word in re.findall(r"\w{3,}", text.lower()):
            vector[int.from_bytes(hashlib.blake2b(word.encode()).digest()[:4], "big") % 64] += 1
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class _ScriptedLLM(CustomLLM):
    """The same answer for every prompt, streamed in 12-character tokens when asked."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=ANSWER)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            text = ""
            for start in range(0, len(ANSWER), 12):
                delta = ANSWER[start : start + 12]
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return gen()


def _index() -> VectorStoreIndex:
    nodes = [
        TextNode(
            id_=f"harbour-{n}",
            text=(
                f"Harbour survey, site {n}. The team measured the depth of the channel, "
                f"counted the moorings and noted the state of the quays at site {n}. "
                "Local fishers described how the tides and the storms of the last winter "
                "changed the harbour, and the port authority shared its maintenance records."
            ),
            metadata={"url": f"https://survey.example.org/harbours/{n}", "title": f"Site {n}"},
        )
        for n in range(1, NODES + 1)
    ]
    return VectorStoreIndex(nodes, embed_model=_WordEmbedding())


class _CiteOnly(BaseEventHandler):
    """The least any citing handler does: `unicite.cite` of each answer, nothing else.

    Its sources are read before it runs and it follows no spans, so it reads no node and
    groups no run: what it adds to a query is the floor of a handler that cites.
    """

    sources: list[Source]

    @classmethod
    def class_name(cls) -> str:
        return "CiteOnly"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, LLMCompletionEndEvent):
            unicite.cite(event.response.text, self.sources)


def _paired(
    baseline: Callable[[], object], measured: Callable[[], object], *, rounds: int = 15
) -> tuple[float, float]:
    """Median seconds per call of each, timed in alternating rounds so drift hits both alike."""
    baseline()
    measured()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for fn, out in ((baseline, times[0]), (measured, times[1])):
            start = time.perf_counter()
            for _ in range(5):
                fn()
            out.append((time.perf_counter() - start) / 5)
    return statistics.median(times[0]), statistics.median(times[1])


def _interleaved(
    fns: Sequence[Callable[[], object]], *, rounds: int = 11, number: int = 1
) -> list[float]:
    """Seconds per call of each function: its fastest of rounds timed in alternation.

    A batch of 32 threads on a shared machine is easily slowed by other load; its fastest
    round is the one the least disturbed, for the baseline and the measured batch alike.
    """
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times, strict=True):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return [min(t) for t in times]


def _in_threads(pool: ThreadPoolExecutor, query: Callable[[], object]) -> Callable[[], None]:
    """`RUNS` calls of `query`, one per pool thread, released together by a barrier."""

    def batch() -> None:
        barrier = threading.Barrier(RUNS)

        def one(_: int) -> None:
            barrier.wait()
            query()

        list(pool.map(one, range(RUNS)))

    return batch


def _one_at_a_time(query: Callable[[], object]) -> Callable[[], None]:
    def batch() -> None:
        for _ in range(RUNS):
            query()

    return batch


def _in_tasks(aquery: Callable[[], Any]) -> Callable[[], None]:
    """`RUNS` calls of `aquery`, gathered on one event loop."""

    def batch() -> None:
        async def main() -> None:
            await asyncio.gather(*(aquery() for _ in range(RUNS)))

        asyncio.run(main())

    return batch


def _around(
    enter: Callable[[], object], leave: Callable[[], object]
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Wrap a batch so that `enter` runs before it and `leave` after it, whatever happens."""

    def wrap(batch: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            enter()
            try:
                batch()
            finally:
                leave()

        return run

    return wrap


def _concurrency(plain: Any, cited: Any) -> list[Figure]:
    """32 concurrent queries through one shared engine (and one shared handler)."""
    handler = CitationEventHandler()
    watching = _around(handler.attach, handler.detach)
    root = get_dispatcher()
    floor = _CiteOnly(
        sources=[
            Source(id=n.node.node_id, content=n.node.get_content())
            for n in plain.query(QUESTION).source_nodes
        ]
    )
    citing_only = _around(
        lambda: root.add_event_handler(floor), lambda: root.event_handlers.remove(floor)
    )

    def plain_query() -> None:
        plain.query(QUESTION)

    def cited_query() -> None:
        cited.query(QUESTION)

    with ThreadPoolExecutor(max_workers=RUNS) as pool:
        (
            seq_plain,
            seq_cited,
            seq_watched,
            con_plain,
            con_cited,
            con_watched,
            con_floor,
        ) = _interleaved(
            [
                _one_at_a_time(plain_query),
                _one_at_a_time(cited_query),
                watching(_one_at_a_time(plain_query)),
                _in_threads(pool, plain_query),
                _in_threads(pool, cited_query),
                watching(_in_threads(pool, plain_query)),
                citing_only(_in_threads(pool, plain_query)),
            ]
        )
    assert handler._state_size() == 0
    task_plain, task_cited = _interleaved(
        [_in_tasks(lambda: plain.aquery(QUESTION)), _in_tasks(lambda: cited.aquery(QUESTION))]
    )
    together = f"{RUNS} threads × CitationQueryEngine.query"
    return [
        Figure(
            name=f"{RUNS} threads × CitedQueryEngine.query, one shared engine",
            value=con_cited * 1000,
            unit="ms",
            baseline=con_plain * 1000,
            baseline_name=f"{together}, one shared engine",
            target=TARGET,
            note="wall time of the whole batch; the threads start together at a barrier",
        ),
        Figure(
            name=f"{together} + shared handler",
            value=con_watched * 1000,
            unit="ms",
            baseline=con_plain * 1000,
            baseline_name=f"{together} without a CitationEventHandler",
            target=TARGET,
            note="the handler cites what LlamaIndex's engine did, on top of its own work",
        ),
        Figure(
            name=f"{together} + a handler that only cites (the floor)",
            value=con_floor * 1000,
            unit="ms",
            baseline=con_plain * 1000,
            baseline_name=f"{together} without a handler",
            target="report",
            note=(
                "unicite.cite of each answer against sources read beforehand, no span "
                "followed: what any handler that cites adds at the least"
            ),
        ),
        Figure(
            name=f"{RUNS} tasks × CitedQueryEngine.aquery, gathered",
            value=task_cited * 1000,
            unit="ms",
            baseline=task_plain * 1000,
            baseline_name=f"{RUNS} tasks × CitationQueryEngine.aquery, gathered",
            target=TARGET,
        ),
        Figure(
            name=f"CitedQueryEngine ratio, {RUNS} threads vs one at a time",
            value=con_cited / con_plain,
            unit="×",
            baseline=seq_cited / seq_plain,
            baseline_name=f"its cost ratio for {RUNS} queries one at a time",
            target=CONTENTION_TARGET,
            note="above 1 when concurrent runs wait for each other (lock contention)",
        ),
        Figure(
            name=f"CitationEventHandler ratio, {RUNS} threads vs one at a time",
            value=con_watched / con_plain,
            unit="×",
            baseline=seq_watched / seq_plain,
            baseline_name=f"its cost ratio for {RUNS} queries one at a time",
            target=CONTENTION_TARGET,
            note="above 1 when concurrent runs wait for each other (lock contention)",
        ),
    ]


def run() -> list[Figure]:
    index = _index()
    llm = _ScriptedLLM()
    plain = CitationQueryEngine.from_args(index, llm=llm, similarity_top_k=NODES)
    cited = CitedQueryEngine.from_args(index, llm=llm, similarity_top_k=NODES)
    plain_stream = CitationQueryEngine.from_args(
        index, llm=llm, similarity_top_k=NODES, streaming=True
    )
    cited_stream = CitedQueryEngine.from_args(
        index, llm=llm, similarity_top_k=NODES, streaming=True
    )
    answer = cited.query(QUESTION).metadata["citations"]  # type: ignore[index]
    assert len(answer.citations) == 8, answer.diagnostics
    assert len(cited.query(QUESTION).source_nodes) == NODES

    def consume(engine: Any) -> None:
        for _ in engine.query(QUESTION).response_gen:
            pass

    handler = CitationEventHandler()

    def with_handler() -> None:
        handler.attach()
        try:
            plain.query(QUESTION)
        finally:
            handler.detach()

    def without_handler() -> None:
        handler.detach()
        plain.query(QUESTION)

    figures = []
    base, value = _paired(lambda: plain.query(QUESTION), lambda: cited.query(QUESTION))
    figures.append(
        Figure(
            name=f"CitedQueryEngine.query, {NODES} nodes, scripted LLM",
            value=value * 1000,
            unit="ms",
            baseline=base * 1000,
            baseline_name="CitationQueryEngine.query, same index and LLM",
            target=TARGET,
            note="nodes under the chunk size are not tokenized again, unlike the baseline",
        )
    )
    base, value = _paired(lambda: consume(plain_stream), lambda: consume(cited_stream))
    figures.append(
        Figure(
            name=f"CitedQueryEngine streamed query, {NODES} nodes, read to the end",
            value=value * 1000,
            unit="ms",
            baseline=base * 1000,
            baseline_name="CitationQueryEngine streamed query, read to the end",
            target=TARGET,
        )
    )
    base, value = _paired(without_handler, with_handler)
    figures.append(
        Figure(
            name=f"CitationQueryEngine.query + CitationEventHandler, {NODES} nodes",
            value=value * 1000,
            unit="ms",
            baseline=base * 1000,
            baseline_name="CitationQueryEngine.query without the handler",
        )
    )
    figures.extend(_concurrency(plain, cited))
    return figures
