"""`cite_tools`: tools whose results reach the model as numbered sources it can cite."""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic_ai import RunContext, Tool
from pydantic_ai._function_schema import FunctionSchema
from pydantic_ai.messages import ModelMessage, ToolReturn

from unicite import Source, UsageError
from unicite.markers import InstructionFormat, InstructionStyle
from unicite.markers import citation_instructions as _instructions
from unicite.sources import SourceLedger, build_digest, from_tool_output
from unicite_pydantic_ai._sources import METADATA_KEY, recorded, tool_returns

__all__ = ["AGENT_SOURCES_NOTE", "citation_instructions", "cite_tools"]

AGENT_SOURCES_NOTE = (
    "Your sources are the results of your tool calls: each result is listed under a label "
    "[sid:N], and N stays the same for the whole conversation."
)
"""Where an agent finds the sources the citation instructions speak of."""

_KEPT_RUNS = 1024
_UNLIMITED = 1 << 40


def citation_instructions(
    format: InstructionFormat = "markdown", style: InstructionStyle | None = None
) -> str:
    """The system prompt text asking an agent to cite the numbered results of `cite_tools`.

    `unicite.markers.citation_instructions`, followed by where an agent's sources are.

    Args:
        format: ``"markdown"`` or ``"html"`` answers.
        style: The marker style; None for the format's default (``[1]`` for Markdown).

    Raises:
        UsageError: A JSON format, or a style the format does not have.
    """
    if format == "json":
        raise UsageError("agents write text answers; use format='markdown' or 'html'")
    return f"{_instructions(format, style)}\n\n{AGENT_SOURCES_NOTE}"


class _RunLedgers:
    """One `SourceLedger` per run id, seeded from the sources earlier returns numbered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ledgers: OrderedDict[object, SourceLedger] = OrderedDict()

    def of(self, ctx: RunContext[Any]) -> SourceLedger:
        run_id = getattr(ctx, "run_id", None)
        key: object = run_id if run_id is not None else id(ctx.messages)
        with self._lock:
            ledger = self._ledgers.get(key)
            if ledger is None:
                ledger = self._ledgers[key] = _seeded(ctx.messages)
                while len(self._ledgers) > _KEPT_RUNS:
                    self._ledgers.popitem(last=False)
            else:
                self._ledgers.move_to_end(key)
            return ledger


def _seeded(messages: Sequence[ModelMessage]) -> SourceLedger:
    """A ledger numbering the sources earlier numbered returns showed as they showed them."""
    numbered: dict[int, Source] = {}
    for part in tool_returns(messages):
        numbered.update(recorded(part) or {})
    ledger = SourceLedger()
    for _, source in sorted(numbered.items()):
        ledger.add(source)
    return ledger


_LEDGERS = _RunLedgers()


def _numbered_text(
    shown: list[tuple[int, Source]],
    tool_name: str,
    content: Any,
    ledger: SourceLedger,
    budget_tokens: int | None,
    prefer: Literal["content", "snippet"],
) -> str:
    if len(shown) == 1 and isinstance(content, str) and shown[0][1].kind == "tool":
        return f"[sid:{shown[0][0]}] {tool_name}\n{content}"
    budget = _UNLIMITED if budget_tokens is None else budget_tokens
    listed = [source for _, source in shown]
    return build_digest(listed, budget, prefer, ledger=ledger, tokenizer="estimate")


@dataclasses.dataclass
class _NumberingSchema(FunctionSchema):
    """A tool's schema whose call returns the result numbered in the run's ledger."""

    budget_tokens: int | None = None
    prefer: Literal["content", "snippet"] = "content"

    async def call(self, args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        output = await super().call(args_dict, ctx)
        try:
            return self._number(output, args_dict, ctx)
        except Exception:
            return output  # numbering failed: the model sees the tool's own result

    def _number(self, output: Any, args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        value = output.return_value if isinstance(output, ToolReturn) else output
        name = ctx.tool_name or self.name
        found = from_tool_output(name, value, call_id=ctx.tool_call_id, arguments=args_dict)
        if not found:
            return output
        ledger = _LEDGERS.of(ctx)
        ids = list(dict.fromkeys(ledger.add_all(found)))
        shown = [
            (number, source)
            for number, source in ((ledger.sid(i), ledger.get(i)) for i in ids)
            if number is not None and source is not None
        ]
        text = _numbered_text(shown, name, value, ledger, self.budget_tokens, self.prefer)
        numbered = dict(shown)
        if isinstance(output, ToolReturn):
            metadata = output.metadata
            kept = dict(metadata) if isinstance(metadata, Mapping) else {"metadata": metadata}
            return dataclasses.replace(
                output, return_value=text, metadata={**kept, METADATA_KEY: numbered}
            )
        return ToolReturn(return_value=text, metadata={METADATA_KEY: numbered})


def _wrap(
    tool: Tool[Any], budget_tokens: int | None, prefer: Literal["content", "snippet"]
) -> Tool[Any]:
    schema = tool.function_schema
    if isinstance(schema, _NumberingSchema):
        schema = FunctionSchema(
            **{f.name: getattr(schema, f.name) for f in dataclasses.fields(FunctionSchema)}
        )
    fields = {f.name: getattr(schema, f.name) for f in dataclasses.fields(FunctionSchema)}
    wrapped = copy.copy(tool)
    wrapped.function_schema = _NumberingSchema(**fields, budget_tokens=budget_tokens, prefer=prefer)
    return wrapped


def cite_tools(
    tools: Sequence[Tool[Any] | Callable[..., Any]],
    *,
    budget_tokens: int | None = None,
    prefer: Literal["content", "snippet"] = "content",
) -> list[Tool[Any]]:
    """Wrap tools so an agent sees their results as numbered sources it can cite.

    Each result's sources (`unicite.sources.from_tool_output`: documents, search results, any
    registered shape; each retrieved document its own source) are listed as ``[sid:N] Title``
    and their text, N numbering the run's sources across all its calls (a page found twice
    keeps its number), so ``[N]`` in the answer names the source. The numbers go with the
    return as ``ToolReturn.metadata``, which the model never sees, and `cite_result` reads
    them back. A result with no sources reaches the model unchanged. Pair with
    `citation_instructions` in the agent's instructions.

    Args:
        tools: pydantic-ai `Tool` objects or tool functions (plain or taking a `RunContext`).
        budget_tokens: The most tokens one result may take; None for no limit.
        prefer: Show each source's full text or its snippet.

    Returns:
        The tools, numbering their results, for ``Agent(tools=...)``.

    Raises:
        UsageError: An item is neither a tool nor a function, or an option is invalid.
    """
    if isinstance(tools, (Tool, str, bytes)) or not isinstance(tools, Sequence):
        raise UsageError("cite_tools takes a list of tools")
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0
    ):
        raise UsageError(f"budget_tokens must be a non-negative int or None, got {budget_tokens!r}")
    if prefer not in ("content", "snippet"):
        raise UsageError(f"prefer must be 'content' or 'snippet', got {prefer!r}")
    wrapped: list[Tool[Any]] = []
    for item in tools:
        if not isinstance(item, Tool):
            if not callable(item):
                raise UsageError(f"not a tool: {type(item).__name__}")
            item = Tool(item)
        wrapped.append(_wrap(item, budget_tokens, prefer))
    return wrapped
