"""Without Ray or PySpark installed, the engines say which extra to install.

This module runs in every environment (the engines' modules are stubbed out as missing), so
the message a user sees is checked where Ray and PySpark are absent too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from unicite.analytics import stats
from unicite.analytics.ray import analyze_dataset
from unicite.analytics.spark import analyze_dataframe
from unicite.exceptions import UsageError


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text('{"id": 1}\n', encoding="utf-8")
    return str(path)


def test_without_ray(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    expected = (
        r"the ray engine needs Ray Data, which is not installed: pip install 'unicite\[ray\]'"
    )
    with pytest.raises(UsageError, match=expected):
        stats([log], engine="ray")
    with pytest.raises(UsageError, match=expected):
        analyze_dataset(object())


def test_without_pyspark(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    expected = (
        r"the spark engine needs PySpark, which is not installed: pip install 'unicite\[spark\]'"
    )
    with pytest.raises(UsageError, match=expected):
        stats([log], engine="spark")
    with pytest.raises(UsageError, match=expected):
        analyze_dataframe(object())
