"""Optional plug-in scorers: embeddings or an NLI/judge model, blended with the lexical score.

The local attributor stands alone; a scorer re-scores the passages it located, so a paraphrase
the lexical features miss can still be cited. Adapters wrap LangChain ``Embeddings`` or a
LlamaIndex embedding model as `EmbeddingScorer(model.embed_documents)` and the like.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from unicite.exceptions import UsageError
from unicite.model import CitationOrigin

__all__ = ["EmbeddingScorer", "JudgeScorer", "Scorer", "blend"]


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores (claim, passage) pairs with a probability of support.

    The attributes are read-only here, so frozen dataclasses such as `JudgeScorer` and
    `EmbeddingScorer` satisfy the protocol for type checkers too.
    """

    @property
    def origin(self) -> CitationOrigin:
        """The `Citation.origin` given to citations this scorer helped decide."""
        ...

    @property
    def weight(self) -> float:
        """Share of the final confidence from this scorer; 1.0 lets it decide alone.

        The rest of the confidence is the lexical probability.
        """
        ...

    @property
    def threshold(self) -> float:
        """The blended probability a source needs to be cited."""
        ...

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability in [0, 1] per ``(claim, passage)`` pair, in order."""
        ...


def _check_weight(weight: float, threshold: float) -> None:
    if not 0.0 <= weight <= 1.0:
        raise UsageError(f"scorer weight must lie in [0, 1], got {weight!r}")
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(f"scorer threshold must lie in [0, 1], got {threshold!r}")


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # type: ignore[arg-type]  # numpy scalars, tensors
        except (TypeError, ValueError):
            raise UsageError(f"{what} returned {type(value).__name__}, not a number") from None
    number = float(value)
    if math.isnan(number):
        raise UsageError(f"{what} returned NaN")
    return number


@dataclass(frozen=True)
class EmbeddingScorer:
    """Cosine similarity of embeddings, mapped to a probability by a logistic curve.

    Args:
        embed: Any callable from a list of texts to one vector per text (``list[str] ->
            vectors``), called once per batch of pairs with every distinct text.
        weight: Share of the final confidence taken from the embedding score.
        midpoint: Cosine similarity that maps to probability 0.5; depends on the model.
        steepness: Slope of the logistic curve around the midpoint.
        threshold: Blended probability needed to cite.
    """

    embed: Callable[[list[str]], Sequence[Sequence[float]]]
    weight: float = 0.5
    midpoint: float = 0.75
    steepness: float = 12.0
    threshold: float = 0.5
    origin: CitationOrigin = "posthoc-embedding"

    def __post_init__(self) -> None:
        if not callable(self.embed):
            raise UsageError("EmbeddingScorer needs a callable: list[str] -> vectors")
        _check_weight(self.weight, self.threshold)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Embed every distinct text once; score each pair by its cosine similarity."""
        if not pairs:
            return []
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        vectors = self.embed(texts)
        try:
            rows = [[_number(x, "embed") for x in vector] for vector in vectors]
        except TypeError:
            raise UsageError("embed must return a sequence of vectors") from None
        if len(rows) != len(texts):
            raise UsageError(f"embed returned {len(rows)} vectors for {len(texts)} texts")
        if len({len(row) for row in rows}) > 1:
            raise UsageError("embed returned vectors of different lengths")
        by_text = dict(zip(texts, rows, strict=True))
        out = []
        for claim, passage in pairs:
            a, b = by_text[claim], by_text[passage]
            norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(x * x for x in b))
            cosine = sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
            z = max(-60.0, min(60.0, (cosine - self.midpoint) * self.steepness))
            out.append(1.0 / (1.0 + math.exp(-z)))
        return out


@dataclass(frozen=True)
class JudgeScorer:
    """An NLI model or LLM judge giving the probability that a passage supports a claim.

    Args:
        judge: ``(claim, passage) -> probability``; with ``batched=True``, a callable taking
            the list of pairs and returning one probability each. Values are clamped to [0, 1].
        weight: Share of the final confidence taken from the judge (1.0: the judge decides).
        threshold: Blended probability needed to cite.
        batched: Whether `judge` takes all pairs at once.
    """

    judge: Callable[..., object]
    weight: float = 1.0
    threshold: float = 0.5
    batched: bool = False
    origin: CitationOrigin = "posthoc-nli"

    def __post_init__(self) -> None:
        if not callable(self.judge):
            raise UsageError("JudgeScorer needs a callable: (claim, passage) -> probability")
        _check_weight(self.weight, self.threshold)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Ask the judge about every pair."""
        if not pairs:
            return []
        if self.batched:
            got = self.judge(list(pairs))
            if not isinstance(got, Sequence) or isinstance(got, (str, bytes)):
                raise UsageError("a batched judge must return a sequence of numbers")
            values = list(got)
            if len(values) != len(pairs):
                raise UsageError(f"judge returned {len(values)} scores for {len(pairs)} pairs")
        else:
            values = [self.judge(claim, passage) for claim, passage in pairs]
        return [min(1.0, max(0.0, _number(v, "judge"))) for v in values]


def blend(scorer: Scorer, lexical: float, plugged: float) -> float:
    """The final confidence: the scorer's share of its probability plus the lexical rest."""
    return min(1.0, max(0.0, scorer.weight * plugged + (1.0 - scorer.weight) * lexical))
