"""`cite_tools`: tools whose outputs reach the agent as numbered sources it can cite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal
from uuid import uuid4

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    CallbackManagerForToolRun,
)
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as make_tool
from pydantic import PrivateAttr

from unicite import UsageError
from unicite.sources import SourceLedger
from unicite_langchain._capture import CITED_TOOL_METADATA_KEY, collect_retrieved, tool_sources
from unicite_langchain._context import run_ledgers
from unicite_langchain._handler import CitationCallbackHandler
from unicite_langchain._prompt import numbered_result

__all__ = ["CitedTool", "cite_tools"]


class CitedTool(BaseTool):
    """A tool whose output the agent sees as numbered sources (``[sid:3] Title`` + text).

    The wrapped tool runs as a child run; the sources in its output go to the ledger of the
    root run (the `CitationCallbackHandler`'s, else the current `unicite.sources.ledger_scope`),
    and the agent sees them numbered by their ``sid`` in it, so markers such as ``[3]`` in its
    final answer name the right source. Output with no sources (plain text) passes through
    unchanged; errors are handled as the wrapped tool would handle them. The wrapped tool's
    own output (its artifact, for ``content_and_artifact`` tools) is the artifact.

    A tool that runs a retriever (``create_retriever_tool``, whatever its ``response_format``)
    gives one source per retrieved document, titled and linked from the document's metadata,
    even when its own output is the documents' texts joined into one string.
    """

    tool: BaseTool
    """The tool being wrapped."""
    budget_tokens: int | None = None
    """The most tokens one output may take as numbered sources; None for no limit."""
    prefer: Literal["content", "snippet"] = "content"
    """Show each source's full text or its snippet."""
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    _runner: BaseTool = PrivateAttr()

    def __init__(self, tool: BaseTool, **kwargs: Any) -> None:
        metadata = {**(tool.metadata or {}), CITED_TOOL_METADATA_KEY: True}
        super().__init__(
            tool=tool,
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            return_direct=tool.return_direct,
            tags=tool.tags,
            metadata=metadata,
            handle_tool_error=tool.handle_tool_error,
            handle_validation_error=tool.handle_validation_error,
            **kwargs,
        )
        # The wrapped tool's errors reach the wrapper, which handles them with the wrapped
        # tool's own settings: the agent sees what it would have seen, status included.
        self._runner = tool.model_copy(update={"handle_tool_error": False})

    def _input(self, args: tuple[Any, ...], kwargs: dict[str, Any], call_id: str) -> Any:
        """What to send the wrapped tool: its input, so its raw output comes back.

        A ``content_and_artifact`` tool gets a tool call instead: only that returns its artifact.
        """
        value: Any = kwargs if kwargs else (args[0] if len(args) == 1 else {})
        if self._runner.response_format == "content_and_artifact":
            arguments = dict(value) if isinstance(value, Mapping) else {"__arg1": value}
            return {"type": "tool_call", "name": self.tool.name, "args": arguments, "id": call_id}
        return value

    def _setup(
        self, manager: Any, run_id: Any
    ) -> tuple[list[tuple[SourceLedger, CitationCallbackHandler | None]], str]:
        ledgers = run_ledgers(manager, run_id)
        call_id: str | None = None
        for _, handler in ledgers:
            if handler is not None and call_id is None:
                call_id = handler.tool_call_id(run_id)
        return ledgers, call_id or f"call_{uuid4().hex}"

    def _run(
        self,
        *args: Any,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> tuple[Any, Any]:
        ledgers, call_id = self._setup(
            run_manager, None if run_manager is None else run_manager.run_id
        )
        config: dict[str, Any] = {"metadata": {CITED_TOOL_METADATA_KEY: True}}
        if run_manager is not None:
            config["callbacks"] = run_manager.get_child()
        with collect_retrieved() as documents:
            output = self._runner.invoke(self._input(args, kwargs, call_id), config)  # type: ignore[arg-type]
        return self._present(
            output, documents, ledgers, call_id, kwargs or (args[0] if args else None)
        )

    async def _arun(
        self,
        *args: Any,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> tuple[Any, Any]:
        ledgers, call_id = self._setup(
            run_manager, None if run_manager is None else run_manager.run_id
        )
        config: dict[str, Any] = {"metadata": {CITED_TOOL_METADATA_KEY: True}}
        if run_manager is not None:
            config["callbacks"] = run_manager.get_child()
        with collect_retrieved() as documents:
            output = await self._runner.ainvoke(self._input(args, kwargs, call_id), config)  # type: ignore[arg-type]
        return self._present(
            output, documents, ledgers, call_id, kwargs or (args[0] if args else None)
        )

    def _present(
        self,
        output: Any,
        documents: list[Any],
        ledgers: list[tuple[SourceLedger, CitationCallbackHandler | None]],
        call_id: str,
        arguments: Any,
    ) -> tuple[Any, Any]:
        """The agent's view of the output (numbered sources) and the artifact (the output)."""
        content, artifact = output, output
        if isinstance(output, ToolMessage):
            content = output.content
            artifact = output.artifact if output.artifact is not None else output.content
        if not ledgers:
            ledgers = [(SourceLedger(), None)]
        args = arguments if isinstance(arguments, (Mapping, str)) else None
        numbered: list[str] = []
        ledger = ledgers[0][0]
        for other, other_handler in ledgers:
            registry = other_handler.registry if other_handler is not None else None
            if documents:
                # What a retriever inside the call read (a handler watching the run reports
                # the documents it could not read).
                found = tool_sources(
                    self.tool.name,
                    output,
                    documents,
                    [],
                    call_id=call_id,
                    arguments=args,
                    registry=registry,
                )
                ids = other.add_all(found)
            else:
                ids = other.add_tool_output(
                    self.tool.name, output, call_id=call_id, arguments=args, registry=registry
                )
            if other is ledger:
                numbered = ids
        listed = [(ledger.sid(i), ledger.get(i)) for i in dict.fromkeys(numbered)]
        shown = numbered_result(
            [(n, source) for n, source in listed if n is not None and source is not None],
            self.tool.name,
            content,
            ledger=ledger,
            budget_tokens=self.budget_tokens,
            prefer=self.prefer,
        )
        return shown, artifact


def cite_tools(
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    budget_tokens: int | None = None,
    prefer: Literal["content", "snippet"] = "content",
) -> list[CitedTool]:
    """Wrap tools so an agent sees their results as numbered sources it can cite.

    Each result is listed as ``[sid:N] Title`` and its text, numbered by the source's ``sid``
    in the run's ledger (stable across calls: a page found twice keeps its number), so the
    agent's final answer can cite ``[N]`` and `CitationCallbackHandler` resolves it to the
    source. Pair with `unicite.markers.citation_instructions` in the agent's system prompt.

    Args:
        tools: LangChain tools, or functions (made tools with ``@tool`` semantics).
        budget_tokens: The most tokens one tool output may take; None for no limit.
        prefer: Show each source's full text or its snippet.

    Raises:
        UsageError: An item is neither a tool nor a function, or an option is invalid.
    """
    if isinstance(tools, (BaseTool, str, bytes)) or not isinstance(tools, Sequence):
        raise UsageError("cite_tools takes a list of tools")
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0
    ):
        raise UsageError(f"budget_tokens must be a non-negative int or None, got {budget_tokens!r}")
    if prefer not in ("content", "snippet"):
        raise UsageError(f"prefer must be 'content' or 'snippet', got {prefer!r}")
    wrapped = []
    for item in tools:
        if isinstance(item, CitedTool):
            item = item.tool
        if not isinstance(item, BaseTool):
            if not callable(item):
                raise UsageError(f"not a tool: {type(item).__name__}")
            item = make_tool(item)
        wrapped.append(CitedTool(item, budget_tokens=budget_tokens, prefer=prefer))
    return wrapped
