"""`verify()`: re-check every citation of an answer against the text of the sources it cites.

A quote must be found in a cited source (HTML entities decoded, ``...`` truncation and
whitespace, case or punctuation differences tolerated, small edits matched fuzzily); the claim
gets a calibrated support score either way. Quotes that cannot be found and claims without
support are listed in the diagnostics.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from unicite._text import truncate
from unicite._urls import normalize_url
from unicite.attribution import _calibration as cal
from unicite.attribution import _lexical as lexical
from unicite.attribution._attribute import source_text
from unicite.attribution._claims import claim_text, split_claims
from unicite.attribution._scorers import Scorer, blend
from unicite.exceptions import UsageError
from unicite.model import Citation, CitedAnswer, Source
from unicite.sources import as_source

__all__ = ["QuoteMatch", "find_quote", "verify"]

QUOTE_CUTOFF = 0.9
"""Least similarity (0..1) for a quote fragment that is not found verbatim to count as found."""
_MIN_FRAGMENT_WORDS = 1

_ELLIPSIS_RE = re.compile(r"\s*(?:\[\s*(?:\.{3}|\u2026)\s*\]|\.{3,}|\u2026)\s*")
_WORD_RE = re.compile(r"\w+")
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """Where a quote was found in a source text, and how closely it matched (1.0: exactly)."""

    found: bool
    similarity: float
    start: int = 0
    end: int = 0


def _clean_quote(quote: str) -> str:
    quote = html.unescape(html.unescape(quote))  # some providers escape twice (&amp;#x27;)
    quote = unicodedata.normalize("NFKC", quote)
    return quote.strip().strip(_QUOTES).strip()


def _fragments(quote: str) -> list[str]:
    return [
        piece
        for piece in _ELLIPSIS_RE.split(quote)
        if len(_WORD_RE.findall(piece)) >= _MIN_FRAGMENT_WORDS
    ]


def _token_pattern(fragment: str) -> re.Pattern[str] | None:
    """Tokens of the fragment separated by any non-word run; its edges may be cut mid-word."""
    words = _WORD_RE.findall(fragment)
    if not words:
        return None
    body = r"[\W_]+".join(re.escape(word) for word in words)
    return re.compile(body, re.IGNORECASE)


def _fuzzy(fragment: str, text: str) -> QuoteMatch:
    """Best approximate occurrence, searched among the passages sharing its words."""
    index = lexical.index_source(text)
    terms = lexical.claim_terms(fragment)
    match = lexical.score([terms], [index], exhaustive=True)[0][0]
    if match is None:
        return QuoteMatch(False, 0.0)
    # Widen by one unit on each side: a quote may straddle the located window's edges.
    units = index.units
    first = next((n for n, (a, b) in enumerate(units) if b > match.start), 0)
    last = next((n for n in range(len(units) - 1, -1, -1) if units[n][0] < match.end), first)
    lo = units[max(0, first - 1)][0]
    hi = units[min(len(units) - 1, last + 1)][1]
    needle = " ".join(fragment.lower().split())
    got = fuzz.partial_ratio_alignment(needle, text[lo:hi].lower())
    if got is None:
        return QuoteMatch(False, 0.0)
    similarity = got.score / 100.0
    return QuoteMatch(
        similarity >= QUOTE_CUTOFF, similarity, lo + got.dest_start, lo + got.dest_end
    )


def find_quote(quote: str, text: str) -> QuoteMatch:
    """Find a quote in a source text, fragment by fragment when it was cut with ``...``.

    Args:
        quote: The quoted text as the provider gave it (HTML entities are decoded).
        text: The source's text.

    Returns:
        Whether every fragment was found (in order), the weakest fragment's similarity, and
        the span from the first fragment's start to the last one's end.
    """
    cleaned = _clean_quote(quote)
    fragments = _fragments(cleaned)
    if not fragments:
        return QuoteMatch(False, 0.0)
    if "&" in text and ";" in text:
        unescaped = html.unescape(text)
        if len(unescaped) != len(text):
            # Offsets would no longer point into the source; match, but report no span.
            found = find_quote(cleaned, unescaped)
            return QuoteMatch(found.found, found.similarity)
    position = 0
    start = end = -1
    weakest = 1.0
    for fragment in fragments:
        at = text.find(fragment, position)
        if at >= 0:
            hit = QuoteMatch(True, 1.0, at, at + len(fragment))
        else:
            pattern = _token_pattern(fragment)
            m = pattern.search(text, position) if pattern is not None else None
            if m is not None:
                hit = QuoteMatch(True, 1.0, m.start(), m.end())
            else:
                rest = _fuzzy(fragment, text[position:])
                hit = QuoteMatch(
                    rest.found, rest.similarity, rest.start + position, rest.end + position
                )
        weakest = min(weakest, hit.similarity)
        if not hit.found:
            return QuoteMatch(False, weakest)
        if start < 0:
            start = hit.start
        end = max(end, hit.end)
        position = max(position, hit.end) if hit.start >= position else position
    return QuoteMatch(True, weakest, start, end)


# --- verify -------------------------------------------------------------------------------------


def _extra_sources(
    sources: Iterable[Source | Mapping[str, Any]] | None,
) -> tuple[dict[str, Source], dict[str, Source]]:
    by_id: dict[str, Source] = {}
    by_url: dict[str, Source] = {}
    if sources is None:
        return by_id, by_url
    if isinstance(sources, (str, bytes, Mapping, Source)) or not isinstance(sources, Iterable):
        raise UsageError(
            f"sources must be a list of Source objects or dicts, got {type(sources).__name__}"
        )
    for item in sources:
        source = as_source(item)
        if source_text(source) is None:
            continue
        by_id.setdefault(source.id, source)
        if source.url:
            by_url.setdefault(normalize_url(source.url), source)
    return by_id, by_url


def _text_for(
    source: Source, by_id: dict[str, Source], by_url: dict[str, Source]
) -> tuple[str, str] | None:
    own = source_text(source)
    if own is not None and own[0] == "content":
        return own
    extra = by_id.get(source.id)
    if extra is None and source.url:
        extra = by_url.get(normalize_url(source.url))
    if extra is not None:
        found = source_text(extra)
        if found is not None and (own is None or found[0] == "content"):
            return found
    return own


def _support(claim: str, texts: list[str]) -> float:
    """Calibrated lexical support of a claim by the best of the given texts.

    A claim of several sentences (a whole text block, as Anthropic cites) is scored sentence
    by sentence and the scores are averaged, weighted by length.
    """
    parts = [c.text for c in split_claims(claim).claims] or [claim_text(claim)]
    indexes = [lexical.index_source(t) for t in texts]
    rows = lexical.score([lexical.claim_terms(p) for p in parts], indexes, exhaustive=True)
    total = weight = 0.0
    for part, row in zip(parts, rows, strict=True):
        best = max((m.probability for m in row if m is not None), default=0.0)
        total += best * len(part)
        weight += len(part)
    return total / weight if weight else 0.0


def verify(
    answer: CitedAnswer,
    *,
    sources: Iterable[Source | Mapping[str, Any]] | None = None,
    threshold: float | None = None,
    scorer: Scorer | None = None,
) -> CitedAnswer:
    """Check every citation of an answer against the sources it cites.

    Each citation gets ``support`` (calibrated probability that its cited sources support its
    claim) and ``verified``: with a quote, whether the quote is found in a cited source; without
    one, whether the support reaches the threshold. Citations whose sources have no text are
    left unchecked (``None``). Works on any origin: native, marker, post hoc.

    Args:
        answer: The answer to check; it is not modified.
        sources: Sources with the text the answer lacks (matched by id, else by URL), for
            example the documents an Anthropic request cited, whose text the response omits.
        threshold: Support needed to verify a citation without a quote; defaults to the fitted
            threshold (or the scorer's).
        scorer: A `Scorer` blended into the support, as in `attribute`.

    Returns:
        A copy of the answer with ``verified`` and ``support`` set on each checked citation and
        the fabricated quotes and unsupported claims listed in ``diagnostics``.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`, or an option is invalid.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"verify expects a CitedAnswer, got {type(answer).__name__}")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not 0.0 <= threshold <= 1.0
    ):
        raise UsageError(f"threshold must be a number in [0, 1], got {threshold!r}")
    if scorer is not None and not isinstance(scorer, Scorer):
        raise UsageError("scorer must be a Scorer (EmbeddingScorer, JudgeScorer, ...)")
    if threshold is None:
        threshold = scorer.threshold if scorer is not None else cal.MODEL.threshold
    by_id, by_url = _extra_sources(sources)
    notes: list[str] = []
    unchecked = 0
    checked: list[Citation] = []
    for n, citation in enumerate(answer.citations):
        texts: list[tuple[Source, str, str]] = []
        for sid in citation.source_ids:
            source = answer.source(sid)
            found = None if source is None else _text_for(source, by_id, by_url)
            if source is not None and found is not None:
                texts.append((source, found[0], found[1]))
        claim = claim_text(citation.text)
        if not texts or (not claim and not citation.quote):
            unchecked += 1
            checked.append(citation.model_copy(update={"verified": None, "support": None}))
            continue
        support = _support(citation.text, [t for _, _, t in texts]) if claim else 0.0
        if scorer is not None and claim:
            plugged = max(scorer.score([(claim, t) for _, _, t in texts]), default=0.0)
            support = blend(scorer, support, plugged)
        support = round(support, 4)
        if citation.quote and citation.quote.strip():
            matches = [find_quote(citation.quote, t) for _, _, t in texts]
            verified = any(m.found for m in matches)
            if not verified:
                fields = {field for _, field, _ in texts}
                basis = " (sources hold snippets only)" if fields == {"snippet"} else ""
                notes.append(
                    f"citation {n}: quote not found in {_ids(texts)}{basis}, fabricated or "
                    f"altered: {_show(citation.quote)}"
                )
        else:
            verified = support >= threshold
            if not verified:
                fields = {field for _, field, _ in texts}
                basis = ", checked against snippets only" if fields == {"snippet"} else ""
                notes.append(
                    f"citation {n}: claim not supported by {_ids(texts)} "
                    f"(support {support:.2f}{basis}): {_show(citation.text)}"
                )
        checked.append(citation.model_copy(update={"verified": verified, "support": support}))
    if unchecked:
        notes.append(
            f"{unchecked} citation(s) not checked: their sources have no content or snippet "
            "(pass sources= with the text)"
        )
    diagnostics = list(answer.diagnostics)
    diagnostics.extend(note for note in notes if note not in answer.diagnostics)
    return answer.model_copy(update={"citations": checked, "diagnostics": diagnostics})


def _ids(texts: list[tuple[Source, str, str]]) -> str:
    return ", ".join(repr(source.id) for source, _, _ in texts)


def _show(text: str) -> str:
    return repr(truncate(" ".join(text.split()), 80))
