"""Every final provider response the project holds, and the checks the sink tests share."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from unicite.analytics import Row, analyze_one
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
    """The row the analytics sink reads from `data` (None when no reader detects it)."""
    return _fast_row(data)


def assert_rows_agree(data: Mapping[str, Any]) -> None:
    """The two sinks give `data` the same row: the analytics sink's and `extract()`'s."""
    assert analyze_one(data) == analyze_one(data, fast=False)


def check_corpus_response(name: str, data: Mapping[str, Any]) -> None:
    """A recorded response: read through the analytics sink, with `extract()`'s row."""
    assert fast_row(data) is not None, f"the analytics sink does not read {name}"
    assert_rows_agree(data)


def json_nodes(value: Any, found: list[Any] | None = None) -> list[Any]:
    """Every object and array in a JSON value, outermost first."""
    found = [] if found is None else found
    if isinstance(value, (dict, list)):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            json_nodes(item, found)
    return found
