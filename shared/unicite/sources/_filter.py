"""`filter_content`: drop near-duplicate pages (shingles, MinHash LSH), optionally staler ones."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._ledger import as_source

__all__ = ["filter_content", "jaccard", "shingles"]

_BINS = 64  # one-permutation MinHash: 64 bins of one hash pass
_RECALL = 0.999  # LSH bands are sized so a pair at the threshold is compared at least this often
_WORD_RE = re.compile(r"\w+")
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _hash(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def shingles(text: str, size: int = 5) -> frozenset[int]:
    """Hashed word `size`-grams of a text (casefolded); a short text is one shingle."""
    words = _WORD_RE.findall(text.casefold())
    if not words:
        return frozenset()
    if len(words) <= size:
        return frozenset({_hash(" ".join(words))})
    return frozenset(_hash(" ".join(words[i : i + size])) for i in range(len(words) - size + 1))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """Jaccard similarity of two shingle sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    common = sum(1 for x in small if x in large)
    return common / (len(a) + len(b) - common)


def _signature(hashes: frozenset[int]) -> list[int]:
    """One-permutation MinHash with rotation densification (Shrivastava and Li, 2014)."""
    bins = [-1] * _BINS
    for value in hashes:
        slot, rest = value % _BINS, value // _BINS
        if bins[slot] < 0 or rest < bins[slot]:
            bins[slot] = rest
    # An empty bin borrows the next filled bin to its right (circularly), offset by distance.
    signature = [0] * _BINS
    following = next(i for i in range(2 * _BINS - 1, -1, -1) if bins[i % _BINS] >= 0)
    for position in range(2 * _BINS - 1, -1, -1):
        if bins[position % _BINS] >= 0:
            following = position
        if position < _BINS:
            distance = following - position
            signature[position] = (bins[following % _BINS] + distance * _GOLDEN) & _MASK
    return signature


def _rows_per_band(threshold: float) -> int:
    """The most rows per LSH band that still find pairs at `threshold` with `_RECALL`.

    More rows mean fewer chance collisions to verify; fewer rows catch looser matches.
    16 bands of 4 rows suit the default 0.8; 32 bands of 2 rows suit 0.5.
    """
    for rows in (8, 4, 2):
        if 1 - (1 - threshold**rows) ** (_BINS // rows) >= _RECALL:
            return rows
    return 1


def _bands(signature: list[int], rows: int) -> list[tuple[int, ...]]:
    return [(band, *signature[band * rows : (band + 1) * rows]) for band in range(_BINS // rows)]


def _freshness(source: Source) -> datetime | None:
    dates = [d for d in (source.modified_at, source.published_at) if d is not None]
    if not dates:
        return None
    return max(d if d.tzinfo is not None else d.replace(tzinfo=timezone.utc) for d in dates)


def _fresher(candidate: Source, kept: Source) -> bool:
    new, old = _freshness(candidate), _freshness(kept)
    return new is not None and (old is None or new > old)


def filter_content(
    sources: Sequence[Source | Mapping[str, Any]],
    *,
    threshold: float = 0.8,
    prefer_fresh: bool = False,
    shingle_size: int = 5,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """Drop near-duplicates: sources whose text is nearly the same as an earlier one's.

    Each source's `content` (its `snippet` when it has no content) is cut into word
    `shingle_size`-grams; two sources are near-duplicates when the Jaccard similarity of their
    shingle sets is at least `threshold`. Each group keeps one member, at the position of its
    first member; the kept source lists the ids it stands for in ``extras["near_duplicates"]``.
    Sources without text are always kept.

    Candidate pairs come from MinHash signatures banded into LSH buckets, so the work stays
    near linear in the number of sources; each candidate is confirmed with the exact
    similarity, so nothing is dropped by a chance collision. A pair right at a threshold of
    0.15 or more escapes comparison with probability under 0.1% (identical texts never do);
    hashes are fixed, so the result is reproducible.

    Args:
        sources: `Source` objects or dicts with the same keys.
        threshold: Similarity in (0, 1] from which two texts count as the same.
        prefer_fresh: Keep the group member with the latest `modified_at` / `published_at`
            (naive times taken as UTC) instead of the first one; undated members never win.
        shingle_size: Words per shingle; smaller catches looser rewrites.
        diagnostics: A list to append one line per dropped source to.

    Returns:
        The kept sources, in input order. Deterministic.

    Raises:
        UsageError: `threshold` or `shingle_size` is out of range.
    """
    if isinstance(threshold, bool) or not 0.0 < threshold <= 1.0:
        raise UsageError(f"threshold must be in (0, 1], got {threshold!r}")
    if isinstance(shingle_size, bool) or not isinstance(shingle_size, int) or shingle_size < 1:
        raise UsageError(f"shingle_size must be a positive integer, got {shingle_size!r}")
    items = [as_source(s) for s in sources]
    rows = _rows_per_band(threshold)
    kept: list[Source] = []
    kept_shingles: list[frozenset[int]] = []
    merged: list[list[str]] = []
    buckets: dict[tuple[int, ...], list[int]] = {}
    for source in items:
        text = source.content or source.snippet
        hashes = shingles(text, shingle_size) if text else frozenset()
        if not hashes:
            kept.append(source)
            kept_shingles.append(hashes)
            merged.append([])
            continue
        bands = _bands(_signature(hashes), rows)
        candidates = sorted({slot for band in bands for slot in buckets.get(band, ())})
        best, best_score = -1, 0.0
        for slot in candidates:
            score = jaccard(hashes, kept_shingles[slot])
            if score >= threshold and score > best_score:
                best, best_score = slot, score
        if best < 0:
            best = len(kept)
            kept.append(source)
            kept_shingles.append(hashes)
            merged.append([])
        else:
            loser = source
            if prefer_fresh and _fresher(source, kept[best]):
                loser, kept[best], kept_shingles[best] = kept[best], source, hashes
            merged[best].append(loser.id)
            if diagnostics is not None:
                diagnostics.append(
                    f"filter_content: dropped {loser.id} ({loser.url or loser.title or 'untitled'})"
                    f" as a near-duplicate (similarity {best_score:.2f}) of {kept[best].id}"
                )
        for band in bands:
            slots = buckets.setdefault(band, [])
            if best not in slots:
                slots.append(best)
    return [
        s.model_copy(update={"extras": {**s.extras, "near_duplicates": ids}}) if ids else s
        for s, ids in zip(kept, merged, strict=True)
    ]
