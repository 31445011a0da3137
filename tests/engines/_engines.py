"""What the engine tests share: logs in every format `stats` reads, and a Java check.

Nothing here imports Ray, PySpark or pyarrow at the top: the environments without them
collect this folder too, and skip it.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from unicite.analytics import Report

BY = ("provider", "model", "day")
CHUNK_BYTES = 24_000
"""Cuts the plain log into several chunks (eight), each of them a task."""

SHARE = ("b_logs.jsonl.gz", "d_logs.parquet")
"""Two logs of few chunks, for the runs that check something else than the figures."""

BAD = ("{not json", "[1, 2", "\ufeffnot json either")
"""The bad lines of the plain log, all past its first chunk."""


@dataclass(frozen=True)
class Logs:
    """Log files in a folder, and the names a user gives them (relative to the folder)."""

    folder: Path
    names: tuple[str, ...]
    lines: tuple[str, ...]
    """Every line of `names[0]`, the plain log: JSON responses, wrapped or not, bad, blank."""


def log_lines() -> list[str]:
    """The project's recorded responses as log lines, some in dated envelopes, a few blank."""
    from analytics._corpus import responses

    lines = []
    for n, (_, response) in enumerate(responses()):
        if n % 3 == 0:
            day = 20 + n % 4
            record = {"timestamp": f"2026-11-{day}T08:00:00Z", "id": n, "response": response}
            lines.append(json.dumps(record))
        else:
            lines.append(json.dumps(response))
        if n % 17 == 5:
            lines.append("")
    return lines


def write_logs(folder: Path) -> Logs:
    """One log in each format; the plain one sorts first, so that its bad lines are named.

    ``a_plain.jsonl``     every response, blank lines, bad lines past its first chunk only
                          (their line numbers need every earlier chunk's line count)
    ``b_logs.jsonl.gz``   a share, with a bad line
    ``c_logs.jsonl.zst``  a share, with a blank and a bad line
    ``d_logs.parquet``    a JSON column beside others, three row groups, a null, a bad value
    ``e_cut.jsonl.gz``    a gzip log cut short: a failure, after its whole lines
    """
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    zstandard = pytest.importorskip("zstandard")
    lines = log_lines()
    assert len(lines) > 80, "the corpus of recorded responses shrank"

    plain = [*lines[:45], BAD[0], *lines[45:], BAD[1], "", BAD[2]]
    (folder / "a_plain.jsonl").write_text("\n".join(plain) + "\n", encoding="utf-8")

    share = "\n".join([*lines[5:20], "garbage", *lines[20:25]]) + "\n"
    (folder / "b_logs.jsonl.gz").write_bytes(gzip.compress(share.encode()))
    share = "\n".join([*lines[30:45], "", "{]", *lines[45:50]]) + "\n"
    (folder / "c_logs.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(share.encode()))

    values: list[str | None] = [*lines[50:70], None, "nope", *lines[70:75]]
    table = pa.table(
        {
            "id": list(range(len(values))),
            "note": [f"note {n}" for n in range(len(values))],
            "response": values,
        }
    )
    pq.write_table(table, folder / "d_logs.parquet", row_group_size=10)
    assert pq.ParquetFile(folder / "d_logs.parquet").num_row_groups == 3

    cut = gzip.compress(("\n".join(lines[:30]) + "\n").encode())
    (folder / "e_cut.jsonl.gz").write_bytes(cut[: len(cut) // 2])

    names = (
        "a_plain.jsonl",
        "b_logs.jsonl.gz",
        "c_logs.jsonl.zst",
        "d_logs.parquet",
        "e_cut.jsonl.gz",
    )
    return Logs(folder, names, tuple(plain))


def have_java() -> bool:
    """Whether Spark can find a Java runtime (JAVA_HOME or ``java`` on PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.access(os.path.join(home, "bin", "java"), os.X_OK)
    return shutil.which("java") is not None


def skip_without_java() -> None:
    """Skip a test that starts Spark where no Java runtime is installed."""
    if not have_java():
        pytest.skip(
            "no Java runtime: Spark needs Java 17+ (.ci/run installs openjdk-17-jre-headless)"
        )


def figures(report: Report) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Everything a report tells, to compare: the summary (50 top domains, the bad lines,
    every group), every count as a table, the failures."""
    return report.summary.as_dict(top=50), report.summary.table(), report.failures


RAY_DATA_DEPRECATIONS = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
"""Ray Data 2.60 warns about its own deprecated settings when it makes its default context."""
