"""The published JSON Schema of `CitedAnswer`."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from unicite.model import CitedAnswer

__all__ = ["SCHEMA_FILE", "json_schema", "published_schema", "schema_text"]

SCHEMA_FILE = "cited_answer.schema.json"
"""Name of the schema file shipped inside the package (regenerate with ``unicite schema``)."""

_SCHEMA_ID = "https://unicite.dev/schema/cited_answer.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `CitedAnswer`, generated from the model (validation mode)."""
    schema = CitedAnswer.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _SCHEMA_ID, **schema}


def published_schema() -> dict[str, Any]:
    """The schema file committed with the package."""
    text = resources.files("unicite").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def schema_text() -> str:
    """The schema as the committed file spells it: sorted keys, two-space indent, newline."""
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
