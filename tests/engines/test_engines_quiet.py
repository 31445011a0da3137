"""`unicite stats --engine ray|spark` prints its result and nothing of Ray's or Spark's own.

Each run is the installed command in its own process, with stdout and stderr apart as a
shell has them: piped, only the figures; on a terminal, the progress bar too; with
``--verbose``, the engines' own logs.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _engines import log_lines, skip_without_java
from analytics._terminal import on_terminal, progress_states

# The command line (the `cli` extra) runs every case, the local engine's included.
pytest.importorskip("typer")
pytest.importorskip("rich")


def _need(engine: str) -> None:
    pytest.importorskip("ray.data" if engine == "ray" else "pyspark")
    if engine == "spark":
        skip_without_java()


@pytest.fixture(scope="module")
def clean_logs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Logs with no line to complain of: a plain one of several chunks and a gzip one."""
    folder = tmp_path_factory.mktemp("quiet")
    lines = [line for line in log_lines() if line]
    plain = folder / "réponses.jsonl"
    copies = -(-(5 << 19) // sum(len(line.encode()) + 1 for line in lines))
    plain.write_text("\n".join(lines * copies) + "\n", encoding="utf-8")
    packed = folder / "réponses.jsonl.gz"
    packed.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return [str(plain), str(packed)]


def _stats(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unicite", "stats", *args],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


@pytest.fixture(scope="module")
def local_figures(clean_logs: list[str]) -> dict[str, Any]:
    result = _stats(*clean_logs, "--json", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


@pytest.mark.parametrize("engine", ["ray", "spark"])
def test_piped_the_engine_prints_the_figures_only(
    engine: str, clean_logs: list[str], local_figures: dict[str, Any]
) -> None:
    _need(engine)
    result = _stats(*clean_logs, "--json", "--engine", engine, "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout) == local_figures


@pytest.mark.parametrize("engine", ["ray", "spark"])
def test_on_a_terminal_the_engine_shows_progress_and_no_logs(
    engine: str, clean_logs: list[str], local_figures: dict[str, Any]
) -> None:
    _need(engine)
    run = on_terminal("stats", *clean_logs, "--json", "--engine", engine, "--workers", "2")
    assert run.returncode == 0, run.terminal
    assert json.loads(run.stdout) == local_figures
    states = progress_states(run.terminal)
    assert states, run.terminal
    total = sum(Path(name).stat().st_size for name in clean_logs)
    assert states[-1]["read"] == states[-1]["total"]
    assert float(states[-1]["total"]) == pytest.approx(total / 1e6, abs=0.06)
    assert states[-1]["responses"] == f"{local_figures['responses']:,}"
    # Nothing but the bar: no log line, warning or banner of the engine's own.
    shown = run.terminal.replace("\r", "\n")
    others = [line for line in shown.splitlines() if line.strip() and "responses" not in line]
    assert others == []


@pytest.mark.parametrize("engine", ["ray", "spark"])
def test_verbose_lets_the_engine_speak(
    engine: str, clean_logs: list[str], local_figures: dict[str, Any]
) -> None:
    _need(engine)
    result = _stats(*clean_logs, "--json", "--engine", engine, "--workers", "2", "--verbose")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == local_figures
    assert result.stderr.strip() != ""
