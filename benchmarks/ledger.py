"""SourceLedger and build_digest on an agent-sized run: 1,000 search calls, 10,000 results.

Every tool call returns 10 Tavily-shaped results; 30% of them repeat an earlier URL, written
the way search engines repeat URLs (tracking parameters, a fragment, an upper-case host). The
baseline is a plain dict keyed by the raw URL doing the same inserts, so the ratios show what
URL normalisation, merging, origins and locking cost. Throughput is also measured from the raw
JSON text through `from_tool_output`, against ``json.loads`` into the same plain dict.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from collections.abc import Callable
from typing import Any

from _harness import Figure, median_time

from unicite import Source
from unicite.sources import SourceLedger, build_digest, from_tool_output

CALLS = 1_000
PER_CALL = 10
DUPLICATE_SHARE = 0.3
DIGEST_SOURCES = 100
DIGEST_BUDGET = 8_000


def _variant(url: str, rng: random.Random) -> str:
    """The same page as a search engine might link it again."""
    choice = rng.randrange(3)
    if choice == 0:
        return url + ("&" if "?" in url else "?") + "utm_source=search&utm_medium=agent"
    if choice == 1:
        return url + "#section-2"
    return url.replace("https://www.", "https://WWW.", 1)


def _outputs() -> list[str]:
    """1,000 Tavily responses as JSON text, 30% of their results repeating earlier URLs."""
    rng = random.Random(1234)
    seen: list[str] = []
    outputs = []
    for call in range(CALLS):
        results = []
        for position in range(PER_CALL):
            if seen and rng.random() < DUPLICATE_SHARE:
                url = _variant(rng.choice(seen), rng)
            else:
                url = (
                    f"https://www.site{rng.randrange(400)}.com/articles/{call}-{position}?id={call}"
                )
                seen.append(url)
            results.append(
                {
                    "url": url,
                    "title": f"Result {position} of call {call}",
                    "content": f"A snippet about topic {call % 97} from result {position}. " * 3,
                    "score": round(rng.random(), 4),
                    "raw_content": None,
                }
            )
        outputs.append(json.dumps({"query": f"query {call}", "results": results}))
    return outputs


def _sources(outputs: list[str]) -> list[Source]:
    return [
        source
        for call, output in enumerate(outputs)
        for source in from_tool_output("tavily_search", output, call_id=f"call_{call}")
    ]


def _ledger_adds(sources: list[Source]) -> Callable[[], SourceLedger]:
    def run() -> SourceLedger:
        ledger = SourceLedger()
        for source in sources:
            ledger.add(source)
        return ledger

    return run


def _dict_adds(sources: list[Source]) -> Callable[[], dict[str | None, Source]]:
    def run() -> dict[str | None, Source]:
        table: dict[str | None, Source] = {}
        for source in sources:
            table.setdefault(source.url, source)
        return table

    return run


def _peak_mib(build: Callable[[], object]) -> float:
    tracemalloc.start()
    kept = build()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return peak / 2**20


def _digest_sources() -> list[Source]:
    rng = random.Random(99)
    words = ["tide", "moon", "harbour", "Zürich", "東京", "naïve", "ocean", "current", "😀"]
    return [
        Source(
            url=f"https://site{n}.org/page",
            title=f"Page {n}: {rng.choice(words)} report",
            snippet=" ".join(rng.choice(words) for _ in range(30)),
            content=" ".join(rng.choice(words) for _ in range(rng.randrange(100, 1_500))),
        )
        for n in range(DIGEST_SOURCES)
    ]


def _naive_digest(sources: list[Source]) -> str:
    """Numbered blocks, an equal character share each, cut anywhere: no fairness, no safety."""
    share = DIGEST_BUDGET * 4 // len(sources)
    return "\n\n".join(
        f"[sid:{n}] {s.title}\n{(s.content or '')[:share]}" for n, s in enumerate(sources, 1)
    )


def run() -> list[Figure]:
    outputs = _outputs()
    sources = _sources(outputs)
    assert len(sources) == CALLS * PER_CALL
    ledger = _ledger_adds(sources)()
    unique = len(ledger)
    raw_unique = len(_dict_adds(sources)())

    ledger_time = median_time(_ledger_adds(sources), repeat=5)
    dict_time = median_time(_dict_adds(sources), repeat=5)

    def end_to_end() -> None:
        run_ledger = SourceLedger()
        for call, output in enumerate(outputs):
            run_ledger.add_tool_output("tavily_search", output, call_id=f"call_{call}")

    def end_to_end_baseline() -> None:
        table: dict[str, Any] = {}
        for output in outputs:
            for result in json.loads(output)["results"]:
                table.setdefault(result["url"], result)

    full_time = median_time(end_to_end, repeat=3)
    full_baseline = median_time(end_to_end_baseline, repeat=3)

    ledger_peak = _peak_mib(_ledger_adds(sources))
    dict_peak = _peak_mib(_dict_adds(sources))

    digest_sources = _digest_sources()
    digest = build_digest(digest_sources, DIGEST_BUDGET, tokenizer="estimate")
    assert digest.count("[sid:") == DIGEST_SOURCES
    digest_time = median_time(
        lambda: build_digest(digest_sources, DIGEST_BUDGET, tokenizer="estimate"), repeat=7
    )
    naive_time = median_time(lambda: _naive_digest(digest_sources), repeat=7)

    total = len(sources)
    return [
        Figure(
            name=f"ledger.add: {total:,} results, 1,000 calls, 30% duplicates",
            value=total / ledger_time,
            unit="src/s",
            baseline=total / dict_time,
            baseline_name="dict keyed by raw URL (setdefault)",
            target="≥ 20,000 src/s",
            note=f"{unique:,} sources kept; the raw-URL dict keeps {raw_unique:,} (misses the"
            " duplicates); most of the time goes to URL normalisation",
        ),
        Figure(
            name=f"from_tool_output + add: {CALLS:,} Tavily JSON outputs",
            value=total / full_time,
            unit="src/s",
            baseline=total / full_baseline,
            baseline_name="json.loads + dict keyed by raw URL",
            target="≥ 10,000 src/s",
            note="building each Source (stable id, registrable domain) dominates",
        ),
        Figure(
            name=f"ledger memory, tracemalloc peak ({total:,} adds)",
            value=ledger_peak,
            unit="MiB",
            baseline=dict_peak,
            baseline_name="dict keyed by raw URL, same Source objects",
            target="≤ 1 KiB/source",
            met=ledger_peak * 2**20 / total <= 1024,
            note=f"{ledger_peak * 2**20 / total:,.0f} bytes per added result, including merged"
            " copies and the shared URL-normalisation cache",
        ),
        Figure(
            name=f"build_digest: {DIGEST_SOURCES} sources, {DIGEST_BUDGET:,}-token budget",
            value=digest_time * 1e3,
            unit="ms",
            baseline=naive_time * 1e3,
            baseline_name="equal character share, cut anywhere",
            target="< 50 ms",
        ),
    ]
