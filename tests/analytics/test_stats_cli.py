"""`unicite stats`: options, outputs and errors, through the real command."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("typer", reason="the cli extra is not installed")

from analytics._corpus import responses
from typer.testing import CliRunner

from unicite.analytics import aggregate, analyze
from unicite.cli import app

pq = pytest.importorskip("pyarrow.parquet")

runner = CliRunner()


def command(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in its own process: its stdout and stderr apart, as a shell has
    them (click's test runner mixes them before click 8.2)."""
    return subprocess.run(
        [sys.executable, "-m", "unicite", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        check=False,
    )


LINES = [json.dumps(data, ensure_ascii=False) for _, data in responses()]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*LINES, "{oops", ""]) + "\n", encoding="utf-8")
    return path


def _counts(rows: list[dict[str, str]]) -> dict[tuple[str, ...], int]:
    return {tuple(v for k, v in row.items() if k != "count"): int(row["count"]) for row in rows}


def test_grouped_json_summary(log: Path) -> None:
    result = command("stats", str(log), "--by", "provider,model", "--json", "--workers", "1")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    expected = aggregate(analyze([*LINES, "{oops"]), by=["provider", "model"]).as_dict()
    assert {k: v for k, v in summary.items() if k != "bad_lines"} == {
        k: v for k, v in expected.items() if k != "bad_lines"
    }
    assert summary["by"] == ["provider", "model"]
    assert summary["bad_lines"] == [
        f"{log}:{len(LINES) + 1}: line is not valid JSON: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    ]
    assert "1 unreadable line (counted, skipped)" in result.stderr


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json"])
def test_out_writes_the_aggregates(log: Path, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"counts{suffix}"
    result = runner.invoke(app, ["stats", str(log), "--by", "provider", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = aggregate(analyze([*LINES, "{oops"]), by=["provider"])
    if suffix == ".json":
        written = json.loads(out.read_text("utf-8"))
        assert written["bad_lines"] == [
            f"{log}:{len(LINES) + 1}: " + bad
            for bad in [
                "line is not valid JSON: Expecting property name enclosed in double quotes: "
                "line 1 column 2 (char 1)"
            ]
        ]
        assert {**written, "bad_lines": []} == summary.as_dict()
        return
    if suffix == ".csv":
        with out.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    else:
        rows = [
            {k: "" if v is None else str(v) for k, v in row.items()}
            for row in pq.read_table(out).to_pylist()
        ]
    expected = [{k: "" if v is None else str(v) for k, v in row.items()} for row in summary.table()]
    assert _counts(rows) == _counts(expected)
    assert ("gemini", "domain", "wikipedia.org") in _counts(rows)
    assert list(rows[0]) == ["provider", "metric", "key", "count"]


def test_table_output_lists_groups(log: Path) -> None:
    result = runner.invoke(app, ["stats", str(log), "--by", "provider"])
    assert result.exit_code == 0, result.output
    assert "By provider" in result.stdout
    for provider in ("openai", "anthropic", "gemini"):
        assert provider in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "site"], "--by: cannot group by site"),
        (["--by", "provider,provider"], "--by names a key twice"),
        (["--engine", "dask"], "--engine dask: expected one of local, ray, spark"),
        (["--out", "x.xlsx"], "unknown format; name a file ending in .json, .csv, .parquet"),
    ],
)
def test_bad_options_exit_2_with_one_line(log: Path, args: list[str], message: str) -> None:
    result = command("stats", str(log), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_missing_log_exits_2(tmp_path: Path) -> None:
    result = command("stats", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 2
    assert "nope.jsonl: no such file or directory" in result.stderr


def test_standard_input(log: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "unicite", "stats", "-", "--json"],
        input=log.read_bytes(),
        capture_output=True,
        check=True,
    )
    summary = json.loads(done.stdout)
    assert summary["responses"] == len(LINES) + 1
    assert summary["bad_lines"][0].startswith(f"-:{len(LINES) + 1}: ")


# --- progress: on a terminal only -------------------------------------------------------------


@pytest.fixture
def big_log(tmp_path: Path) -> Path:
    """A log of several chunks (over 1 MiB a worker), so that the bar moves more than once."""
    path = tmp_path / "große log.jsonl"
    copies = -(-(3 << 20) // sum(len(line.encode()) + 1 for line in LINES))
    path.write_text("\n".join(LINES * copies) + "\n", encoding="utf-8")
    return path


def test_a_terminal_shows_bytes_responses_and_rate(big_log: Path) -> None:
    from analytics._terminal import on_terminal, progress_states

    run = on_terminal("stats", str(big_log), "--json", "--workers", "2")
    assert run.returncode == 0, run.terminal
    summary = json.loads(run.stdout)
    states = progress_states(run.terminal)
    assert len(states) >= 2, run.terminal
    last = states[-1]
    assert last["read"] == last["total"]
    assert float(last["total"]) == pytest.approx(big_log.stat().st_size / 1e6, abs=0.06)
    assert last["unit"] == "MB"
    assert int(last["responses"].replace(",", "")) == summary["responses"]
    assert any(state["rate"].endswith("B/s") for state in states), run.terminal
    assert "ETA" in run.terminal
    counts = [int(state["responses"].replace(",", "")) for state in states]
    assert counts == sorted(counts)
    assert counts[0] < summary["responses"]


def test_the_table_output_shows_progress_too_and_clears_it(log: Path) -> None:
    from analytics._terminal import on_terminal, progress_states

    run = on_terminal("stats", str(log), "--workers", "1")
    assert run.returncode == 0, run.terminal
    assert progress_states(run.terminal)[-1]["responses"] == f"{len(LINES) + 1:,}"
    assert "unicite stats" in run.stdout
    assert "1 unreadable line (counted, skipped)" in run.terminal


def test_quiet_shows_no_progress_on_a_terminal(big_log: Path) -> None:
    from analytics._terminal import on_terminal

    run = on_terminal("stats", str(big_log), "--json", "--quiet", "--workers", "2")
    assert run.returncode == 0, run.terminal
    assert json.loads(run.stdout)["responses"] > len(LINES)
    assert run.terminal.strip() == ""


def test_piped_stderr_gets_no_progress(big_log: Path) -> None:
    result = command("stats", str(big_log), "--json", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["responses"] > len(LINES)
