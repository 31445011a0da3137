"""One ledger per run: concurrent runs (threads, asyncio tasks) never see each other's sources."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from unicite import Source, UsageError
from unicite.sources import SourceLedger, current_ledger, ledger_scope


def search_output(run: str, call: int) -> str:
    """A Tavily-shaped response; every run shares the first URL, the rest are its own."""
    results = [
        {"url": "https://shared.example/", "title": "Shared", "content": "in every run"},
        {"url": f"https://{run}.example/{call}", "title": f"{run} {call}", "content": "own"},
    ]
    return json.dumps({"query": run, "results": results})


def run_agent(run: str, calls: int) -> list[str]:
    """What an agent run does: read tool outputs into whatever ledger is current."""
    ledger = current_ledger()
    assert ledger is not None
    for call in range(calls):
        ledger.add_tool_output("tavily_search", search_output(run, call), call_id=f"{run}-{call}")
    return [s.url or "" for s in ledger.sources]


def expected_urls(run: str, calls: int) -> list[str]:
    return ["https://shared.example/"] + [f"https://{run}.example/{c}" for c in range(calls)]


def test_no_scope_means_no_current_ledger() -> None:
    assert current_ledger() is None
    with ledger_scope() as ledger:
        assert current_ledger() is ledger
        inner = SourceLedger()
        with ledger_scope(inner):
            assert current_ledger() is inner
        assert current_ledger() is ledger
    assert current_ledger() is None
    with pytest.raises(UsageError), ledger_scope("not a ledger"):  # type: ignore[arg-type]
        pass


def test_threads_each_see_only_their_own_run() -> None:
    runs = [f"run{n}" for n in range(8)]
    barrier = threading.Barrier(len(runs))

    def worker(run: str) -> tuple[list[str], SourceLedger]:
        with ledger_scope() as ledger:
            barrier.wait()  # all runs read their tool outputs at the same time
            return run_agent(run, 25), ledger

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        results = list(pool.map(worker, runs))
    for run, (urls, ledger) in zip(runs, results, strict=True):
        assert urls == expected_urls(run, 25)
        shared = ledger.sources[0]
        assert [o.call_id for o in ledger.origins(shared.id)] == [f"{run}-{c}" for c in range(25)]
    assert len({id(ledger) for _, ledger in results}) == len(runs)


def test_asyncio_tasks_each_see_only_their_own_run() -> None:
    async def agent(run: str) -> list[str]:
        with ledger_scope() as ledger:
            for call in range(20):
                ledger.add_tool_output("tavily_search", search_output(run, call), call_id=str(call))
                await asyncio.sleep(0)  # hand over to the other runs between tool calls
                assert current_ledger() is ledger
            return [s.url or "" for s in ledger.sources]

    async def main() -> list[list[str]]:
        return await asyncio.gather(*(agent(f"task{n}") for n in range(6)))

    results = asyncio.run(main())
    for n, urls in enumerate(results):
        assert urls == expected_urls(f"task{n}", 20)


def test_tasks_started_inside_a_run_share_its_ledger() -> None:
    async def tool_call(run: str, call: int) -> None:
        await asyncio.sleep(0)
        ledger = current_ledger()
        assert ledger is not None
        ledger.add_tool_output("tavily_search", search_output(run, call))

    async def agent(run: str) -> list[str]:
        with ledger_scope() as ledger:
            # Parallel tool calls of one run, as agents make them, land in the run's ledger.
            await asyncio.gather(*(tool_call(run, call) for call in range(5)))
            return sorted(s.url or "" for s in ledger.sources)

    async def main() -> list[list[str]]:
        return await asyncio.gather(agent("a"), agent("b"))

    first, second = asyncio.run(main())
    assert first == sorted(expected_urls("a", 5))
    assert second == sorted(expected_urls("b", 5))


def test_one_ledger_shared_by_threads_loses_nothing_and_keeps_sids_dense() -> None:
    ledger = SourceLedger()
    barrier = threading.Barrier(6)

    def worker(n: int) -> list[str]:
        barrier.wait()
        return [
            ledger.add(Source(url=f"https://site.example/{k % 40}", rank=n)) for k in range(120)
        ]

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = [i for found in pool.map(worker, range(6)) for i in found]
    assert len(ledger) == 40
    assert set(ids) == {s.id for s in ledger.sources}
    assert sorted(ledger.sid(s.id) or 0 for s in ledger.sources) == list(range(1, 41))
    assert all(s.rank == 0 for s in ledger.sources)  # the earliest rank survives any interleaving
