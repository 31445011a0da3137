"""LlamaIndex's CitationQueryEngine and unicite's CitedQueryEngine, side by side.

Both engines query the same index, and the same scripted model writes the same answer: it cites
``[4]`` first, then ``[1]``, ``[2]`` and ``[7]``, a source it was never shown. LlamaIndex hands
that text back as it is; unicite renumbers the sources in the order the answer cites them,
reports and removes ``[7]``, gives each chunk of a split passage an id of its own that stays
the same from run to run (LlamaIndex gives the chunks the passage's id, or fresh random ids,
depending on its version) and ties each claim to its source with exact offsets. Runs offline,
with llama-index-core only: ``uv run python examples/llamaindex_vs_citation_query_engine.py``.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.schema import TextNode

import unicite
from unicite_llamaindex import CitedQueryEngine, from_llamaindex_response

QUESTION = "Comment fonctionne le téléphérique de Grenoble, et depuis quand ?"
ANSWER = (
    "Les « bulles » du téléphérique relient le centre-ville au fort de la Bastille en "
    "quelques minutes [4]. Il fonctionne depuis 1934, ce qui en fait l’un des premiers "
    "téléphériques urbains au monde [1], et ses cabines actuelles datent de 1976 [2][7]."
)
# Small chunks, so that the first passage is cut in two and both engines cite its halves.
CHUNKS = {"citation_chunk_size": 40, "citation_chunk_overlap": 0, "similarity_top_k": 3}

PASSAGES = [
    (
        "bastille-histoire",
        "https://fr.wikipedia.org/wiki/T%C3%A9l%C3%A9ph%C3%A9rique_de_Grenoble",
        "Téléphérique de Grenoble-Bastille — Wikipédia",
        "Le téléphérique de Grenoble-Bastille fonctionne depuis 1934 : c’est l’un des premiers "
        "téléphériques urbains au monde.\n\n\nSes cabines actuelles datent de 1976 ; elles "
        "ont été rénovées en 2000 et transportent environ 300 000 voyageurs par an.",
    ),
    (
        "bastille-fort",
        "https://www.bastille-grenoble.fr/le-fort",
        "Le fort de la Bastille",
        "Le fort de la Bastille domine Grenoble à 476 mètres d’altitude.",
    ),
    (
        "bastille-bulles",
        "https://www.bastille-grenoble.fr/telepherique",
        "Les bulles – Téléphérique Grenoble-Bastille",
        "Les cabines sphériques, surnommées « les bulles », relient le quai Stéphane-Jay au "
        "fort de la Bastille en quelques minutes.",
    ),
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


class ScriptedLLM(CustomLLM):
    """A stand-in model that always writes `ANSWER`."""

    @property
    def metadata(self) -> LLMMetadata:
        """What the model is."""
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Answer, whatever the prompt."""
        return CompletionResponse(text=ANSWER)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        """Answer in one chunk."""
        yield CompletionResponse(text=ANSWER, delta=ANSWER)


def build_index() -> VectorStoreIndex:
    """The three passages, indexed offline."""
    nodes = [
        TextNode(id_=node_id, text=text, metadata={"url": url, "title": title})
        for node_id, url, title, text in PASSAGES
    ]
    return VectorStoreIndex(nodes, embed_model=WordEmbedding())


def label(text: str) -> str:
    """The ``Source N:`` line a cited node starts with."""
    return text.split("\n", 1)[0]


def chunk_ids(engine: CitationQueryEngine) -> list[str]:
    """The ids of the cited chunks of the passage the index cuts in two."""
    response = engine.query(QUESTION)
    return [
        n.node.node_id
        for n in response.source_nodes
        if n.node.metadata.get("url") == PASSAGES[0][1]
    ]


def show(engine: CitationQueryEngine) -> Any:
    """Query once; print the text, the numbered nodes, and what their chunk ids are worth."""
    response = engine.query(QUESTION)
    print(response)
    for node in response.source_nodes:
        print(f"  {label(node.node.get_content())} {node.node.metadata['title']}")
    first, again = chunk_ids(engine), chunk_ids(engine)
    own, stable = len(set(first)) == 2, first == again
    print("  The Wikipédia passage is cut into two chunks, both cited; their node ids:")
    print(f"  the passage's two chunks have ids of their own: {own}")
    if not own:
        print("    (so a citation cannot tell which half it rests on)")
    print(f"  the same ids when asked again: {stable}")
    if not stable:
        print("    (so a citation saved from one run names no chunk of the next)")
    return response


def main() -> None:
    index = build_index()
    print(f"Question: {QUESTION}")
    print(f"The model answers (both engines): {ANSWER}")

    print("\n== LlamaIndex CitationQueryEngine ==")
    show(CitationQueryEngine.from_args(index, llm=ScriptedLLM(), **CHUNKS))
    print("  [7]: no such source, and nothing says so")

    print("\n== unicite CitedQueryEngine ==")
    response = show(CitedQueryEngine.from_args(index, llm=ScriptedLLM(), **CHUNKS))
    answer = from_llamaindex_response(response)  # response.metadata["citations"]
    print("  Each claim and the source it rests on, with exact offsets into the answer:")
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        print(f"  [{numbers}] answer[{citation.start}:{citation.end}] = {citation.text!r}")
    if answer.diagnostics:
        print("  What unicite removed from the answer, and why (answer.diagnostics):")
    for note in answer.diagnostics:
        print(f"  note: {note}")
    print('\nThe same answer as unicite.render(answer, "terminal") shows it:')
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))


if __name__ == "__main__":
    main()
