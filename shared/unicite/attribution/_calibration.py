"""The local attributor's fitted constants: feature weights, a calibration map and the threshold.

Fitted on the labelled development data by ``benchmarks/fit_attribution.py``, which prints this
block of constants; paste its output here to refit. Nothing else in the package is tuned.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FEATURES", "MODEL", "MONOTONE", "PASSAGE_FEATURES", "Model"]

FEATURES = (
    "coverage",
    "source_coverage",
    "bigrams",
    "chargrams",
    "partial_ratio",
    "token_set_ratio",
    "numbers_missing",
    "has_numbers",
    "entities_missing",
    "negation_mismatch",
    "hedged",
    "claim_terms",
    "passage_tokens",
    "missing_run",
)
"""What the model weighs, in the order `_lexical` computes them."""

PASSAGE_FEATURES = ("bigrams", "chargrams", "partial_ratio", "token_set_ratio", "negation_mismatch")
"""Features read from the passage text, each in [0, 1]; skipped for pairs that cannot qualify."""

MONOTONE = {
    "coverage": 1,
    "source_coverage": 1,
    "bigrams": 1,
    "chargrams": 1,
    "partial_ratio": 1,
    "token_set_ratio": 1,
    "numbers_missing": -1,
    "entities_missing": -1,
    "negation_mismatch": -1,
    "missing_run": -1,
}
"""Features whose effect is constrained in direction: more support never lowers confidence."""

# --- fitted by benchmarks/fit_attribution.py -------------------------------------------------
INTERCEPT = -0.0141
SHAPES: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "coverage": (
        (0.428847, 0.908045),
        (-0.0622, 0.0002, 0.4188),
    ),
    "bigrams": (
        (0.090909, 0.181818, 0.25, 0.352941, 0.5, 0.75),
        (-0.5802, -0.5401, -0.2143, 0.1658, 0.4438, 1.1674, 1.2287),
    ),
    "chargrams": (
        (0.090909, 0.138462, 0.165517, 0.222826, 0.350993, 0.986301),
        (-1.2687, -1.0109, -0.3199, -0.1761, -0.0147, 0.1224, 0.7732),
    ),
    "partial_ratio": (
        (0.505495, 0.543046),
        (-0.1436, -0.0665, 0.1043),
    ),
    "token_set_ratio": (
        (0.524675, 0.85347),
        (-0.0299, 0.0036, 0.0547),
    ),
    "numbers_missing": (
        (0.0,),
        (0.0594, -0.9253),
    ),
    "has_numbers": (
        (0.0,),
        (0.0134, -0.0774),
    ),
    "entities_missing": (
        (0.0, 0.5),
        (0.0304, -0.0526, -0.2074),
    ),
    "claim_terms": (
        (2.639057,),
        (-0.0563, 0.1319),
    ),
    "passage_tokens": (
        (2.484907, 3.332205),
        (-0.2478, 0.2321, -0.066),
    ),
    "missing_run": (
        (1.609438,),
        (0.0634, -0.2693),
    ),
}
MIN_COVERAGE = 0.3
CALIBRATION: tuple[tuple[float, float], ...] = (
    (-2.9965, 0.1),
    (-2.2204, 0.1346),
    (-1.6711, 0.2273),
    (-1.5077, 0.25),
    (-1.2163, 0.2623),
    (-0.9163, 0.2805),
    (-0.7572, 0.3333),
    (-0.5344, 0.349),
    (-0.2984, 0.4),
    (-0.2683, 0.4667),
    (-0.0281, 0.4674),
    (0.2994, 0.6),
    (1.3823, 0.7908),
)
THRESHOLD = 0.5983
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """An additive model (a step function per feature), then a monotone map to a probability.

    Each feature ``f`` adds ``values[k]`` to the score, where ``k`` is the number of its cuts
    below ``x`` (a value equal to a cut falls on its left). The calibration map turns the summed
    score into a probability.
    """

    cuts: tuple[tuple[float, ...], ...]
    values: tuple[tuple[float, ...], ...]
    intercept: float
    knots: tuple[tuple[float, float], ...]
    """``(score, probability)`` points, both increasing; empty means the logistic curve."""
    threshold: float
    """A source is cited when the calibrated probability reaches this."""
    min_coverage: float
    """Pairs whose best passage covers less of the claim are never cited (scored at the floor)."""
    passage: tuple[int, ...]
    """Positions of the passage features."""

    @classmethod
    def build(
        cls,
        *,
        intercept: float,
        shapes: Mapping[str, tuple[Sequence[float], Sequence[float]]],
        knots: Sequence[tuple[float, float]],
        threshold: float,
        min_coverage: float = 0.0,
    ) -> Model:
        """Check the constants and lay them out in `FEATURES` order."""
        unknown = set(shapes) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        cuts: list[tuple[float, ...]] = []
        values: list[tuple[float, ...]] = []
        for name in FEATURES:
            c, v = shapes.get(name, ((), (0.0,)))
            if len(v) != len(c) + 1 or list(c) != sorted(set(c)):
                raise ValueError(f"shape of {name!r}: need increasing cuts and one more value")
            direction = MONOTONE.get(name, 0)
            if any(direction * (b - a) < 0 for a, b in itertools.pairwise(v)):
                raise ValueError(f"shape of {name!r} breaks its monotone direction")
            cuts.append(tuple(float(x) for x in c))
            values.append(tuple(float(x) for x in v))
        points = tuple((float(x), float(y)) for x, y in knots)
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            if not (x0 < x1 and y0 <= y1):
                raise ValueError("calibration knots must increase")
        if any(not 0.0 <= y <= 1.0 for _, y in points):
            raise ValueError("calibration probabilities must lie in [0, 1]")
        passage = tuple(FEATURES.index(name) for name in PASSAGE_FEATURES)
        return cls(tuple(cuts), tuple(values), intercept, points, threshold, min_coverage, passage)

    def score(self, values: Sequence[float]) -> float:
        """The model's raw score for a feature vector."""
        total = self.intercept
        for cuts, steps, x in zip(self.cuts, self.values, values, strict=True):
            total += steps[bisect.bisect_left(cuts, x)] if cuts else steps[0]
        return total

    def calibrate(self, score: float) -> float:
        """Map a raw score to a probability: monotone, in [0, 1]."""
        knots = self.knots
        if not knots:
            if score >= 0:
                return 1.0 / (1.0 + math.exp(-score))
            z = math.exp(score)
            return z / (1.0 + z)
        if score <= knots[0][0]:
            return knots[0][1]
        if score >= knots[-1][0]:
            return knots[-1][1]
        k = bisect.bisect_right(knots, (score, math.inf))
        (x0, y0), (x1, y1) = knots[k - 1], knots[k]
        return y0 + (y1 - y0) * (score - x0) / (x1 - x0)

    @property
    def floor(self) -> float:
        """The lowest probability the model gives."""
        return self.calibrate(-math.inf) if self.knots else 0.0

    def probability(self, values: Sequence[float], score: float | None = None) -> float:
        """Calibrated probability that the passage supports the claim.

        Args:
            values: The feature vector.
            score: Its raw `score`, when the caller has it already.
        """
        if values[0] < self.min_coverage:
            return self.floor
        return self.calibrate(self.score(values) if score is None else score)

    def upper_bound(self, values: Sequence[float], pending: Iterable[int] | None = None) -> float:
        """The highest probability reachable whatever the not yet computed features turn out.

        Args:
            values: The feature vector, with the pending features at any value.
            pending: Positions of the features not yet computed; all passage features if None.
        """
        if values[0] < self.min_coverage:
            return self.floor
        total = self.score(values)
        for n in self.passage if pending is None else pending:
            cuts, steps = self.cuts[n], self.values[n]
            total += max(steps) - (steps[bisect.bisect_left(cuts, values[n])] if cuts else steps[0])
        # A hair of slack: summing in another order must not put the bound an ulp below.
        return self.calibrate(total + 1e-9)


MODEL = Model.build(
    intercept=INTERCEPT,
    shapes=SHAPES,
    knots=CALIBRATION,
    threshold=THRESHOLD,
    min_coverage=MIN_COVERAGE,
)
"""The shipped model."""
