"""What the built-in readers know of their providers' response shapes, by name.

Readers, their stream readers and what inspects responses for them (`llm_kind`, the grounding
forensics) must recognise the same item types and keys: they take them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANTHROPIC_QUIET_BLOCKS",
    "GEMINI_METADATA_PART_FIELDS",
    "GEMINI_PART_FIELDS",
    "GEMINI_PAYLOAD_PART_FIELDS",
    "GEMINI_TEXT_PART_FIELDS",
    "OPENAI_QUIET_ITEMS",
    "OPENAI_SEARCH_TOOLS",
    "interaction_key",
    "looks_like_interaction",
]

OPENAI_QUIET_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "computer_call",
        "computer_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
        "compaction",
        "program",
        "program_output",
        "additional_tools",
    }
)
"""OpenAI Responses output items that carry no answer text and no citation data."""

OPENAI_SEARCH_TOOLS = frozenset(
    {
        "web_search",
        "web_search_preview",
        "web_search_preview_2025_03_11",
        "web_search_2025_08_26",
        "file_search",
        "x_search",
    }
)
"""OpenAI Responses tools whose presence in the echoed request says a search was offered."""

ANTHROPIC_QUIET_BLOCKS = frozenset(
    {
        "thinking",
        "redacted_thinking",
        "tool_use",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
        "mcp_tool_listing",
        "advisor_tool_result",
        "compaction",
        "fallback",
    }
)
"""Anthropic content blocks that carry neither answer text nor sources: read past on purpose."""

GEMINI_TEXT_PART_FIELDS = frozenset({"text", "thought", "thoughtSignature"})
"""Gemini part fields that hold the answer's text (or say it is thinking)."""
GEMINI_PAYLOAD_PART_FIELDS = frozenset(
    {
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
        "toolCall",
        "toolResponse",
    }
)
"""Gemini part fields that hold something other than text: a call, a result, a file."""
GEMINI_METADATA_PART_FIELDS = frozenset(
    {
        "videoMetadata",
        "mediaResolution",
        "partMetadata",
        "audioTranscription",
        "mediaProcessing",
        "speechMetadata",
        "documentMetadata",
        "spreadsheetMetadata",
        "audioMetadata",
    }
)
"""Gemini part fields that describe a part without being one."""
GEMINI_PART_FIELDS = (
    GEMINI_TEXT_PART_FIELDS | GEMINI_PAYLOAD_PART_FIELDS | GEMINI_METADATA_PART_FIELDS
)
"""Every Gemini part field (camelCase) the reader knows; any other one is a diagnostic."""


def looks_like_interaction(data: Mapping[str, Any]) -> bool:
    """A Gemini ``Interaction``: typed ``steps`` (or beta ``outputs``) and an id or status."""
    if "candidates" in data or "choices" in data:
        return False
    items = data.get("steps")
    if items is None:  # SDK dumps write null for the list an API version does not send
        items = data.get("outputs")
    if not isinstance(items, list):
        return False
    if not any(key in data for key in ("id", "status", "model", "agent")):
        return False
    return all(isinstance(item, Mapping) and isinstance(item.get("type"), str) for item in items)


def interaction_key(key: str) -> str:
    """The snake_case name the Gemini reader gives an interaction's key: ``file_search``.

    An underscore goes before each capital that follows a lower-case letter or a digit.
    """
    out = []
    for n, ch in enumerate(key):
        if ch.isupper() and n and (key[n - 1].islower() or key[n - 1].isdigit()):
            out.append("_")
        out.append(ch.lower() if ch.isupper() else ch)
    return "".join(out)
