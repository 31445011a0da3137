"""The wire: what sending a cited answer to a chat front end costs.

A 5,000-word answer citing 50 sources 200 times goes out as ``unicite.wire.history`` (the
completed event and the REST reload), against the answer's own ``to_json`` in the same run;
its 2,000 text deltas go out as ``thread.message.delta`` frames, against hand-written
``data: {json}`` lines (the least any SSE server does per delta). Decoding the frames back
into a `CitedAnswer` is measured against ``CitedAnswer.from_json`` of the same answer.
"""

from __future__ import annotations

import json
import random

from _harness import Figure, median_time

import unicite
from unicite import CitedAnswer, Source, wire

WORDS = 5_000
SOURCES = 50
CITATIONS = 200
DELTAS = 2_000


def _answer() -> CitedAnswer:
    rng = random.Random(7)
    sources = [
        Source(
            url=f"https://www.exemple{n}.fr/article/{n}",
            title=f"Article n° {n} — Société Générale d’Études",
            snippet="Le viaduc de Millau culmine à 343 mètres. " * 2,
        )
        for n in range(SOURCES)
    ]
    words = ["éléphant", "東京", "rivière", "Zürich", "mètres", "naïve", "données"]
    sentences = []
    per_sentence = WORDS // CITATIONS
    for _ in range(CITATIONS):
        body = " ".join(rng.choice(words) for _ in range(per_sentence))
        sentences.append(f"{body.capitalize()} [{rng.randrange(1, SOURCES + 1)}].")
    return unicite.cite(" ".join(sentences), sources)


def run() -> list[Figure]:
    answer = _answer()
    text = answer.text
    size = len(text) // DELTAS + 1
    deltas = [text[i : i + size] for i in range(0, len(text), size)]
    stream = [*deltas, answer]

    history = median_time(lambda: wire.history(answer), repeat=5)
    to_json = median_time(answer.to_json, repeat=5)

    def plain_frames() -> None:
        for delta in deltas:
            _ = f"data: {json.dumps({'delta': delta}, ensure_ascii=False)}\n\n"

    def delta_frames() -> None:
        for _ in wire.encode(deltas):
            pass

    encoded = median_time(delta_frames, repeat=5)
    plain = median_time(plain_frames, repeat=5)
    body = "".join(wire.encode(stream))
    decode = median_time(lambda: wire.decode(body), repeat=5)
    as_json = answer.to_json()
    from_json = median_time(lambda: CitedAnswer.from_json(as_json), repeat=5)
    return [
        Figure(
            f"history() of a {WORDS:,}-word answer, {CITATIONS} citations",
            history * 1e3,
            "ms",
            baseline=to_json * 1e3,
            baseline_name="answer.to_json()",
            target="report",
        ),
        Figure(
            f"{DELTAS:,} deltas as thread.message.delta frames",
            encoded / len(deltas) * 1e6,
            "µs/delta",
            baseline=plain / len(deltas) * 1e6,
            baseline_name='f"data: {json.dumps(...)}"',
            target="report",
        ),
        Figure(
            "decode() of the whole stream",
            decode * 1e3,
            "ms",
            baseline=from_json * 1e3,
            baseline_name="CitedAnswer.from_json",
            target="report",
        ),
    ]
