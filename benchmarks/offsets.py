"""Offset conversion: OffsetIndex against re-encoding a prefix per offset (the naive way)."""

from __future__ import annotations

import random

from _harness import Figure, median_time

from unicite import OffsetIndex


def run() -> list[Figure]:
    rng = random.Random(7)
    words = ["Zürich", "東京", "naïve", "emoji😀", "plain", "text", "ß", "Ωμέγα"]
    text = " ".join(rng.choice(words) for _ in range(20_000))
    raw = text.encode()
    offsets = sorted(rng.randrange(len(raw)) for _ in range(2_000))

    def indexed() -> None:
        index = OffsetIndex(text)
        for b in offsets:
            index.from_bytes(b)

    def naive() -> None:
        for b in offsets:
            len(raw[:b].decode("utf-8", "ignore"))

    fast = median_time(indexed, repeat=5)
    slow = median_time(naive, repeat=5)
    return [
        Figure(
            name=f"2,000 byte→str offsets on a {len(text):,}-char text",
            value=fast * 1e3,
            unit="ms",
            baseline=slow * 1e3,
            baseline_name="decode prefix per offset",
            target="< 1.0×",
        )
    ]
