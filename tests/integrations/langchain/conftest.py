"""Fixtures of the LangChain adapter tests: a small multilingual corpus behind a real retriever.

The retriever is LangChain's own ``InMemoryVectorStore`` with bag-of-words embeddings, so the
documents that share words with the question come first, deterministically and offline.
"""

from __future__ import annotations

import hashlib
import math
import re

import pytest

try:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore
except ImportError:  # the core-only environment: the test modules skip themselves
    collect_ignore_glob = ["*.py"]
else:

    class KeywordEmbeddings(Embeddings):
        """Hashed bag-of-words vectors: deterministic, offline, and they rank by shared words."""

        size = 256

        def _embed(self, text: str) -> list[float]:
            vector = [0.0] * self.size
            vector[0] = 0.05  # never a zero vector: cosine similarity stays defined
            for word in re.findall(r"\w{3,}", text.lower()):
                digest = hashlib.sha256(word.encode("utf-8")).digest()
                vector[1 + int.from_bytes(digest[:4], "big") % (self.size - 1)] += 1.0
            norm = math.sqrt(sum(x * x for x in vector))
            return [x / norm for x in vector]

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self._embed(text) for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return self._embed(text)

    CORPUS = [
        Document(
            id="millau",
            page_content=(
                "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus "
                "haut. Il a été inauguré le 14 décembre 2004."
            ),
            metadata={
                "source": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
                "title": "Viaduc de Millau — Wikipédia",
            },
        ),
        Document(
            id="normandie",
            page_content=(
                "Le pont de Normandie, long de 2 143 mètres, relie Le Havre à Honfleur depuis "
                "le 20 janvier 1995."
            ),
            metadata={
                "source": "https://fr.wikipedia.org/wiki/Pont_de_Normandie",
                "title": "Pont de Normandie — Wikipédia",
            },
        ),
        Document(
            id="koehlbrand",
            page_content=(
                "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet."
            ),
            metadata={
                "source": "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke",
                "title": "Köhlbrandbrücke – Wikipedia",
            },
        ),
        Document(
            id="akashi",
            page_content="明石海峡大橋は全長3,911メートルの吊り橋で、1998年4月5日に開通しました。",
            metadata={
                "source": "https://ja.wikipedia.org/wiki/明石海峡大橋",
                "title": "明石海峡大橋 - Wikipedia",
            },
        ),
    ]
    """Four documents about bridges, in French, German and Japanese."""

    QUESTION = "Quelle est la hauteur du viaduc de Millau et quand a-t-il été inauguré ?"

    @pytest.fixture
    def corpus() -> list[Document]:
        return list(CORPUS)

    @pytest.fixture
    def question() -> str:
        return QUESTION

    @pytest.fixture
    def retriever() -> object:
        store = InMemoryVectorStore(KeywordEmbeddings())
        store.add_documents(CORPUS)
        return store.as_retriever(search_kwargs={"k": 3})
