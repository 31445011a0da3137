"""A pydantic-ai agent with citations: a search tool, numbered results, a cited answer.

Runs offline by default, replaying a recorded OpenAI response; with ``OPENAI_API_KEY`` set it
calls the API live. Run it with ``uv run python examples/pydantic_ai_agent.py``.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIResponsesModel

import unicite
from unicite.testing import live_or_replay
from unicite_pydantic_ai import citation_instructions, cite_tools, with_citations

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_pydantic_ai_examples/test_agent_example.yaml"
QUESTION = "Quand le viaduc de Millau a-t-il été inauguré, et quelle est sa hauteur ?"

PAGES = [
    {
        "url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        "title": "Viaduc de Millau — Wikipédia",
        "content": "Le viaduc de Millau culmine à 343 mètres au sommet de son plus haut pylône.",
    },
    {
        "url": "https://www.leviaducdemillau.com/fr/histoire",
        "title": "Histoire du viaduc",
        "content": "Le viaduc a été inauguré le 14 décembre 2004 et ouvert à la circulation "
        "deux jours plus tard.",
    },
]


def search(query: str) -> list[dict[str, str]]:
    """Search the pages about French bridges.

    Args:
        query: What to look for.
    """
    return PAGES


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded responses unless ``OPENAI_API_KEY`` asks for live calls."""
    try:
        return live_or_replay(CASSETTE, env="OPENAI_API_KEY", allow_playback_repeats=False)
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def main() -> None:
    with replay():
        agent = with_citations(
            Agent(
                OpenAIResponsesModel("gpt-5.2"),
                tools=cite_tools([search]),
                instructions=citation_instructions(),
            )
        )
        result = asyncio.run(agent.run(QUESTION))
    answer = result.citations
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    print("Each claim as [source] origin: text (origin marker: the model wrote the [n] after it):")
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        print(f"[{numbers}] {citation.origin}: {citation.text!r}")


if __name__ == "__main__":
    main()
