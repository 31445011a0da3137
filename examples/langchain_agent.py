"""A LangChain agent whose final answer cites the pages its tools found.

`create_agent` runs the tool-calling loop; `CitationMiddleware` shows the model each search
result under a number that stays the same for the whole run (``[sid:2] Title``), asks it to
cite ``[2]``, and cites its final answer with `unicite.cite`: the agent's state holds the
`CitedAnswer` under ``"citations"``. The search tool reads a small local encyclopedia, so only
the model is remote: offline by default (a recorded OpenAI conversation is replayed), live
with ``OPENAI_API_KEY`` set. Run it with ``uv run python examples/langchain_agent.py``.
"""

from __future__ import annotations

import re
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import unicite
from unicite.testing import live_or_replay
from unicite_langchain import CitationMiddleware

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_langchain_examples/test_agent_example.yaml"
QUESTION = "Quand le viaduc de Millau a-t-il été inauguré, et quelle est sa hauteur ?"

ENCYCLOPEDIA = [
    {
        "url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        "title": "Viaduc de Millau — Wikipédia",
        "content": "Le viaduc de Millau culmine à 343 mètres au sommet de son plus haut pylône.",
    },
    {
        "url": "https://www.leviaducdemillau.com/fr/histoire",
        "title": "Histoire du viaduc",
        "content": "Le viaduc a été inauguré le 14 décembre 2004, après trois ans de travaux.",
    },
    {
        "url": "https://fr.wikipedia.org/wiki/Pont_de_Normandie",
        "title": "Pont de Normandie — Wikipédia",
        "content": "Le pont de Normandie relie Le Havre à Honfleur depuis 1995.",
    },
]


def words(text: str) -> set[str]:
    return {word for word in re.findall(r"\w+", text.lower()) if len(word) > 3}


@tool
def search_encyclopedia(query: str) -> list[dict[str, str]]:
    """Search the encyclopedia; returns the pages containing every word of the query."""
    wanted = words(query)
    return [page for page in ENCYCLOPEDIA if wanted <= words(page["content"])]


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded conversation unless ``OPENAI_API_KEY`` asks for live calls.

    Every model call goes to the same URL: each recorded response is played once, in order.
    """
    try:
        return live_or_replay(CASSETTE, env="OPENAI_API_KEY", allow_playback_repeats=False)
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def main() -> None:
    with replay():
        answer = ask(QUESTION)
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    for source in answer.sources:
        found_by = source.origin.tool if source.origin else "?"
        print(f"{answer.footnote_number(source.id)}. {source.title} (found by {found_by})")


def ask(question: str) -> unicite.CitedAnswer:
    """Run the agent once; its state holds the cited final answer."""
    agent = create_agent(
        ChatOpenAI(model="gpt-5.2"),
        [search_encyclopedia],
        system_prompt="Réponds en français. Cherche dans l'encyclopédie avant de répondre.",
        middleware=[CitationMiddleware()],
    )
    state = agent.invoke({"messages": [{"role": "user", "content": question}]})
    answer = state["citations"]
    if answer is None:
        sys.exit("the agent ended without an answer")
    return answer


if __name__ == "__main__":
    main()
