"""Every final provider response the project holds: cassette bodies and JSON fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from unicite.analytics import Row
from unicite.analytics import fast_row as _fast_row
from unicite.providers import BUILTIN_PROVIDERS

ROOT = Path(__file__).resolve().parents[2]


def _json_values(value: Any) -> Iterator[Any]:
    if isinstance(value, str):
        try:
            yield json.loads(value)
        except ValueError:
            return
    else:
        yield value


def responses() -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(name, response)`` for every JSON object body a built-in reader detects."""
    for path in sorted((ROOT / "cassettes").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for k, item in enumerate(data.get("interactions", [])):
            response = item.get("response", {})
            body = response.get("parsed_body", response.get("body"))
            if isinstance(body, Mapping) and "string" in body:
                body = body["string"]
            for value in _json_values(body):
                if isinstance(value, Mapping) and reader_of(value) is not None:
                    yield f"{path.relative_to(ROOT)}#{k}", value
    for path in sorted((ROOT / "tests" / "data").rglob("*.json")):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(value, Mapping) and reader_of(value) is not None:
            yield str(path.relative_to(ROOT)), value


def reader_of(data: Mapping[str, Any]) -> str | None:
    """The class name of the built-in reader that detects `data` first."""
    for reader in BUILTIN_PROVIDERS:
        if reader.detect(data):
            return type(reader).__name__
    return None


def fast_row(data: Mapping[str, Any]) -> Row | None:
    """What the fast reader for `data` returns (None when there is none or it gives up)."""
    return _fast_row(data)
