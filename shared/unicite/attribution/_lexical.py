"""The local attributor: lexical support of claims by source passages, best passage located.

Each source's text is split once into units (sentences, long ones cut) and tokenized; claims
are matched against windows of up to `WINDOW` consecutive units. The score combines BM25-style
weighted token coverage, bigram and character n-gram coverage, numbers and named entities that
must match, and rapidfuzz similarity; `_calibration` turns it into a probability.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from unicite.attribution import _calibration as cal

__all__ = [
    "FEATURES",
    "ClaimTerms",
    "Match",
    "SourceIndex",
    "claim_terms",
    "clear_cache",
    "index_source",
    "score",
]

PREFIX = 6
"""Tokens are cut to this many characters: a cheap stemmer that works for most languages."""
WINDOW = 3
"""A passage is a window of up to this many consecutive sentences."""
CANDIDATES = 4
"""Units with the best term overlap from which windows are grown, per claim and source."""
GROUP = 16
"""Claims scored together: they share one pass over the sources' units."""
MAX_UNIT_CHARS = 400
"""Sentences longer than this (tables, run-on text) are cut at spaces into pieces."""

FEATURES = cal.FEATURES

# Scripts written without spaces between words are tokenized as character bigrams.
_SPACELESS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029"
    "\u3031-\u303c\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
)
_TOKEN_RE = re.compile(f"([^\\W{_SPACELESS}]{{1,{PREFIX}}})[^\\W{_SPACELESS}]*")
_SPACELESS_RE = re.compile(f"[{_SPACELESS}]")
_BIGRAM_RE = re.compile(
    f"(?=([{_SPACELESS}]{{2}}))|(?<![{_SPACELESS}])([{_SPACELESS}])(?![{_SPACELESS}])"
)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE_RE = re.compile(r"\s+")
_ENTITY_RE = re.compile(r"(?<![.!?:]\s)(?<!^)\b[^\W\d_a-z][\w'\u2019-]*")
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nor|cannot|can't|won't|isn't|aren't|wasn't|weren't|doesn't|don't"
    r"|didn't|unclear|unknown|neither|without|nicht|kein\w*|nie|pas|jamais|sin|nunca|não)\b",
    re.IGNORECASE,
)
_HEDGE_RE = re.compile(
    r"\b(?:unclear|debate[ds]?|controversial|depends|may vary|varies|it is (?:important|essential)"
    r"|what do you think|in (?:summary|conclusion|general)|overall|generally|typically"
    r"|some (?:people|argue|believe)|others (?:argue|believe)|i (?:think|believe|would)"
    r"|you (?:should|can|may|might)|recommended|consider)\b",
    re.IGNORECASE,
)

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves may
might must shall us also however thus therefore although though via per etc one ones s t d ll m
re ve der die das den dem des ein eine einer eines einem und oder aber ist sind war waren wird
werden mit von zu im in auf für nicht auch als wie bei aus nach um es sie er wir ihr le la les
un une des du de et ou mais est sont était été dans pour par sur avec pas plus que qui ce cette
ces il elle ils elles nous vous au aux en el los las unos unas y o pero es son era fue en por
para con sin que se del al lo su sus o os as um uma e ou mas é são foi em por para com não que
se do da dos das no na nos nas ao il lo gli una di da e o ma è sono era in per con non che si
del della dei delle nel
"""
# Function words of English, German, French, Spanish, Portuguese and Italian.
_STOPWORDS = frozenset(word[:PREFIX] for word in _STOPWORD_TEXT.split())


@dataclass(slots=True)
class SourceIndex:
    """One source text split into units and tokenized, ready to match claims against."""

    text: str
    units: list[tuple[int, int]]
    """``(start, end)`` of each unit (a sentence, or a piece of a long one) in `text`."""
    tokens: list[list[str]]
    """Each unit's normalized tokens, in order (lists: cheaper to build than sets, and as
    quick to intersect a claim's terms with)."""
    sizes: list[int]
    """Each unit's number of tokens."""
    spaceless: bool
    """The text has scripts written without spaces (tokenized as character bigrams)."""
    _numbers: frozenset[str] | None = None

    @property
    def numbers(self) -> frozenset[str]:
        """The numbers of two or more digits in the text (read on first use)."""
        numbers = self._numbers
        if numbers is None:
            numbers = self._numbers = _numbers(_normalize(self.text))
        return numbers


@dataclass(slots=True)
class ClaimTerms:
    """What a claim is matched with: its content terms, bigrams, numbers and entities."""

    text: str
    low: str
    terms: tuple[str, ...]
    bigrams: frozenset[tuple[str, str]]
    grams: frozenset[str]
    numbers: frozenset[str]
    entities: frozenset[str]
    negated: bool
    hedged: bool


@dataclass(frozen=True, slots=True)
class Match:
    """How well one source supports one claim, and where."""

    probability: float
    start: int
    """Start of the best-supporting passage in the source text."""
    end: int
    """End of the best-supporting passage in the source text."""
    features: tuple[float, ...] = ()
    score: float = 0.0
    """The model's raw score (before calibration)."""
    coverage: float = 0.0
    """Weighted share of the claim's terms the passage covers."""

    @property
    def strength(self) -> tuple[float, float, float]:
        """What ranks sources for one claim: the probability, then finer grades of support.

        The calibrated probability is a step function, so sources often tie on it; the raw
        score and the coverage order them (the strongest is cited first, and quoted).
        """
        return self.probability, self.score, self.coverage


# --- tokenization -------------------------------------------------------------------------------


def _tokens(low: str, start: int, end: int, spaceless: bool) -> list[str]:
    tokens = _TOKEN_RE.findall(low, start, end)
    if spaceless:
        tokens.extend(a or b for a, b in _BIGRAM_RE.findall(low, start, end))
    return tokens


def _normalize(text: str) -> str:
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text


def _numbers(text: str) -> frozenset[str]:
    found = set()
    for raw in _NUMBER_RE.findall(text):
        digits = raw.replace(",", "").replace(".", "")
        if len(digits) >= 2:
            found.add(digits.lstrip("0") or "0")
    return frozenset(found)


_BREAKS = ("\n", ". ", "? ", "! ", "\u2026 ", ".\t", "\u3002", "\uff01", "\uff1f")
_SENTINELS = ("\x00", "\x01", "\ufdd0", "\ufdd1")


def _units(text: str) -> list[tuple[int, int]]:
    """Sentence spans (trimmed), cut at line breaks and sentence punctuation.

    Plain string operations in C (replace, split, strip) rather than a regex: this runs over
    every source text and is much of the cost of indexing it.
    """
    sentinel = next((s for s in _SENTINELS if s not in text), None)
    if sentinel is None:  # every sentinel occurs in the text: lines are the units
        pieces = text.split("\n")
        gap = 1
    else:
        marked = text
        for mark in _BREAKS:
            # A one-character search is a memchr; a two-character one scans far slower.
            if mark[0] in marked:
                marked = marked.replace(mark, mark + sentinel)
        pieces = marked.split(sentinel)
        gap = 0
    spans: list[tuple[int, int]] = []
    at = 0
    lefts = map(len, map(str.lstrip, pieces))
    rights = map(len, map(str.rstrip, pieces))
    for size, left, right in zip(map(len, pieces), lefts, rights, strict=True):
        start = at + size - left
        end = at + right
        at += size + gap
        while end - start > MAX_UNIT_CHARS:
            cut = text.rfind(" ", start + MAX_UNIT_CHARS // 2, start + MAX_UNIT_CHARS)
            cut = cut if cut > start else start + MAX_UNIT_CHARS
            spans.append((start, cut))
            start = cut + len(text[cut:end]) - len(text[cut:end].lstrip())
        if end > start:
            spans.append((start, end))
    return spans


# ASCII bytes to word bytes: letters lowered, digits and "_" kept, every other byte a space,
# so splitting at spaces gives the words of `_TOKEN_RE` (uncut) in the lowered text.
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 or c == 95 else 32
    for c in range(256)
)
_CUT = operator.itemgetter(slice(None, PREFIX))


def _build_index(text: str) -> SourceIndex:
    # Offsets stay in the caller's text; only the tokens see the normalized form.
    units = _units(text)
    kept: list[tuple[int, int]] = []
    sizes: list[int] = []
    tokens: list[list[str]] = []
    if text.isascii():
        # Plain string operations in C: this runs over every source and is most of its cost.
        words = text.encode("ascii").translate(_ASCII_WORDS).decode("ascii")
        for a, b in units:
            found = words[a:b].split()
            if found:
                kept.append((a, b))
                sizes.append(len(found))
                tokens.append(list(map(_CUT, found)))
        return SourceIndex(text, kept, tokens, sizes, False)
    spaceless = _SPACELESS_RE.search(text) is not None
    low = text.lower()
    fast = len(low) == len(text) and unicodedata.is_normalized("NFKC", text)
    for a, b in units:
        if fast:
            toks = _tokens(low, a, b, spaceless)
        else:
            piece = _normalize(text[a:b]).lower()
            toks = _tokens(piece, 0, len(piece), spaceless)
        if toks:
            kept.append((a, b))
            sizes.append(len(toks))
            tokens.append(toks)
    return SourceIndex(text, kept, tokens, sizes, spaceless)


class _IndexCache:
    """Recently indexed source texts, bounded by their total length (thread-safe)."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._used = 0
        self._items: OrderedDict[str, SourceIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> SourceIndex:
        with self._lock:
            found = self._items.get(text)
            if found is not None:
                self._items.move_to_end(text)
                return found
        built = _build_index(text)
        with self._lock:
            if text not in self._items and len(text) <= self._budget:
                self._items[text] = built
                self._used += len(text)
                while self._used > self._budget:
                    old, _ = self._items.popitem(last=False)
                    self._used -= len(old)
        return built

    def clear(self) -> None:
        """Forget every cached index."""
        with self._lock:
            self._items.clear()
            self._used = 0


# About 200 sources of 1,000 words; an index takes some ten times its text in memory.
_CACHE = _IndexCache(budget=1_200_000)


def clear_cache() -> None:
    """Forget the cached source indexes (they are rebuilt on demand)."""
    _CACHE.clear()


def index_source(text: str) -> SourceIndex:
    """Index a source text (cached: attributing and verifying against it costs one indexing)."""
    return _CACHE.get(text)


def claim_terms(text: str) -> ClaimTerms:
    """Prepare a claim for matching."""
    text = _normalize(text)
    low = text.lower()
    spaceless = _SPACELESS_RE.search(low) is not None
    seq = _tokens(low, 0, len(low), spaceless)
    terms = tuple(dict.fromkeys(t for t in seq if t not in _STOPWORDS))
    flat = " ".join(_SPACE_RE.split(low)).strip()
    entities = {
        m.group()[:PREFIX].lower()
        for m in _ENTITY_RE.finditer(text)
        if m.group()[:PREFIX].lower() not in _STOPWORDS
    }
    return ClaimTerms(
        text=text,
        low=flat,
        terms=terms,
        bigrams=frozenset(itertools.pairwise(seq)),
        grams=frozenset(flat[i : i + 4] for i in range(len(flat) - 3)),
        numbers=_numbers(text),
        entities=frozenset(entities),
        negated=_NEGATION_RE.search(text) is not None,
        hedged=_HEDGE_RE.search(text) is not None,
    )


# --- scoring ------------------------------------------------------------------------------------


class _Query:
    """Every claim term of one call as a bit, with its BM25 inverse document frequency.

    The claims' entities that are not terms get bits after the terms' (their weights go
    unused): which sources hold them is read from the same masks.
    """

    def __init__(self, claims: Sequence[ClaimTerms]) -> None:
        self.bit: dict[str, int] = {}
        for claim in claims:
            for term in claim.terms:
                self.bit.setdefault(term, len(self.bit))
        for claim in claims:
            for entity in claim.entities:
                self.bit.setdefault(entity, len(self.bit))
        self.terms = frozenset(self.bit)
        self.weights: list[float] = []
        self.sums: dict[int, float] = {}

    def set_weights(self, df: list[int], units: int) -> None:
        """Set each term's IDF from its unit frequency over all sources of the call."""
        self.weights = [math.log(1.0 + (units - n + 0.5) / (n + 0.5)) for n in df]

    def mask(self, terms: Sequence[str]) -> int:
        """The bit mask of a claim's terms."""
        out = 0
        for term in terms:
            out |= 1 << self.bit[term]
        return out

    def weight(self, mask: int) -> float:
        """Summed weight of the terms in `mask`, in bit order (a run-independent float)."""
        got = self.sums.get(mask)
        if got is None:
            got = 0.0
            rest = mask
            weights = self.weights
            while rest:
                low = rest & -rest
                got += weights[low.bit_length() - 1]
                rest ^= low
            self.sums[mask] = got
        return got


class _Hits:
    """For one source: each unit's query terms as a mask, and the mask of the whole source."""

    __slots__ = ("masks", "present")

    def __init__(self, index: SourceIndex, query: _Query, df: list[int]) -> None:
        masks = [0] * len(index.tokens)
        present = 0
        terms = query.terms
        bit = query.bit
        for n, unit in enumerate(index.tokens):
            hit = terms.intersection(unit)
            if hit:
                mask = 0
                for term in hit:
                    position = bit[term]
                    mask |= 1 << position
                    df[position] += 1
                masks[n] = mask
                present |= mask
        self.masks = masks
        self.present = present


def _best_window(
    claim_mask: int, total: float, hits: _Hits, query: _Query, floor: float
) -> tuple[float, int, int]:
    """Weighted term coverage of the best window, and its first and last unit (inclusive).

    Windows of up to `WINDOW` units are grown around the `CANDIDATES` units whose claim terms
    weigh most; a window's terms are the OR of its units' masks. When even the `WINDOW` best
    units together cover less than `floor`, no window can, and ``(0.0, 0, 0)`` is returned.
    """
    masks = hits.masks
    sums = query.sums
    scored = []
    for n, mask in enumerate(masks):
        mask &= claim_mask
        if mask:
            value = sums.get(mask)
            scored.append((query.weight(mask) if value is None else value, n))
    if not scored:
        return 0.0, 0, 0
    scored.sort(key=lambda item: (-item[0], item[1]))
    if floor > 0.0 and sum(v for v, _ in scored[:WINDOW]) < floor * total:
        return 0.0, 0, 0
    last = len(masks) - 1
    best_value, best_lo, best_hi = -1.0, 0, 0
    for _, unit in scored[:CANDIDATES]:
        for lo in range(unit - WINDOW + 1 if unit >= WINDOW else 0, unit + 1):
            mask = 0
            top = lo + WINDOW - 1 if lo + WINDOW - 1 < last else last
            for hi in range(lo, top + 1):
                mask |= masks[hi]
                if hi < unit:
                    continue
                mine = mask & claim_mask
                value = sums.get(mine)
                value = (query.weight(mine) if value is None else value) / total
                # A wider window must cover strictly more to win: the tightest passage is kept.
                if value > best_value or (
                    value == best_value and (hi - lo, lo) < (best_hi - best_lo, best_lo)
                ):
                    best_value, best_lo, best_hi = value, lo, hi
    return best_value, best_lo, best_hi


def _cheap_features(
    claim: ClaimTerms,
    weights: list[float],
    total: float,
    index: SourceIndex,
    window: tuple[float, int, int],
    held: int,
    bit: dict[str, int],
) -> list[float]:
    """Every feature that needs no passage text; the passage features are left at 0.

    `held` is the mask of the query's terms and entities found anywhere in the source.
    """
    coverage, lo, hi = window
    present = 0.0
    run = longest = 0
    for term, weight in zip(claim.terms, weights, strict=True):
        if held >> bit[term] & 1:
            present += weight
            run = 0
        else:
            run += 1
            longest = max(longest, run)
    numbers = claim.numbers
    entities = claim.entities
    size = sum(index.sizes[lo : hi + 1])
    return [
        coverage,
        present / total,
        0.0,
        0.0,
        0.0,
        0.0,
        len(numbers - index.numbers) / len(numbers) if numbers else 0.0,
        1.0 if numbers else 0.0,
        sum(not held >> bit[e] & 1 for e in entities) / len(entities) if entities else 0.0,
        0.0,
        1.0 if claim.hedged else 0.0,
        math.log1p(len(claim.terms)),
        math.log1p(size),
        math.log1p(longest),
    ]


_BIGRAMS, _CHARGRAMS, _PARTIAL, _TOKEN_SET, _NEGATION = (
    cal.FEATURES.index(name) for name in cal.PASSAGE_FEATURES
)


def _passage_features(
    claim: ClaimTerms,
    index: SourceIndex,
    lo: int,
    hi: int,
    values: list[float],
    model: cal.Model,
    prune: bool,
) -> bool:
    """Fill in the passage features, cheapest first; stop early once the threshold is out of reach.

    Returns:
        Whether every feature was computed (False: pruned, the pair cannot be cited).
    """
    pending = [_BIGRAMS, _NEGATION, _CHARGRAMS, _PARTIAL, _TOKEN_SET]
    start, end = index.units[lo][0], index.units[hi][1]
    low = _normalize(index.text[start:end]).lower()
    if claim.bigrams:
        window_tokens = _tokens(low, 0, len(low), index.spaceless)
        hits = claim.bigrams.intersection(itertools.pairwise(window_tokens))
        values[_BIGRAMS] = len(hits) / len(claim.bigrams)
    pending.remove(_BIGRAMS)
    if prune and model.upper_bound(values, pending) < model.threshold:
        return False
    passage = " ".join(low.split())
    values[_NEGATION] = 1.0 if claim.negated and _NEGATION_RE.search(passage) is None else 0.0
    pending.remove(_NEGATION)
    if claim.grams:
        values[_CHARGRAMS] = sum(map(passage.__contains__, claim.grams)) / len(claim.grams)
    pending.remove(_CHARGRAMS)
    if prune and model.upper_bound(values, pending) < model.threshold:
        return False
    values[_PARTIAL] = fuzz.partial_ratio(claim.low, passage) / 100.0
    pending.remove(_PARTIAL)
    if prune and model.upper_bound(values, pending) < model.threshold:
        return False
    values[_TOKEN_SET] = fuzz.token_set_ratio(claim.low, passage) / 100.0
    return True


def score(
    claims: Sequence[ClaimTerms],
    indexes: Sequence[SourceIndex],
    *,
    exhaustive: bool = False,
    keep_features: bool = False,
) -> list[list[Match | None]]:
    """Score every claim against every source.

    Args:
        claims: Prepared claims.
        indexes: Indexed sources.
        exhaustive: Score every pair; otherwise a pair is dropped (``None``) as soon as its
            features computed so far rule out the citation threshold, whatever the rest are.
        keep_features: Keep each match's feature vector (for fitting).

    Returns:
        ``result[claim][source]``: the best match, or None when the claim shares no term with
        the source or (unless exhaustive) cannot reach the threshold.
    """
    out: list[list[Match | None]] = []
    # Claims go in groups so the term masks stay small ints: linear in the number of claims.
    for first in range(0, len(claims), GROUP):
        out.extend(_score_group(claims[first : first + GROUP], indexes, exhaustive, keep_features))
    return out


def _score_group(
    claims: Sequence[ClaimTerms],
    indexes: Sequence[SourceIndex],
    exhaustive: bool,
    keep_features: bool,
) -> list[list[Match | None]]:
    query = _Query(claims)
    df = [0] * len(query.bit)
    hits = [_Hits(index, query, df) for index in indexes]
    query.set_weights(df, sum(len(index.units) for index in indexes))
    model = cal.MODEL
    prune = not exhaustive
    floor = model.min_coverage
    out: list[list[Match | None]] = []
    for claim in claims:
        row: list[Match | None] = []
        claim_mask = query.mask(claim.terms)
        claim_weights = [query.weights[query.bit[t]] for t in claim.terms]
        total = query.weight(claim_mask)
        for index, hit in zip(indexes, hits, strict=True):
            shared = hit.present & claim_mask
            # The best window covers at most what the whole source covers.
            if total <= 0.0 or not shared or (prune and query.weight(shared) / total < floor):
                row.append(None)
                continue
            window = _best_window(claim_mask, total, hit, query, floor if prune else 0.0)
            if window[0] <= 0.0 or (prune and window[0] < floor):
                row.append(None)
                continue
            values = _cheap_features(
                claim, claim_weights, total, index, window, hit.present, query.bit
            )
            if prune and model.upper_bound(values) < model.threshold:
                row.append(None)
                continue
            _, lo, hi = window
            if not _passage_features(claim, index, lo, hi, values, model, prune):
                row.append(None)
                continue
            start, end = index.units[lo][0], index.units[hi][1]
            features = tuple(values) if keep_features else ()
            raw = model.score(values)
            row.append(Match(model.probability(values, raw), start, end, features, raw, values[0]))
        out.append(row)
    return out
