"""`cite_tools`: agent tools whose results the model sees as numbered sources it can cite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from llama_index.core.base.llms.types import TextBlock
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.tools import BaseTool, FunctionTool, ToolOutput
from llama_index.core.tools.types import AsyncBaseTool, adapt_to_async_tool

from unicite import Source, UsageError
from unicite.sources import SourceLedger, build_digest, current_ledger
from unicite_llamaindex._convert import from_llamaindex_response
from unicite_llamaindex._handler import run_ledgers, tool_call_id
from unicite_llamaindex._results import known_answer
from unicite_llamaindex._sources import rewrite_markers, tool_sources

__all__ = ["CitedTool", "cite_tools"]

Prefer = Literal["content", "snippet"]


def _check(budget_tokens: int | None, prefer: str) -> None:
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0
    ):
        raise UsageError(f"budget_tokens must be a non-negative int or None, got {budget_tokens!r}")
    if prefer not in ("content", "snippet"):
        raise UsageError(f"prefer must be 'content' or 'snippet', got {prefer!r}")


class CitedTool(FunctionTool):
    """A tool whose results the agent sees as numbered sources (``[sid:3] Title`` + text).

    The wrapped tool runs as it would; the sources in what it returns (nodes, a query engine
    response's ``source_nodes``, search results, pages, JSON; plain text is one source) go to
    the ledger of the agent or workflow run the call belongs to, the one each attached
    `CitationEventHandler` keeps, and the model is shown them numbered by their ``sid`` there:
    stable across the run (a source found twice keeps its number), so ``[3]`` in the final
    answer is cited to the source shown as ``[sid:3]``. A query engine's answer (or the
    `AgentOutput` of an agent the tool ran, cited by the handler) is shown above its sources,
    its own markers renumbered to match. Without a handler following the run, the numbers
    come from `unicite.sources.current_ledger`, else start at 1 for each call.

    ``raw_output`` stays what the tool returned; errors and results without sources pass
    through unchanged. A tool taking the workflow `Context` still gets it.
    """

    def __init__(
        self,
        tool: BaseTool | Callable[..., Any],
        *,
        budget_tokens: int | None = None,
        prefer: Prefer = "content",
    ) -> None:
        """Wrap a tool.

        Args:
            tool: A LlamaIndex tool (`FunctionTool`, `QueryEngineTool`, `RetrieverTool`, ...)
                or a function (made a `FunctionTool`).
            budget_tokens: The most tokens one result may take as numbered sources; None for
                no limit.
            prefer: Show each source's full text (``"content"``) or its snippet.

        Raises:
            UsageError: `tool` is neither a tool nor a function, or an option is invalid.
        """
        _check(budget_tokens, prefer)
        if isinstance(tool, CitedTool):
            tool = tool.tool
        if not isinstance(tool, BaseTool):
            if not callable(tool):
                raise UsageError(f"not a tool: {type(tool).__name__}")
            tool = FunctionTool.from_defaults(tool)
        self.tool: BaseTool = tool
        """The wrapped tool."""
        self.budget_tokens = budget_tokens
        self.prefer: Prefer = prefer
        self._inner: AsyncBaseTool = adapt_to_async_tool(tool)
        # The wrapped function's signature says whether the agent must pass its Context.
        signature_of = tool.real_fn if isinstance(tool, FunctionTool) else self._inner.call
        super().__init__(fn=signature_of, metadata=tool.metadata)

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Run the tool; its sources come back numbered."""
        return self._present(self._inner.call(*args, **kwargs), kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Run the tool asynchronously; its sources come back numbered."""
        return self._present(await self._inner.acall(*args, **kwargs), kwargs)

    def _present(self, output: ToolOutput, kwargs: Mapping[str, Any]) -> ToolOutput:
        """The model's view of the result: its sources, numbered by the run's ledger."""
        if not isinstance(output, ToolOutput) or output.is_error:
            return output
        name = self.metadata.get_name()
        arguments = {k: v for k, v in kwargs.items() if k != self.ctx_param_name}
        found = tool_sources(
            name, output.raw_output, output.content, call_id=tool_call_id(), arguments=arguments
        )
        if not found:
            return output
        scoped = current_ledger()
        ledgers = run_ledgers() or [scoped if scoped is not None else SourceLedger()]
        ledger = ledgers[0]
        ids: list[str] = []
        for other in ledgers:
            added = other.add_all(found)
            if other is ledger:
                ids = list(dict.fromkeys(added))
        shown = [s for s in (ledger.get(i) for i in ids) if s is not None]
        content = self._numbered(output, shown, ledger, name)
        others = [b for b in output.blocks if not isinstance(b, TextBlock)]
        return ToolOutput(
            tool_name=output.tool_name,
            blocks=[TextBlock(text=content), *others],
            raw_input=output.raw_input,
            raw_output=output.raw_output,
        )

    def _numbered(
        self, output: ToolOutput, shown: Sequence[Source], ledger: SourceLedger, name: str
    ) -> str:
        if len(shown) == 1 and shown[0].kind == "tool":
            # Plain text read as one source: shown as it is, under its number.
            return f"[sid:{ledger.sid(shown[0].id)}] {name}\n{output.content}"
        budget = (1 << 40) if self.budget_tokens is None else self.budget_tokens
        digest = build_digest(shown, budget, self.prefer, ledger=ledger, tokenizer="estimate")
        raw = output.raw_output
        answer = (
            from_llamaindex_response(raw)
            if isinstance(raw, (Response, StreamingResponse, AsyncStreamingResponse))
            else known_answer(raw)
        )
        if answer is None:
            return digest
        # A query engine's (or an agent's) answer, its markers naming the sources by the
        # numbers shown below it.
        said = rewrite_markers(answer, ledger).strip()
        return f"{said}\n\nSources:\n\n{digest}" if said else digest


def cite_tools(
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    budget_tokens: int | None = None,
    prefer: Prefer = "content",
) -> list[CitedTool]:
    """Wrap an agent's tools so the model sees their results as numbered sources it can cite.

    ``FunctionAgent(tools=cite_tools([search, query_engine_tool]), ...)``: each result is
    listed as ``[sid:N] Title`` and its text, numbered by the run's ledger (see `CitedTool`),
    and `CitationEventHandler` cites the agent's ``[N]`` markers to those very sources. Pair
    with `unicite.markers.citation_instructions` in the agent's system prompt.

    Args:
        tools: LlamaIndex tools, or functions (made `FunctionTool` s).
        budget_tokens: The most tokens one tool result may take; None for no limit.
        prefer: Show each source's full text or its snippet.

    Raises:
        UsageError: An item is neither a tool nor a function, or an option is invalid.
    """
    if isinstance(tools, (BaseTool, str, bytes)) or not isinstance(tools, Sequence):
        raise UsageError("cite_tools takes a list of tools")
    _check(budget_tokens, prefer)
    return [CitedTool(tool, budget_tokens=budget_tokens, prefer=prefer) for tool in tools]
