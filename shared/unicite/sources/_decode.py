"""Decoding tool output into plain data, and recognising outputs that report an error."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from unicite._data import to_data
from unicite.sources._common import ToolCall, as_mapping, compact_json, first_str

__all__ = [
    "NO_RESULTS_RE",
    "as_data",
    "decode_output",
    "dicts",
    "error_message",
    "http_status",
    "mcp_text",
    "read_error",
]


class _Unreadable(Exception):
    """An object whose own serialisation failed; the message says how."""


def _dump(value: object) -> Any:
    """Plain data for an SDK or framework object (pydantic, to_dict, dataclass, HTTP response)."""
    if any(
        callable(getattr(value, name, None)) for name in ("model_dump", "to_dict", "to_json_dict")
    ):
        data, problem = to_data(value)
        if problem is not None:
            raise _Unreadable(problem)
        return data
    status = getattr(value, "status_code", getattr(value, "status", None))
    if isinstance(status, int) and hasattr(value, "url") and hasattr(value, "headers"):
        # httpx / requests / aiohttp-style responses: read duck-typed, never imported.
        text = getattr(value, "text", None)
        return {
            "url": str(value.url),
            "status": status,
            "headers": {str(k).lower(): str(v) for k, v in dict(value.headers).items()},
            "text": text if isinstance(text, str) else None,
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value


def decode_output(output: object, call: ToolCall) -> Any:
    """Tool output as str, dict or list: bytes decoded, JSON text parsed, objects dumped.

    Returns None (with a diagnostic) for output that cannot be read at all.
    """
    if isinstance(output, (bytes, bytearray)):
        try:
            output = bytes(output).decode("utf-8")
        except UnicodeDecodeError as err:
            call.note(f"output is not UTF-8 text: {err}")
            return None
    if isinstance(output, str):
        text = output.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                return json.loads(text)
            except ValueError:
                return output
            except RecursionError:
                call.note("output is nested too deeply to read")
                return None
        return output
    if output is None or isinstance(output, (Mapping, list)):
        return output
    if isinstance(output, tuple):
        return list(output)
    if isinstance(output, (bool, int, float)):
        return str(output)
    try:
        data = _dump(output)
    except _Unreadable as err:
        call.note(str(err))
        return None
    except Exception as err:  # a response whose .text or .headers raised
        call.note(f"could not read a {type(output).__name__}: {err!r}")
        return None
    if data is output:
        call.note(f"cannot read a {type(output).__name__} as tool output")
        return None
    return data


def as_data(value: object) -> Any:
    """A list element as data: mappings as they are, objects dumped lazily."""
    if isinstance(value, (Mapping, str, list)) or value is None:
        return value
    try:
        return _dump(value)
    except Exception:
        return None


def dicts(value: object) -> list[Mapping[str, Any]]:
    """The mapping elements of a list (objects dumped), or [] when it is not a list."""
    if not isinstance(value, list):
        return []
    return [m for m in (as_mapping(as_data(v)) for v in value) if m is not None]


_ERROR_TEXT_RE = re.compile(
    r"^\s*(?:(?:error|exception|tool ?exception|fatal)\s*[:(\[\-]"
    r"|<error>"
    r"|traceback \(most recent call last\)"
    r"|(?:tool (?:execution )?error|an error occurred|failed to [a-z]+|request failed)\b"
    r"|http(?:error)? ?[45]\d\d\b|[45]\d\d (?:client|server) error\b)",
    re.IGNORECASE,
)


NO_RESULTS_RE = re.compile(
    r"^\s*(?:no (?:good |relevant |matching )?(?:[\w-]+ ){0,3}results?(?: (?:were|was))? found"
    r"|no results?\b|nothing (?:was )?found)",
    re.IGNORECASE,
)


_RESULT_KEYS = (
    "results",
    "organic",
    "items",
    "web",
    "webPages",
    "data",
    "documents",
    "page_content",
    "query",
    "pages",
    "source_nodes",
)


def mcp_text(content: object) -> str:
    """The text of MCP / Anthropic content blocks (or the content itself when it is text)."""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block["text"]) for block in dicts(content) if isinstance(block.get("text"), str)
    )


def error_message(value: object, depth: int = 0) -> str:
    """A one-line message from the error objects APIs return (message, info, detail, ...)."""
    if isinstance(value, str):
        return value
    mapping = as_mapping(value)
    if mapping is not None and depth < 4:
        text = first_str(mapping, "message", "info", "error", "detail", "text", "reason")
        if text:
            return text
        nested = mapping.get("error") or mapping.get("detail")
        if nested is not None:
            return error_message(nested, depth + 1)
    if isinstance(value, list) and value and depth < 4:
        return error_message(value[0], depth + 1)
    return compact_json(value)[:300]


def http_status(data: Mapping[str, Any]) -> int | None:
    """The HTTP status a response-shaped mapping carries, when it has one."""
    keys = ["status", "status_code", "statusCode"]
    if any(k in data for k in ("message", "msg", "data")):
        keys.append("code")  # {"code": 422, "message": ...}; a bare "code" may mean anything
    for key in keys:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def read_error(data: Any) -> str | None:
    """Why a tool output is an error report, or None when it is not one."""
    if isinstance(data, str):
        if _ERROR_TEXT_RE.match(data):
            return " ".join(data.split())[:300]
        return None
    mapping = as_mapping(data)
    if mapping is None:
        return None
    if mapping.get("isError") is True or mapping.get("is_error") is True:
        return mcp_text(mapping.get("content")) or "the tool reported an error"
    if mapping.get("success") is False:
        return error_message(mapping.get("error") or mapping.get("message") or mapping)
    kind = mapping.get("_type") or mapping.get("type")
    if isinstance(kind, str) and kind.lower() in {"errorresponse", "error"}:
        return error_message(mapping.get("errors") or mapping.get("error") or mapping)
    if mapping.get("status") == "error" and "tool_call_id" in mapping:
        return error_message(mapping.get("content")) or "the tool reported an error"
    has_results = any(mapping.get(key) for key in _RESULT_KEYS)
    if not has_results:
        for key in ("error", "errors", "error_message", "errorMessage"):
            if mapping.get(key):
                return error_message(mapping[key])
        detail = mapping.get("detail")
        if detail and (len(mapping) == 1 or "error" in str(detail).lower()):
            return error_message(detail)
    status = http_status(mapping)
    if status is not None and status >= 400:
        body = mapping.get("body", mapping.get("text", mapping.get("message")))
        return f"HTTP {status}" + (f": {error_message(body)[:200]}" if body else "")
    return None
