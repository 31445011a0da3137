"""LangChain adapter for unicite: one callback gives any chain or agent correct citations.

`CitationCallbackHandler` collects each run's sources and cites its answer; `from_ai_message`
reads the native citations LangChain messages carry; `with_citations`, `CitationOutputParser`,
`cite_tools`, `citation_prompt` and `number_sources` fit unicite into LCEL chains and agents;
`cited_generation` answers a question from retrieved documents with `unicite.generate_cited`;
`CitationMiddleware` cites the answers of `langchain.agents.create_agent` agents (it needs
``langchain>=1``, the ``agents`` extra; everything else needs only ``langchain-core``).

Every cited answer is also published as the ``unicite_citations`` custom event
(`CITATIONS_EVENT`), whose data is ``{"run_id": str | None, "origin": str | None, "answer":
CitedAnswer}``: seen by callback handlers' ``on_custom_event``, in ``astream_events``, and,
for `CitationMiddleware`, in a LangGraph graph's ``"custom"`` stream.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from unicite_langchain._middleware import CitationMiddleware

__version__ = _version("unicite-langchain")


def __getattr__(name: str) -> Any:
    """`CitationMiddleware`, imported on first use: it needs ``langchain``, the rest does not."""
    if name == "CitationMiddleware":
        from unicite_langchain._middleware import CitationMiddleware

        return CitationMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CITATIONS_EVENT",
    "GENERATION_DELTA_EVENT",
    "GENERATION_RETRY_EVENT",
    "CitationCallbackHandler",
    "CitationMiddleware",
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
