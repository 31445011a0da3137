"""Run every benchmark in this folder and print one table (also written to results.json)."""

from __future__ import annotations

import importlib
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import Figure  # noqa: E402


def main(selected: list[str]) -> int:
    modules = sorted(
        p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_") and p.stem != "run"
    )
    if selected:
        modules = [m for m in modules if m in selected]
    figures: list[tuple[str, Figure]] = []
    for name in modules:
        module = importlib.import_module(name)
        print(f"running {name} …", file=sys.stderr, flush=True)
        figures.extend((name, figure) for figure in module.run())
    header = f"{'benchmark':<14} {'figure':<58} {'value':>12} {'baseline':>12} {'ratio':>7}  target"
    print(header)
    print("-" * len(header))
    for bench, f in figures:
        base = "" if f.baseline is None else f"{f.baseline:,.3f}"
        ratio = "" if f.ratio is None else f"{f.ratio:.2f}×"
        value = f"{f.value:>10,.3f} {f.unit:<2}"
        print(f"{bench:<14} {f.name:<58} {value}{base:>11} {ratio:>7}  {f.target or ''}")
        if f.baseline_name:
            print(f"{'':<14}   baseline: {f.baseline_name}")
    results = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "figures": [{"benchmark": b, **f.as_dict()} for b, f in figures],
    }
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
