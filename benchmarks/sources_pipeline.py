"""`sources.search`, seed 004's web_search stage: 5 queries x 10 results through the pipeline.

The search function answers from memory with Tavily-shaped JSON (20% of each query's results
repeat a page another query found, written with ``www.`` or a trailing slash), so the figures
show the pipeline's own cost: running the searches (threads, one event loop per call),
extraction, interleaving and dedup, local BM25 reconciliation and the near-duplicate filter.
The baseline is what any caller pays anyway: the same five outputs read with
`from_tool_output` into a `SourceLedger` with ``add_all``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable

from _harness import Figure, median_time

from unicite.sources import SourceLedger, asearch, from_tool_output, search

QUERIES = [
    "ocean tides and the moon",
    "spring tide neap tide difference",
    "tidal range Bay of Fundy",
    "Gezeiten Zürichsee",
    "東京湾 潮汐",
]
PER_QUERY = 10
OBJECTIVE = "Explain what drives ocean tides and where the tidal range is largest."
WORDS = [
    "tide",
    "moon",
    "sun",
    "gravity",
    "ocean",
    "range",
    "bay",
    "harbour",
    "spring",
    "neap",
    "lunar",
    "cycle",
    "water",
    "level",
    "coast",
    "current",
    "flood",
    "ebb",
    "Zürich",
    "東京",
    "naïve",
    "café",
    "basin",
    "resonance",
]


def _outputs() -> dict[str, str]:
    """Each query's Tavily response as JSON text."""
    rng = random.Random(4)
    outputs = {}
    for q, query in enumerate(QUERIES):
        results = []
        for rank in range(PER_QUERY):
            if q and rng.random() < 0.2:
                other = rng.randrange(q)
                url = f"https://www.site{other}.org/page/{rng.randrange(PER_QUERY)}/"
            else:
                url = f"https://site{q}.org/page/{rank}"
            results.append(
                {
                    "url": url,
                    "title": f"{query} — result {rank}",
                    "content": " ".join(rng.choice(WORDS) for _ in range(40)),
                    "score": round(1 - rank / 20, 3),
                }
            )
        outputs[query] = json.dumps({"query": query, "results": results}, ensure_ascii=False)
    return outputs


def run() -> list[Figure]:
    outputs = _outputs()

    def tavily_search(query: str) -> str:
        return outputs[query]

    async def tavily_search_async(query: str) -> str:
        return outputs[query]

    pages = {}
    rng = random.Random(5)
    base = " ".join(rng.choice(WORDS) for _ in range(600))
    for query in QUERIES:
        for result in json.loads(outputs[query])["results"]:
            # One page in five is a near-copy of a common article: the filter has work to do.
            body = base if rng.random() < 0.2 else " ".join(rng.choice(WORDS) for _ in range(600))
            pages[result["url"]] = body

    def fetch(url: str) -> str:
        return pages[url]

    def pipeline() -> list[object]:
        return list(search(QUERIES, tavily_search, reconcile={"objective": OBJECTIVE}, filter=True))

    def pipeline_fetch() -> list[object]:
        return list(
            search(
                QUERIES,
                tavily_search,
                reconcile={"objective": OBJECTIVE},
                fetch=fetch,
                filter=True,
            )
        )

    def pipeline_async() -> list[object]:
        coroutine = asearch(
            QUERIES, tavily_search_async, reconcile={"objective": OBJECTIVE}, filter=True
        )
        return list(asyncio.run(coroutine))

    def search_only() -> list[object]:
        return list(search(QUERIES, tavily_search))

    def baseline() -> SourceLedger:
        ledger = SourceLedger()
        for n, query in enumerate(QUERIES, 1):
            ledger.add_all(from_tool_output("tavily_search", outputs[query], call_id=f"q{n}"))
        return ledger

    unique = len(baseline())
    kept = len(pipeline())
    kept_fetched = len(pipeline_fetch())
    assert len(search_only()) == unique

    def ms(fn: Callable[[], object]) -> float:
        return median_time(fn, repeat=9) * 1e3

    base_ms = ms(baseline)
    total = len(QUERIES) * PER_QUERY
    label = f"{len(QUERIES)} queries x {PER_QUERY} results"
    base_name = "from_tool_output + SourceLedger.add_all of the same outputs"
    return [
        Figure(
            name=f"sources.search, no stages: {label}",
            value=ms(search_only),
            unit="ms",
            baseline=base_ms,
            baseline_name=base_name,
            target="report",
            note=f"{unique} of {total} results kept after dedup; the difference is threads"
            " and an event loop per call, interleaving and numbering",
        ),
        Figure(
            name=f"sources.search + reconcile (local) + filter: {label}",
            value=ms(pipeline),
            unit="ms",
            baseline=base_ms,
            baseline_name=base_name,
            target="report",
            note=f"{kept} of {unique} sources kept by BM25 reconciliation and the snippet filter",
        ),
        Figure(
            name=f"sources.asearch + reconcile + filter (async search_fn): {label}",
            value=ms(pipeline_async),
            unit="ms",
            baseline=base_ms,
            baseline_name=base_name,
            target="report",
            note="asyncio.run included",
        ),
        Figure(
            name=f"sources.search + reconcile + in-memory fetch + filter: {label}",
            value=ms(pipeline_fetch),
            unit="ms",
            baseline=base_ms,
            baseline_name=base_name,
            target="report",
            note=f"{kept_fetched} sources kept; each fetch runs in its own thread, ~600-word"
            " pages, one in five a near-copy",
        ),
    ]
