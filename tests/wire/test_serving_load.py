"""Load on loopback: 2,000 cited answers, 200 at a time, from a real uvicorn server process.

The serving benchmark's own load (benchmarks/serving.py, bounded in count and time: about
fifteen seconds), asserted here for what must hold on any machine: no stream fails, the
server's memory and thread count stay flat after warm-up, and 200 clients hanging up
mid-answer leave no task or thread behind. How fast the first frame comes, against a bare SSE
stream, is the benchmark's figure, not a test's.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")
pytest.importorskip("sse_starlette")
pytest.importorskip("httpx")

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def serving() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # its `_harness`
    spec = importlib.util.spec_from_file_location("serving_benchmark", BENCHMARKS / "serving.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_thousand_streams_fail_none_and_leave_the_server_as_they_found_it() -> None:
    bench = serving()
    result = bench.measure()
    assert result["errors"] == 0
    assert len(result["relay"]) + len(result["bare"]) == bench.TOTAL
    warm, end = result["warm"], result["end"]
    assert end["rss"] - warm["rss"] < 16 * 2**20  # flat: nothing kept per answer
    assert end["threads"] <= warm["threads"]
    before, after = result["before_hangups"], result["after_hangups"]
    assert after["tasks"] <= before["tasks"]
    assert after["threads"] <= before["threads"]
