"""Running the analysis over logs: the task every engine runs, and the local engine.

An engine splits the inputs into chunks (`plan_chunks`), runs `summarize_chunk` on each — read
its lines, `analyze` them in batches, fold the rows into a `Summary` — and merges the partial
summaries on the driver. The local engine runs the tasks in a process pool over the cores; the
Ray and Spark engines (`unicite.analytics.ray`, `unicite.analytics.spark`) run the very same
task on a cluster. Only what a summary holds travels back, so memory stays bounded whatever the
size of the logs.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, Literal

from unicite.analytics._aggregate import BadLine, Summary
from unicite.analytics._analyze import analyze
from unicite.analytics._inputs import STDIN, Chunk, InputError, plan_chunks, read_chunk
from unicite.analytics._progress import Progress, Tracker
from unicite.exceptions import UsageError

__all__ = [
    "ENGINES",
    "ChunkResult",
    "Collector",
    "Engine",
    "Report",
    "describe_chunks",
    "finish",
    "restore_result",
    "run_local",
    "stats",
    "summarize_chunk",
    "summarize_described",
]

Engine = Literal["local", "ray", "spark"]
ENGINES: tuple[Engine, ...] = ("local", "ray", "spark")

BATCH_SIZE = 1024
"""Lines handed to `analyze` at a time."""


@dataclass
class ChunkResult:
    """What one task sends back: its summary, and how many lines its chunk held."""

    chunk: Chunk
    summary: Summary
    lines: int
    failure: str | None = None
    """Why the chunk stopped early (a file that vanished, a truncated archive), if it did."""

    def dumps(self) -> bytes:
        """The result as bytes, for engines that move results as Arrow binary values."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(data: bytes) -> ChunkResult:
        """A result `dumps` made (only ever results this process's tasks produced)."""
        result = pickle.loads(data)  # noqa: S301 - bytes made by summarize_chunk's workers
        if not isinstance(result, ChunkResult):
            raise TypeError(f"expected a ChunkResult, got {type(result).__name__}")
        return result


def summarize_chunk(
    chunk: Chunk, by: Sequence[str] = (), *, fast: bool = True, capacity: int = 10_000
) -> ChunkResult:
    """Read one chunk and fold its responses into a summary: the task every engine runs."""
    summary = Summary(by, capacity=capacity)
    lines = 0
    failure = None
    lines_iter = iter(read_chunk(chunk))
    try:
        while True:
            batch = list(islice(lines_iter, BATCH_SIZE))
            if not batch:
                break
            numbers = []
            kept = []
            for offset, line in enumerate(batch, lines + 1):
                if line.strip():
                    numbers.append(offset)
                    kept.append(line)
            lines += len(batch)
            for number, row in zip(numbers, analyze(kept, fast=fast), strict=True):
                summary.add(row, file=chunk.path, line=number)
    except InputError as err:
        failure = str(err)
    return ChunkResult(chunk, summary, lines, failure)


# --- remote tasks: Ray and Spark ship chunks as plain fields and results as bytes ---------------


def describe_chunks(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """Chunks as plain fields a dataset holds, numbered, with the path each worker opens.

    The path is made absolute: a worker's working directory is not the driver's (a Ray worker
    on another node, a Spark executor). `restore_result` gives the results their names back.
    """
    return [
        {
            "index": index,
            "path": os.path.abspath(chunk.path),
            "kind": chunk.kind,
            "start": chunk.start,
            "end": chunk.end,
            "json_column": chunk.column,
        }
        for index, chunk in enumerate(chunks)
    ]


def summarize_described(
    fields: Mapping[str, Any],
    by: Sequence[str],
    *,
    fast: bool,
    capacity: int,
    on_done: Callable[[ChunkResult], None] | None = None,
) -> bytes:
    """The remote task: `summarize_chunk` of the chunk `describe_chunks` described, as bytes.

    `on_done` is shown the result first (an engine's progress report).
    """
    chunk = Chunk(
        fields["path"], fields["kind"], fields["start"], fields["end"], fields["json_column"]
    )
    result = summarize_chunk(chunk, by, fast=fast, capacity=capacity)
    if on_done is not None:
        on_done(result)
    return result.dumps()


def restore_result(data: bytes, chunk: Chunk) -> ChunkResult:
    """A remote task's result, under the name the caller gave the file (not the path read).

    Bad lines and failures name the file as the local engine names it, so that every engine
    reports the same ``file:line``.
    """
    result = ChunkResult.loads(data)
    read = result.chunk.path
    if read != chunk.path:
        result.summary.bad_lines = [
            replace(bad, file=chunk.path) if bad.file == read else bad
            for bad in result.summary.bad_lines
        ]
        if result.failure is not None and result.failure.startswith(read):
            result.failure = chunk.path + result.failure[len(read) :]
    result.chunk = chunk
    return result


@dataclass
class Report:
    """The result of a run: the merged summary and what could not be read."""

    summary: Summary
    failures: list[str] = field(default_factory=list)


class Collector:
    """Merges the chunks' results as they arrive, in any order, in bounded memory.

    A chunk numbers its lines from 1; the line numbers of the file are known once every
    earlier chunk of it has reported its line count, so each chunk's few bad lines wait
    aside until the end.
    """

    def __init__(self, by: Sequence[str], *, capacity: int = 10_000) -> None:
        self.report = Report(Summary(by, capacity=capacity))
        self._lines: dict[tuple[str, int], int] = {}
        self._bad: dict[tuple[str, int], list[BadLine]] = {}

    def add(self, result: ChunkResult) -> None:
        """Merge one chunk's result."""
        key = (result.chunk.path, result.chunk.start)
        self._lines[key] = result.lines
        if result.summary.bad_lines:
            self._bad[key] = result.summary.bad_lines
            result.summary.bad_lines = []
        if result.failure is not None:
            self.report.failures.append(result.failure)
        self.report.summary.merge(result.summary)

    def finish(self) -> Report:
        """The report, with bad lines numbered within their files."""
        before: dict[tuple[str, int], int] = {}
        seen: dict[str, int] = {}
        for path, start in sorted(self._lines):
            before[(path, start)] = seen.get(path, 0)
            seen[path] = before[(path, start)] + self._lines[(path, start)]
        summary = self.report.summary
        for key, bad in sorted(self._bad.items()):
            for b in bad:
                summary.note_bad_line(replace(b, line=b.line + before[key]))
        self.report.failures.sort()
        return self.report


def finish(results: Iterable[ChunkResult], by: Sequence[str], *, capacity: int = 10_000) -> Report:
    """Merge the chunks' results (in any order) into one report."""
    collector = Collector(by, capacity=capacity)
    for result in results:
        collector.add(result)
    return collector.finish()


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
        fast: Count with the fast readers (equal figures, less work).
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
