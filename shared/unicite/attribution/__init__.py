"""Post-hoc attribution: cite an answer that cites nothing, and verify any answer's citations.

`attribute` finds which sources support which claims (locally by default, or with an LLM);
`verify` re-checks the citations of any answer against its sources' text.
"""

from unicite.attribution._attribute import AttributionMethod, attribute
from unicite.attribution._nli import NLIScorer
from unicite.attribution._scorers import EmbeddingScorer, JudgeScorer, Scorer
from unicite.attribution._verify import verify

__all__ = [
    "AttributionMethod",
    "EmbeddingScorer",
    "JudgeScorer",
    "NLIScorer",
    "Scorer",
    "attribute",
    "verify",
]
