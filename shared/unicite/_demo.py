"""The offline demonstration behind ``unicite demo`` and ``make demo``.

It replays one recorded response per provider (bundled with the package, the same bodies as the
project's cassettes), extracts their citations with the same code users call, and renders them
for the terminal.
"""

from __future__ import annotations

import json
import sys
import textwrap
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
    stream.write(
        "Three recorded provider responses (no network, no API key), each read by\n"
        "unicite.extract and printed by unicite.render: the answer with [n] markers,\n"
        "then the sources it cites.\n"
    )
    for title, answer in demo_answers():
        rule = "─" * max(0, 78 - len(title))
        stream.write(f"\n── {title} {rule}\n")
        stream.write(render(answer, "terminal", hyperlinks=hyperlinks, width=80))
        stream.write("\n")
        stream.write(
            textwrap.fill(
                _summary(answer), width=80, initial_indent="   ↳ ", subsequent_indent="     "
            )
        )
        stream.write("\n")


_PROVIDERS = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _summary(answer: CitedAnswer) -> str:
    """What `extract` found in one response, in words."""
    provider = _PROVIDERS.get(answer.provider or "", answer.provider or "provider's")
    spans = list(dict.fromkeys(f"{c.start}–{c.end}" for c in answer.citations))
    if not spans:
        return f"The {provider} response gave no citations."
    ranges = ", ".join(spans[:-1]) + f" and {spans[-1]}" if len(spans) > 1 else spans[0]
    cited, total = len(answer.cited_sources()), len(answer.sources)
    if cited == total:
        sources = "its one source" if total == 1 else f"its {total} sources"
    else:
        sources = f"{cited} of its {total} sources (only those {cited} are listed)"
    problems = len(answer.diagnostics)
    notes = (
        "nothing was dropped or odd"
        if not problems
        else f"{_count(problems, 'note')} on what was dropped or odd (answer.diagnostics)"
    )
    citations = _count(len(answer.citations), "citation")
    return (
        f"The {provider} response gave {citations}, tying the answer's characters {ranges} "
        f"to {sources}; {notes}."
    )
