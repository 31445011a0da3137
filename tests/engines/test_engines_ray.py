"""The Ray engine on a Ray the caller started, and `analyze_dataset` on a Ray dataset."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")

from _engines import BY, RAY_DATA_DEPRECATIONS, SHARE, Logs, figures  # noqa: E402

from unicite.analytics import analyze, row_schema, stats  # noqa: E402
from unicite.analytics.ray import analyze_dataset  # noqa: E402

pytestmark = RAY_DATA_DEPRECATIONS


def test_a_running_ray_is_used_and_left_running(ray_cluster: Any, in_logs: Logs) -> None:
    report = stats(list(SHARE), engine="ray", workers=2, by=BY, chunk_bytes=4_000)
    assert figures(report) == figures(stats(list(SHARE), workers=1, by=BY, chunk_bytes=4_000))
    assert report.summary.overall.responses > 40
    assert ray_cluster.is_initialized()


def _sorted(rows: list[dict[str, Any]]) -> list[str]:
    """Rows in a canonical order (Ray Data does not keep the order of the blocks)."""
    return sorted(json.dumps(row, sort_keys=True) for row in rows)


def test_analyze_dataset_gives_the_rows_analyze_gives(ray_cluster: Any, logs: Logs) -> None:
    lines = list(logs.lines)
    items = [{"id": n, "response": line} for n, line in enumerate(lines)]
    dataset = ray_cluster.data.from_items(items, override_num_blocks=4)
    out = analyze_dataset(dataset, "response")
    table = pa.concat_tables(out.iter_batches(batch_format="pyarrow", batch_size=None))
    assert table.schema.equals(row_schema())
    expected = analyze(pa.table({"response": lines}), column="response").to_pylist()
    assert len(expected) == len(lines)
    assert any(row["error"] for row in expected)
    assert sum(row["sources"] for row in expected) > 100
    assert _sorted(table.to_pylist()) == _sorted(expected)

    # A dataset of the JSON column alone needs no column named; bytes read as text does.
    alone = ray_cluster.data.from_items([{"body": line.encode()} for line in lines[:20]])
    rows = analyze_dataset(alone, fast=False).take_all()
    assert _sorted([dict(row) for row in rows]) == _sorted(expected[:20])
