"""The three engines give identical aggregates on the same logs: every count, every group,
every bad line by ``file:line``, every failure.

The local engine in one process is the reference; the others run the same chunks on two
workers. The plain log is cut into several chunks, so the line numbers of its bad lines depend
on the chunks before them, whose results the engines return in any order.
"""

from __future__ import annotations

import pytest

pytest.importorskip("ray")
pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from _engines import (
    BAD,
    BY,
    CHUNK_BYTES,
    RAY_DATA_DEPRECATIONS,
    Logs,
    figures,
    skip_without_java,
)

from unicite.analytics import Engine, Report, plan_chunks, stats

pytestmark = RAY_DATA_DEPRECATIONS


def test_the_logs_exercise_what_is_compared(in_logs: Logs, reference: Report) -> None:
    chunks = plan_chunks(list(in_logs.names), chunk_bytes=CHUNK_BYTES)
    assert len([chunk for chunk in chunks if chunk.path == "a_plain.jsonl"]) >= 8
    assert {chunk.kind for chunk in chunks} == {"jsonl", "gzip", "zstd", "parquet"}
    assert len([chunk for chunk in chunks if chunk.kind == "parquet"]) == 3

    summary = reference.summary.as_dict(top=50)
    numbers = [in_logs.lines.index(bad) + 1 for bad in BAD]
    assert numbers[0] > 40  # past the first chunk
    assert [bad.split(": ")[0] for bad in summary["bad_lines"]] == [
        *(f"a_plain.jsonl:{n}" for n in numbers),
        "b_logs.jsonl.gz:16",
        "c_logs.jsonl.zst:17",
    ]
    assert summary["unreadable"] == len(BAD) + 3
    assert len(reference.failures) == 1
    assert reference.failures[0].startswith("e_cut.jsonl.gz: cannot decompress")
    groups = summary["groups"]
    assert len({group["day"] for group in groups}) > 5
    assert len({group["provider"] for group in groups}) >= 4
    assert len(summary["top_domains"]) > 10
    # A task per file instead of a dozen chunks: the same figures.
    assert figures(stats(list(in_logs.names), workers=1, by=BY)) == figures(reference)


@pytest.mark.parametrize(("engine", "workers"), [("local", 2), ("ray", 2), ("spark", 2)])
def test_every_engine_gives_the_same_figures(
    engine: Engine, workers: int, in_logs: Logs, reference: Report
) -> None:
    """Ray and Spark do not run here unless another test left them running: then the engine
    starts its own and stops it after. One that was running is left running."""
    if engine == "spark":
        skip_without_java()
    before = _running(engine)
    report = stats(
        list(in_logs.names), engine=engine, workers=workers, by=BY, chunk_bytes=CHUNK_BYTES
    )
    assert figures(report) == figures(reference)
    assert _running(engine) == before


def _running(engine: Engine) -> object:
    """Whether Ray runs in this process, or the active Spark session (None when none)."""
    if engine == "ray":
        import ray

        return ray.is_initialized()
    if engine == "spark":
        from pyspark.sql import SparkSession

        return SparkSession.getActiveSession()
    return None
