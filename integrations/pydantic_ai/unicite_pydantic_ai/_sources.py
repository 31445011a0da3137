"""The sources a run showed its model, read back from the run's messages.

A tool wrapped by `cite_tools` returns its result numbered for the model and records each
source with its number in the tool return's ``metadata`` (which the model never sees). Other
tools' returns are read with `unicite.sources.from_tool_output`, each retrieved document its
own source, numbered in the order the run got them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from unicite import Source
from unicite.sources import SourceLedger, from_tool_output

__all__ = ["METADATA_KEY", "recorded", "shown_sources"]

METADATA_KEY = "unicite_sources"
"""The ``ToolReturn.metadata`` key under which `cite_tools` records ``{number: Source}``."""


def recorded(part: ToolReturnPart) -> dict[int, Source] | None:
    """The numbered sources a `cite_tools` tool recorded on its return, if it is one."""
    metadata = part.metadata
    if not isinstance(metadata, Mapping):
        return None
    numbered = metadata.get(METADATA_KEY)
    if not isinstance(numbered, Mapping):
        return None
    return {
        number: source
        for number, source in numbered.items()
        if isinstance(number, int) and isinstance(source, Source)
    }


def tool_returns(messages: Sequence[ModelMessage]) -> list[ToolReturnPart]:
    """Every function tool return in `messages`, in order."""
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def shown_sources(
    messages: Sequence[ModelMessage], diagnostics: list[str]
) -> dict[int, Source] | SourceLedger:
    """What the model was shown, as `unicite.cite` takes it.

    With `cite_tools` returns, the map from the numbers they showed to their sources; else a
    ledger of every tool return's sources in order (``[n]`` names the n-th).
    """
    returns = tool_returns(messages)
    numbered: dict[int, Source] = {}
    for part in returns:
        found = recorded(part)
        if found:
            numbered.update(found)
    if numbered:
        return dict(sorted(numbered.items()))
    ledger = SourceLedger()
    for part in returns:
        notes: list[str] = []
        try:
            found_sources = from_tool_output(
                part.tool_name, part.content, call_id=part.tool_call_id, diagnostics=notes
            )
            ledger.add_all(found_sources)
        except Exception as err:
            notes.append(f"the result of tool {part.tool_name!r} could not be read: {err!r}")
        diagnostics.extend(notes)
    diagnostics.extend(ledger.diagnostics)
    return ledger
