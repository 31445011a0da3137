"""The task every engine runs, and the merge of its results on the driver.

An engine splits the inputs into chunks (`plan_chunks`), runs `summarize_chunk` on each — read
its lines, `analyze` them in batches, fold the rows into a `Summary` — and merges the partial
summaries with a `Collector`. The local engine (`_engine`) runs the tasks in a process pool; the
Ray and Spark engines (`unicite.analytics.ray`, `unicite.analytics.spark`) run the very same task
on a cluster, shipping chunks as `describe_chunks` fields and results as bytes. Only what a
summary holds travels back, so memory stays bounded whatever the size of the logs.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any

from unicite.analytics._aggregate import BadLine, Summary
from unicite.analytics._analyze import analyze
from unicite.analytics._inputs import Chunk, InputError, read_chunk

__all__ = [
    "BATCH_SIZE",
    "ChunkResult",
    "Collector",
    "Report",
    "describe_chunks",
    "finish",
    "restore_result",
    "summarize_chunk",
    "summarize_described",
]

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
