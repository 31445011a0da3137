"""A LlamaIndex query engine whose answers carry exact, validated, renumbered citations.

`CitedQueryEngine` is a drop-in for LlamaIndex's `CitationQueryEngine`: same index, same
prompt, and ``response.metadata["citations"]`` holds a `unicite.CitedAnswer`. Runs offline by
default, replaying a recorded OpenAI response; with ``OPENAI_API_KEY`` set it calls the API
live. Needs llama-index-llms-openai, which the environment ``make demo`` builds has: run it
with ``.venv-demo/bin/python examples/llamaindex_query.py``. Anywhere else,
``pip install "unicite[testing]" unicite-llamaindex llama-index-llms-openai`` is enough.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode
from llama_index.llms.openai import OpenAIResponses

import unicite
from unicite.testing import live_or_replay
from unicite_llamaindex import CitedQueryEngine, from_llamaindex_response

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_llamaindex_examples/test_query_example.yaml"
QUESTION = "Qu’est-ce qu’une traboule, et combien y en a-t-il à Lyon ?"

PASSAGES = [
    (
        "traboule-definition",
        "https://www.lyon-france.com/decouvrir/traboules",
        "Les traboules – Lyon Tourisme",
        "Une traboule est un passage piéton qui traverse un pâté de maisons d’une rue à une "
        "autre, en passant par les cours intérieures des immeubles.",
    ),
    (
        "traboule-nombre",
        "https://fr.wikipedia.org/wiki/Traboule",
        "Traboule — Wikipédia",
        "On recense environ 500 traboules à Lyon, dont une quarantaine ouvertes au public, "
        "surtout dans le Vieux-Lyon et sur les pentes de la Croix-Rousse.",
    ),
    (
        "canuts",
        "https://www.croix-rousse.fr/histoire/canuts",
        "Les canuts de la Croix-Rousse",
        "Au XIXe siècle, les canuts, ouvriers de la soie, empruntaient les traboules pour "
        "porter leurs pièces de tissu à l’abri de la pluie.",
    ),
    (
        "fourviere",
        "https://www.fourviere.org/basilique",
        "La basilique de Fourvière",
        "La basilique Notre-Dame de Fourvière domine la ville depuis 1896.",
    ),
]


class WordEmbedding(BaseEmbedding):
    """Hashed bag-of-words vectors: good enough to rank four passages, and offline."""

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


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded response unless ``OPENAI_API_KEY`` asks for a live call."""
    try:
        return live_or_replay(CASSETTE, env="OPENAI_API_KEY")
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def ask(question: str) -> unicite.CitedAnswer:
    """Query the index once; the response carries its cited answer."""
    nodes = [
        TextNode(id_=node_id, text=text, metadata={"url": url, "title": title})
        for node_id, url, title, text in PASSAGES
    ]
    index = VectorStoreIndex(nodes, embed_model=WordEmbedding())
    engine = CitedQueryEngine.from_args(
        index, llm=OpenAIResponses(model="gpt-5.2", temperature=0), similarity_top_k=4
    )
    response = engine.query(question)
    return from_llamaindex_response(response)  # the CitedAnswer in response.metadata


def main() -> None:
    with replay():
        answer = ask(QUESTION)
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    print("Each claim as [source] start-end: text (str offsets into the answer), then what was")
    print("removed from the answer, and why:")
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        print(f"[{numbers}] {citation.start}-{citation.end}: {citation.text!r}")
    for note in answer.diagnostics:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
