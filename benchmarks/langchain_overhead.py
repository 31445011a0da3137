"""What `CitationCallbackHandler` adds to a LangChain RAG chain: time per call and memory per run.

The chain is the usual one: an in-memory vector store retriever returning 20 documents, the
documents numbered into a chat prompt, a fake chat model answering with ``[n]`` markers, and a
string parser. It runs with the handler, reading ``handler.answer`` after each run (deferring
the work to the read would only move it), and with a no-op handler, which costs what LangChain
spends dispatching callbacks to any handler; the ratio of the two is the overhead (target
≤ 1.15×). The chain without any handler is reported too. Memory is measured with tracemalloc:
the peak of one run, and what stays allocated per run over a long series (nothing should).

Concurrency: 32 runs at once (32 threads, or 32 coroutines gathered) through ONE shared
handler, each reading its answer, against the same 32 runs with a no-op handler (target
≤ 1.10×); and the handler's cost per run when 32 runs overlap against its cost when they run
one after another, which grows if runs wait on each other's locks (target ≤ 1.2×).
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import math
import re
import threading
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _harness import Figure
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from unicite import cite
from unicite.sources import SourceLedger, from_tool_output
from unicite_langchain import CitationCallbackHandler

DOCUMENTS = 200
PER_CALL = 20
CITED = 5
CALLS = 20
ROUNDS = 40
SERIES = 2_000
CONCURRENT = 32
BATCH_ROUNDS = 25
LOCK_BATCHES = 10

ANSWER = (
    "Le viaduc de Millau culmine à 343 mètres [3]. Il a été inauguré le 14 décembre 2004 "
    "[3, 7]. Le pont de Normandie relie Le Havre à Honfleur [12]. Die Köhlbrandbrücke ist "
    "3 618 Meter lang [1]. 明石海峡大橋は1998年に開通しました [20]."
)


class _NoOp(BaseCallbackHandler):
    """A handler that does nothing: LangChain still dispatches every callback to it.

    Run inline like `CitationCallbackHandler`, so async runs do not hand its callbacks to a
    thread pool (which would make the baseline slower than the handler measured against it).
    """

    run_inline = True


class _Words(Embeddings):
    """Hashed bag-of-words vectors: deterministic and offline."""

    size = 128

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.size
        vector[0] = 0.05
        for word in re.findall(r"\w{3,}", text.lower()):
            digest = hashlib.sha256(word.encode("utf-8")).digest()
            vector[1 + int.from_bytes(digest[:4], "big") % (self.size - 1)] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


def _corpus() -> list[Document]:
    topics = ["viaduc", "pont", "Brücke", "tunnel", "barrage", "橋", "tour", "gare"]
    return [
        Document(
            id=f"doc-{n}",
            page_content=(
                f"Document {n} sur le {topics[n % len(topics)]} numéro {n}: ouvrage d'art "
                f"inauguré en {1900 + n % 120}, long de {100 + n * 7} mètres, à {n % 50} km de "
                "la ville la plus proche. " * 3
            ),
            metadata={
                "source": f"https://ouvrages.example.org/{topics[n % len(topics)]}/{n}",
                "title": f"Ouvrage {n} — {topics[n % len(topics)]}",
                "page": n % 12,
            },
        )
        for n in range(DOCUMENTS)
    ]


def _format(documents: list[Document]) -> str:
    return "\n\n".join(
        f"[{n}] {doc.metadata['title']}\n{doc.page_content}"
        for n, doc in enumerate(documents, start=1)
    )


def _retriever() -> Runnable[str, list[Document]]:
    store = InMemoryVectorStore(_Words())
    store.add_documents(_corpus())
    return store.as_retriever(search_kwargs={"k": PER_CALL})


def _chain(retriever: Runnable[str, list[Document]]) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Cite the sources by number.\n\n{sources}"), ("human", "{question}")]
    )
    model = GenericFakeChatModel(messages=itertools.repeat(AIMessage(content=ANSWER)))
    return (
        {"sources": retriever | _format, "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )


def _interleaved(plain: Callable[[], object], cited: Callable[[], object]) -> tuple[float, float]:
    """Seconds per call of each, measured in alternating rounds so machine load hits both alike.

    Each figure is the fastest round's mean (as `timeit` advises: noise only ever adds time).
    """
    plain_rounds, cited_rounds = [], []
    for _ in range(20):
        plain()
        cited()
    for _ in range(ROUNDS):
        for call, out in ((plain, plain_rounds), (cited, cited_rounds)):
            start = time.perf_counter()
            for _ in range(CALLS):
                call()
            out.append((time.perf_counter() - start) / CALLS)
    return min(plain_rounds), min(cited_rounds)


def _best(call: Callable[[], object]) -> float:
    """Seconds per call of `call` alone: the fastest of several rounds."""
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            call()
        rounds.append((time.perf_counter() - start) / CALLS)
    return min(rounds)


def _peak(call: Callable[[], object]) -> int:
    call()
    gc.collect()
    tracemalloc.start()
    call()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def _retained_per_run(call: Callable[[], object]) -> float:
    for _ in range(200):
        call()
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(200):
            call()
        gc.collect()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(SERIES):
            call()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (after - before) / SERIES


class _TimedLock:
    """A lock that adds up how long its acquirers had to wait for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.waited = 0.0
        self.waits = 0
        self.acquired = 0

    def __enter__(self) -> _TimedLock:
        if not self._lock.acquire(blocking=False):
            start = time.perf_counter()
            self._lock.acquire()
            # Counted while holding the lock, so the counters need no lock of their own.
            self.waited += time.perf_counter() - start
            self.waits += 1
        self.acquired += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def _lock_waits(chain: Runnable[str, str], question: str) -> tuple[float, float]:
    """Seconds per run spent waiting on the shared handler's locks, 32 threads at once.

    Also returns the share of lock acquisitions that had to wait at all.
    """
    handler = CitationCallbackHandler()
    locks = [_TimedLock(), _TimedLock(), _TimedLock()]
    handler._runs.lock, handler._sources.documents.lock, handler._publisher.lock = locks  # type: ignore[assignment]
    config: Any = {"callbacks": [handler]}
    start = threading.Barrier(CONCURRENT)

    def one(_: int) -> str:
        start.wait()
        return chain.invoke(question, config)

    with ThreadPoolExecutor(CONCURRENT) as pool:
        for _ in range(LOCK_BATCHES):
            list(pool.map(one, range(CONCURRENT)))
    assert handler.active_runs == 0
    runs = LOCK_BATCHES * CONCURRENT
    waited = sum(lock.waited for lock in locks)
    share = sum(lock.waits for lock in locks) / sum(lock.acquired for lock in locks)
    return waited / runs, share


def _batches(variants: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Seconds per batch of each variant, in alternating rounds; the fastest round of each."""
    best = dict.fromkeys(variants, float("inf"))
    for call in variants.values():
        call()
    for _ in range(BATCH_ROUNDS):
        for name, call in variants.items():
            start = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _concurrency(chain: Runnable[str, str], question: str) -> list[Figure]:
    """32 runs at once through one shared handler, in threads and in coroutines."""
    handler = CitationCallbackHandler()
    cited: Any = {"callbacks": [handler]}
    plain: Any = {"callbacks": [_NoOp()]}
    loop = asyncio.new_event_loop()

    def run(config: Any) -> object:
        out = chain.invoke(question, config)
        if config is cited:
            _ = handler.answer
        return out

    async def arun(config: Any) -> object:
        out = await chain.ainvoke(question, config)
        if config is cited:
            _ = handler.answer
        return out

    def threads(config: Any) -> Callable[[], object]:
        return lambda: list(pool.map(lambda _: run(config), range(CONCURRENT)))

    def one_by_one(config: Any) -> Callable[[], object]:
        return lambda: [run(config) for _ in range(CONCURRENT)]

    def gathered(config: Any) -> Callable[[], object]:
        async def batch() -> list[object]:
            return await asyncio.gather(*(arun(config) for _ in range(CONCURRENT)))

        return lambda: loop.run_until_complete(batch())

    with ThreadPoolExecutor(CONCURRENT) as pool:
        threads(cited)()
        answers = list(handler.answers.values())
        assert len(answers) == CONCURRENT
        assert all(len(a.citations) == 5 and len(a.sources) == CITED for a in answers)
        times = _batches(
            {
                "plain threads": threads(plain),
                "cited threads": threads(cited),
                "plain one by one": one_by_one(plain),
                "cited one by one": one_by_one(cited),
                "plain gathered": gathered(plain),
                "cited gathered": gathered(cited),
            }
        )
    loop.close()
    assert handler.active_runs == 0
    ms = {name: seconds * 1e3 for name, seconds in times.items()}
    concurrent_cost = (ms["cited threads"] - ms["plain threads"]) / CONCURRENT
    sequential_cost = (ms["cited one by one"] - ms["plain one by one"]) / CONCURRENT
    waited, share = _lock_waits(chain, question)
    return [
        Figure(
            name=f"{CONCURRENT} concurrent runs (threads), one shared handler",
            value=ms["cited threads"],
            unit="ms",
            baseline=ms["plain threads"],
            baseline_name=f"the same {CONCURRENT} concurrent runs with a no-op handler",
            target="≤ 1.10×",
            note=f"{CONCURRENT} threads each invoke the RAG chain once and read the handler's "
            "answer, all with the same CitationCallbackHandler; the time of the whole batch",
        ),
        Figure(
            name=f"{CONCURRENT} concurrent runs (asyncio.gather), one shared handler",
            value=ms["cited gathered"],
            unit="ms",
            baseline=ms["plain gathered"],
            baseline_name=f"the same {CONCURRENT} gathered runs with a no-op handler",
            target="≤ 1.10×",
            note=f"{CONCURRENT} ainvoke calls gathered on one event loop, one shared handler",
        ),
        Figure(
            name=f"handler's cost per run, {CONCURRENT} threads at once",
            value=concurrent_cost,
            unit="ms",
            baseline=sequential_cost,
            baseline_name=f"its cost per run when the {CONCURRENT} runs go one by one",
            target="≤ 1.2×",
            note="(cited minus bare batch time) / 32, concurrent against sequential: runs waiting "
            "on each other inside the handler would raise it",
        ),
        Figure(
            name=f"waiting on the shared handler's locks, {CONCURRENT} threads",
            value=waited * 1e6,
            unit="µs",
            baseline=sequential_cost * 1e3,
            baseline_name="the handler's whole cost per run (one by one)",
            target="≈ 0",
            note=f"per run, {CONCURRENT} threads released together by a barrier; "
            f"{share:.1%} of lock acquisitions had to wait",
        ),
    ]


def run() -> list[Figure]:
    retriever = _retriever()
    chain = _chain(retriever)
    question = "Quelle est la hauteur du viaduc de Millau ?"
    handler = CitationCallbackHandler()
    cited_config: Any = {"callbacks": [handler]}
    noop_config: Any = {"callbacks": [_NoOp()]}

    def bare() -> object:
        return chain.invoke(question)

    def plain() -> object:
        return chain.invoke(question, config=noop_config)

    def cited() -> object:
        chain.invoke(question, config=cited_config)
        return handler.answer

    cited()
    answer = handler.answer
    assert answer is not None
    assert len(answer.citations) == 5
    assert len(answer.sources) == CITED

    plain_time, cited_time = _interleaved(plain, cited)
    bare_time, noop_time = _interleaved(bare, plain)
    ledger = SourceLedger()
    ledger.add_all(from_tool_output("retriever", retriever.invoke(question)))
    cite_time = _best(lambda: cite(ANSWER, ledger))
    plain_peak, cited_peak = _peak(plain), _peak(cited)
    retained = _retained_per_run(cited)
    assert handler.active_runs == 0
    concurrency = _concurrency(chain, question)
    return [
        Figure(
            name=f"RAG chain invoke + handler.answer, {PER_CALL} documents",
            value=cited_time * 1e3,
            unit="ms",
            baseline=plain_time * 1e3,
            baseline_name="the same chain with a no-op handler",
            target="≤ 1.15×",
            note="retriever (in-memory vector store) | prompt | fake chat model | parser; the "
            "handler reads 20 documents and cites the answer (5 markers, renumbered)",
        ),
        Figure(
            name="the no-op handler itself",
            value=noop_time * 1e3,
            unit="ms",
            baseline=bare_time * 1e3,
            baseline_name="the same chain without any handler",
            target="report",
            note="what LangChain spends dispatching every callback to one more handler",
        ),
        Figure(
            name="of which: unicite.cite on the answer",
            value=cite_time * 1e3,
            unit="ms",
            baseline=(cited_time - plain_time) * 1e3,
            baseline_name="all the handler adds to a call",
            note="the core's decision (5 markers over 20 sources, renumbered, cited sources "
            "listed); the "
            "rest is reading 20 documents and LangChain dispatching to one more handler",
        ),
        Figure(
            name="peak memory of one run (tracemalloc)",
            value=cited_peak / 1024,
            unit="KiB",
            baseline=plain_peak / 1024,
            baseline_name="the same run without the handler",
            note="the handler's ledger, sources and answer for one run, freed at its end",
        ),
        Figure(
            name=f"memory kept per run over {SERIES:,} runs",
            value=retained,
            unit="B",
            target="≈ 0 (bounded)",
            note="the handler keeps the last 100 answers; nothing else outlives a run",
        ),
        *concurrency,
    ]
