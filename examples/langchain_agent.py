"""A tool-calling agent whose final answer cites the pages its tools found.

`cite_tools` shows the agent each search result under a number (``[sid:2] Title``) that stays
the same for the whole run; the agent cites ``[2]`` and `CitationCallbackHandler` turns the
markers into citations of those pages. The search tool reads a small local encyclopedia, so
only the model is remote: offline by default (a recorded Anthropic conversation is replayed),
live with ``ANTHROPIC_API_KEY`` set. Run it with ``uv run python examples/langchain_agent.py``.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, chain
from langchain_core.tools import tool

import unicite
from unicite.markers import citation_instructions
from unicite_langchain import CitationCallbackHandler, cite_tools

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


@tool
def search_encyclopedia(query: str) -> list[dict[str, str]]:
    """Search the encyclopedia; returns matching pages with their URL, title and text."""
    words = {w.lower() for w in query.split() if len(w) > 3}
    return [page for page in ENCYCLOPEDIA if words & set(page["content"].lower().split())]


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded conversation unless an API key asks for live calls."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return nullcontext()
    os.environ["ANTHROPIC_API_KEY"] = "offline-replay"
    try:
        import vcr
    except ImportError:
        sys.exit("offline mode needs vcrpy (uv sync installs it), or set ANTHROPIC_API_KEY")
    sys.path.insert(0, str(ROOT / "tests"))
    import _cassettes  # the project's reviewable cassette format

    player = vcr.VCR(record_mode="none")
    player.register_serializer("yaml", _cassettes)
    return player.use_cassette(str(CASSETTE), serializer="yaml")


def main() -> None:
    with replay():
        answer = ask(QUESTION)
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    for source in answer.sources:
        found_by = source.origin.tool if source.origin else "?"
        print(f"{answer.footnote_number(source.id)}. {source.title} (found by {found_by})")


def ask(question: str) -> unicite.CitedAnswer:
    """Run the agent once; the handler gives back its cited final answer."""
    tools = cite_tools([search_encyclopedia])
    by_name = {t.name: t for t in tools}
    model = ChatAnthropic(model="claude-sonnet-4-6", max_tokens=1024, temperature=0)
    model_with_tools = model.bind_tools(tools)
    system = (
        "Réponds en français. Cherche dans l'encyclopédie avant de répondre.\n\n"
        + citation_instructions()
    )

    @chain
    def agent(question: str, config: RunnableConfig) -> str:
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(question)]
        for _ in range(5):
            reply = model_with_tools.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                messages.append(by_name[call["name"]].invoke(call, config))
        return "(no answer after 5 steps)"

    handler = CitationCallbackHandler()
    agent.invoke(question, config={"callbacks": [handler]})
    if handler.answer is None:
        sys.exit("the run ended without an answer")
    return handler.answer


if __name__ == "__main__":
    main()
