"""Shared helpers for benchmarks: timing and the figure record each benchmark returns."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Figure:
    """One measured figure, its baseline from the same run, and the issue's target."""

    name: str
    value: float
    unit: str
    baseline: float | None = None
    baseline_name: str | None = None
    target: str | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline in (None, 0):
            return None
        return self.value / self.baseline  # type: ignore[operator]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


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
