"""The extractor registry: tool-name patterns mapped to extractors, and `from_tool_output`."""

from __future__ import annotations

import json
import re
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._common import ToolCall, shown
from unicite.sources._extractors import NAMED_READERS, Reader, decode_output, sniff

__all__ = [
    "EXTRACTORS",
    "Extractor",
    "ExtractorRegistry",
    "default_registry",
    "from_tool_output",
    "register",
    "unregister",
]

Extractor = Callable[[str, str | None, Mapping[str, Any], Any], list[Source]]
"""``(tool_name, tool_call_id, arguments, output) -> list[Source]``.

``output`` arrives decoded: JSON text parsed, SDK and framework objects dumped to dicts, bytes
decoded; plain text stays a ``str``. ``arguments`` is a dict (JSON text is parsed).
"""


class _Builtin:
    """A built-in extractor: callable with the public signature, readable with diagnostics."""

    def __init__(self, name: str, reader: Reader) -> None:
        self.name = name
        self.reader = reader

    def __call__(
        self, tool_name: str, tool_call_id: str | None, arguments: Mapping[str, Any], output: Any
    ) -> list[Source]:
        call = ToolCall(tool_name, tool_call_id, _arguments(arguments, []))
        return self.run(decode_output(output, call), call)

    def run(self, data: Any, call: ToolCall) -> list[Source]:
        found = self.reader(data, call)
        return sniff(data, call) if found is None else found

    def __repr__(self) -> str:
        return f"<unicite extractor {self.name!r}>"


EXTRACTORS: Mapping[str, Extractor] = types.MappingProxyType(
    {name: _Builtin(name, reader) for name, (_, reader) in NAMED_READERS.items()}
)
"""The built-in extractors by name, to register under your own tool names.

``"auto"`` is the shape-sniffing fallback; the others (``"tavily"``, ``"serper"``,
``"google_cse"``, ``"brave"``, ``"exa"``, ``"searxng"``, ``"bing"``, ``"duckduckgo"``,
``"wikipedia"``, ``"fetch"``, ``"http"``, ``"documents"``, ``"mcp"``) try their tool's shapes
first and sniff when the output is something else. ``"http"`` keeps output it does not
recognise as an ``api`` source (seed 001's ``httpClientExtractor``), ``"mcp"`` as an ``mcp``
source (seed 001's ``mcpToolExtractor``, registered for ``mcp.<server>__<tool>`` and
``mcp__<server>__<tool>``); web pages and documents they find stay ``web`` / ``document``.
"""


def _arguments(arguments: object, diagnostics: list[str]) -> dict[str, Any]:
    """Tool-call arguments as a dict: providers send a dict or JSON text."""
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, (str, bytes)):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            diagnostics.append("tool-call arguments are not valid JSON; ignored")
            return {}
        except RecursionError:
            diagnostics.append("tool-call arguments are nested too deeply; ignored")
            return {}
        if isinstance(parsed, dict):
            return parsed
        return {"input": parsed}
    raise UsageError(f"arguments must be a dict or JSON text, got {type(arguments).__name__}")


def _compile(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    if not isinstance(pattern, str) or not pattern:
        raise UsageError("a tool-name pattern must be a non-empty regex string or a compiled regex")
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as err:
        raise UsageError(f"invalid tool-name pattern {pattern!r}: {err}") from err


_NAMES_KEPT = 256
"""How many tool names a registry remembers the extractor of."""


class ExtractorRegistry:
    """Tool-name patterns mapped to extractors; the latest matching registration wins.

    A string pattern is searched case-insensitively in the tool name (anchor it with ``^…$``
    for an exact name); a compiled pattern is used as it is. Tools no pattern matches go to the
    shape-sniffing fallback. Safe to share between threads.
    """

    def __init__(self, *, defaults: bool = True) -> None:
        self._lock = threading.Lock()
        self._entries: tuple[tuple[re.Pattern[str], Extractor], ...] = ()
        # Tool names already matched, valid while `_entries` is the tuple they were matched
        # against (registering replaces it): RAG runs ask for the same few names every time.
        self._found: tuple[object, dict[str, Extractor | None]] = ((), {})
        if defaults:
            for name, (pattern, _) in NAMED_READERS.items():
                if pattern:
                    self.register(pattern, EXTRACTORS[name])

    def register(self, pattern: str | re.Pattern[str], extractor: Extractor) -> None:
        """Map tool names matching `pattern` to `extractor`, ahead of earlier registrations."""
        if not callable(extractor):
            raise UsageError(f"extractor must be callable, got {type(extractor).__name__}")
        compiled = _compile(pattern)
        with self._lock:
            self._entries = (*self._entries, (compiled, extractor))

    def unregister(self, pattern: str | re.Pattern[str]) -> bool:
        """Remove every registration made with `pattern`; return whether there was one."""
        compiled = _compile(pattern)
        with self._lock:
            kept = tuple(
                (p, e)
                for p, e in self._entries
                if (p.pattern, p.flags) != (compiled.pattern, compiled.flags)
            )
            removed = len(kept) != len(self._entries)
            self._entries = kept
        return removed

    def extractor_for(self, tool_name: str) -> Extractor | None:
        """The extractor that handles `tool_name`, or None for the sniffing fallback."""
        entries = self._entries
        matched, found = self._found
        if matched is not entries:
            found = {}
            self._found = (entries, found)
        elif tool_name in found:
            return found[tool_name]
        extractor = next((e for p, e in reversed(entries) if p.search(tool_name)), None)
        if len(found) < _NAMES_KEPT and isinstance(tool_name, str):
            found[tool_name] = extractor
        return extractor

    def extract(
        self,
        tool_name: str,
        output: Any,
        *,
        call_id: str | None = None,
        arguments: Mapping[str, Any] | str | None = None,
        diagnostics: list[str] | None = None,
    ) -> list[Source]:
        """Sources in one tool output; see `from_tool_output`."""
        if not isinstance(tool_name, str) or not tool_name.strip():
            raise UsageError("tool_name must be a non-empty string")
        if call_id is not None and not isinstance(call_id, str):
            raise UsageError(f"call_id must be a string, got {type(call_id).__name__}")
        if diagnostics is not None and not isinstance(diagnostics, list):
            raise UsageError("diagnostics must be a list to append to")
        notes: list[str] = []
        # Lone surrogates (from broken JSON escapes) are spelled out: a name must be valid text.
        tool = tool_name.strip().encode("utf-8", "backslashreplace").decode("utf-8")
        call = ToolCall(tool, call_id or None, _arguments(arguments, notes), notes)
        try:
            data = decode_output(output, call)
            extractor = self.extractor_for(call.tool)
            if extractor is None:
                sources = sniff(data, call)
            elif isinstance(extractor, _Builtin):
                sources = extractor.run(data, call)
            else:
                sources = self._run_custom(extractor, data, call)
        except Exception as err:
            # The last resort for output no reader foresaw: the tool's caller must never fail
            # because its output was odd. The fuzz suite keeps this path unreached.
            call.note(
                f"internal error reading the output of {call.tool}: {type(err).__name__}: "
                f"{shown(err)}; no sources taken from it"
            )
            sources = []
        if diagnostics is not None:
            diagnostics.extend(notes)
        return sources

    @staticmethod
    def _run_custom(extractor: Extractor, data: Any, call: ToolCall) -> list[Source]:
        name = getattr(extractor, "__name__", type(extractor).__name__)
        try:
            result = extractor(call.tool, call.call_id, dict(call.arguments), data)
            items = list(result)
        except Exception as err:
            call.note(
                f"extractor {name} failed ({type(err).__name__}: {shown(err)}); "
                "read the output by its shape instead"
            )
            return sniff(data, call)
        sources: list[Source] = []
        for item in items:
            try:
                source = item if isinstance(item, Source) else Source.model_validate(item)
            except ValidationError as err:
                call.note(f"extractor {name} returned an invalid source: {err.errors()[0]['msg']}")
                continue
            if source.origin is None:
                source = source.model_copy(update={"origin": call.origin})
            sources.append(source)
        return sources


default_registry = ExtractorRegistry()
"""The registry `register`, `unregister` and `from_tool_output` use."""


def register(pattern: str | re.Pattern[str], extractor: Extractor) -> None:
    """Map tool names matching `pattern` (a regex) to `extractor`; later registrations win.

    Args:
        pattern: Searched case-insensitively in the tool name (``"^my_search$"`` for one
            exact name), or a compiled regex used as it is.
        extractor: ``(tool_name, tool_call_id, arguments, output) -> list[Source]``; it may
            also return dicts with `Source` fields. ``output`` arrives decoded (JSON parsed,
            objects dumped). If it raises, the output is read by its shape instead and a
            diagnostic says so. Built-ins are in `EXTRACTORS`.

    Raises:
        UsageError: The pattern is not a valid regex or the extractor is not callable.
    """
    default_registry.register(pattern, extractor)


def unregister(pattern: str | re.Pattern[str]) -> bool:
    """Remove the registrations made with `pattern`; return whether there were any."""
    return default_registry.unregister(pattern)


def from_tool_output(
    tool_name: str,
    output: Any,
    *,
    call_id: str | None = None,
    arguments: Mapping[str, Any] | str | None = None,
    diagnostics: list[str] | None = None,
    registry: ExtractorRegistry | None = None,
) -> list[Source]:
    """The sources in one tool or retriever output, each tagged with its `SourceOrigin`.

    Output may be a dict, a list, JSON text, plain text, bytes, or an object with
    ``model_dump()`` / ``to_dict()`` (LangChain ``Document``, LlamaIndex ``NodeWithScore``,
    MCP ``CallToolResult``, an HTTP client response). Search results and fetched pages come
    back as ``web`` sources (with their ``rank``), retrieved chunks as ``document`` (with the
    1-based ``extras["page_number"]`` of a paged document's chunk), an HTTP API's JSON
    response as ``api``, an MCP tool's resources and unrecognised result as ``mcp``, anything
    else as one ``tool`` source holding the raw output. Never raises on odd output: an errored
    tool, an empty result or unreadable data gives no sources and a diagnostic.

    Args:
        tool_name: The tool's name, matched against the registry.
        output: What the tool returned.
        call_id: The tool call's id, recorded in each source's `origin`.
        arguments: The call's arguments (dict or JSON text); some tools need them (the URL a
            fetch tool read, the language of a Wikipedia search).
        diagnostics: A list to append what was odd or dropped to (one line per problem).
        registry: The registry to use instead of the default one.

    Returns:
        The sources in the order the tool listed them.

    Raises:
        UsageError: `tool_name` is empty or an argument has the wrong type.
    """
    return (registry or default_registry).extract(
        tool_name, output, call_id=call_id, arguments=arguments, diagnostics=diagnostics
    )
