"""pydantic-ai adapter for unicite: agent runs with correct, validated citations.

`cite_result` gives a finished run's `unicite.CitedAnswer` (native citations of the final
response, ``[n]`` markers read against the sources its tools returned); `with_citations`
makes an agent whose results carry it as ``.citations`` and whose streamed text is already
the cited text; `cite_tools` numbers tool results so the model can cite them, with
`citation_instructions` for the agent's instructions.
"""

from importlib.metadata import version as _version

from unicite_pydantic_ai._agent import (
    CitedAgent,
    CitedAgentRun,
    CitedStreamedRunResult,
    with_citations,
)
from unicite_pydantic_ai._result import cite_result
from unicite_pydantic_ai._tools import citation_instructions, cite_tools

__version__ = _version("unicite-pydantic-ai")

__all__ = [
    "CitedAgent",
    "CitedAgentRun",
    "CitedStreamedRunResult",
    "__version__",
    "citation_instructions",
    "cite_result",
    "cite_tools",
    "with_citations",
]
