"""LlamaIndex adapter for unicite: cited query engines, postprocessors and instrumentation.

- `CitedQueryEngine`: a drop-in `CitationQueryEngine` whose responses carry a validated
  `unicite.CitedAnswer` in ``response.metadata["citations"]``.
- `CitedSynthesizer`: a response synthesizer for any query engine, answering with
  `unicite.generate_cited` (checked, retried citations); ``response.metadata["generation"]``
  is the `unicite.CitedGeneration`.
- `CitationPostprocessor`: numbers retrieved nodes (``Source N:``) as citable sources.
- `CitationEventHandler`: cites the LLM answers of anything LlamaIndex runs (query engines,
  `FunctionAgent`, `AgentWorkflow`, any workflow) from instrumentation events and dispatches
  `CitationsEvent`s.
- `cite_tools` / `CitedTool`: agent tools whose results the model sees as sources numbered by
  the run's ledger, so its ``[N]`` markers name the right source.
- `citations_of`: the `unicite.CitedAnswer` of a response, agent output or workflow run.
- `from_llamaindex_response`, `to_citation_blocks`, `from_citation_blocks`: conversions.

Every answer is cited by `unicite.cite`; the engine and the handler take its `unicite.CitePolicy`
(``policy=``) and the policy's field names as keywords, and call ``on_citations`` with each
`unicite.CitedAnswer`.
"""

from importlib.metadata import version as _version

import unicite_llamaindex._compat  # noqa: F401  (before any tool is made)
from unicite_llamaindex._convert import (
    from_citation_blocks,
    from_llamaindex_response,
    to_citation_blocks,
)
from unicite_llamaindex._engine import CitedQueryEngine
from unicite_llamaindex._handler import CitationEventHandler
from unicite_llamaindex._nodes import source_from_node
from unicite_llamaindex._postprocessor import CitationPostprocessor
from unicite_llamaindex._results import citations_of
from unicite_llamaindex._synthesizer import (
    AsyncCitedStreamingResponse,
    CitedStreamingResponse,
    CitedSynthesizer,
)
from unicite_llamaindex._tools import CitedTool, cite_tools
from unicite_llamaindex.events import CitationsEvent, dispatcher

__version__ = _version("unicite-llamaindex")

__all__ = [
    "AsyncCitedStreamingResponse",
    "CitationEventHandler",
    "CitationPostprocessor",
    "CitationsEvent",
    "CitedQueryEngine",
    "CitedStreamingResponse",
    "CitedSynthesizer",
    "CitedTool",
    "__version__",
    "citations_of",
    "cite_tools",
    "dispatcher",
    "from_citation_blocks",
    "from_llamaindex_response",
    "source_from_node",
    "to_citation_blocks",
]
