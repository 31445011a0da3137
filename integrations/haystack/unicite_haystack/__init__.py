"""Haystack adapter for unicite: a drop-in `AnswerBuilder` with validated citations.

- `CitedAnswerBuilder`: Haystack's `AnswerBuilder` (same parameters, inputs and outputs) whose
  answers are cited by `unicite.cite`: markers validated against the run's documents and
  renumbered, the cited documents first-cited first, the `unicite.CitedAnswer` in
  ``answer.meta["citations"]``.
- `CitationStreamingCallback`: a generator ``streaming_callback`` whose chunks already carry
  the final marker numbers (`unicite.MarkerStream`), for sync and async runs.
"""

from importlib.metadata import version as _version

from unicite_haystack._builder import CitedAnswerBuilder
from unicite_haystack._streaming import CitationStreamingCallback

__version__ = _version("unicite-haystack")

__all__ = ["CitationStreamingCallback", "CitedAnswerBuilder", "__version__"]
