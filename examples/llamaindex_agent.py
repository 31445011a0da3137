"""A LlamaIndex FunctionAgent whose answer cites the sources its tools found.

The agent has two tools: one searches local archives (a vector index, returning nodes), the
other the web (returning search results). `cite_tools` shows the model each result numbered
by the run (``[sid:N] Title``, a source found twice keeps its number), `CitationEventHandler`
follows the run and cites the agent's final answer through `unicite.cite`, and `citations_of`
reads that `CitedAnswer` from the agent's output: markers checked and renumbered, exact spans,
the sources as the tools returned them. Runs offline by default, replaying a recorded OpenAI
conversation; with ``OPENAI_API_KEY`` set it calls the API live. Needs
llama-index-llms-openai (the ``llamaindex-providers`` dependency group). Run it with
``uv run python examples/llamaindex_agent.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from pathlib import Path

from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.llms.openai import OpenAI

import unicite
from unicite.markers import citation_instructions
from unicite.testing import live_or_replay
from unicite_llamaindex import CitationEventHandler, citations_of, cite_tools

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_llamaindex_examples/test_agent_example.yaml"
QUESTION = (
    "Quand le pont du Gard a-t-il été construit, quelle est sa hauteur, et depuis quand "
    "est-il inscrit au patrimoine mondial ?"
)
SYSTEM_PROMPT = (
    "Réponds en français, en deux ou trois phrases. Cherche dans les archives, puis sur le "
    "web, avant de répondre.\n\n" + citation_instructions()
)

ARCHIVES = [
    (
        "gard-histoire",
        "https://www.pontdugard.fr/fr/histoire",
        "Histoire du pont du Gard",
        "Le pont du Gard, pont-aqueduc romain à trois niveaux, a été construit au Ier siècle "
        "après J.-C. pour acheminer l’eau d’Uzès jusqu’à Nîmes.",
    ),
    (
        "gard-dimensions",
        "https://fr.wikipedia.org/wiki/Pont_du_Gard",
        "Pont du Gard — Wikipédia",
        "Haut de 48,77 mètres, le pont du Gard est le plus haut pont-aqueduc connu du monde "
        "romain ; son niveau supérieur mesure 275 mètres de long.",
    ),
    (
        "aqueduc-nimes",
        "https://www.nimes.fr/patrimoine/aqueduc-romain",
        "L’aqueduc romain de Nîmes",
        "L’aqueduc de Nîmes parcourt une cinquantaine de kilomètres, avec une pente moyenne "
        "de 25 centimètres par kilomètre.",
    ),
]

WEB_RESULTS = [
    {
        "url": "https://whc.unesco.org/fr/list/344",
        "title": "Pont du Gard (aqueduc romain) — UNESCO",
        "content": "Le pont du Gard est inscrit sur la Liste du patrimoine mondial de "
        "l’UNESCO depuis 1985.",
    },
]


class WordEmbedding(BaseEmbedding):
    """Hashed bag-of-words vectors: good enough to rank three passages, and offline."""

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "WordEmbedding"

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * 128
        for word in re.findall(r"\w{4,}", text.lower()):
            slot = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 128
            vector[slot] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


def build_agent() -> FunctionAgent:
    """A FunctionAgent over OpenAI with the two tools, numbered by `cite_tools`."""
    nodes = [
        TextNode(id_=node_id, text=text, metadata={"url": url, "title": title})
        for node_id, url, title, text in ARCHIVES
    ]
    retriever = VectorStoreIndex(nodes, embed_model=WordEmbedding()).as_retriever(
        similarity_top_k=2
    )

    def search_archives(query: str) -> list[NodeWithScore]:
        """Search the local archives about Roman monuments; returns matching passages."""
        return retriever.retrieve(query)

    # A stand-in for a web search API, returning the page it would find.
    def search_web(query: str) -> list[dict[str, str]]:
        """Search the web; returns pages with their URL, title and text."""
        return WEB_RESULTS

    return FunctionAgent(
        tools=cite_tools([search_archives, search_web]),
        llm=OpenAI(model="gpt-4.1-mini", temperature=0),
        system_prompt=SYSTEM_PROMPT,
        streaming=False,
    )


async def ask(question: str) -> unicite.CitedAnswer | None:
    """Run the agent once while the handler follows it; the output carries its answer."""
    with CitationEventHandler():
        output = await build_agent().run(user_msg=question)
    return citations_of(output)


def main() -> None:
    with live_or_replay(CASSETTE, "OPENAI_API_KEY", allow_playback_repeats=False):
        answer = asyncio.run(ask(QUESTION))
    if answer is None:
        raise SystemExit("the agent's answer was not cited")
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        print(f"[{numbers}] {citation.start}-{citation.end}: {citation.text!r}")
    for note in answer.diagnostics:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
