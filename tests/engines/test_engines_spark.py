"""The Spark engine on the caller's session, `analyze_dataframe`, and Spark without Java."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from _engines import BY, SHARE, Logs, figures  # noqa: E402

from unicite.analytics import analyze, row_schema, stats  # noqa: E402
from unicite.analytics.spark import analyze_dataframe, row_ddl  # noqa: E402
from unicite.exceptions import UsageError  # noqa: E402


def test_the_active_session_is_used_and_left_running(spark: Any, in_logs: Logs) -> None:
    report = stats(list(SHARE), engine="spark", workers=2, by=BY, chunk_bytes=4_000)
    assert figures(report) == figures(stats(list(SHARE), workers=1, by=BY, chunk_bytes=4_000))
    assert report.summary.overall.responses > 40
    from pyspark.sql import SparkSession

    assert SparkSession.getActiveSession() is spark
    assert spark.range(3).count() == 3


def test_analyze_dataframe_gives_the_rows_analyze_gives(spark: Any, logs: Logs) -> None:
    lines = list(logs.lines)
    frame = spark.createDataFrame(list(enumerate(lines)), "id bigint, response string")
    out = analyze_dataframe(frame, "response")
    assert out.columns == row_schema().names
    ddl = row_ddl().replace("`", "").replace(", ", ",").replace(" ", ":")
    assert out.schema.simpleString() == f"struct<{ddl}>"
    expected = analyze(pa.table({"response": lines}), column="response").to_pylist()
    assert any(row["error"] for row in expected)
    assert sum(row["sources"] for row in expected) > 100
    assert [row.asDict(recursive=True) for row in out.collect()] == expected

    # A frame of the JSON column alone needs no column named; bytes read as text does.
    alone = spark.createDataFrame([(line.encode(),) for line in lines[:20]], "body binary")
    rows = analyze_dataframe(alone, fast=False).collect()
    assert [row.asDict(recursive=True) for row in rows] == expected[:20]


def test_analyze_dataframe_names_its_column(spark: Any) -> None:
    frame = spark.createDataFrame([(1, "{}")], "id bigint, response string")
    with pytest.raises(UsageError, match=r"2 columns \(id, response\): name the JSON one"):
        analyze_dataframe(frame)
    with pytest.raises(UsageError, match=r"no column 'body' \(it has id, response\)"):
        analyze_dataframe(frame, "body")


def _stats_in_a_fresh_process(log: Path, env: dict[str, str]) -> str:
    """What `stats(engine="spark")` raises in a process of its own (no Spark running)."""
    code = (
        "import sys\n"
        "from unicite.analytics import stats\n"
        "try:\n"
        "    stats([sys.argv[1]], engine='spark')\n"
        "except Exception as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(log)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@pytest.fixture
def bare_env(tmp_path: Path) -> dict[str, str]:
    """The environment with no word of Java or Spark in it."""
    names = ("JAVA_HOME", "SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_PYTHON")
    return {key: value for key, value in os.environ.items() if key not in names}


def test_without_java_spark_says_what_it_needs(tmp_path: Path, bare_env: dict[str, str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    (tmp_path / "bin").mkdir()
    bare_env["PATH"] = str(tmp_path / "bin")  # no java on it
    said = _stats_in_a_fresh_process(log, bare_env)
    assert said.startswith("UsageError the spark engine cannot start Spark: no Java runtime found.")
    assert "Java runtime, 17 or later" in said
    assert "openjdk-17-jre-headless" in said


def test_a_java_that_does_not_start_is_reported(tmp_path: Path, bare_env: dict[str, str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    bare_env["JAVA_HOME"] = str(tmp_path / "no-such-jdk")
    said = _stats_in_a_fresh_process(log, bare_env)
    assert said.startswith(
        "UsageError the spark engine cannot start Spark. Spark needs a Java runtime, 17 or later"
    )
    assert "It failed with PySparkRuntimeError: [JAVA_GATEWAY_EXITED]" in said
