"""``unicite stats``: citation statistics over JSONL logs of provider responses, in constant memory.

Logs may hold millions of responses, so nothing here grows with the number of lines: counts are
running sums, sources per answer go into a fixed histogram, and the top domains and TLDs are
tracked with a bounded heavy-hitters counter (Misra–Gries), exact whenever the number of distinct
keys stays under its capacity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from unicite.model import CitedAnswer
from unicite.providers import extract

__all__ = ["LogStats", "TopCounter", "iter_log_lines"]

_HISTOGRAM_EDGES = (0, 1, 2, 3, 5, 10, 20, 50)
"""Sources-per-answer buckets: exactly 0, 1, 2, 3-4, 5-9, 10-19, 20-49, 50+."""


class TopCounter:
    """Counts keys with at most `capacity` counters (Misra–Gries heavy hitters).

    While fewer than `capacity` distinct keys have been seen the counts are exact; past that,
    every key whose true count exceeds ``total / capacity`` is kept, with a count low by at most
    `error`.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self.counts: dict[str, int] = {}
        self.total = 0
        self.error = 0

    def add(self, key: str) -> None:
        """Count one sighting of `key`."""
        self.total += 1
        if key in self.counts:
            self.counts[key] += 1
        elif len(self.counts) < self.capacity:
            self.counts[key] = 1
        else:
            # Decrement everything: the evicted mass bounds the error of every survivor.
            self.error += 1
            self.counts = {k: v - 1 for k, v in self.counts.items() if v > 1}

    @property
    def exact(self) -> bool:
        """Whether the counts are exact (no eviction happened)."""
        return self.error == 0

    def top(self, n: int) -> list[tuple[str, int]]:
        """The `n` most frequent keys, ties broken alphabetically (deterministic)."""
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


@dataclass
class LogStats:
    """Running statistics over provider responses."""

    responses: int = 0
    with_citations: int = 0
    without_citations: int = 0
    unreadable: int = 0
    with_diagnostics: int = 0
    sources: int = 0
    redirect_sources: int = 0
    citations: int = 0
    providers: dict[str, int] = field(default_factory=dict)
    histogram: list[int] = field(default_factory=lambda: [0] * len(_HISTOGRAM_EDGES))
    domains: TopCounter = field(default_factory=TopCounter)
    tlds: TopCounter = field(default_factory=TopCounter)

    def add_answer(self, answer: CitedAnswer) -> None:
        """Fold one extracted answer into the statistics."""
        self.responses += 1
        provider = answer.provider or "unknown"
        self.providers[provider] = self.providers.get(provider, 0) + 1
        if answer.citations:
            self.with_citations += 1
        else:
            self.without_citations += 1
        if answer.diagnostics:
            self.with_diagnostics += 1
        self.citations += len(answer.citations)
        self.sources += len(answer.sources)
        bucket = sum(1 for edge in _HISTOGRAM_EDGES if len(answer.sources) >= edge) - 1
        self.histogram[bucket] += 1
        for source in answer.sources:
            if source.redirect:
                self.redirect_sources += 1
            if source.domain:
                self.domains.add(source.domain)
                self.tlds.add(source.domain.rsplit(".", 1)[-1])

    def add_line(self, line: bytes | str) -> None:
        """Extract one JSONL line and fold it in; unreadable lines are counted, not raised."""
        answer = extract(line)
        if answer.provider is None and not answer.text and answer.diagnostics:
            self.responses += 1
            self.unreadable += 1
            return
        self.add_answer(answer)

    def as_dict(self, top: int = 10) -> dict[str, Any]:
        """A JSON-ready summary."""
        labels = ["0", "1", "2", "3-4", "5-9", "10-19", "20-49", "50+"]
        readable = self.responses - self.unreadable
        return {
            "responses": self.responses,
            "unreadable": self.unreadable,
            "with_citations": self.with_citations,
            "without_citations": self.without_citations,
            "with_diagnostics": self.with_diagnostics,
            "citations": self.citations,
            "sources": self.sources,
            "sources_per_answer": round(self.sources / readable, 3) if readable else 0.0,
            "sources_per_answer_histogram": dict(zip(labels, self.histogram, strict=True)),
            "redirect_share": round(self.redirect_sources / self.sources, 4)
            if self.sources
            else 0.0,
            "providers": dict(sorted(self.providers.items())),
            "top_domains": [{"domain": k, "count": v} for k, v in self.domains.top(top)],
            "top_tlds": [{"tld": k, "count": v} for k, v in self.tlds.top(top)],
            "counts_exact": self.domains.exact and self.tlds.exact,
        }


def iter_log_lines(
    stream: BinaryIO, on_bytes: Callable[[int], None] | None = None
) -> Iterable[bytes]:
    """Non-empty lines of a JSONL stream, read in bounded chunks (one line in memory at a time)."""
    for line in stream:
        if on_bytes is not None:
            on_bytes(len(line))
        if line.strip():
            yield line
