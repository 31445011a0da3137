"""The Ray engine: `stats(..., engine="ray")` runs the local engine's task on Ray Data.

Every chunk `plan_chunks` made becomes one row of a Ray dataset; `map_batches` runs
`summarize_chunk` on each (one chunk a batch, so chunks spread over the workers as the local
process pool spreads them), and sends back only the pickled `ChunkResult` — a summary, never
the rows — which the driver merges as the results stream in. The figures are the local
engine's to the last count: the same task reads the same chunks, and summaries merge exactly
(while the distinct domains stay under `capacity`; past it the bounded counts depend on the
order of the merges, in every engine).

The workers read the files themselves, so the logs must be at the same paths on every node
(one machine, or shared storage), and unicite must be installed where the workers run. Ray is
started for the run (and shut down after it) unless the caller already started it: a Ray
you connected to, to a cluster or not, is used as it is and left running.

`analyze_dataset` is for data already in a Ray dataset: it maps `analyze` over a JSON column.

Needs ``pip install 'unicite[ray]'`` (Ray Data and pyarrow).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from unicite.analytics._analyze import analyze
from unicite.analytics._inputs import Chunk
from unicite.analytics._progress import Tracker
from unicite.analytics._task import (
    Collector,
    Report,
    describe_chunks,
    restore_result,
    summarize_described,
)
from unicite.exceptions import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["analyze_dataset", "run_ray"]

_EXTRA = "pip install 'unicite[ray]'"


def _import_ray() -> Any:
    """The ``ray`` module, with Ray Data; a `UsageError` naming the extra when it is missing."""
    try:
        import ray
        import ray.data
    except ImportError as err:
        raise UsageError(
            f"the ray engine needs Ray Data, which is not installed: {_EXTRA}"
        ) from err
    return ray


def run_ray(
    chunks: Sequence[Chunk],
    by: Sequence[str] = (),
    *,
    workers: int | None = None,
    fast: bool = True,
    capacity: int = 10_000,
    tracker: Tracker | None = None,
    verbose: bool = False,
) -> Report:
    """Run `summarize_chunk` on every chunk as Ray Data tasks and merge the results.

    Args:
        chunks: What `plan_chunks` made of the logs.
        by: Group keys, as for `stats`.
        workers: Tasks run at once (and the CPUs of the Ray this starts); every CPU of the
            Ray cluster by default.
        fast: Count through the analytics sink.
        capacity: Distinct domains (and TLDs) counted exactly per group.
        tracker: Told of each chunk as its result comes in.
        verbose: Let Ray print its logs, its workers' output and Ray Data's progress bars.

    Raises:
        UsageError: Ray Data is not installed.
    """
    collector = Collector(by, capacity=capacity)
    if not chunks:
        return collector.finish()
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        import logging

        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=verbose,
            logging_level=logging.INFO if verbose else logging.ERROR,
            ignore_reinit_error=True,
        )
        started = True
    try:
        with _quiet_data_context(ray, verbose):
            results = _chunk_dataset(ray, chunks).map_batches(
                partial(_summarize_batch, by=tuple(by), fast=fast, capacity=capacity),
                batch_format="pyarrow",
                batch_size=1,
                **_parallelism(ray, workers, len(chunks)),
            )
            # Streamed: each block is merged (and dropped) as it arrives, in any order.
            for table in results.iter_batches(batch_format="pyarrow", batch_size=None):
                for index, data in zip(
                    table.column("index").to_pylist(),
                    table.column("result").to_pylist(),
                    strict=True,
                ):
                    result = restore_result(data, chunks[index])
                    if tracker is not None:
                        tracker.done(result.chunk, result.summary.overall.responses)
                    collector.add(result)
    finally:
        if started:
            ray.shutdown()
    return collector.finish()


def _chunk_dataset(ray: Any, chunks: Sequence[Chunk]) -> Any:
    """One row per chunk, one block per row: a block is what one task is handed."""
    return ray.data.from_items(describe_chunks(chunks), override_num_blocks=len(chunks))


def _parallelism(ray: Any, workers: int | None, tasks: int) -> dict[str, Any]:
    """How many tasks run at once: `workers` when given, else as many as Ray has CPUs."""
    if workers is None:
        return {}
    size = min(workers, tasks)
    if _version(ray.__version__) >= (2, 51):  # `concurrency=` is deprecated for `compute=`
        return {"compute": ray.data.TaskPoolStrategy(size=size)}
    return {"concurrency": size}


def _version(text: str) -> tuple[int, ...]:
    """``(2, 51)`` for ``2.51.1`` (or ``2.51.0rc1``)."""
    numbers = []
    for part in text.split(".")[:2]:
        digits = part[: len(part) - len(part.lstrip("0123456789"))]
        numbers.append(int(digits or 0))
    return tuple(numbers)


@contextmanager
def _quiet_data_context(ray: Any, verbose: bool = False) -> Iterator[None]:
    """No progress bars nor per-run banners from Ray Data for the run, then as they were.

    A run is one short pipeline whose figures are the output: bars drawn over the caller's
    terminal (or their log) say nothing of them. Verbose, Ray Data's settings are left alone.
    """
    if verbose:
        yield
        return
    import logging

    context = ray.data.DataContext.get_current()
    settings = {"enable_progress_bars": False, "print_on_execution_start": False}
    before = {name: getattr(context, name) for name in settings if hasattr(context, name)}
    for name in before:
        setattr(context, name, settings[name])
    # Ray Data logs to the console itself ("Progress bars disabled", "execution finished").
    logger = logging.getLogger("ray.data")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
        for name, value in before.items():
            setattr(context, name, value)


def _summarize_batch(
    batch: pa.Table, *, by: tuple[str, ...], fast: bool, capacity: int
) -> pa.Table:
    """The task, on a Ray worker: each chunk of the batch summarized, as pickled results."""
    import pyarrow as pa

    indexes: list[int] = []
    results: list[bytes] = []
    for fields in batch.to_pylist():
        indexes.append(fields["index"])
        results.append(summarize_described(fields, by, fast=fast, capacity=capacity))
    return pa.table(
        {"index": pa.array(indexes, pa.int64()), "result": pa.array(results, pa.binary())}
    )


def analyze_dataset(ds: Any, column: str | None = None, *, fast: bool = True) -> Any:
    """One row per response of a Ray dataset whose `column` holds JSON responses.

    `analyze` mapped over the dataset's batches, lazily like any Ray Data transform: the
    result is a ``ray.data.Dataset`` with the columns of `row_schema` (provider, model, day,
    counts, each source's URL, domain and TLD, ...) and no other, one row per input row. Rows
    go on to any Ray Data operation — ``groupby``, ``write_parquet`` — or to `aggregate`.

    Args:
        ds: A ``ray.data.Dataset`` with a string or binary column of JSON responses.
        column: That column; may be left out when the dataset has no other.
        fast: Count through the analytics sink (equal rows, less work).

    Raises:
        UsageError: Ray Data is not installed. A missing or non-text column is reported by
            the tasks, when the dataset runs.
    """
    _import_ray()
    return ds.map_batches(partial(_analyze_table, column=column, fast=fast), batch_format="pyarrow")


def _analyze_table(batch: pa.Table, *, column: str | None, fast: bool) -> pa.Table:
    import pyarrow as pa

    return pa.Table.from_batches([analyze(batch, column=column, fast=fast)])
