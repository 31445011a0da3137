"""The Spark engine: `stats(..., engine="spark")` runs the local engine's task through PySpark.

Every chunk `plan_chunks` made becomes one row, in a partition of its own, of a Spark
DataFrame; `mapInArrow` runs `summarize_chunk` on each and sends back only the pickled
`ChunkResult` — a summary, never the rows. The results are kept on the executors until every
task is done (so that all of them run at once), then streamed to the driver a few dozen at a
time and merged there. The figures are the local engine's to the last count: the same task
reads the same chunks, and summaries merge exactly (while the distinct domains stay under
`capacity`).

The caller's `SparkSession` (the active one, else the default one) is used when there is one,
and left running; otherwise a local one (``local[workers]``, no web UI) is started for the run
and stopped after it. Its Python workers run this interpreter, so that they import the unicite
the driver runs. On a cluster, the logs must be at the same paths on every node, and unicite
installed where the executors run.

`analyze_dataframe` is for data already in a Spark DataFrame: it maps `analyze` over a JSON
column.

Needs ``pip install 'unicite[spark]'`` (PySpark and pyarrow) and a Java runtime, 17 or later
(Spark runs on the JVM).
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from unicite.analytics._analyze import analyze, json_column_name, row_schema
from unicite.analytics._engine import (
    Collector,
    Report,
    describe_chunks,
    restore_result,
    summarize_described,
)
from unicite.analytics._inputs import Chunk
from unicite.exceptions import UsageError, describe_error

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["analyze_dataframe", "row_ddl", "run_spark"]

_EXTRA = "pip install 'unicite[spark]'"
_JAVA = (
    "Spark needs a Java runtime, 17 or later, on PATH or named by JAVA_HOME "
    "(on Debian: apt-get install openjdk-17-jre-headless)"
)

_CHUNK_DDL = (
    "`index` bigint, `path` string, `kind` string, `start` bigint, `end` bigint, "
    "`json_column` string"
)
"""The chunks `describe_chunks` describes, one a row."""
_RESULT_DDL = "`index` bigint, `result` binary"
"""A chunk's number and its pickled `ChunkResult`."""
_RESULTS_PER_FETCH = 32
"""Results the driver fetches at a time (summaries: a few MB at most each)."""


def _import_pyspark() -> Any:
    """The ``pyspark.sql`` module; a `UsageError` naming the extra when PySpark is missing."""
    try:
        import pyspark
        import pyspark.sql
    except ImportError as err:
        raise UsageError(
            f"the spark engine needs PySpark, which is not installed: {_EXTRA}"
        ) from err
    return pyspark.sql


def run_spark(
    chunks: Sequence[Chunk],
    by: Sequence[str] = (),
    *,
    workers: int | None = None,
    fast: bool = True,
    capacity: int = 10_000,
) -> Report:
    """Run `summarize_chunk` on every chunk with PySpark's ``mapInArrow`` and merge the results.

    Args:
        chunks: What `plan_chunks` made of the logs.
        by: Group keys, as for `stats`.
        workers: The cores of the local Spark this starts (``local[workers]``); every core by
            default. A running session is used as it is.
        fast: Count with the fast readers.
        capacity: Distinct domains (and TLDs) counted exactly per group.

    Raises:
        UsageError: PySpark is not installed, or Spark cannot start (no Java runtime).
    """
    collector = Collector(by, capacity=capacity)
    if not chunks:
        return collector.finish()
    sql = _import_pyspark()
    spark, started = _session(sql, workers)
    try:
        frame = _chunk_frame(spark, chunks)
        task = partial(_summarize_batches, by=tuple(by), fast=fast, capacity=capacity)
        with _no_pandas_warning():
            results = frame.mapInArrow(task, _RESULT_DDL)
        from pyspark import StorageLevel

        # Streaming the results with toLocalIterator alone would run one partition (one task)
        # at a time: they are computed all at once first, and kept aside until collected,
        # a few dozen results a fetch (each fetch is a Spark job of its own).
        results = results.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            results.count()
            fetches = -(-len(chunks) // _RESULTS_PER_FETCH)
            for row in results.coalesce(fetches).toLocalIterator():
                collector.add(restore_result(bytes(row["result"]), chunks[row["index"]]))
        finally:
            results.unpersist()
    finally:
        if started:
            spark.stop()
    return collector.finish()


def _session(sql: Any, workers: int | None) -> tuple[Any, bool]:
    """The running Spark session, or a local one started for the run (and True: stop it)."""
    running = sql.SparkSession.getActiveSession()
    if running is None:
        try:  # the default session, when it was made in another thread
            running = sql.SparkSession.active()
        except Exception:  # PySparkRuntimeError: there is none
            running = None
    if running is not None:
        return running, False
    if not _java_may_be_found():
        raise UsageError(f"the spark engine cannot start Spark: no Java runtime found. {_JAVA}")
    builder = (
        sql.SparkSession.builder.master(f"local[{workers or '*'}]")
        .appName("unicite stats")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
    )
    # The workers run this interpreter (they import unicite), not the first python3 on PATH,
    # unless the caller chose one. PySpark reads the variable when the context starts.
    chosen = "PYSPARK_PYTHON" in os.environ
    if not chosen:
        builder = builder.config("spark.pyspark.python", sys.executable)
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        with _no_pandas_warning():
            return builder.getOrCreate(), True
    except Exception as err:  # the JVM could not start: PySparkRuntimeError, OSError, ...
        raise UsageError(
            f"the spark engine cannot start Spark. {_JAVA}. It failed with {describe_error(err)}"
        ) from err
    finally:
        if not chosen:
            del os.environ["PYSPARK_PYTHON"]


def _java_may_be_found() -> bool:
    """False when Spark's launcher surely finds no ``java``: it would fail with shell errors.

    The launcher runs ``$JAVA_HOME/bin/java``, else the ``java`` on PATH; a Spark
    configuration directory (``SPARK_HOME``, ``SPARK_CONF_DIR``) may set JAVA_HOME, so then
    the launch is left to tell.
    """
    if any(os.environ.get(name) for name in ("JAVA_HOME", "SPARK_HOME", "SPARK_CONF_DIR")):
        return True
    return shutil.which("java") is not None


def _chunk_frame(spark: Any, chunks: Sequence[Chunk]) -> Any:
    """One row per chunk, each in a partition of its own: a partition is one task."""
    described = describe_chunks(chunks)
    rows = [
        (d["index"], d["path"], d["kind"], d["start"], d["end"], d["json_column"])
        for d in described
    ]
    try:
        rdd = spark.sparkContext.parallelize(rows, len(rows))
    except Exception:  # Spark Connect has no SparkContext: a shuffle spreads the rows instead
        return spark.createDataFrame(rows, _CHUNK_DDL).repartition(len(rows))
    return spark.createDataFrame(rdd, _CHUNK_DDL)


def _summarize_batches(
    batches: Iterable[pa.RecordBatch], *, by: tuple[str, ...], fast: bool, capacity: int
) -> Iterator[pa.RecordBatch]:
    """The task, in a Spark Python worker: each chunk summarized, as a pickled result."""
    import pyarrow as pa

    schema = pa.schema([("index", pa.int64()), ("result", pa.binary())])
    for batch in batches:
        for fields in batch.to_pylist():
            result = summarize_described(fields, by, fast=fast, capacity=capacity)
            yield pa.RecordBatch.from_arrays(
                [pa.array([fields["index"]], pa.int64()), pa.array([result], pa.binary())],
                schema=schema,
            )


@contextmanager
def _no_pandas_warning() -> Iterator[None]:
    """PySpark warns about the pandas version on Arrow work; unicite passes it no pandas."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        yield


def row_ddl() -> str:
    """`row_schema` as a Spark DDL schema: ``provider string, ..., urls array<string>, ...``."""
    return ", ".join(f"`{field.name}` {_ddl_type(field.type)}" for field in row_schema())


def _ddl_type(kind: Any) -> str:
    import pyarrow as pa

    if pa.types.is_list(kind):
        return f"array<{_ddl_type(kind.value_type)}>"
    if pa.types.is_string(kind):
        return "string"
    if pa.types.is_boolean(kind):
        return "boolean"
    if pa.types.is_int64(kind):
        return "bigint"
    raise TypeError(f"no Spark type for Arrow {kind}")  # pragma: no cover - row_schema's types


def analyze_dataframe(df: Any, column: str | None = None, *, fast: bool = True) -> Any:
    """One row per response of a Spark DataFrame whose `column` holds JSON responses.

    `analyze` mapped over the DataFrame with ``mapInArrow``, lazily like any Spark
    transformation: the result is a DataFrame with the columns of `row_schema` (`row_ddl` in
    Spark's terms) and no other, one row per input row. Rows go on to any Spark operation —
    ``groupBy``, ``write.parquet`` — or to `aggregate`.

    Args:
        df: A ``pyspark.sql.DataFrame`` with a string or binary column of JSON responses.
        column: That column; may be left out when the DataFrame has no other.
        fast: Count with the fast readers (equal rows, less work).

    Raises:
        UsageError: PySpark is not installed, or the column is not named (the DataFrame has
            several) or missing. A column that holds no text is reported by the tasks, when
            the DataFrame runs.
    """
    _import_pyspark()
    column = json_column_name(list(df.columns), column, "the DataFrame")
    # Only the JSON column travels to the Python workers.
    quoted = "`" + column.replace("`", "``") + "`"
    task = partial(_analyze_batches, column=column, fast=fast)
    with _no_pandas_warning():
        return df.select(quoted).mapInArrow(task, row_ddl())


def _analyze_batches(
    batches: Iterable[pa.RecordBatch], *, column: str | None, fast: bool
) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield analyze(batch, column=column, fast=fast)
