"""Turning whatever a caller hands over into plain JSON data, and reading it defensively.

SDK objects are read duck-typed through ``model_dump()`` (pydantic v2) or ``to_dict()``, so the
core never imports an SDK and never re-validates logged data through an SDK's types; the OpenAI
Agents SDK's run results and stream events (dataclasses holding agents) by class name and
attributes.
"""

from __future__ import annotations

import base64
import datetime
import enum
import json
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from unicite._text import int_of

__all__ = ["Reader", "to_data", "to_plain"]

_MAX_DEPTH = 256
"""Nesting levels `to_plain` follows; what lies deeper is cut (None)."""


class _Unreadable(Exception):
    """An object offers no way to be read as data, or its dump method failed."""


def _dump(obj: object) -> Any:
    """What an object's own dump method gives, in Python form (bytes still bytes).

    Python-mode dumps are taken because pydantic's JSON mode writes bytes in the URL-safe
    base64 alphabet (google-genai's ``ser_json_bytes="base64"``), while the providers' JSON
    carries the standard one.
    """
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="python", by_alias=True, exclude_none=False, warnings=False)
        except TypeError:
            pass  # a model_dump() that takes no such arguments
        except Exception as err:
            raise _Unreadable(f"could not read {type(obj).__name__}.model_dump(): {err}") from err
        try:
            return dump()
        except Exception as err:
            raise _Unreadable(f"could not read {type(obj).__name__}.model_dump(): {err}") from err
    for name in ("to_dict", "to_json_dict"):
        method = getattr(obj, name, None)
        if callable(method):
            try:
                return method()
            except Exception as err:
                raise _Unreadable(f"could not read {type(obj).__name__}.{name}(): {err}") from err
    raise _Unreadable(f"cannot read a {type(obj).__name__} as a provider response")


_RUN_RESULTS = {"RunResult": "last_agent", "RunResultStreaming": "current_agent"}
"""The OpenAI Agents SDK's run results, and the attribute naming the agent that answered."""
_RUN_EVENTS = frozenset(
    {"RawResponsesStreamEvent", "RunItemStreamEvent", "AgentUpdatedStreamEvent"}
)
"""The OpenAI Agents SDK's stream events (``Runner.run_streamed(...).stream_events()``)."""


def _agent(obj: object, attribute: str) -> dict[str, str | None]:
    """An agent's name and model name (a string, or a model object's ``model``)."""
    try:
        agent = getattr(obj, attribute, None)
    except Exception:  # a released agent reference
        agent = None
    name = getattr(agent, "name", None)
    model = getattr(agent, "model", None)
    if not isinstance(model, str):
        model = getattr(model, "model", None)
    return {
        "name": name if isinstance(name, str) else None,
        "model": model if isinstance(model, str) else None,
    }


def _agents_run(obj: object) -> dict[str, Any] | None:
    """An OpenAI Agents SDK run result or stream event as data, else None.

    Recognised by class name and attributes (the core imports no SDK). Run results and their
    items hold ``Agent`` objects (tools, hooks, callables) that are no data: a run result gives
    ``{"object": "agents.run_result", "agent", "model", "responses": [{"id", "output"}, ...]}``
    (the answering agent's name and model name, and its ``raw_responses``: the Responses output
    items of every model call, in order); a raw stream event ``{"type": "raw_response_event",
    "data": <Responses event>}``; a run item event ``{"type": "run_item_stream_event", "name",
    "item": {"type"}}``; an agent change ``{"type": "agent_updated_stream_event", "new_agent":
    {"name", "model"}}``.
    """
    kind = type(obj).__name__
    if kind in _RUN_RESULTS:
        raw = getattr(obj, "raw_responses", None)
        if not isinstance(raw, list) or not isinstance(getattr(obj, "new_items", None), list):
            return None
        responses = []
        for response in raw:
            output = getattr(response, "output", None)
            response_id = getattr(response, "response_id", None)
            responses.append(
                {
                    "id": response_id if isinstance(response_id, str) else None,
                    "output": _plain(output, 2) if isinstance(output, list) else [],
                }
            )
        agent = _agent(obj, _RUN_RESULTS[kind])
        return {
            "object": "agents.run_result",
            "agent": agent["name"],
            "model": agent["model"],
            "responses": responses,
        }
    if kind not in _RUN_EVENTS:
        return None
    event_type = getattr(obj, "type", None)
    if event_type == "raw_response_event" and hasattr(obj, "data"):
        return {"type": event_type, "data": _plain(obj.data, 1)}
    if event_type == "run_item_stream_event":
        item_type = getattr(getattr(obj, "item", None), "type", None)
        name = getattr(obj, "name", None)
        return {
            "type": event_type,
            "name": name if isinstance(name, str) else None,
            "item": {"type": item_type if isinstance(item_type, str) else None},
        }
    if event_type == "agent_updated_stream_event":
        return {"type": event_type, "new_agent": _agent(obj, "new_agent")}
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types whose values are JSON as they are (exactly these: subclasses may not be)."""


def _plain(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if depth > _MAX_DEPTH:
        return None
    if kind is dict:
        # Copied only when something in it changes: dicts parsed from JSON are the common case.
        # Scalars are skipped inline: they are most of the values, and calls cost.
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            if type(item) in _SCALARS and type(key) is str:
                continue
            new = _plain(item, depth + 1)
            if new is not item or type(key) is not str:
                if changed is None:
                    changed = {str(k): v for k, v in value.items()}
                changed[str(key)] = new
        return value if changed is None else changed
    if kind is list:
        copied: list[Any] | None = None
        for n, item in enumerate(value):
            if type(item) in _SCALARS:
                continue
            new = _plain(item, depth + 1)
            if new is not item:
                if copied is None:
                    copied = list(value)
                copied[n] = new
        return value if copied is None else copied
    if isinstance(value, enum.Enum):
        return _plain(value.value, depth + 1)
    if isinstance(value, Mapping):
        return {str(key): _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    run = _agents_run(value)
    if run is not None:
        return run
    try:
        return _plain(_dump(value), depth + 1)
    except _Unreadable:
        pass
    try:
        return to_jsonable_python(value)
    except Exception:
        return None


def to_plain(obj: object) -> Any:
    """Plain JSON data for an SDK object or anything holding SDK objects.

    SDK objects are dumped through ``model_dump()`` (``to_dict()`` for others), mappings and
    sequences are walked (a ``dict(sdk_object)`` keeps SDK objects as its values), enums become
    their values, dates ISO 8601 text (UTC as ``Z``), and bytes standard base64 (RFC 4648,
    padded), as the providers' JSON carries binary data: the Gemini API writes its bytes fields
    (``thoughtSignature``, ``inlineData.data``) so, and Anthropic and OpenAI take base64 file
    data in that alphabet. Values it cannot read become None, and nesting deeper than 256 levels
    is cut. Plain data comes back as it is, not copied.
    """
    return _plain(obj, 0)


def to_data(obj: object) -> tuple[Any, str | None]:
    """Plain JSON data for an SDK object, a dict, a list, or JSON text.

    Returns the data and, when it could not be read, a diagnostic instead.
    """
    if isinstance(obj, (bytes, bytearray)):
        try:
            obj = bytes(obj).decode("utf-8")
        except UnicodeDecodeError as err:
            return None, f"input is not UTF-8 text: {err}"
    if isinstance(obj, str):
        try:
            # Walked like any other data, so nesting past `_MAX_DEPTH` is cut the same way
            # whether a response comes as JSON text or as the dict it parses to.
            return _plain(json.loads(obj), 0), None
        except ValueError as err:
            return None, f"input is not valid JSON: {err}"
        except RecursionError:
            return None, "input is nested too deeply to read"
    if isinstance(obj, (Mapping, list, tuple)):
        return _plain(obj, 0), None
    run = _agents_run(obj)
    if run is not None:
        return run, None
    try:
        dumped = _dump(obj)
    except _Unreadable as err:
        return None, str(err)
    return _plain(dumped, 1), None


class Reader:
    """Typed access to untrusted JSON that records a diagnostic instead of raising.

    Every getter takes the container, the key and a human path for messages; a missing key is
    silent (providers omit fields freely), a present key of the wrong type is a diagnostic.
    """

    def __init__(self, diagnostics: list[str]) -> None:
        self.diagnostics = diagnostics

    def _wrong(self, path: str, expected: str, value: object) -> None:
        self.diagnostics.append(f"{path}: expected {expected}, got {type(value).__name__}")

    def get(self, data: object, key: str) -> Any:
        """Raw value of `key` when `data` is a mapping, else None."""
        if type(data) is dict:  # the common case, without the slower ABC check
            return data.get(key)
        return data.get(key) if isinstance(data, Mapping) else None

    def obj(self, data: object, key: str, path: str) -> Mapping[str, Any] | None:
        """A mapping field, or None."""
        value = self.get(data, key)
        if value is None or isinstance(value, Mapping):
            return value
        self._wrong(f"{path}.{key}", "an object", value)
        return None

    def items(self, data: object, key: str, path: str) -> list[Any]:
        """A list field, or an empty list."""
        value = self.get(data, key)
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self._wrong(f"{path}.{key}", "a list", value)
        return []

    def text(self, data: object, key: str, path: str) -> str | None:
        """A string field, or None."""
        value = self.get(data, key)
        if value is None or isinstance(value, str):
            return value
        self._wrong(f"{path}.{key}", "a string", value)
        return None

    def integer(self, data: object, key: str, path: str) -> int | None:
        """An integer field (integral floats and digit strings accepted), or None."""
        value = self.get(data, key)
        if value is None:
            return None
        if isinstance(value, bool):
            self._wrong(f"{path}.{key}", "an integer", value)
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and (parsed := int_of(value, signed=True)) is not None:
            return parsed
        self._wrong(f"{path}.{key}", "an integer", value)
        return None

    def number(self, data: object, key: str, path: str) -> float | None:
        """A number field, or None."""
        value = self.get(data, key)
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        self._wrong(f"{path}.{key}", "a number", value)
        return None
