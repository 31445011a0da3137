"""Run every benchmark in this folder and print one table (also written to results.json).

    python benchmarks/run.py                 # every benchmark
    python benchmarks/run.py extract scale   # some of them
    python benchmarks/run.py --readme        # write the last results.json to RESULTS.md and
                                             # its summary to the README
    python benchmarks/run.py --both markers  # with the compiled accelerator, then again as pure
                                             # Python (UNICITE_PURE_PYTHON=1): both in the table
    python benchmarks/run.py --merge extract # re-measure some benchmarks: their figures replace
                                             # theirs in results.json, the others are kept

Figures are measured with whatever build of unicite runs (the compiled accelerator where
``uv sync`` built it); `machine` records which. ``--both`` adds each figure measured as pure
Python, its baseline the compiled figure.

Each figure comes with its baseline measured in the same run, the ratio, the target from its
issue and whether it is met, so that a slow or busy machine moves value and baseline together.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
PERFORMANCE = HERE.parent / "docs" / "performance.md"
RESULTS = HERE / "results.json"
RESULTS_PAGE = HERE / "RESULTS.md"
README_START = "<!-- benchmark-summary:start -->"
README_END = "<!-- benchmark-summary:end -->"
sys.path.insert(0, str(HERE))

from _harness import Figure  # noqa: E402

VERDICT = {True: "met", False: "NOT MET", None: ""}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.0f} GiB"
    load = None
    with contextlib.suppress(OSError, AttributeError):
        load = round(os.getloadavg()[0], 2)
    import unicite

    return {
        "accelerator": "compiled" if unicite.accelerated() else "pure Python",
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "load_average_at_start": load,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
    }


def _value(f: dict[str, Any]) -> str:
    return f"{f['value']:,.3f} {f['unit']}".strip()


def _ratio(f: dict[str, Any]) -> str:
    return "" if f["ratio"] is None else f"{f['ratio']:.2f}×"


def _baseline(f: dict[str, Any]) -> str:
    return "" if f["baseline"] is None else f"{f['baseline']:,.3f}"


def print_table(results: dict[str, Any]) -> None:
    header = (
        f"{'benchmark':<20} {'figure':<62} {'value':>16} {'baseline':>12} {'ratio':>7}  "
        f"{'target':<28} verdict"
    )
    print(header)
    print("-" * len(header))
    for f in results["figures"]:
        print(
            f"{f['benchmark']:<20} {f['name']:<62} {_value(f):>16} {_baseline(f):>12} "
            f"{_ratio(f):>7}  {f['target'] or '':<28} {VERDICT[f['met']]}"
        )
        if f["baseline_name"]:
            print(f"{'':<20}   baseline: {f['baseline_name']}")
    m = results["machine"]
    print(f"\n{m['cpu']}, {m['cores']} cores, {m['memory']}, Python {m['python']}, {m['platform']}")
    print(f"unicite: {m.get('accelerator', 'pure Python')}")


def _counts(figures: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Targets met, targets not met, and figures reported without a target."""
    met = sum(f["met"] is True for f in figures)
    missed = sum(f["met"] is False for f in figures)
    return met, missed, len(figures) - met - missed


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def merge(results: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """`previous` with the figures of the benchmarks `results` measured replaced by these.

    The machine is the new run's; `earlier` keeps the machine and benchmarks of the figures
    kept from before, so the page says which figures come from which run.
    """
    fresh = {f["benchmark"] for f in results["figures"]}
    kept = [f for f in previous["figures"] if f["benchmark"] not in fresh]
    figures = sorted(
        [*kept, *results["figures"]], key=lambda f: f["benchmark"]
    )  # stable: each benchmark keeps its figures' order
    merged = {"machine": results["machine"], "figures": figures}
    old = sorted({f["benchmark"] for f in kept})
    if old:
        earlier = previous.get("earlier", {"machine": previous["machine"]})
        merged["earlier"] = {"machine": earlier["machine"], "benchmarks": old}
    return merged


def _measured(m: dict[str, Any]) -> str:
    return (
        f"{m['date']} on {m['cpu']} ({m['cores']} cores, {m['memory']}), Python "
        f"{m['python']}, {m['platform']}, unicite {m.get('accelerator', 'pure Python')}; load"
        f" average {m['load_average_at_start']} at the start"
    )


def markdown(results: dict[str, Any]) -> str:
    """The results as one Markdown table, every figure with its baseline (RESULTS.md)."""
    m = results["machine"]
    met, missed, untargeted = _counts(results["figures"])
    earlier = results.get("earlier")
    when = f"Measured {_measured(m)}."
    if earlier:
        when = (
            f"Measured {_measured(m)}, except {', '.join(earlier['benchmarks'])}: kept from a"
            f" run of {_measured(earlier['machine'])}."
        )
    lines = [
        f"{when} Every baseline ran in the same process, right next to its figure.",
        "",
        f"{met} targets met, {missed} not met, {untargeted} figures reported without a target.",
        "",
        "| benchmark | figure | value | baseline | ratio | target | |",
        "| --- | --- | ---: | --- | ---: | --- | --- |",
    ]
    for f in results["figures"]:
        base = f"{_baseline(f)} — {f['baseline_name']}" if f["baseline_name"] else _baseline(f)
        cells = [
            f["benchmark"],
            f["name"],
            _value(f),
            base,
            _ratio(f),
            f["target"] or "",
            VERDICT[f["met"]],
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


# The reading targets, shown for both builds at the top of RESULTS.md: (benchmark, the start
# of the figure's name); the figure with a target is taken.
BOTH_BUILDS = (
    ("against_langchain", "extract() vs LangChain's conversion, worst of"),
    ("extract", "extract() worst of"),
    ("markers", "parse 20,000 words"),
    ("stats", "unicite stats throughput,"),
    ("langchain_overhead", "RAG chain invoke + handler.answer"),
)


def both_builds(results: dict[str, Any]) -> list[str]:
    """The reading targets as a table: each figure's ratio compiled and as pure Python."""
    figures = results["figures"]
    rows = []
    for benchmark, start in BOTH_BUILDS:
        found = [
            f
            for f in figures
            if f["benchmark"] == benchmark and f["name"].startswith(start) and f["target"]
        ]
        if not found:
            continue
        compiled = found[-1]
        twins = [
            f
            for f in figures
            if f["benchmark"] == benchmark
            and f["name"].endswith("(pure Python)")
            and f["name"].startswith(start)
        ]
        pure = twins[-1] if twins else None
        # The ratio of the pure figure to its own baseline, measured beside it in its run.
        own = None if pure is None else pure.get("own_ratio")
        pure_ratio = "" if own is None else f"{own:.2f}×"
        rows.append(
            "| "
            + " | ".join(
                _cell(c)
                for c in (
                    benchmark,
                    compiled["name"],
                    f"{_ratio(compiled)} ({_value(compiled)})",
                    f"{pure_ratio} ({_value(pure)})" if pure is not None else "not measured",
                    compiled["target"] or "",
                    VERDICT[compiled["met"]],
                )
            )
            + " |"
        )
    if not rows:
        return []
    return [
        "The reading targets with both builds: each ratio to its baseline with the compiled",
        "accelerator (the build `uv sync` makes) and as pure Python (`UNICITE_PURE_PYTHON=1`,",
        "`python benchmarks/run.py --both ...`), both measured against the same baseline.",
        "",
        "| benchmark | figure | compiled | pure Python | target | |",
        "| --- | --- | ---: | ---: | --- | --- |",
        *rows,
        "",
    ]


def results_page(results: dict[str, Any]) -> str:
    """benchmarks/RESULTS.md: how the figures are made, then the full table."""
    intro = [
        "# Benchmark results",
        "",
        "<!-- Written by `python benchmarks/run.py --readme` from results.json: do not edit. -->",
        "",
        "`make bench` runs every benchmark in this folder and prints one table: each figure, its",
        "baseline measured in the same run, the ratio, the target and whether it is met. It",
        "writes the same table to `benchmarks/results.json`; `python benchmarks/run.py --readme`",
        "turns that file into this page and the summary in the README. A full run takes about",
        "20 minutes on two cores, 7 of them for `unicite stats` over a generated 1 GB log;",
        "`python benchmarks/run.py extract markers` runs only those, and",
        "`UNICITE_BENCH_SCALE=0.3` / `UNICITE_BENCH_STATS_MB=100` shrink the size benchmarks.",
        "",
    ]
    return "\n".join([*intro, *both_builds(results)]) + "\n" + markdown(results)


def headline(results: dict[str, Any]) -> str:
    """The README's line: how many targets are met, where, and where to read more."""
    m = results["machine"]
    met, missed, untargeted = _counts(results["figures"])
    return (
        f"{met} of {met + missed} targets met; {untargeted} more figures are reported against"
        f" their baseline. Measured {m['date']} on {m['cpu']} ({m['cores']} cores), Python"
        f" {m['python']}. Per benchmark: [Performance](docs/performance.md); every figure with"
        " its baseline: [benchmarks/RESULTS.md](benchmarks/RESULTS.md).\n"
    )


def summary(results: dict[str, Any]) -> str:
    """The performance page's summary: the targets met, per benchmark with its headline figure."""
    m = results["machine"]
    figures = results["figures"]
    met, missed, untargeted = _counts(figures)
    benchmarks: dict[str, list[dict[str, Any]]] = {}
    for f in figures:
        benchmarks.setdefault(f["benchmark"], []).append(f)
    lines = [
        f"{met} of {met + missed} targets met; {untargeted} more figures are reported against"
        f" their baseline. Measured {m['date']} on {m['cpu']} ({m['cores']} cores), Python"
        f" {m['python']}. Each benchmark's first figure with a target:",
        "",
        "| benchmark | targets met | figure | value | target | |",
        "| --- | ---: | --- | ---: | --- | --- |",
    ]
    for name, group in benchmarks.items():
        targeted = [f for f in group if f["met"] is not None]
        if not targeted:
            continue
        head = targeted[0]
        cells = [
            name,
            f"{sum(f['met'] is True for f in targeted)} of {len(targeted)}",
            head["name"],
            _value(head),
            head["target"] or "",
            VERDICT[head["met"]],
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "Every figure with its baseline: `benchmarks/RESULTS.md` in the repository."]
    return "\n".join(lines) + "\n"


def _between_markers(page: Path, content: str) -> None:
    text = page.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"{page.name} has no {README_START} … {README_END} section")
    body = text[: start + len(README_START)] + "\n" + content + text[end:]
    page.write_text(body, encoding="utf-8")


def update_readme(results: dict[str, Any]) -> None:
    """Write RESULTS.md, the summary on the docs' performance page and the README's headline.

    The summary and the headline each go between their page's markers.
    """
    RESULTS_PAGE.write_text(results_page(results), encoding="utf-8")
    _between_markers(PERFORMANCE, summary(results))
    _between_markers(README, headline(results))


def _measure(selection: list[str], *, pure: bool) -> dict[str, Any]:
    """The results of `selection` run in a process of its own, pure Python or not.

    The process shows its progress; its table is left out (`both` prints the two together).
    """
    env = {k: v for k, v in os.environ.items() if k != "UNICITE_PURE_PYTHON"}
    if pure:
        env["UNICITE_PURE_PYTHON"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        command = [sys.executable, __file__, "--out", str(out), *selection]
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)  # noqa: S603
        results: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return results


def both(selection: list[str]) -> dict[str, Any]:
    """Every figure with the compiled accelerator, then each again as pure Python.

    A pure figure is reported against the compiled one (its baseline), without a target: the
    targets stay those of the build users get.
    """
    compiled = _measure(selection, pure=False)
    pure = _measure(selection, pure=True)
    if compiled["machine"]["accelerator"] != "compiled":
        print("warning: no compiled build runs here: both runs are pure Python", file=sys.stderr)
    same = {(f["benchmark"], f["name"]): f for f in compiled["figures"]}
    # A figure naming what it found (the worst response) may name another in the other run:
    # then its twin is the figure in the same place, when both runs gave the same figures.
    aligned = len(pure["figures"]) == len(compiled["figures"]) and all(
        p["benchmark"] == c["benchmark"]
        for p, c in zip(pure["figures"], compiled["figures"], strict=True)
    )
    figures = list(compiled["figures"])
    for n, f in enumerate(pure["figures"]):
        twin = same.get((f["benchmark"], f["name"]))
        if twin is None and aligned:
            twin = compiled["figures"][n]
        figure = Figure(
            name=f"{f['name']} (pure Python)",
            value=f["value"],
            unit=f["unit"],
            baseline=None if twin is None else twin["value"],
            baseline_name=None if twin is None else "the same figure, compiled",
            note="UNICITE_PURE_PYTHON=1",
        )
        # Its ratio to its own baseline, measured beside it in the pure run: what a target reads.
        own = f["ratio"]
        figures.append({"benchmark": f["benchmark"], **figure.as_dict(), "own_ratio": own})
    return {"machine": compiled["machine"], "figures": figures}


def main(argv: list[str]) -> int:
    if argv == ["--readme"]:
        update_readme(json.loads(RESULTS.read_text(encoding="utf-8")))
        return 0
    out = RESULTS
    if argv[:1] == ["--out"]:
        out, argv = Path(argv[1]), argv[2:]
    merging = "--merge" in argv
    argv = [a for a in argv if a != "--merge"]
    if "--both" in argv:
        results = both([a for a in argv if a != "--both"])
        print_table(results)
        _write(out, results, merging)
        return 0
    modules = sorted(
        p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_") and p.stem != "run"
    )
    unknown = set(argv) - set(modules)
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))}")
    if argv:
        modules = [m for m in modules if m in argv]
    info = machine()
    figures: list[tuple[str, Figure]] = []
    for name in modules:
        module = importlib.import_module(name)
        print(f"running {name} …", file=sys.stderr, flush=True)
        figures.extend((name, figure) for figure in module.run())
    results = {
        "machine": info,
        "figures": [{"benchmark": b, **f.as_dict()} for b, f in figures],
    }
    print_table(results)
    _write(out, results, merging)
    return 0


def _write(out: Path, results: dict[str, Any], merging: bool) -> None:
    if merging and out.exists():
        results = merge(results, json.loads(out.read_text(encoding="utf-8")))
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
