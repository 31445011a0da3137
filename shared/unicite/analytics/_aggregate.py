"""Aggregations over rows: counts by domain, TLD and provider, per group, in bounded memory.

Logs may hold millions of responses, so nothing here grows with the number of rows: counts are
running sums, sources per answer go into a fixed histogram, and domains and TLDs are counted
by a bounded heavy-hitters counter (Misra–Gries), exact while the distinct keys stay under its
capacity. Summaries merge: each worker of an engine folds its share of the rows into one, and
the driver merges them. Merging exact summaries is exact whatever the split, so every engine
gives the same aggregates.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unicite.analytics._rows import Row
from unicite.exceptions import UsageError

__all__ = ["GROUP_KEYS", "GroupStats", "Summary", "TopCounter", "aggregate"]

GROUP_KEYS = ("provider", "model", "day")
"""What rows can be grouped by."""

_HISTOGRAM_EDGES = (0, 1, 2, 3, 5, 10, 20, 50)
"""Sources-per-answer buckets: exactly 0, 1, 2, 3-4, 5-9, 10-19, 20-49, 50+."""
HISTOGRAM_LABELS = ("0", "1", "2", "3-4", "5-9", "10-19", "20-49", "50+")
_BUCKET = [sum(1 for edge in _HISTOGRAM_EDGES if n >= edge) - 1 for n in range(51)]

BAD_LINES_KEPT = 5
"""How many unreadable lines a summary names (the first ones, by file and line)."""


class TopCounter:
    """Counts keys in bounded memory (Misra–Gries heavy hitters, batched).

    Up to ``2 * capacity`` keys are held; when more arrive, the (capacity+1)-th largest count
    is subtracted from every key and what reaches zero is dropped. Counts are exact while no
    such cut happened (`exact`); after one, every key whose true count exceeds
    ``total / (capacity + 1)`` is kept, with a count low by at most `error`. Cutting in batches
    costs O(1) per key amortised, however the counts are spread. Two counters merge into one
    with the same guarantee over both streams (Agarwal et al., "Mergeable summaries", 2012).
    """

    def __init__(self, capacity: int = 10_000) -> None:
        if capacity < 1:
            raise UsageError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.counts: dict[str, int] = {}
        self.total = 0
        self.error = 0

    def add(self, key: str, n: int = 1) -> None:
        """Count `n` sightings of `key`."""
        self.total += n
        counts = self.counts
        if key in counts:
            counts[key] += n
        else:
            counts[key] = n
            if len(counts) > 2 * self.capacity:
                self._shrink()

    def _shrink(self) -> None:
        """Subtract the (capacity+1)-th largest count from every key; drop what reaches 0."""
        if len(self.counts) <= self.capacity:
            return
        cut = heapq.nlargest(self.capacity + 1, self.counts.values())[-1]
        self.error += cut
        self.counts = {k: v - cut for k, v in self.counts.items() if v > cut}

    def merge(self, other: TopCounter) -> None:
        """Fold another counter's sightings into this one."""
        if other.capacity != self.capacity:
            raise UsageError(
                f"cannot merge a counter of capacity {other.capacity} into one of {self.capacity}"
            )
        self.total += other.total
        self.error += other.error
        counts = self.counts
        for key, n in other.counts.items():
            counts[key] = counts.get(key, 0) + n
        if len(counts) > 2 * self.capacity:
            self._shrink()

    @property
    def exact(self) -> bool:
        """Whether the counts are exact (nothing was evicted)."""
        return self.error == 0

    def top(self, n: int) -> list[tuple[str, int]]:
        """The `n` most frequent keys, ties broken alphabetically (deterministic)."""
        return heapq.nsmallest(n, self.counts.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass
class GroupStats:
    """The figures of one group of rows (or of all of them)."""

    responses: int = 0
    unreadable: int = 0
    with_citations: int = 0
    without_citations: int = 0
    with_diagnostics: int = 0
    grounded: int = 0
    grounded_without_citations: int = 0
    citations: int = 0
    sources: int = 0
    cited_sources: int = 0
    redirect_sources: int = 0
    providers: dict[str, int] = field(default_factory=dict)
    histogram: list[int] = field(default_factory=lambda: [0] * len(_HISTOGRAM_EDGES))
    domains: TopCounter = field(default_factory=TopCounter)
    tlds: TopCounter = field(default_factory=TopCounter)

    def add(self, row: Row) -> None:
        """Fold one row in."""
        self.responses += 1
        if row["error"] is not None:
            self.unreadable += 1
            return
        provider = row["provider"] or "unknown"
        self.providers[provider] = self.providers.get(provider, 0) + 1
        citations = row["citations"]
        if citations:
            self.with_citations += 1
        else:
            self.without_citations += 1
        if row["grounded"]:
            self.grounded += 1
            if not citations:
                self.grounded_without_citations += 1
        if row["diagnostics"]:
            self.with_diagnostics += 1
        self.citations += citations
        sources = row["sources"]
        self.sources += sources
        self.histogram[_BUCKET[min(sources, 50)]] += 1
        self.cited_sources += sum(row["cited"])
        self.redirect_sources += sum(row["redirects"])
        domains, tlds = self.domains, self.tlds
        for domain, tld in zip(row["domains"], row["tlds"], strict=True):
            if domain:
                domains.add(domain)
            if tld:
                tlds.add(tld)

    def merge(self, other: GroupStats) -> None:
        """Fold another group's figures in."""
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for provider, n in other.providers.items():
            self.providers[provider] = self.providers.get(provider, 0) + n
        self.histogram = [a + b for a, b in zip(self.histogram, other.histogram, strict=True)]
        self.domains.merge(other.domains)
        self.tlds.merge(other.tlds)

    @property
    def exact(self) -> bool:
        """Whether the domain and TLD counts are exact."""
        return self.domains.exact and self.tlds.exact

    def as_dict(self, top: int = 10) -> dict[str, Any]:
        """A JSON-ready summary with the `top` domains and TLDs."""
        readable = self.responses - self.unreadable
        return {
            **{name: getattr(self, name) for name in _COUNTS},
            "sources_per_answer": round(self.sources / readable, 3) if readable else 0.0,
            "sources_per_answer_histogram": dict(
                zip(HISTOGRAM_LABELS, self.histogram, strict=True)
            ),
            "redirect_share": round(self.redirect_sources / self.sources, 4)
            if self.sources
            else 0.0,
            "providers": dict(sorted(self.providers.items())),
            "top_domains": [{"domain": k, "count": v} for k, v in self.domains.top(top)],
            "top_tlds": [{"tld": k, "count": v} for k, v in self.tlds.top(top)],
            "counts_exact": self.exact,
        }


_COUNTS = (
    "responses",
    "unreadable",
    "with_citations",
    "without_citations",
    "with_diagnostics",
    "grounded",
    "grounded_without_citations",
    "citations",
    "sources",
    "cited_sources",
    "redirect_sources",
)


@dataclass(frozen=True, order=True)
class BadLine:
    """An unreadable line: where it is and why."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


class Summary:
    """The aggregates of many rows: overall, and per group when grouped `by`."""

    def __init__(self, by: Sequence[str] = (), *, capacity: int = 10_000) -> None:
        by = tuple(by)
        unknown = [key for key in by if key not in GROUP_KEYS]
        if unknown:
            raise UsageError(
                f"cannot group by {', '.join(map(repr, unknown))}: "
                f"expected some of {', '.join(GROUP_KEYS)}"
            )
        if len(set(by)) != len(by):
            raise UsageError(f"a group key is named twice in {', '.join(by)}")
        self.by = by
        self.capacity = capacity
        self.overall = self._new_group()
        self.groups: dict[tuple[str | None, ...], GroupStats] = {}
        self.bad_lines: list[BadLine] = []

    def _new_group(self) -> GroupStats:
        return GroupStats(domains=TopCounter(self.capacity), tlds=TopCounter(self.capacity))

    def _group(self, key: tuple[str | None, ...]) -> GroupStats:
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = self._new_group()
        return group

    def add(self, row: Row, *, file: str | None = None, line: int | None = None) -> None:
        """Fold one row in; an unreadable one is remembered by `file` and `line` when given."""
        self.overall.add(row)
        if self.by:
            self._group(tuple(row[key] for key in self.by)).add(row)  # type: ignore[literal-required]
        if row["error"] is not None and file is not None and line is not None:
            self.note_bad_line(BadLine(file, line, row["error"]))

    def add_rows(self, rows: Iterable[Row]) -> None:
        """Fold many rows in."""
        for row in rows:
            self.add(row)

    def note_bad_line(self, bad: BadLine) -> None:
        """Remember an unreadable line, keeping the first `BAD_LINES_KEPT` by file and line."""
        if len(self.bad_lines) < BAD_LINES_KEPT or bad < self.bad_lines[-1]:
            self.bad_lines.append(bad)
            self.bad_lines.sort()
            del self.bad_lines[BAD_LINES_KEPT:]

    def merge(self, other: Summary) -> Summary:
        """Fold another summary (over other rows, grouped the same way) into this one."""
        if other.by != self.by:
            raise UsageError(f"cannot merge summaries grouped by {other.by} into {self.by}")
        self.overall.merge(other.overall)
        for key, group in other.groups.items():
            self._group(key).merge(group)
        for bad in other.bad_lines:
            self.note_bad_line(bad)
        return self

    def regroup(self, by: Sequence[str]) -> Summary:
        """The same figures grouped by fewer keys (a subset of `by`), merging groups."""
        by = tuple(by)
        missing = [key for key in by if key not in self.by]
        if missing:
            raise UsageError(f"cannot regroup by {', '.join(missing)}: not grouped by it")
        coarse = Summary(by, capacity=self.capacity)
        coarse.overall.merge(self.overall)
        coarse.bad_lines = list(self.bad_lines)
        if by:
            for named, group in self.sorted_groups():
                coarse._group(tuple(named[k] for k in by)).merge(group)
        return coarse

    def sorted_groups(self) -> list[tuple[dict[str, str | None], GroupStats]]:
        """The groups, as ``({key: value}, figures)``, sorted by their keys (None last)."""
        return [
            (dict(zip(self.by, key, strict=True)), group)
            for key, group in sorted(self.groups.items(), key=lambda kv: _sort_key(kv[0]))
        ]

    def as_dict(self, top: int = 10) -> dict[str, Any]:
        """A JSON-ready summary: the overall figures, the bad lines, and one entry per group."""
        result = self.overall.as_dict(top)
        result["bad_lines"] = [str(bad) for bad in self.bad_lines]
        if self.by:
            result["by"] = list(self.by)
            result["groups"] = [
                {**keys, **group.as_dict(top)} for keys, group in self.sorted_groups()
            ]
        return result

    def table(self) -> list[dict[str, Any]]:
        """The aggregates as a long table: one row per group, metric and key.

        Columns: the group keys, then ``metric`` (a count such as ``responses`` or
        ``citations``; ``domain`` or ``tld`` for the counts of one site), ``key`` (the domain or
        TLD, else empty) and ``count``. Every count of the summary is a row; shares are ratios
        of them (``redirect_sources / sources``).
        """
        rows: list[dict[str, Any]] = []
        entries: list[tuple[dict[str, str | None], GroupStats]]
        entries = self.sorted_groups() if self.by else [({}, self.overall)]
        for keys, group in entries:

            def emit(metric: str, key: str, count: int, keys: Mapping[str, Any] = keys) -> None:
                rows.append({**keys, "metric": metric, "key": key, "count": count})

            for name in _COUNTS:
                emit(name, "", getattr(group, name))
            for label, n in zip(HISTOGRAM_LABELS, group.histogram, strict=True):
                emit("sources_per_answer", label, n)
            for provider, n in sorted(group.providers.items()):
                emit("provider", provider, n)
            for domain, n in sorted(group.domains.counts.items()):
                emit("domain", domain, n)
            for tld, n in sorted(group.tlds.counts.items()):
                emit("tld", tld, n)
        return rows


def _sort_key(key: tuple[str | None, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple((part is None, part or "") for part in key)


def aggregate(rows: Iterable[Row], by: Sequence[str] = (), *, capacity: int = 10_000) -> Summary:
    """Fold rows into a `Summary`, grouped `by` some of ``provider``, ``model``, ``day``."""
    summary = Summary(by, capacity=capacity)
    summary.add_rows(rows)
    return summary
