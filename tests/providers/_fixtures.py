"""Provider fixtures come from the project's own cassettes: one source of truth per case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from unicite.providers import iter_sse

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"


def cassette_bodies(relative: str) -> list[Any]:
    """Response bodies of a cassette, in order: JSON bodies parsed, other bodies as text."""
    data = yaml.safe_load((CASSETTES / relative).read_text(encoding="utf-8"))
    bodies = []
    for item in data["interactions"]:
        response = item["response"]
        bodies.append(
            response["parsed_body"] if "parsed_body" in response else response.get("body")
        )
    return bodies


def sse_events(text: str) -> list[Any]:
    """The JSON events of an SSE body."""
    problems: list[str] = []
    events = list(iter_sse(text, problems))
    assert not problems, problems
    return events


def load_json(relative: str) -> Any:
    """A JSON fixture under tests/data/."""
    return json.loads((Path(__file__).resolve().parents[1] / "data" / relative).read_text("utf-8"))
