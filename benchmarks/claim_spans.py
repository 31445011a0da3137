"""Claims of link citations: exact match on the labelled OpenAI-style set.

``tests/data/claims/link_citations.jsonl`` holds answers written like gpt-4o / gpt-5 web-search
answers (Markdown paragraphs, bullets, tables, bold leads, French, German, Japanese, emoji), one
row per ``url_citation`` annotation over an inline link ``([site](url?utm_source=openai))``
and the claim a careful reader marks for it. A claim counts only when its span is exact.

The baseline is the naive reading: the sentence holding the last non-space character before
the link, sentences split after every ``.``, ``!``, ``?`` (or ``。``) and line break. The set
was written alongside the claim rules (a development set, not a held-out one), so the figure
guards against regressions.

    python benchmarks/claim_spans.py
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from _harness import Figure

from unicite import claim_span

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "claims" / "link_citations.jsonl"
_NAIVE_BREAK_RE = re.compile(r"[.!?\u3002\uff01\uff1f]\s+|[.!?]?\n|[\u3002\uff01\uff1f]")


def load() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def expected(row: dict[str, Any]) -> tuple[int, int]:
    start = row.get("claim_start", row["text"].find(row["claim"]))
    return start, start + len(row["claim"])


def naive(text: str, start: int) -> tuple[int, int]:
    """The sentence holding the last non-space character before the link, split naively."""
    head = text[:start].rstrip()
    a = 0
    for m in _NAIVE_BREAK_RE.finditer(head):
        if m.end() < len(head):
            a = m.end()
    while a < len(head) and head[a].isspace():
        a += 1
    return a, len(head)


def run() -> list[Figure]:
    rows = load()
    hits: Counter[str] = Counter()
    base: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for row in rows:
        want = expected(row)
        totals[row["class"]] += 1
        hits[row["class"]] += claim_span(row["text"], row["start"], row["end"]) == want
        base[row["class"]] += naive(row["text"], row["start"]) == want
    figures = [
        Figure(
            name=f"link-citation claims, exact match ({len(rows)} links)",
            value=100 * sum(hits.values()) / len(rows),
            unit="%",
            baseline=100 * sum(base.values()) / len(rows),
            baseline_name="naive sentence before the link (split at every . ! ? and line break)",
            target="≥ 99 %",
            note=f"{sum(hits.values())}/{len(rows)} exact; development set",
        )
    ]
    for cls in sorted(totals):
        figures.append(
            Figure(
                name=f"  class {cls} ({totals[cls]} links)",
                value=100 * hits[cls] / totals[cls],
                unit="%",
                baseline=100 * base[cls] / totals[cls],
                baseline_name="the same naive reading",
                note=f"{hits[cls]}/{totals[cls]} exact",
            )
        )
    return figures


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name:<48} {figure.value:6.1f} {figure.unit}  (naive {figure.baseline:.1f})")
