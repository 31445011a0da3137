"""Turning whatever a caller hands over into plain JSON data, and reading it defensively.

SDK objects are read duck-typed through ``model_dump()`` (pydantic v2) or ``to_dict()``, so the
core never imports an SDK and never re-validates logged data through an SDK's types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["Reader", "to_data"]


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
            return json.loads(obj), None
        except ValueError as err:
            return None, f"input is not valid JSON: {err}"
        except RecursionError:
            return None, "input is nested too deeply to read"
    if isinstance(obj, (Mapping, list, tuple)):
        return obj, None
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", by_alias=True, exclude_none=False, warnings=False), None
        except TypeError:
            try:
                return dump(), None
            except Exception as err:
                return None, f"could not read {type(obj).__name__}.model_dump(): {err}"
        except Exception as err:
            return None, f"could not read {type(obj).__name__}.model_dump(): {err}"
    for name in ("to_dict", "to_json_dict"):
        method = getattr(obj, name, None)
        if callable(method):
            try:
                return method(), None
            except Exception as err:
                return None, f"could not read {type(obj).__name__}.{name}(): {err}"
    return None, f"cannot read a {type(obj).__name__} as a provider response"


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
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
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
