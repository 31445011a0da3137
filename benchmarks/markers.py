"""Marker parsing: time against one regex pass over the text (the floor), and its growth.

The answer is Markdown-ish prose (paragraphs, bullets, inline code, a code block now and then)
with 25 markers per 1,000 words in several styles. Linear growth shows as a flat time per
1,000 words from 2,000 to 200,000 words.

`MarkerStream` is timed on the same answer in 4-character chunks: as it runs by default
(renumbering), without renumbering, and with the footnote references written as brackets.
A footnote reference with no definition yet holds everything after it until the end, so
the markers after one are checked only if their text can be shown; in the last variant every
marker is checked as it arrives.
"""

from __future__ import annotations

import gc
import random
import sys
import time
from collections.abc import Callable

from _harness import Figure

from unicite import Source
from unicite.markers import MARKER_RE, MarkerStream, parse_markers

WORDS = [
    *("the", "river", "city", "north", "garden", "stone", "light", "report", "shows", "that"),
    *("about", "most", "people", "early", "data", "bridge", "steel", "traffic", "opened"),
    *("during", "years", "after"),
]
SOURCES = [Source(id=f"s{n}", url=f"https://source{n}.example/page") for n in range(1, 21)]
SIZES = (2_000, 6_300, 20_000, 63_000, 200_000)


def answer(words: int, seed: int = 7) -> str:
    """An answer of ``words`` words (markers not counted) with one marker per 40 words."""
    rng = random.Random(seed)
    parts: list[str] = []
    count = 0
    due = 40
    markers = ("[{a}]", "[{a}, {b}]", "[[S:{a}]]", "[{a}][{b}]", "[^{a}]")
    while count < words:
        block = rng.random()
        if block < 0.05:
            parts.append("```python\nvalues = items[1] + items[2]\n```\n\n")
            count += 5
            continue
        sentences = []
        for _ in range(rng.randint(2, 5)):
            n = min(rng.randint(8, 16), max(1, words - count))
            sentence = " ".join(rng.choice(WORDS) for _ in range(n)).capitalize()
            if rng.random() < 0.15:
                sentence += " with `code[3]` inline"
                n += 3
            count += n
            if count >= due:
                due += 40
                a = rng.randint(1, 20)
                b = a % 20 + 1
                sentence += " " + rng.choice(markers).format(a=a, b=b)
            sentences.append(sentence + ".")
            if count >= words:
                break
        if block < 0.25:
            parts.append("\n".join("- " + s for s in sentences) + "\n\n")
        else:
            parts.append(" ".join(sentences) + "\n\n")
    return "".join(parts) + "[[USAGE:1,2,3]]"


def best_times(fns: list[Callable[[], object]], rounds: int, number: int = 1) -> list[float]:
    """Seconds per call of each function: the fastest of ``rounds`` interleaved rounds.

    Interleaving exposes every function to the same machine load; the minimum is the least
    disturbed run (on a shared machine noise only ever adds time).
    """
    for fn in fns:
        fn()  # warm up imports and caches of compiled patterns
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[k] = min(best[k], (time.perf_counter() - start) / number)
    return best


def bounded_caches() -> list[Callable[[], None]]:
    """The ``cache_clear`` of every bounded cache (`functools.lru_cache`) unicite keeps.

    Each loaded module of the package is searched, once, before any clock starts: a cache
    added or renamed later is found too.
    """
    found: dict[int, Callable[[], None]] = {}
    for name, module in list(sys.modules.items()):
        if name != "unicite" and not name.startswith("unicite."):
            continue
        for value in list(vars(module).values()):
            owner = getattr(value, "__module__", None) or ""
            clear = getattr(value, "cache_clear", None)
            if owner.startswith("unicite") and callable(clear) and hasattr(value, "cache_info"):
                found[id(value)] = clear
    return list(found.values())


CACHES = bounded_caches()


def cold() -> None:
    """Empty unicite's caches: each timed call segments its text, as for a new answer."""
    for clear in CACHES:
        clear()


def parse(text: str) -> None:
    cold()  # time the segmentation too, not a cache hit
    parse_markers(text, SOURCES)


def run() -> list[Figure]:
    # What earlier benchmarks of the run left alive (frameworks, caches) is set aside, so that
    # the collector's passes over it do not weigh on the largest texts more than on the rest.
    gc.collect()
    gc.freeze()
    try:
        return _run()
    finally:
        gc.unfreeze()


def _run() -> list[Figure]:
    figures: list[Figure] = []
    per_word: dict[int, tuple[float, float]] = {}
    for size in SIZES:
        text = answer(size)
        words = size
        cited = len(parse_markers(text, SOURCES).citations)
        took, floor = best_times(
            [
                lambda text=text: parse(text),
                lambda text=text: sum(1 for _ in MARKER_RE.finditer(text)),
            ],
            rounds=7 if size <= 20_000 else 3,
            number=max(1, 20_000 // size),
        )
        per_word[size] = (took / words * 1e3, floor / words * 1e3)
        if size == 20_000:
            figures.append(
                Figure(
                    name=f"parse {words:,} words with {cited} markers",
                    value=took * 1e3,
                    unit="ms",
                    baseline=floor * 1e3,
                    baseline_name="one MARKER_RE.finditer pass (no validation, no claims)",
                    target="≤ 3×",
                    note="the ratio is the cost of reading, validating and numbering each "
                    "marker and of segmenting the text into claims",
                )
            )
        figures.append(
            Figure(
                name=f"time per 1,000 words at {words:,} words",
                value=per_word[size][0] * 1e3,
                unit="ms",
                baseline=per_word[size][1] * 1e3,
                baseline_name="MARKER_RE.finditer per 1,000 words",
            )
        )
    small, large = per_word[SIZES[0]], per_word[SIZES[-1]]
    figures.append(
        Figure(
            name=f"per-word cost, {SIZES[-1]:,} vs {SIZES[0]:,} words (1.0 = linear)",
            value=large[0] / small[0],
            unit="×",
            baseline=large[1] / small[1],
            baseline_name="the same ratio for the regex pass",
            target="≤ 1.5× (linear)",
        )
    )

    text = answer(20_000)
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    bracketed = text.replace("[^", "[")
    bracket_chunks = [bracketed[i : i + 4] for i in range(0, len(bracketed), 4)]

    def streamed(pieces: list[str], **options: bool) -> None:
        cold()
        stream = MarkerStream(SOURCES, **options)
        for chunk in pieces:
            stream.feed(chunk)
        stream.close()

    whole, stream_time, plain_time, bracket_whole, bracket_time = best_times(
        [
            lambda: parse(text),
            lambda: streamed(chunks),
            lambda: streamed(chunks, renumber=False),
            lambda: parse(bracketed),
            lambda: streamed(bracket_chunks),
        ],
        rounds=3,
    )
    figures.append(
        Figure(
            name=f"MarkerStream, 20,000 words in {len(chunks):,} 4-char chunks",
            value=stream_time * 1e3,
            unit="ms",
            baseline=whole * 1e3,
            baseline_name="parse_markers on the whole text (the stream ends with one)",
            target="< 3× (per-chunk work stays small)",
            note="renumbering: the markers shown carry their final numbers",
        )
    )
    figures.append(
        Figure(
            name="MarkerStream without renumbering, same chunks",
            value=plain_time * 1e3,
            unit="ms",
            baseline=whole * 1e3,
            baseline_name="parse_markers on the whole text",
            target="< 3× (per-chunk work stays small)",
        )
    )
    figures.append(
        Figure(
            name="MarkerStream, footnote references written as brackets",
            value=bracket_time * 1e3,
            unit="ms",
            baseline=bracket_whole * 1e3,
            baseline_name="parse_markers on that text",
            note="every marker is checked (code, URL) as it arrives, to number it",
        )
    )
    return figures
