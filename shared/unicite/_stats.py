"""``unicite stats``: what the command prints and writes around `unicite.analytics.stats`.

The figures come from `unicite.analytics`; this module shows them (tables on a terminal, JSON
with ``--json``), writes the aggregate table (``--out`` .json, .csv or .parquet), draws the
chart (``--plot``) and reports the lines it could not read.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from unicite.analytics import ENGINES, GROUP_KEYS, Report, Summary, stats
from unicite.exceptions import UsageError

__all__ = ["OUT_FORMATS", "parse_by", "run_stats", "write_out"]

OUT_FORMATS = (".json", ".csv", ".parquet")


def parse_by(value: str | None) -> tuple[str, ...]:
    """``provider,model`` → ``("provider", "model")``; checks every key."""
    if not value:
        return ()
    keys = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [key for key in keys if key not in GROUP_KEYS]
    if unknown:
        raise UsageError(
            f"--by: cannot group by {', '.join(unknown)}: expected some of {', '.join(GROUP_KEYS)}"
        )
    if len(set(keys)) != len(keys):
        raise UsageError(f"--by names a key twice: {value}")
    return keys


def check_out(path: str | None) -> None:
    """Refuse an output file whose format is unknown, before any work."""
    if path is not None and Path(path).suffix.lower() not in OUT_FORMATS:
        raise UsageError(
            f"--out {path}: unknown format; name a file ending in {', '.join(OUT_FORMATS)}"
        )


def run_stats(
    logs: Sequence[str],
    *,
    engine: str,
    workers: int | None,
    by: tuple[str, ...],
    column: str | None,
    plot: str | None,
    progress: bool = False,
    verbose: bool = False,
) -> Report:
    """Run the statistics; with a chart to draw, also grouped by provider underneath.

    With `progress`, a bar on stderr (when stderr is a terminal) shows the bytes and
    responses read, the rate and the time left, chunk by chunk; it is gone once the run ends.
    """
    if engine not in ENGINES:
        raise UsageError(f"--engine {engine}: expected one of {', '.join(ENGINES)}")
    grouping = by if plot is None or "provider" in by else ("provider", *by)
    with _progress_bar(progress) as bar:
        report = stats(
            logs,
            engine=engine,
            workers=workers,
            by=grouping,
            column=column,
            progress=bar,
            verbose=verbose,
        )
    if plot is not None:
        from unicite.analytics.plot import plot as draw

        draw(report.summary, plot)
        if grouping != by:
            report.summary = report.summary.regroup(by)
    return report


class _Bar:
    """`unicite.analytics.stats` progress drawn as a rich progress bar."""

    def __init__(self, progress: Any) -> None:
        self._progress = progress
        self._task: Any = None

    def start(self, total_bytes: int | None, chunks: int) -> None:
        self._task = self._progress.add_task("reading", total=total_bytes, responses=0)

    def advance(self, size: int, responses: int) -> None:
        task = self._progress.tasks[self._task]
        self._progress.update(
            self._task, advance=size, responses=task.fields["responses"] + responses
        )


@contextmanager
def _progress_bar(wanted: bool) -> Iterator[_Bar | None]:
    """A progress bar on stderr when `wanted` and stderr is a terminal, else None."""
    if not wanted:
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[responses]:,} responses"),
        TransferSpeedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        yield _Bar(progress)


def write_out(summary: Summary, path: str, top: int) -> None:
    """Write the aggregates: the JSON summary, or the long table as CSV or Parquet."""
    suffix = Path(path).suffix.lower()
    target = Path(path)
    if suffix == ".json":
        text = json.dumps(summary.as_dict(top), indent=2, ensure_ascii=False) + "\n"
        with _replacing(target) as tmp:
            tmp.write_text(text, encoding="utf-8")
        return
    rows = summary.table()
    columns = [*summary.by, "metric", "key", "count"]
    if suffix == ".csv":
        with _replacing(target) as tmp, tmp.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        return
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:
        raise UsageError(
            f"--out {path}: writing Parquet needs pyarrow: pip install 'unicite[analytics]'"
        ) from err
    schema = pa.schema(
        [pa.field(key, pa.string()) for key in summary.by]
        + [
            pa.field("metric", pa.string()),
            pa.field("key", pa.string()),
            pa.field("count", pa.int64()),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    with _replacing(target) as tmp:
        pq.write_table(table, tmp)


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A path beside `target` to write; it replaces `target` once written, and only then."""
    tmp = target.with_name(target.name + ".tmp")
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, target)


def describe_problems(report: Report) -> list[str]:
    """Lines for stderr: how many lines were unreadable (the first few named), and failures."""
    notes = []
    unreadable = report.summary.overall.unreadable
    if unreadable:
        noun = "line" if unreadable == 1 else "lines"
        notes.append(f"{unreadable:,} unreadable {noun} (counted, skipped); the first:")
        notes.extend(f"  {bad}" for bad in report.summary.bad_lines)
    notes.extend(f"could not finish reading {failure}" for failure in report.failures)
    return notes


def summary_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The overall figures as (label, value) pairs for a table."""
    keys = (
        "responses",
        "unreadable",
        "with_citations",
        "without_citations",
        "grounded",
        "grounded_without_citations",
        "with_diagnostics",
        "citations",
        "sources",
        "sources_per_answer",
        "redirect_share",
    )
    return [(key.replace("_", " "), str(result[key])) for key in keys]
