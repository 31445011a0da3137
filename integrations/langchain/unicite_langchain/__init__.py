"""LangChain adapter for unicite: one callback gives any chain or agent correct citations.

`CitationCallbackHandler` collects each run's sources and cites its answer; `from_ai_message`
reads the native citations LangChain messages carry; `with_citations`, `CitationOutputParser`,
`cite_tools`, `citation_prompt` and `number_sources` fit unicite into LCEL chains and agents;
`cited_generation` answers a question from retrieved documents with `unicite.generate_cited`.
"""

from importlib.metadata import version as _version

from unicite_langchain._generation import (
    GENERATION_DELTA_EVENT,
    GENERATION_RETRY_EVENT,
    CitedGenerationRunnable,
    cited_generation,
)
from unicite_langchain._handler import CitationCallbackHandler
from unicite_langchain._messages import from_ai_message, to_citation_annotations
from unicite_langchain._parser import CitationOutputParser
from unicite_langchain._prompt import citation_prompt, number_sources
from unicite_langchain._publish import CITATIONS_EVENT
from unicite_langchain._runnable import CitedRunnable, with_citations
from unicite_langchain._tools import CitedTool, cite_tools

__version__ = _version("unicite-langchain")

__all__ = [
    "CITATIONS_EVENT",
    "GENERATION_DELTA_EVENT",
    "GENERATION_RETRY_EVENT",
    "CitationCallbackHandler",
    "CitationOutputParser",
    "CitedGenerationRunnable",
    "CitedRunnable",
    "CitedTool",
    "__version__",
    "citation_prompt",
    "cite_tools",
    "cited_generation",
    "from_ai_message",
    "number_sources",
    "to_citation_annotations",
    "with_citations",
]
