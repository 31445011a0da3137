"""Extraction forensics: with ``UNICITE_DEBUG_GROUNDING`` set, one log record per response read.

When grounding runs but no citation comes out, the reason is in the response: grounding
metadata without supports, a web search whose answer carries no annotations, a shape the
reader did not expect. With the environment variable set (``1``, ``true``, ``on``...; read on
every call), each answer `unicite.extract` (and `collect_stream`, `extract_content`) builds
logs one INFO record on the ``unicite.grounding`` logger: the provider, the grounding keys found
in the response, how many tool calls, citations and sources, the first output item's type and
the start of the text, with a warning in words when tool calls or grounding metadata came back
without citations. The same facts are on the record as ``record.unicite_grounding`` (a dict).

So that setting the variable alone shows the records, the logger gets level INFO when none is
set for it, and a stderr handler when no handler would receive them. Unset, nothing is logged
or configured; nothing is logged either while citations are disabled. Never raises.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from unicite._text import sanitize_display, truncate
from unicite.exceptions import UsageError
from unicite.model import CitedAnswer
from unicite.settings import resolve_enabled

__all__ = ["ENV_VAR", "debug_grounding", "enabled"]

ENV_VAR = "UNICITE_DEBUG_GROUNDING"
"""The environment variable that turns the forensics on."""

logger = logging.getLogger("unicite.grounding")

PREVIEW = 120
"""The most characters of the answer text a record shows."""

# Keys under which providers return grounding data (camelCase and snake_case alike): Gemini's
# grounding metadata and its parts, citations and annotations of OpenAI, Anthropic, Cohere and
# Perplexity, and search results.
_GROUNDING_KEYS = frozenset(
    {
        "groundingMetadata",
        "grounding_metadata",
        "groundingChunks",
        "grounding_chunks",
        "groundingSupports",
        "grounding_supports",
        "groundingAttributions",
        "grounding_attributions",
        "webSearchQueries",
        "web_search_queries",
        "retrievalQueries",
        "retrieval_queries",
        "retrievalMetadata",
        "retrieval_metadata",
        "searchEntryPoint",
        "search_entry_point",
        "citationMetadata",
        "citation_metadata",
        "annotations",
        "citations",
        "search_results",
    }
)
# Keys whose non-empty value is grounding metadata that should have produced citations.
_CITING_KEYS = frozenset(
    {
        "groundingChunks",
        "grounding_chunks",
        "groundingSupports",
        "grounding_supports",
        "groundingAttributions",
        "grounding_attributions",
        "retrievalMetadata",
        "retrieval_metadata",
        "citationMetadata",
        "citation_metadata",
        "annotations",
        "citations",
        "search_results",
    }
)
_MAX_NODES = 20_000
_MAX_DEPTH = 16
_handler: logging.Handler | None = None
_lock = threading.Lock()


def enabled() -> bool:
    """Whether ``UNICITE_DEBUG_GROUNDING`` asks for forensics (any value but off-words)."""
    value = os.environ.get(ENV_VAR)
    if not value:
        return False
    try:
        return resolve_enabled(value)
    except UsageError:
        return True  # an unknown word still asks for debugging


def debug_grounding(answer: CitedAnswer, response: object = None) -> None:
    """Log the forensics of one answer read from `response`, when the variable asks for them.

    Args:
        answer: The answer the reader built.
        response: The response as data (a dict), when there is one; a stream has none.
    """
    if not enabled():
        return
    try:
        facts = forensics(answer, response)
        _prepare()
        logger.info("%s", describe(facts), extra={"unicite_grounding": facts})
    except Exception:
        logger.debug("grounding forensics failed", exc_info=True)


def forensics(answer: CitedAnswer, response: object = None) -> dict[str, Any]:
    """The facts one record reports, as plain data."""
    keys: dict[str, int | None] | None = None
    if response is not None:
        keys = _grounding_keys(response) if isinstance(response, Mapping) else {}
    tool_calls = answer.extras.get("tool_calls")
    if not isinstance(tool_calls, int) or isinstance(tool_calls, bool):
        tool_calls = 0
    warnings = []
    present = keys is not None and any(
        count != 0 for key, count in keys.items() if key.rsplit(".", 1)[-1] in _CITING_KEYS
    )
    if not answer.citations:
        if present:
            warnings.append("grounding metadata present but no citations")
        if tool_calls:
            warnings.append(f"{tool_calls} tool call(s) made but no citations extracted")
        elif answer.extras.get("grounded_effective") is True and not present:
            warnings.append("grounding ran but no citations extracted")
    return {
        "provider": answer.provider,
        "model": answer.model,
        "grounded_effective": answer.extras.get("grounded_effective"),
        "tool_calls": tool_calls,
        "citations": len(answer.citations),
        "sources": len(answer.sources),
        "diagnostics": len(answer.diagnostics),
        "first_diagnostic": truncate(sanitize_display(answer.diagnostics[0]), PREVIEW)
        if answer.diagnostics
        else None,
        "grounding_keys": keys,
        "first_output_item": _first_item(response) if response is not None else "n/a",
        "text": truncate(sanitize_display(answer.text).strip(), PREVIEW),
        "warnings": warnings,
    }


def describe(facts: Mapping[str, Any]) -> str:
    """One line from `forensics`'s facts."""
    who = facts["provider"] or "unknown provider"
    if facts["model"]:
        who = f"{who} ({sanitize_display(facts['model'])[:80]})"
    head = (
        f"{who}: {facts['tool_calls']} tool call(s), {facts['citations']} citation(s), "
        f"{facts['sources']} source(s)"
    )
    keys = facts["grounding_keys"]
    shown_keys = (
        "n/a (no single response)"
        if keys is None
        else ", ".join(k if c is None else f"{k}[{c}]" for k, c in keys.items()) or "none"
    )
    parts = [
        head,
        *facts["warnings"],
        f"grounding keys found: {shown_keys}",
        f"grounded_effective: {facts['grounded_effective']}",
        f"diagnostics: {facts['diagnostics']}"
        + (f" (first: {facts['first_diagnostic']})" if facts["first_diagnostic"] else ""),
        f"first output item: {facts['first_output_item']}",
        f"text: {facts['text']!r}",
    ]
    return "; ".join(parts)


def _grounding_keys(data: Mapping[str, Any]) -> dict[str, int | None]:
    """Grounding keys present in `data`, each with its list's total length (None if no list).

    A key inside grounding metadata is shown under it (``groundingMetadata.groundingChunks``).
    The walk is bounded: huge responses are read only in part.
    """
    found: dict[str, int | None] = {}
    stack: list[tuple[object, int, str]] = [(data, 0, "")]
    nodes = 0
    while stack and nodes < _MAX_NODES:
        node, depth, under = stack.pop()
        nodes += 1
        if depth > _MAX_DEPTH:
            continue
        if isinstance(node, Mapping):
            for key, value in node.items():
                name = key if isinstance(key, str) else None
                inside = under
                if name in _GROUNDING_KEYS:
                    shown = f"{under}.{name}" if under else name
                    if isinstance(value, list):
                        found[shown] = (found.get(shown) or 0) + len(value)
                    else:
                        found.setdefault(shown, None)
                    if name in ("groundingMetadata", "grounding_metadata"):
                        inside = name
                if isinstance(value, (Mapping, list)):
                    stack.append((value, depth + 1, inside))
        elif isinstance(node, list):
            stack.extend((item, depth + 1, under) for item in node)
    return dict(sorted(found.items()))


def _first_item(data: object) -> str:
    """The type of the response's first output item: ``web_search_call``, ``text``...

    Responses ``output``, Anthropic and Cohere ``content``, a Bedrock Converse
    ``output.message``'s first content block (its key), a Gemini candidate's first part (its
    field name), a Chat Completions choice's message.
    """
    if not isinstance(data, Mapping):
        return type(data).__name__
    for key in ("output", "content"):
        items = data.get(key)
        if isinstance(items, list):
            return _kind(items[0]) if items else f"{key}: empty"
    output = data.get("output")
    if isinstance(output, Mapping):
        return _first_item(output)
    message = data.get("message")
    if isinstance(message, Mapping):
        return _first_item(message)
    candidates = data.get("candidates")
    if isinstance(candidates, list):
        if not candidates:
            return "candidates: empty"
        content = candidates[0].get("content") if isinstance(candidates[0], Mapping) else None
        parts = content.get("parts") if isinstance(content, Mapping) else None
        if isinstance(parts, list) and parts:
            return _kind(parts[0])
        return "candidate without parts"
    choices = data.get("choices")
    if isinstance(choices, list):
        if not choices or not isinstance(choices[0], Mapping):
            return "choices: empty"
        return "message" if isinstance(choices[0].get("message"), Mapping) else "choice"
    return "none"


def _kind(item: object) -> str:
    if isinstance(item, Mapping):
        kind = item.get("type")
        if isinstance(kind, str):
            return sanitize_display(kind)[:60]
        names = [k for k in item if isinstance(k, str) and k not in ("thought", "thoughtSignature")]
        return sanitize_display(names[0])[:60] if names else "empty object"
    return type(item).__name__


def _prepare() -> None:
    """Let the records through when the variable is all the user set."""
    global _handler
    if logger.level == logging.NOTSET and logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    if _handler is not None or logger.hasHandlers():
        return
    with _lock:
        if _handler is None:
            _handler = logging.StreamHandler(sys.stderr)
            _handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            logger.addHandler(_handler)
