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
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from unicite.analytics._analyze import analyze, json_column_name, row_schema
from unicite.analytics._inputs import Chunk
from unicite.analytics._progress import Tracker
from unicite.analytics._task import (
    ChunkResult,
    Collector,
    Report,
    describe_chunks,
    restore_result,
    summarize_described,
)
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
    tracker: Tracker | None = None,
    verbose: bool = False,
) -> Report:
    """Run `summarize_chunk` on every chunk with PySpark's ``mapInArrow`` and merge the results.

    Args:
        chunks: What `plan_chunks` made of the logs.
        by: Group keys, as for `stats`.
        workers: The cores of the local Spark this starts (``local[workers]``); every core by
            default. A running session is used as it is.
        fast: Count through the analytics sink.
        capacity: Distinct domains (and TLDs) counted exactly per group.
        tracker: Told of each chunk as its task finishes (through an accumulator the tasks
            add to), before the results are fetched.
        verbose: Let the Spark this starts log at its own level and draw its progress bars.

    Raises:
        UsageError: PySpark is not installed, or Spark cannot start (no Java runtime).
    """
    collector = Collector(by, capacity=capacity)
    if not chunks:
        return collector.finish()
    sql = _import_pyspark()
    spark, started = _session(sql, workers, verbose)
    try:
        frame = _chunk_frame(spark, chunks)
        done = _done_accumulator(spark) if tracker is not None else None
        task = partial(_summarize_batches, by=tuple(by), fast=fast, capacity=capacity, done=done)
        with _no_pandas_warning():
            results = frame.mapInArrow(task, _RESULT_DDL)
        from pyspark import StorageLevel

        # Streaming the results with toLocalIterator alone would run one partition (one task)
        # at a time: they are computed all at once first, and kept aside until collected,
        # a few dozen results a fetch (each fetch is a Spark job of its own).
        results = results.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if done is not None and tracker is not None:
                _count_reporting(results, done, chunks, tracker)
            else:
                results.count()
            fetches = -(-len(chunks) // _RESULTS_PER_FETCH)
            for row in results.coalesce(fetches).toLocalIterator():
                result = restore_result(bytes(row["result"]), chunks[row["index"]])
                if tracker is not None and done is None:  # no accumulator: told as fetched
                    tracker.done(result.chunk, result.summary.overall.responses)
                collector.add(result)
        finally:
            results.unpersist()
    finally:
        if started:
            spark.stop()
    return collector.finish()


def _session(sql: Any, workers: int | None, verbose: bool = False) -> tuple[Any, bool]:
    """The running Spark session, or a local one started for the run (and True: stop it).

    The one started logs errors only, from its first line (unless `verbose`): Spark's
    start-up warnings and its "default log level" notice come before any setting of the
    session could quiet them, so the JVM is started with a log configuration of its own.
    """
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
    )
    quiet_config = None
    if not verbose:
        builder = builder.config("spark.ui.showConsoleProgress", "false").config(
            "spark.log.level", "ERROR"
        )
        if "SPARK_CONF_DIR" not in os.environ:  # else its log4j2.properties says
            quiet_config = _quiet_log_config()
            builder = builder.config(
                "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={quiet_config}"
            )
    # The workers run this interpreter (they import unicite), not the first python3 on PATH,
    # unless the caller chose one. PySpark reads the variable when the context starts.
    chosen = "PYSPARK_PYTHON" in os.environ
    if not chosen:
        builder = builder.config("spark.pyspark.python", sys.executable)
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        with _no_pandas_warning(), _jvm_stderr_without(() if verbose else _JVM_NOISE):
            return builder.getOrCreate(), True
    except Exception as err:  # the JVM could not start: PySparkRuntimeError, OSError, ...
        raise UsageError(
            f"the spark engine cannot start Spark. {_JAVA}. It failed with {describe_error(err)}"
        ) from err
    finally:
        if not chosen:
            del os.environ["PYSPARK_PYTHON"]
        if quiet_config is not None:  # read once, when the JVM started
            os.unlink(quiet_config)


_QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""
"""Spark's own console log configuration, at level error. The Python gateway's logger at the
same level keeps Spark from announcing its "default log level" (it does when they differ)."""

_JVM_NOISE = (b"WARNING: Using incubator modules",)
"""What the JVM itself prints on every start, whatever the log configuration."""


@contextmanager
def _jvm_stderr_without(noise: tuple[bytes, ...]) -> Iterator[None]:
    """A JVM started inside writes its stderr through a filter dropping the lines of `noise`.

    The JVM keeps the pipe it was given; a thread copies what comes through it to the
    stderr this process had, line by line, until the JVM closes it. This process's own
    stderr is restored on leaving.
    """
    if not noise:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr to filter
        yield
        return
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)
    threading.Thread(
        target=_copy_lines, args=(read, saved, noise), name="unicite-jvm-stderr", daemon=True
    ).start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)


def _copy_lines(read: int, out: int, noise: tuple[bytes, ...]) -> None:
    with open(read, "rb") as source:
        try:
            for line in source:
                if not any(text in line for text in noise):
                    os.write(out, line)
        finally:
            os.close(out)


def _quiet_log_config() -> str:
    """A log4j2 configuration file that logs errors only (the caller removes it)."""
    import tempfile

    handle, path = tempfile.mkstemp(prefix="unicite-log4j2-", suffix=".properties")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(_QUIET_LOG4J2)
    return path


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
    batches: Iterable[pa.RecordBatch],
    *,
    by: tuple[str, ...],
    fast: bool,
    capacity: int,
    done: Any = None,
) -> Iterator[pa.RecordBatch]:
    """The task, in a Spark Python worker: each chunk summarized, as a pickled result.

    With `done` (an accumulator of `_DoneChunks`), each chunk's number and responses are
    added to it, which the driver sees as soon as the task finishes.
    """
    import pyarrow as pa

    schema = pa.schema([("index", pa.int64()), ("result", pa.binary())])
    for batch in batches:
        for fields in batch.to_pylist():
            if done is None:
                on_done = None
            else:

                def on_done(result: ChunkResult, index: int = fields["index"]) -> None:
                    done.add({index: result.summary.overall.responses})

            result = summarize_described(fields, by, fast=fast, capacity=capacity, on_done=on_done)
            yield pa.RecordBatch.from_arrays(
                [pa.array([fields["index"]], pa.int64()), pa.array([result], pa.binary())],
                schema=schema,
            )


class _DoneChunks:
    """An accumulator's algebra: chunk number → responses, merged by union.

    A chunk whose task ran twice (a retry, a lost cached block) is counted once.
    """

    def zero(self, value: dict[int, int]) -> dict[int, int]:
        return {}

    def addInPlace(self, value: dict[int, int], other: dict[int, int]) -> dict[int, int]:
        value.update(other)
        return value


def _done_accumulator(spark: Any) -> Any:
    """An accumulator the tasks add their chunks to; None on Spark Connect (none there)."""
    try:
        return spark.sparkContext.accumulator({}, _DoneChunks())
    except Exception:  # Spark Connect has no SparkContext: the progress comes with the results
        return None


def _count_reporting(results: Any, done: Any, chunks: Sequence[Chunk], tracker: Tracker) -> None:
    """``results.count()``, telling `tracker` of each chunk as its task finishes.

    The job runs in a thread; this one reads the accumulator (which Spark updates on the
    driver as each task ends) a few times a second.
    """
    failure: list[BaseException] = []

    def run() -> None:
        try:
            results.count()
        except BaseException as err:  # re-raised below, in the caller's thread
            failure.append(err)

    reported: set[int] = set()

    def report() -> None:
        for index, responses in list(done.value.items()):
            if index not in reported:
                reported.add(index)
                tracker.done(chunks[index], responses)

    job = threading.Thread(target=run, name="unicite-spark-count", daemon=True)
    job.start()
    while job.is_alive():
        job.join(0.2)
        report()
    if failure:
        raise failure[0]


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
        fast: Count through the analytics sink (equal rows, less work).

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
