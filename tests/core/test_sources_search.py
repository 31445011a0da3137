"""`unicite.sources.search` / `asearch`: seed 004's web_search stage, with scripted searches.

Every search function here is scripted (no network): plain callables returning Tavily-shaped
results, async ones, failing ones, and real LangChain tools / retrievers and a LlamaIndex
retriever where those frameworks are installed.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import unicite
from unicite import Source, UsageError
from unicite.sources import (
    as_source,
    asearch,
    filter_content,
    ledger_scope,
    search,
    shown_numbers,
    to_seed_dict,
    to_seed_dicts,
)


def tavily(query: str, results: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """A Tavily response: (url, title, snippet) per result, in rank order."""
    return {
        "query": query,
        "results": [
            {"url": url, "title": title, "content": snippet, "score": 0.9 - n / 100}
            for n, (url, title, snippet) in enumerate(results)
        ],
    }


def scripted(table: Mapping[str, Sequence[tuple[str, str, str]]]) -> Callable[[str], Any]:
    """A search function answering each query from a table, as Tavily JSON text."""

    def web_search(query: str) -> str:
        return json.dumps(tavily(query, table[query]), ensure_ascii=False)

    return web_search


def page(n: int, site: str = "example.com") -> tuple[str, str, str]:
    return (f"https://{site}/p{n}", f"Page {n}", f"Snippet of page {n} about tides.")


def sids(sources: list[Source]) -> list[int]:
    return [s.extras["sid"] for s in sources]


# --- interleaving, dedup, max_per_query ---------------------------------------------------------


def test_results_interleave_by_rank_across_queries() -> None:
    fn = scripted({"q1": [page(1), page(2), page(3)], "q2": [page(11), page(12)]})
    found = search(["q1", "q2"], fn)
    assert [s.url for s in found] == [
        "https://example.com/p1",
        "https://example.com/p11",
        "https://example.com/p2",
        "https://example.com/p12",
        "https://example.com/p3",
    ]
    assert sids(found) == [1, 2, 3, 4, 5]
    assert [s.extras["query_ids"] for s in found] == [[1], [2], [1], [2], [1]]
    assert [s.extras["query_ranks"] for s in found] == [[1], [1], [2], [2], [3]]
    assert all(isinstance(s, Source) and s.kind == "web" for s in found)
    assert found[0].snippet == "Snippet of page 1 about tides."


def test_one_query_as_a_string() -> None:
    found = search("q1", scripted({"q1": [page(1), page(2)]}))
    assert sids(found) == [1, 2]
    assert found[1].extras["query_ids"] == [1]


def test_duplicates_across_queries_keep_the_best_ranked_sighting() -> None:
    # The same page as a bare host, with www. and a trailing slash; q2 sees it first (rank 1).
    table = {
        "q1": [page(1), ("https://example.com/shared", "Shared", "short")],
        "q2": [
            ("https://www.example.com/shared/", "Shared page", "a longer snippet of the page"),
            page(2),
        ],
        "q3": [page(3), page(4), ("https://EXAMPLE.com/shared#top", None, None)],
    }

    def fn(query: str) -> dict[str, Any]:
        response = tavily(query, [(u, t or "", s or "") for u, t, s in table[query]])
        for result in response["results"]:
            if not result["title"]:
                del result["title"], result["content"]
        return response

    found = search(["q1", "q2", "q3"], fn)
    shared = [s for s in found if "shared" in (s.url or "")]
    assert len(shared) == 1
    (source,) = shared
    # Rank 1 of q2 comes before rank 2 of q1: that sighting is the one kept.
    assert sids(found) == list(range(1, len(found) + 1))
    assert source.extras["sid"] == 2
    assert source.url == "https://www.example.com/shared/"
    assert source.title == "Shared page"
    assert source.snippet == "a longer snippet of the page"
    assert source.extras["query_ids"] == [1, 2, 3]
    assert source.extras["query_ranks"] == [2, 1, 3]
    assert [s.url for s in found] == [
        "https://example.com/p1",
        "https://www.example.com/shared/",
        "https://example.com/p3",
        "https://example.com/p2",
        "https://example.com/p4",
    ]


def test_a_page_repeated_within_one_query_counts_once() -> None:
    fn = scripted({"q": [page(1), ("https://www.example.com/p1/", "Again", "x"), page(2)]})
    found = search("q", fn)
    assert [s.url for s in found] == ["https://example.com/p1", "https://example.com/p2"]
    assert found[0].extras["query_ids"] == [1]
    assert found[0].extras["query_ranks"] == [1]
    assert found[1].extras["query_ranks"] == [3]


def test_max_per_query_keeps_the_best_ranked() -> None:
    fn = scripted({"q1": [page(n) for n in range(1, 8)], "q2": [page(n) for n in range(11, 18)]})
    found = search(["q1", "q2"], fn, max_per_query=2)
    assert [s.url for s in found] == [
        "https://example.com/p1",
        "https://example.com/p11",
        "https://example.com/p2",
        "https://example.com/p12",
    ]
    # Default: 10 per query.
    many = scripted({"q": [page(n) for n in range(25)]})
    assert len(search("q", many)) == 10


def test_the_same_query_twice_gets_two_qids() -> None:
    found = search(["q", "q"], scripted({"q": [page(1)]}))
    assert len(found) == 1
    assert found[0].extras["query_ids"] == [1, 2]
    assert found[0].extras["query_ranks"] == [1, 1]


def test_no_queries_and_no_results() -> None:
    assert search([], scripted({})) == []
    notes: list[str] = []
    assert search("q", lambda q: [], diagnostics=notes) == []
    assert notes
    assert "query 1" in notes[0]


# --- failing searches ---------------------------------------------------------------------------


def test_a_search_that_raises_gives_a_diagnostic() -> None:
    def fn(query: str) -> Any:
        if query == "bad query":
            raise ConnectionError("search API unreachable")
        return tavily(query, [page(1)])

    notes: list[str] = []
    found = search(["good", "bad query", "good too"], fn, diagnostics=notes)
    assert [s.url for s in found] == ["https://example.com/p1"]
    assert found[0].extras["query_ids"] == [1, 3]
    assert len(notes) == 1
    assert "query 2" in notes[0]
    assert "'bad query'" in notes[0]
    assert "ConnectionError: search API unreachable" in notes[0]


def test_a_search_returning_nothing_readable() -> None:
    outputs: dict[str, Any] = {
        "none": None,
        "error": {"error": "rate limited"},
        "ok": tavily("ok", [page(1)]),
    }
    notes: list[str] = []
    found = search(["none", "error", "ok"], outputs.__getitem__, diagnostics=notes)
    assert [s.extras["sid"] for s in found] == [1]
    assert found[0].extras["query_ids"] == [3]
    assert any("query 1" in n and "returned nothing" in n for n in notes)
    assert any("query 2" in n and "rate limited" in n for n in notes)


def test_a_search_that_hangs_times_out() -> None:
    release = threading.Event()

    def fn(query: str) -> Any:
        if query == "slow":
            release.wait(5)
        return tavily(query, [page(1 if query == "slow" else 2)])

    notes: list[str] = []
    started = time.perf_counter()
    try:
        found = search(["slow", "fast"], fn, timeout=0.2, diagnostics=notes)
    finally:
        release.set()
    assert time.perf_counter() - started < 3
    assert [s.url for s in found] == ["https://example.com/p2"]
    assert found[0].extras["sid"] == 1
    assert any("query 1" in n and "timed out after 0.2 s" in n for n in notes)


def test_search_concurrency_is_bounded() -> None:
    lock = threading.Lock()
    running = 0
    peak = 0

    def fn(query: str) -> Any:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return tavily(query, [page(int(query))])

    found = search([str(n) for n in range(10)], fn, concurrency=3)
    assert len(found) == 10
    assert peak == 3


# --- async search functions ---------------------------------------------------------------------


async def async_web(query: str) -> dict[str, Any]:
    await asyncio.sleep(0.01 if query == "q1" else 0)
    return tavily(query, [page(int(query[1:])), page(100)])


def test_async_search_fn_in_search_and_asearch() -> None:
    expected = [
        "https://example.com/p1",
        "https://example.com/p2",
        "https://example.com/p100",
    ]
    assert [s.url for s in search(["q1", "q2"], async_web)] == expected
    found = asyncio.run(asearch(["q1", "q2"], async_web))
    assert [s.url for s in found] == expected
    assert found[2].extras["query_ids"] == [1, 2]


def test_asearch_with_a_sync_search_fn_does_not_block_the_loop() -> None:
    def blocking(query: str) -> dict[str, Any]:
        time.sleep(0.2)
        return tavily(query, [page(1)])

    async def main() -> tuple[list[Source], int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        found = await asearch(["a", "b"], blocking)
        task.cancel()
        return found, ticks

    found, ticks = asyncio.run(main())
    assert len(found) == 1
    assert ticks >= 5


def test_sync_search_inside_a_running_loop() -> None:
    async def main() -> list[Source]:
        return search(["q1", "q2"], async_web)

    assert len(asyncio.run(main())) == 3


def test_asearch_cancels_an_async_search_past_its_timeout() -> None:
    cancelled = []

    async def fn(query: str) -> Any:
        try:
            await asyncio.sleep(5 if query == "slow" else 0)
        except asyncio.CancelledError:
            cancelled.append(query)
            raise
        return tavily(query, [page(len(query))])

    notes: list[str] = []
    found = asyncio.run(asearch(["slow", "ok"], fn, timeout=0.1, diagnostics=notes))
    assert [s.url for s in found] == ["https://example.com/p2"]
    assert cancelled == ["slow"]
    assert any("timed out" in n for n in notes)


def test_the_run_context_reaches_sync_search_functions() -> None:
    seen = []

    def fn(query: str) -> Any:
        seen.append(unicite.sources.current_ledger())
        return tavily(query, [page(1)])

    with ledger_scope() as ledger:
        search(["a", "b"], fn)
    assert seen == [ledger, ledger]


# --- fetch --------------------------------------------------------------------------------------


def test_fetch_fills_content_and_reports_failures_and_timeouts() -> None:
    release = threading.Event()

    def fetch(url: str) -> str:
        if url.endswith("/p2"):
            raise OSError("connection reset")
        if url.endswith("/p3"):
            release.wait(5)
            return "too late"
        if url.endswith("/p4"):
            return "<html><head><title>Seite 4</title></head><body><p>Grüße aus Zürich</p>"
        return f"Full text of {url} — naïve café"

    notes: list[str] = []
    fn = scripted({"q": [page(1), page(2), page(3), page(4)]})
    started = time.perf_counter()
    try:
        found = search("q", fn, fetch=fetch, timeout=0.3, diagnostics=notes)
    finally:
        release.set()
    assert time.perf_counter() - started < 3
    assert sids(found) == [1, 2, 3, 4]
    by_url = {s.url: s for s in found}
    assert by_url["https://example.com/p1"].content == (
        "Full text of https://example.com/p1 — naïve café"
    )
    assert by_url["https://example.com/p2"].content is None
    assert by_url["https://example.com/p3"].content is None
    assert by_url["https://example.com/p4"].content == "Grüße aus Zürich"
    assert by_url["https://example.com/p4"].title == "Page 4"  # the search's title stays
    assert len(notes) == 2
    assert "https://example.com/p2" in notes[0]
    assert "OSError: connection reset" in notes[0]
    assert "https://example.com/p3" in notes[1]
    assert "timed out after 0.3 s" in notes[1]


def test_fetch_skips_sources_with_content_or_without_url() -> None:
    asked: list[str] = []

    def fn(query: str) -> Any:
        return {
            "results": [
                {"url": "https://a.org/x", "title": "A", "content": "s", "raw_content": "Body"},
                {"url": "https://b.org/y", "title": "B", "content": "s"},
            ]
        }

    def fetch(url: str) -> str:
        asked.append(url)
        return "fetched"

    found = search("q", fn, fetch=fetch)
    assert asked == ["https://b.org/y"]
    assert [s.content for s in found] == ["Body", "fetched"]


def test_an_empty_page_is_a_diagnostic() -> None:
    notes: list[str] = []
    found = search("q", scripted({"q": [page(1)]}), fetch=lambda url: "  ", diagnostics=notes)
    assert found[0].content is None
    assert any("https://example.com/p1" in n and "no text" in n for n in notes)


def test_sync_fetch_concurrency_is_bounded() -> None:
    lock = threading.Lock()
    running = 0
    peak = 0

    def fetch(url: str) -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return "text of " + url

    fn = scripted({"q": [page(n) for n in range(12)]})
    found = search("q", fn, fetch=fetch, concurrency=4, max_per_query=12)
    assert all(s.content == "text of " + str(s.url) for s in found)
    assert peak == 4


def test_async_fetch_concurrency_is_bounded_and_timeouts_cancel() -> None:
    running = 0
    peak = 0
    cancelled: list[str] = []

    async def fetch(url: str) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            await asyncio.sleep(5 if url.endswith("/p7") else 0.03)
        except asyncio.CancelledError:
            cancelled.append(url)
            raise
        finally:
            running -= 1
        return "text of " + url

    notes: list[str] = []
    fn = scripted({"q": [page(n) for n in range(10)]})
    found = asyncio.run(
        asearch("q", fn, fetch=fetch, concurrency=3, timeout=0.5, diagnostics=notes)
    )
    assert peak == 3
    assert cancelled == ["https://example.com/p7"]
    assert [s.content is None for s in found] == [n == 7 for n in range(10)]
    assert notes == [
        "fetch https://example.com/p7 (sid 8) failed: timed out after 0.5 s; kept without content"
    ]


def test_fetch_may_return_other_shapes() -> None:
    outputs: dict[str, Any] = {
        "https://example.com/p1": b"bytes body",
        "https://example.com/p2": {"markdown": "# Title\n\nMarkdown body", "metadata": {}},
    }
    found = search("q", scripted({"q": [page(1), page(2)]}), fetch=outputs.__getitem__)
    assert found[0].content == "bytes body"
    assert found[1].content is not None
    assert "Markdown body" in found[1].content


# --- reconcile and filter -----------------------------------------------------------------------


def test_reconcile_options_reach_the_public_reconcile(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake(
        sources: list[Source], objective: str, queries: list[str], **options: Any
    ) -> list[Source]:
        calls.append((list(sources), objective, list(queries), options))
        options["diagnostics"].append("fake reconcile ran")
        return [s for s in sources if s.extras["sid"] != 2]

    monkeypatch.setattr(unicite.sources, "reconcile", fake)

    def judge(prompt: str) -> str:
        return "{}"

    notes: list[str] = []
    found = search(
        ["q1", "q2"],
        scripted({"q1": [page(1), page(2)], "q2": [page(3)]}),
        reconcile={"objective": "Tides in Zürich", "llm": judge, "top_k": 5},
        diagnostics=notes,
    )
    ((given, objective, queries, options),) = calls
    assert sids(given) == [1, 2, 3]
    assert objective == "Tides in Zürich"
    assert queries == ["q1", "q2"]
    assert options["llm"] is judge
    assert options["top_k"] == 5
    assert sids(found) == [1, 3]
    assert notes == ["fake reconcile ran"]


def test_reconcile_true_scores_against_the_queries() -> None:
    table = {
        "ocean tides": [
            ("https://a.org/tides", "Ocean tides explained", "How the moon drives ocean tides."),
            ("https://c.org/moon", "The lunar cycle", "Phases of the lunar cycle."),
        ],
        "lunar cycle": [("https://b.org/cake", "Cake recipes", "Flour, sugar and butter.")],
    }
    notes: list[str] = []
    found = search(list(table), scripted(table), reconcile=True, diagnostics=notes)
    assert [s.url for s in found] == ["https://a.org/tides", "https://c.org/moon"]
    assert sids(found) == [1, 3]  # the cake page (sid 2) is gone; nothing renumbered
    assert all(s.relevance is not None for s in found)
    assert any("reconcile" in n for n in notes)


def test_reconcile_callable_with_seed_reply_rows() -> None:
    received: list[Any] = []

    def reconciler(sources: list[Source], *, queries: list[str]) -> list[dict[str, Any]]:
        received.append((sids(sources), queries))
        return [
            {
                "sid": 3,
                "o_relevance": 0.9,
                "q_relevance": [{"qid": "1", "score": 0.8}],
                "reasoning": "Spricht über Gezeiten.",
            },
            {"sid": "1", "o_relevance": 0.4},
            {"sid": 99, "o_relevance": 1.0, "title": "invented"},
        ]

    notes: list[str] = []
    found = search(
        ["q1"],
        scripted({"q1": [page(1), page(2), page(3)]}),
        reconcile=reconciler,
        diagnostics=notes,
    )
    assert received == [([1, 2, 3], ["q1"])]
    assert sids(found) == [3, 1]
    assert found[0].url == "https://example.com/p3"
    assert found[0].title == "Page 3"
    assert found[0].relevance == 0.9
    assert found[0].extras["reasoning"] == "Spricht über Gezeiten."
    assert found[0].extras["query_relevance"] == [{"qid": "1", "score": 0.8}]
    assert found[0].extras["query_ids"] == [1]
    assert found[1].relevance == 0.4
    assert any("did not return" in n for n in notes)


def test_filter_options_reach_filter_content(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[Source], dict[str, Any]]] = []

    def fake(sources: list[Source], **options: Any) -> list[Source]:
        calls.append((list(sources), options))
        return list(sources)[1:]

    monkeypatch.setattr(unicite.sources, "filter_content", fake)
    found = search(
        "q",
        scripted({"q": [page(1), page(2)]}),
        fetch=lambda url: "body of " + url,
        filter={"threshold": 0.5, "prefer_fresh": True},
    )
    ((given, options),) = calls
    # The filter sees fetched content.
    assert [s.content for s in given] == [
        "body of https://example.com/p1",
        "body of https://example.com/p2",
    ]
    assert options["threshold"] == 0.5
    assert options["prefer_fresh"] is True
    assert isinstance(options["diagnostics"], list)
    assert sids(found) == [2]


def test_sids_stay_after_filtering_near_duplicates() -> None:
    article = "The harbour of Zürich sees no tides at all, since the lake is fed by rivers. " * 5
    bodies = {
        "https://example.com/p1": article,
        "https://example.com/p2": "A different page about currents in the ocean and the moon.",
        "https://example.com/p3": article + "Copied.",
        "https://example.com/p4": "Another distinct page, on lunar phases and spring tides.",
    }
    notes: list[str] = []
    found = search(
        "q",
        scripted({"q": [page(n) for n in range(1, 5)]}),
        fetch=bodies.__getitem__,
        filter=True,
        diagnostics=notes,
    )
    assert sids(found) == [1, 2, 4]
    assert found[0].extras["near_duplicates"]
    assert any("near-duplicate" in n for n in notes)
    # The rows still name each source by the number it was shown with.
    numbers = shown_numbers(found)
    assert numbers is not None
    assert sorted(numbers) == [1, 2, 4]
    assert numbers[4].url == "https://example.com/p4"
    # The real filter_content agrees when called directly.
    assert sids(filter_content(found)) == [1, 2, 4]


def test_shown_numbers_of_its_own_map_and_of_a_changed_one() -> None:
    rows = [{"sid": 3, "url": "https://example.com/a"}, {"sid": 1, "url": "https://example.com/b"}]
    numbers = shown_numbers(rows)
    assert numbers is not None
    assert shown_numbers(numbers) == numbers == {1: as_source(rows[1]), 3: as_source(rows[0])}
    numbers[0] = as_source(rows[0])  # a number no prompt shows: checked again, and refused
    with pytest.raises(UsageError, match="numbers shown"):
        shown_numbers(numbers)


def test_filter_callable_and_reconcile_then_fetch_order() -> None:
    fetched: list[str] = []

    def fetch(url: str) -> str:
        fetched.append(url)
        return "body"

    def reconciler(sources: list[Source], *, queries: list[str]) -> list[Source]:
        return [s for s in sources if s.extras["sid"] % 2 == 1]

    def keep_last(sources: list[Source]) -> list[Source]:
        assert all(s.content == "body" for s in sources)
        return [sources[-1].model_copy(update={"extras": {}})]  # sid found again by id

    found = search(
        "q",
        scripted({"q": [page(n) for n in range(1, 6)]}),
        reconcile=reconciler,
        fetch=fetch,
        filter=keep_last,
    )
    # Only the sources reconcile kept were fetched.
    assert sorted(fetched) == [f"https://example.com/p{n}" for n in (1, 3, 5)]
    assert sids(found) == [5]


def test_a_stage_returning_something_else_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="reconcile must return a list"):
        search("q", scripted({"q": [page(1)]}), reconcile=lambda sources, queries: None)


# --- frameworks as search functions -------------------------------------------------------------


def test_langchain_tool_returning_tavily_json() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.tools import tool

    @tool
    def tavily_search(query: str) -> str:
        """Search the web."""
        return json.dumps(tavily(query, [page(1), (f"https://news.example/{query}", "N", "s")]))

    found = search(["alpha", "beta"], tavily_search)
    assert [s.url for s in found] == [
        "https://example.com/p1",
        "https://news.example/alpha",
        "https://news.example/beta",
    ]
    assert found[0].extras["query_ids"] == [1, 2]
    assert found[0].origin is not None
    assert found[0].origin.tool == "tavily_search"
    found_async = asyncio.run(asearch(["alpha", "beta"], tavily_search))
    assert [s.url for s in found_async] == [s.url for s in found]


def _documents() -> list[Any]:
    from langchain_core.documents import Document

    return [
        Document(
            page_content="Zürich liegt am Zürichsee; der See hat keine Gezeiten.",
            metadata={"source": "https://www.example.ch/zuerich/", "title": "Zürich"},
        ),
        Document(
            page_content="東京湾の潮汐は一日に二回満ち引きする。",
            metadata={"source": "https://example.jp/tokyo", "title": "東京湾"},
        ),
    ]


def test_langchain_retriever_and_retriever_tools() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import create_retriever_tool, tool

    class Retriever(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Any]:
            docs = _documents()
            return docs if query == "both" else docs[1:]

    found = search(["both", "tokyo"], Retriever())
    assert [s.title for s in found] == ["Zürich", "東京湾"]
    assert found[1].extras["query_ids"] == [1, 2]
    assert found[0].content == "Zürich liegt am Zürichsee; der See hat keine Gezeiten."

    # create_retriever_tool returns the documents' text only: one tool source per query.
    kb = create_retriever_tool(Retriever(), "kb_search", "Search the knowledge base.")
    texts = search(["both"], kb)
    assert len(texts) == 1
    assert texts[0].content is not None
    assert "東京湾の潮汐" in texts[0].content

    # A content_and_artifact tool is invoked with a tool call: its documents are read.
    @tool(response_format="content_and_artifact")
    def docs_search(query: str) -> tuple[str, list[Any]]:
        """Search the documents."""
        docs = Retriever().invoke(query)
        return "\n\n".join(d.page_content for d in docs), docs

    found = search(["both", "tokyo"], docs_search)
    assert [s.url for s in found] == ["https://www.example.ch/zuerich/", "https://example.jp/tokyo"]
    assert found[0].origin is not None
    assert found[0].origin.call_id == "search-1"
    found_async = asyncio.run(asearch(["both", "tokyo"], docs_search))
    assert [s.url for s in found_async] == [s.url for s in found]


def test_llamaindex_retriever() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    index = VectorStoreIndex.from_documents(
        [
            Document(text="Zürich liegt am Zürichsee; der See hat keine Gezeiten."),
            Document(text="東京湾の潮汐は一日に二回満ち引きする。"),
            Document(text="Naïve tide tables for the café harbour."),
        ],
        embed_model=MockEmbedding(embed_dim=8),
    )
    retriever = index.as_retriever(similarity_top_k=2)
    found = search(["Gezeiten", "潮汐"], retriever)
    assert 1 <= len(found) <= 4
    assert sids(found) == list(range(1, len(found) + 1))
    assert all(s.kind == "document" and s.content for s in found)
    assert all(s.provider_id for s in found)
    texts = {s.content for s in found}
    assert texts <= {
        "Zürich liegt am Zürichsee; der See hat keine Gezeiten.",
        "東京湾の潮汐は一日に二回満ち引きする。",
        "Naïve tide tables for the café harbour.",
    }
    # The same chunks found by both queries are one source each.
    assert len(texts) == len(found)
    found_async = asyncio.run(asearch(["Gezeiten", "潮汐"], retriever))
    assert [s.id for s in found_async] == [s.id for s in found]


# --- seed 004's canonical rows ------------------------------------------------------------------

SEED_ROW: dict[str, Any] = {
    "sid": 7,
    "title": "Gezeiten im Zürichsee? — Ein Überblick",
    "url": "https://www.example.ch/gezeiten",
    "text": "Kurzer Auszug über Gezeiten… 東京湾も。",
    "content": "Der vollständige Artikel über Ebbe und Flut, naïve café 😀.",
    "objective_relevance": 0.95,
    "query_relevance": 0.87,
    "reasoning": "Erklärt, warum Seen kaum Gezeiten haben.",
    "published_time_iso": "2025-01-02T12:34:56Z",
    "modified_time_iso": "2025-01-03T10:00:00Z",
}


def test_seed_row_round_trips() -> None:
    source = as_source(SEED_ROW)
    assert source.snippet == SEED_ROW["text"]
    assert source.published_at == datetime(2025, 1, 2, 12, 34, 56, tzinfo=timezone.utc)
    assert to_seed_dict(source) == SEED_ROW
    assert list(to_seed_dict(source)) == list(SEED_ROW)
    assert to_seed_dict(Source(**SEED_ROW)) == SEED_ROW
    assert to_seed_dict(SEED_ROW) == SEED_ROW
    assert json.loads(json.dumps(to_seed_dicts([source]))) == [SEED_ROW]


def test_seed_rows_leave_absent_values_out() -> None:
    minimal = {"sid": 1, "title": "Nur ein Titel"}
    assert to_seed_dict(as_source(minimal)) == minimal
    offset = Source(
        url="https://a.org",
        published_at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone(timedelta(hours=2))),
        modified_at=datetime(2024, 5, 6, 7, 8, 9),  # naive: UTC
    )
    row = to_seed_dict(offset)
    assert row == {
        "url": "https://a.org",
        "published_time_iso": "2024-05-06T07:08:09+02:00",
        "modified_time_iso": "2024-05-06T07:08:09Z",
    }
    assert to_seed_dict(as_source({**row, "sid": 2})) == {"sid": 2, **row}


def test_search_results_as_seed_rows() -> None:
    table = {"q1": [page(1), page(2)], "q2": [page(2), page(3)]}
    found = search(["q1", "q2"], scripted(table), reconcile={"objective": "tides"})
    rows = to_seed_dicts(found)
    assert [r["sid"] for r in rows] == [1, 2, 3]
    assert rows[0] == {
        "sid": 1,
        "title": "Page 1",
        "url": "https://example.com/p1",
        "text": "Snippet of page 1 about tides.",
        **{k: rows[0][k] for k in ("objective_relevance", "query_relevance", "reasoning")},
    }
    assert [as_source(r).extras["sid"] for r in rows] == [1, 2, 3]


def test_to_seed_dicts_numbers_plain_sources_by_position() -> None:
    plain = [Source(url="https://a.org", title="A"), Source(url="https://b.org", title="B")]
    assert [r["sid"] for r in to_seed_dicts(plain)] == [1, 2]
    mixed = [as_source({"sid": 3, "title": "x"}), Source(url="https://b.org")]
    with pytest.raises(UsageError, match="one to one"):
        to_seed_dicts(mixed)
    with pytest.raises(UsageError):
        to_seed_dicts("not a list")  # type: ignore[arg-type]


# --- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"queries": ["ok", " "]}, "non-empty string"),
        ({"queries": ["ok", 3]}, "non-empty string"),
        ({"search_fn": 42}, "search_fn must be"),
        ({"max_per_query": 0}, "max_per_query"),
        ({"concurrency": True}, "concurrency"),
        ({"timeout": 0}, "timeout"),
        ({"fetch": "https://x"}, "fetch must be"),
        ({"reconcile": "yes"}, "reconcile must be"),
        ({"reconcile": {"objective": 3}}, "objective must be a string"),
        ({"filter": {"diagnostics": []}}, "pass diagnostics"),
        ({"diagnostics": ()}, "diagnostics must be a list"),
    ],
)
def test_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"queries": ["q"], "search_fn": scripted({"q": [page(1)]})}
    arguments.update(kwargs)
    with pytest.raises(UsageError, match=message):
        search(arguments.pop("queries"), arguments.pop("search_fn"), **arguments)
    with pytest.raises(UsageError, match=message):
        asyncio.run(asearch(**{"queries": ["q"], "search_fn": scripted({}), **kwargs}))


def test_reconcile_rejects_bad_options_through_search() -> None:
    with pytest.raises(UsageError):
        search("q", scripted({"q": [page(1)]}), reconcile={"min_relevance": 2.0})
