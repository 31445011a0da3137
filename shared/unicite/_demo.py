"""The offline demonstration behind ``unicite demo`` and ``make demo``.

It replays one recorded response per provider (bundled with the package, the same bodies as the
project's cassettes), extracts their citations with the same code users call, and renders them
for the terminal.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from typing import Any, TextIO

from unicite._render import render
from unicite.model import CitedAnswer
from unicite.providers import extract

__all__ = ["DEMO_CASES", "demo_answers", "run_demo"]

DEMO_CASES = (
    ("OpenAI Responses API · web search", "openai_responses_web_search.json"),
    ("Anthropic Messages · document citations", "anthropic_document_citations.json"),
    ("Gemini · Google Search grounding", "gemini_google_search.json"),
)
"""(title, bundled response file) for each provider shown."""


def demo_response(name: str) -> Any:
    """One bundled provider response, as the provider's JSON."""
    data = (
        resources.files("unicite").joinpath("_demo_data").joinpath(name).read_text(encoding="utf-8")
    )
    return json.loads(data)


def demo_answers() -> list[tuple[str, CitedAnswer]]:
    """Each bundled response with the answer `extract` makes of it."""
    return [(title, extract(demo_response(name))) for title, name in DEMO_CASES]


def run_demo(*, hyperlinks: bool | None = None, out: TextIO | None = None) -> None:
    """Print every bundled answer with its citations, as a terminal user would see it."""
    stream = out or sys.stdout
    for title, answer in demo_answers():
        rule = "─" * max(0, 78 - len(title))
        stream.write(f"\n── {title} {rule}\n")
        stream.write(render(answer, "terminal", hyperlinks=hyperlinks, width=80))
        stream.write("\n")
        spans = ", ".join(f"{c.start}–{c.end}" for c in answer.citations)
        stream.write(
            f"   {answer.provider}: {len(answer.citations)} citations (str spans {spans}), "
            f"{len(answer.sources)} sources, {len(answer.diagnostics)} diagnostics\n"
        )
