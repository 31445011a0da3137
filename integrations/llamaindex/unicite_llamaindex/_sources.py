"""The sources in what a LlamaIndex tool returned: nodes, query engine responses, search results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.schema import BaseNode, NodeWithScore

from unicite import CitedAnswer, Source
from unicite.sources import SourceLedger, from_tool_output
from unicite_llamaindex._nodes import sources_from_nodes
from unicite_llamaindex._results import known_answer

__all__ = ["is_handoff", "rewrite_markers", "tool_sources"]

_NODES = (NodeWithScore, BaseNode)
_QUERY_RESPONSES = (Response, StreamingResponse, AsyncStreamingResponse, PydanticResponse)

HANDOFF_TOOL = "handoff"
"""The tool `AgentWorkflow` gives its agents to pass the request on: its output is no source."""


def _nodes(raw: Any) -> list[NodeWithScore | BaseNode] | None:
    """`raw` as a list of nodes, when it is a node or a non-empty sequence of nodes."""
    if isinstance(raw, _NODES):
        return [raw]
    if isinstance(raw, (list, tuple)) and raw and all(isinstance(item, _NODES) for item in raw):
        return list(raw)
    return None


def tool_sources(
    name: str,
    raw: Any,
    content: str,
    *,
    call_id: str | None = None,
    arguments: Mapping[str, Any] | str | None = None,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """The sources in one tool result, in the order the tool gave them.

    Nodes (a `RetrieverTool`'s, or a function's list of `NodeWithScore`) are read as
    `source_from_node` reads them; a query engine response (a `QueryEngineTool`'s) gives the
    sources of its ``source_nodes``; a `CitedAnswer`, or an agent's output a handler cited
    (an agent run as a tool), its sources; anything else (search
    results, fetched pages, JSON, text) is read by unicite's tool output readers, and what
    they cannot read is the text the model was shown, as one ``tool`` source.

    Args:
        name: The tool's name.
        raw: What the tool returned (``ToolOutput.raw_output``).
        content: The text the model was shown (``ToolOutput.content``).
        call_id: The tool call's id, recorded in each source's origin.
        arguments: The call's arguments.
        diagnostics: A list to append what was odd to.
    """
    tool = name or "tool"
    known = None if isinstance(raw, _QUERY_RESPONSES) else known_answer(raw)
    if known is not None:
        return list(known.sources)
    nodes = _nodes(raw.source_nodes if isinstance(raw, _QUERY_RESPONSES) else raw)
    if nodes is not None:
        refs = [(node, rank, None) for rank, node in enumerate(nodes)]
        return sources_from_nodes(refs, tool=tool, call_id=call_id, diagnostics=diagnostics)
    # A response without nodes is its text; anything else is read as the tool returned it,
    # and what the readers make nothing of as the text the model was shown.
    outputs = [content] if raw is None or isinstance(raw, _QUERY_RESPONSES) else [raw, content]
    notes: list[str] = []
    found: list[Source] = []
    for output in outputs:
        notes.clear()
        found = from_tool_output(
            tool, output, call_id=call_id, arguments=arguments, diagnostics=notes
        )
        if found or not content:
            break
    if diagnostics is not None:
        diagnostics.extend(notes)
    return found


def is_handoff(name: str, return_direct: Any) -> bool:
    """Whether a tool call is `AgentWorkflow`'s handoff (a control message, not a source)."""
    return name == HANDOFF_TOOL and return_direct is True


def rewrite_markers(answer: CitedAnswer, ledger: SourceLedger) -> str:
    """The answer's text with each citation marker naming its sources by their ledger sids.

    A query engine's answer numbers its own sources (``[1]`` is its first); shown to an agent
    beside sources numbered by the run's ledger, its markers must use the same numbers.
    Markers whose sources are not in the ledger are dropped.
    """
    spans: dict[tuple[int, int], list[str]] = {}
    for citation in answer.citations:
        if citation.marker_span is None or citation.origin != "marker":
            continue
        ids = spans.setdefault(citation.marker_span, [])
        ids.extend(i for i in citation.source_ids if i not in ids)
    text = answer.text
    for (start, end), ids in sorted(spans.items(), reverse=True):
        numbers = sorted({n for n in (ledger.sid(_resolved(ledger, i)) for i in ids) if n})
        marker = "".join(f"[{n}]" for n in numbers)
        text = text[:start] + marker + text[end:]
    return text


def _resolved(ledger: SourceLedger, source_id: str) -> str:
    return ledger.resolve(source_id) or source_id
