"""Shared helpers for benchmarks: timing, the figure record each benchmark returns, verdicts."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

_TARGET_RE = re.compile(r"^\s*(≤|<|≥|>)\s*(baseline|[\d,]*\.?\d+)\s*(×)?\s*(\S*)")


@dataclass
class Figure:
    """One measured figure, its baseline from the same run, and the issue's target.

    `target` is read for a verdict when it has the form ``≤ 1.10×`` (the ratio), ``≥ 20,000
    src/s`` / ``< 50 ms`` (the value, when the unit matches) or ``> baseline``; a benchmark whose
    target cannot be written that way sets `met` itself. Targets such as ``report`` get none.
    """

    name: str
    value: float
    unit: str
    baseline: float | None = None
    baseline_name: str | None = None
    target: str | None = None
    note: str = ""
    met: bool | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline in (None, 0):
            return None
        return self.value / self.baseline  # type: ignore[operator]

    @property
    def verdict(self) -> bool | None:
        """Whether the target is met: True, False, or None when there is nothing to check."""
        if self.met is not None:
            return self.met
        m = _TARGET_RE.match(self.target or "")
        if m is None:
            return None
        op, bound, times, unit = m.groups()
        if bound == "baseline":
            measured, limit = self.ratio, 1.0
        elif times:
            measured, limit = self.ratio, float(bound.replace(",", ""))
        elif unit == self.unit:
            measured, limit = self.value, float(bound.replace(",", ""))
        else:
            return None
        if measured is None:
            return None
        return {
            "≤": measured <= limit,
            "<": measured < limit,
            "≥": measured >= limit,
            ">": measured > limit,
        }[op]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "met": self.verdict}


def median_time(fn: Callable[[], object], *, repeat: int = 7, number: int = 1) -> float:
    """Median wall time of `number` calls of `fn`, in seconds per call, over `repeat` rounds."""
    fn()  # warm up caches and imports
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)
