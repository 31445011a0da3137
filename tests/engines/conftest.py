"""Ray and Spark started once for the whole session, and the logs every test reads.

These tests run in `.venv-engines` (``make test-engines``), which has Ray, PySpark and a Java
runtime to hand; elsewhere their modules skip. Nothing here imports Ray, PySpark or pyarrow
at the top: the environments without them collect this folder too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from _engines import BY, CHUNK_BYTES, Logs, skip_without_java, write_logs

from unicite.analytics import Report, stats


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    return write_logs(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="session")
def reference(logs: Logs) -> Report:
    """What the local engine, in one process, makes of the logs: what every engine must give."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(logs.folder)
        return stats(list(logs.names), workers=1, by=BY, chunk_bytes=CHUNK_BYTES)


@pytest.fixture
def in_logs(logs: Logs, monkeypatch: pytest.MonkeyPatch) -> Logs:
    """The logs, from inside their folder: the names given are relative, as a user's are."""
    monkeypatch.chdir(logs.folder)
    return logs


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray, as a user starts one before calling unicite (unicite leaves it running)."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local Spark session on two cores, as a user starts one (unicite leaves it running)."""
    pytest.importorskip("pyspark")
    skip_without_java()
    from pyspark.sql import SparkSession

    saved = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers import this unicite
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.log.level", "ERROR")
            .getOrCreate()
        )
    finally:
        if saved is None:
            del os.environ["PYSPARK_PYTHON"]
        else:
            os.environ["PYSPARK_PYTHON"] = saved
    yield session
    session.stop()
