"""Run every benchmark in this folder and print one table (also written to results.json).

    python benchmarks/run.py                 # every benchmark
    python benchmarks/run.py extract scale   # some of them
    python benchmarks/run.py --readme        # put the last results.json into README.md

Each figure comes with its baseline measured in the same run, the ratio, the target from its
issue and whether it is met, so that a slow or busy machine moves value and baseline together.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
RESULTS = HERE / "results.json"
README_START = "<!-- benchmark-table:start -->"
README_END = "<!-- benchmark-table:end -->"
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
    return {
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


def markdown(results: dict[str, Any]) -> str:
    """The results as the README's Markdown table."""
    m = results["machine"]
    met = sum(f["met"] is True for f in results["figures"])
    missed = sum(f["met"] is False for f in results["figures"])
    lines = [
        f"Measured {m['date']} on {m['cpu']} ({m['cores']} cores, {m['memory']}), Python "
        f"{m['python']}, {m['platform']}; load average {m['load_average_at_start']} at the start."
        " Every baseline ran in the same process, right next to its figure.",
        "",
        f"{met} targets met, {missed} not met, {len(results['figures']) - met - missed} figures"
        " reported without a target.",
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
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def update_readme(results: dict[str, Any]) -> None:
    text = README.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no {README_START} … {README_END} section")
    body = text[: start + len(README_START)] + "\n" + markdown(results) + text[end:]
    README.write_text(body, encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv == ["--readme"]:
        update_readme(json.loads(RESULTS.read_text(encoding="utf-8")))
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
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
