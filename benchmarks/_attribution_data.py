"""The labelled attribution development data: where it lives, how it is read and split.

The data is reference material beside the checkout (``../shared/attribution``), never part of
the project. Its location can be changed with ``UNICITE_ATTRIBUTION_DATA`` or a CLI option.
Rows are split by a hash of their id: about 30% are held aside for validation and never fitted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "DATASETS",
    "ENV_VAR",
    "best_published",
    "data_root",
    "held_aside",
    "load",
    "missing_message",
    "reference_rows",
]

ENV_VAR = "UNICITE_ATTRIBUTION_DATA"
HELD_ASIDE = 0.3
DATASETS = {
    "attributionbench": "attributionbench/dev_all_subset_balanced.unified.jsonl",
    "quotesum": "quotesum/quotesum_dev.unified.jsonl",
    "wice": "wice/wice_claim_dev.unified.jsonl",
    "clapnq": "clapnq/clapnq_dev.unified.jsonl",
}


def data_root(override: str | None = None) -> Path:
    """The data folder: the override, else ``$UNICITE_ATTRIBUTION_DATA``, else the default."""
    if override:
        return Path(override)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "attribution"


def missing_message(root: Path) -> str | None:
    """Why the data cannot be used, or None when every set is there."""
    absent = [name for name, rel in DATASETS.items() if not (root / rel).is_file()]
    if not absent:
        return None
    return (
        f"attribution dev data not found under {root} (missing: {', '.join(absent)}); "
        f"set {ENV_VAR} or pass --data to point at it"
    )


def load(root: Path, name: str) -> list[dict[str, Any]]:
    """Every row of one dataset, in file order."""
    with (root / DATASETS[name]).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def held_aside(row_id: str) -> bool:
    """Whether a row belongs to the validation part (stable across runs and machines)."""
    digest = hashlib.sha256(row_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < HELD_ASIDE


def reference_rows(root: Path, name: str) -> Iterator[dict[str, str]]:
    """Rows of a published-numbers table in ``reference/`` (comment lines skipped)."""
    lines = [
        line.rstrip("\n")
        for line in (root / "reference" / name).read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    header = lines[0].split("\t")
    for line in lines[1:]:
        yield dict(zip(header, line.split("\t"), strict=False))


def best_published(root: Path, name: str) -> dict[str, float]:
    """The best ``avg_F1`` of a published AttributionBench table, per setting.

    Keys are the table's settings lowered (``"zero-shot"``, ``"fine-tuned"``); other rows
    (the average gain from fine-tuning) are left out.
    """
    best: dict[str, float] = {}
    for row in reference_rows(root, name):
        if row["setting"] in ("Zero-shot", "Fine-tuned"):
            setting = row["setting"].lower()
            best[setting] = max(best.get(setting, -math.inf), float(row["avg_F1"]))
    return best
