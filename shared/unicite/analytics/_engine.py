"""Running the analysis over logs: `stats`, and the local engine.

`stats` plans the chunks and hands them to an engine: the local engine runs the task every engine
runs (`summarize_chunk`, in `_task`) in a process pool over the cores; the Ray and Spark engines
(`unicite.analytics.ray`, `unicite.analytics.spark`) run the very same task on a cluster.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Literal

from unicite.analytics._aggregate import Summary
from unicite.analytics._inputs import STDIN, Chunk, plan_chunks
from unicite.analytics._progress import Progress, Tracker
from unicite.analytics._task import ChunkResult, Collector, Report, summarize_chunk
from unicite.exceptions import UsageError

__all__ = ["ENGINES", "Engine", "Report", "run_local", "stats"]

Engine = Literal["local", "ray", "spark"]
ENGINES: tuple[Engine, ...] = ("local", "ray", "spark")


def _default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_local(
    chunks: Sequence[Chunk],
    by: Sequence[str] = (),
    *,
    workers: int | None = None,
    fast: bool = True,
    capacity: int = 10_000,
    on_result: Callable[[ChunkResult], None] | None = None,
) -> Report:
    """Run every chunk in this process (one worker) or a process pool over the cores."""
    workers = workers or _default_workers()
    collector = Collector(by, capacity=capacity)

    def done(result: ChunkResult) -> None:
        if on_result is not None:
            on_result(result)
        collector.add(result)

    if workers == 1 or len(chunks) <= 1:
        for chunk in chunks:
            done(summarize_chunk(chunk, by, fast=fast, capacity=capacity))
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            pending = {
                pool.submit(summarize_chunk, chunk, tuple(by), fast=fast, capacity=capacity)
                for chunk in chunks
            }
            while pending:
                # Finished futures are dropped at once: their summaries are merged, not kept.
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    done(future.result())
    return collector.finish()


def stats(
    logs: Sequence[str],
    *,
    engine: Engine = "local",
    workers: int | None = None,
    by: Sequence[str] = (),
    column: str | None = None,
    fast: bool = True,
    capacity: int = 10_000,
    chunk_bytes: int | None = None,
    progress: Progress | None = None,
    verbose: bool = False,
) -> Report:
    """Citation statistics over logs of provider responses, on one machine or a cluster.

    Args:
        logs: Files, directories and globs: JSONL (plain, gzip or zstd) and Parquet with a
            JSON column; ``"-"`` reads standard input (local engine).
        engine: ``"local"`` (a process pool), ``"ray"`` (Ray Data) or ``"spark"`` (PySpark).
        workers: Processes (local), or parallel tasks (Ray, Spark); all cores by default.
        by: Group the figures by some of ``provider``, ``model``, ``day``.
        column: The JSON column of Parquet inputs, when it cannot be told.
        fast: Count through the analytics sink (equal figures, less work).
        capacity: Distinct domains (and TLDs) counted exactly per group.
        chunk_bytes: Split plain JSONL files into tasks of about this many bytes.
        progress: Told the bytes of input planned, then each chunk's bytes and responses as
            its result comes in (in any order); nothing is measured without it.
        verbose: Let Ray and Spark print their own logs, banners and progress bars (a run
            keeps them quiet otherwise, so that the figures are all it prints).

    Raises:
        UsageError: An unknown engine or group key, a missing input, or an engine whose
            extra is not installed.
    """
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be at least 1, got {workers}")
    Summary(by)  # checks the group keys before any work
    n = workers or _default_workers()
    if chunk_bytes is None:
        chunk_bytes = _chunk_bytes(logs, n)
    chunks = plan_chunks(logs, chunk_bytes=chunk_bytes, column=column)
    if engine != "local" and any(chunk.path == STDIN for chunk in chunks):
        raise UsageError(f"the {engine} engine cannot read standard input: name files")
    tracker = Tracker(chunks, progress) if progress is not None else None
    if engine == "ray":
        from unicite.analytics.ray import run_ray

        return run_ray(
            chunks,
            by,
            workers=workers,
            fast=fast,
            capacity=capacity,
            tracker=tracker,
            verbose=verbose,
        )
    if engine == "spark":
        from unicite.analytics.spark import run_spark

        return run_spark(
            chunks,
            by,
            workers=workers,
            fast=fast,
            capacity=capacity,
            tracker=tracker,
            verbose=verbose,
        )
    on_result = None
    if tracker is not None:

        def on_result(result: ChunkResult, tracker: Tracker = tracker) -> None:
            tracker.done(result.chunk, result.summary.overall.responses)

    return run_local(chunks, by, workers=n, fast=fast, capacity=capacity, on_result=on_result)


def _chunk_bytes(logs: Sequence[str], workers: int) -> int:
    """About four tasks per worker (so uneven chunks balance), between 1 MiB and 64 MiB."""
    total = 0
    for name in logs:
        try:
            total += os.path.getsize(name) if os.path.isfile(name) else 0
        except OSError:
            continue
    if workers <= 1:
        return 64 << 20
    return max(1 << 20, min(64 << 20, total // (workers * 4) + 1))
