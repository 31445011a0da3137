"""`attribute()`: cite the claims of an answer that carries no citations, locally or with an LLM."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from unicite.attribution import _calibration as cal
from unicite.attribution import _lexical as lexical
from unicite.attribution._claims import Claim, ClaimSplit, split_claims
from unicite.attribution._llm import llm_citations
from unicite.attribution._scorers import Scorer, blend
from unicite.exceptions import UsageError
from unicite.model import CharLocation, Citation, CitationOrigin, CitedAnswer, Source
from unicite.sources import SourceLedger, as_source

__all__ = [
    "AttributionMethod",
    "attribute",
    "build_answer",
    "claim_diagnostics",
    "prepare_sources",
    "source_text",
]

AttributionMethod = Literal["lexical", "llm"]
"""How `attribute` finds support: the local lexical attributor, or an LLM."""

SCORER_CANDIDATES = 5
"""Sources per claim (best lexical first) that a plug-in scorer is asked about."""
SCORER_CONTEXT = 1
"""Sentences on each side of the located passage that a plug-in scorer also sees."""


def source_text(source: Source) -> tuple[str, str] | None:
    """The text a source is matched with and the field it comes from: content, else snippet."""
    if source.content and source.content.strip():
        return "content", source.content
    if source.snippet and source.snippet.strip():
        return "snippet", source.snippet
    return None


def prepare_sources(
    sources: Iterable[Source | Mapping[str, Any]] | SourceLedger, diagnostics: list[str]
) -> list[Source]:
    """Accept sources as objects, dicts or a ledger; drop repeated ids with a diagnostic."""
    if isinstance(sources, SourceLedger):
        return sources.sources
    if isinstance(sources, (str, bytes, Mapping, Source)) or not isinstance(sources, Iterable):
        raise UsageError(
            f"sources must be a list of Source objects or dicts, got {type(sources).__name__}"
        )
    out: list[Source] = []
    seen: set[str] = set()
    for n, item in enumerate(sources):
        try:
            source = as_source(item)
        except UsageError:
            raise UsageError(
                f"sources[{n}] must be a Source or a dict, got {type(item).__name__}"
            ) from None
        if source.id in seen:
            diagnostics.append(f"sources[{n}] repeats id {source.id!r}; the first one is kept")
            continue
        seen.add(source.id)
        out.append(source)
    return out


def claim_diagnostics(split: ClaimSplit, diagnostics: list[str]) -> bool:
    """Explain an answer with nothing to attribute; return whether there are claims."""
    if split.markers:
        diagnostics.append(
            f"the text has {split.markers} citation marker(s); attribute() ignores them "
            "(parse_markers reads them)"
        )
    if split.claims:
        return True
    if split.code_only:
        diagnostics.append("the answer is code only: no claims to attribute")
    else:
        diagnostics.append("the answer has no claims to attribute")
    return False


def build_answer(
    text: str, sources: list[Source], citations: list[Citation], diagnostics: list[str]
) -> CitedAnswer:
    """The answer, sources numbered in first-cited order (uncited ones after, as given)."""
    order: dict[str, int] = {}
    for citation in sorted(citations, key=lambda c: (c.start, c.end)):
        for sid in citation.source_ids:
            order.setdefault(sid, len(order))
    for source in sources:
        order.setdefault(source.id, len(order))
    ordered = sorted(sources, key=lambda s: order[s.id])
    return CitedAnswer(text=text, sources=ordered, citations=citations, diagnostics=diagnostics)


def _check_threshold(threshold: float | None) -> None:
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not 0.0 <= threshold <= 1.0
    ):
        raise UsageError(f"threshold must be a number in [0, 1], got {threshold!r}")


def attribute(
    text: str,
    sources: Iterable[Source | Mapping[str, Any]] | SourceLedger,
    method: AttributionMethod = "lexical",
    *,
    llm: Callable[[str], Any] | None = None,
    scorer: Scorer | None = None,
    threshold: float | None = None,
    max_sources: int | None = None,
    batch_chars: int = 6000,
    all_supporting: bool = False,
) -> CitedAnswer:
    """Find which sources support which claims of an answer that cites nothing.

    The answer is split into claims (sentences; clauses of long compound sentences; code,
    headings, number-only tables and boilerplate are skipped). With ``method="lexical"`` (the
    default: local, no model, no key) each claim is cited to every source whose calibrated
    support reaches the threshold, with the best-supporting passage of the strongest source as
    the citation's ``quote`` and `CharLocation`, and the probability as ``confidence``. With
    ``method="llm"``, ``llm`` is asked which numbered source supports which claim and how
    well (``full``: confidence 0.9, ``partial``: 0.5); the citation's ``quote`` and
    `CharLocation` are the passage of its first source that best matches the claim, else the
    source's page (`PageLocation`) when it is a chunk of a paged document.

    Args:
        text: The answer.
        sources: `Source` objects, dicts with the same keys, or a `SourceLedger`. Each is
            matched on its ``content``, else its ``snippet``.
        method: ``"lexical"`` or ``"llm"``.
        llm: For ``method="llm"``: any callable from a prompt to the model's reply (a string,
            or an object with a string ``content``, such as a chat message).
        scorer: For ``method="lexical"``: an `EmbeddingScorer`, `JudgeScorer` or other `Scorer`
            that re-scores the located passages.
        threshold: The support a source needs to be cited. Lexical: defaults to the fitted
            threshold (or the scorer's). LLM: compared with the model's label (``full`` 0.9,
            ``partial`` 0.5; a link without a label counts as 0), so 0.6 to 0.9 keeps only
            the sources the model says fully support a claim; by default every source the
            model names is kept. A diagnostic counts the links a threshold dropped.
        max_sources: Cite at most this many sources per claim, strongest first (LLM: by the
            model's labels, its own order among equals; a diagnostic counts what was cut).
        batch_chars: For ``method="llm"``: answer characters per prompt; longer answers are
            sent in several prompts.
        all_supporting: For ``method="lexical"``: cite every source that reaches the
            threshold. By default a claim is cited to its strongest source and to the sources
            as probable as it (a diagnostic counts the weaker ones left out): a second source
            that merely shares the claim's words is the likeliest wrong citation.

    Returns:
        A `CitedAnswer` with the text unchanged, the sources in first-cited order, and
        ``diagnostics`` explaining what could not be attributed.

    Raises:
        UsageError: An argument has the wrong type or value.
    """
    if not isinstance(text, str):
        raise UsageError(f"text must be a str, got {type(text).__name__}")
    if method not in ("lexical", "llm"):
        raise UsageError(f"method must be 'lexical' or 'llm', got {method!r}")
    if method == "llm" and not callable(llm):
        raise UsageError("method='llm' needs llm=, a callable from a prompt to the reply")
    if method == "lexical" and llm is not None:
        raise UsageError("llm= is only used with method='llm'")
    if scorer is not None and (method != "lexical" or not isinstance(scorer, Scorer)):
        raise UsageError(
            "scorer= takes a Scorer (EmbeddingScorer, JudgeScorer) for method='lexical'"
        )
    _check_threshold(threshold)
    if max_sources is not None and (not isinstance(max_sources, int) or max_sources < 1):
        raise UsageError(f"max_sources must be a positive int, got {max_sources!r}")
    if not isinstance(all_supporting, bool):
        raise UsageError(f"all_supporting must be a bool, got {all_supporting!r}")
    if not isinstance(batch_chars, int) or batch_chars < 200:
        raise UsageError(f"batch_chars must be an int of at least 200, got {batch_chars!r}")

    diagnostics: list[str] = []
    prepared = prepare_sources(sources, diagnostics)
    split = split_claims(text)
    if not claim_diagnostics(split, diagnostics):
        return build_answer(text, prepared, [], diagnostics)
    usable = [(s, found) for s in prepared if (found := source_text(s)) is not None]
    for source in prepared:
        if source_text(source) is None:
            diagnostics.append(f"source {source.id!r} has no content or snippet to match")
    if not usable:
        diagnostics.append("no source has text: nothing to attribute")
        return build_answer(text, prepared, [], diagnostics)
    if llm is not None:  # method == "llm", checked above
        citations = llm_citations(
            text,
            split.claims,
            prepared,
            llm,
            batch_chars,
            diagnostics,
            threshold=threshold,
            max_sources=max_sources,
        )
    else:
        citations = lexical_citations(
            text,
            split.claims,
            usable,
            scorer=scorer,
            threshold=threshold,
            max_sources=max_sources,
            all_supporting=all_supporting,
            diagnostics=diagnostics,
        )
        missing = len(split.claims) - len(citations)
        if missing:
            diagnostics.append(
                f"{missing} of {len(split.claims)} claim(s) have no source with enough support"
            )
    return build_answer(text, prepared, citations, diagnostics)


def lexical_citations(
    text: str,
    claims: list[Claim],
    usable: list[tuple[Source, tuple[str, str]]],
    *,
    scorer: Scorer | None = None,
    threshold: float | None = None,
    max_sources: int | None = None,
    all_supporting: bool = False,
    diagnostics: list[str] | None = None,
) -> list[Citation]:
    """Score every claim against every usable source; cite those that clear the threshold.

    Unless `all_supporting`, only the strongest source of a claim and those as probable as it
    are cited; the weaker ones left out are counted in `diagnostics`.
    """
    model = cal.MODEL
    if threshold is None:
        threshold = scorer.threshold if scorer is not None else model.threshold
    indexes = [lexical.index_source(found[1]) for _, found in usable]
    prepared = [lexical.claim_terms(claim.text) for claim in claims]
    # A custom threshold below the fitted one needs every pair scored (no pruning).
    exhaustive = scorer is not None or threshold < model.threshold
    matches = lexical.score(prepared, indexes, exhaustive=exhaustive)
    if scorer is not None:
        probabilities = _rescore(scorer, claims, matches, indexes)
    else:
        probabilities = [[m.probability if m else 0.0 for m in row] for row in matches]
    origin: CitationOrigin = scorer.origin if scorer is not None else "posthoc-lexical"
    citations = []
    weaker = 0
    for claim, row, probs in zip(claims, matches, probabilities, strict=True):
        # The strongest first: probability, then the lexical grades under it, then order given.
        ranked = sorted(
            (
                (p, n, match)
                for n, (match, p) in enumerate(zip(row, probs, strict=True))
                if match is not None and p >= threshold
            ),
            key=lambda item: (-item[0], *(-x for x in item[2].strength[1:]), item[1]),
        )
        if ranked and not all_supporting:
            kept = [item for item in ranked if item[0] >= ranked[0][0]]
            weaker += len(ranked) - len(kept)
            ranked = kept
        if max_sources is not None:
            ranked = ranked[:max_sources]
        if not ranked:
            continue
        top_p, top, best = ranked[0]
        field, source_text_ = usable[top][1]
        extras: dict[str, Any] = {
            "source_confidence": {usable[n][0].id: round(p, 4) for p, n, _ in ranked}
        }
        if field == "snippet":
            extras["located_in"] = "snippet"
        citations.append(
            Citation(
                start=claim.start,
                end=claim.end,
                text=text[claim.start : claim.end],
                source_ids=[usable[n][0].id for _, n, _ in ranked],
                quote=source_text_[best.start : best.end],
                location=CharLocation(start=best.start, end=best.end),
                origin=origin,
                confidence=round(top_p, 4),
                extras=extras,
            )
        )
    if weaker and diagnostics is not None:
        diagnostics.append(
            f"{weaker} source(s) less probable than a claim's strongest also reached the "
            "threshold and were not cited (all_supporting=True cites them)"
        )
    return citations


def _context(index: lexical.SourceIndex, match: lexical.Match) -> str:
    """The located passage with `SCORER_CONTEXT` neighbouring units on each side."""
    starts = [a for a, _ in index.units]
    first = max(0, bisect.bisect_right(starts, match.start) - 1 - SCORER_CONTEXT)
    last = min(len(starts) - 1, bisect.bisect_left(starts, match.end) - 1 + SCORER_CONTEXT)
    return index.text[index.units[first][0] : max(index.units[last][1], match.end)]


def _rescore(
    scorer: Scorer,
    claims: list[Claim],
    matches: list[list[lexical.Match | None]],
    indexes: list[lexical.SourceIndex],
) -> list[list[float]]:
    """Blend the scorer's view of each claim's best candidate passages with the lexical one."""
    out = [[0.0] * len(row) for row in matches]
    pairs: list[tuple[str, str]] = []
    where: list[tuple[int, int, lexical.Match]] = []
    for c, row in enumerate(matches):
        found = sorted(
            ((n, m) for n, m in enumerate(row) if m is not None),
            key=lambda item: (*(-x for x in item[1].strength), item[0]),
        )
        for n, match in found[:SCORER_CANDIDATES]:
            pairs.append((claims[c].text, _context(indexes[n], match)))
            where.append((c, n, match))
    scores = scorer.score(pairs)
    if len(scores) != len(pairs):
        raise UsageError(f"scorer returned {len(scores)} scores for {len(pairs)} pairs")
    for (c, n, match), plugged in zip(where, scores, strict=True):
        out[c][n] = blend(scorer, match.probability, plugged)
    return out
