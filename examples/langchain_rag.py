"""A LangChain RAG chain with citations: retriever, numbered sources, a chat model, one callback.

Runs offline by default, replaying a recorded OpenAI response; with ``OPENAI_API_KEY`` set it
calls the API live. Run it with ``uv run python examples/langchain_rag.py``.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_openai import ChatOpenAI

import unicite
from unicite.testing import live_or_replay
from unicite_langchain import CitationCallbackHandler, citation_prompt, number_sources

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_langchain_examples/test_rag_example.yaml"
QUESTION = "Wie viele Menschen leben in Zürich, und wie hoch liegt die Stadt?"

DOCUMENTS = [
    Document(
        page_content=(
            "Die Stadt Zürich zählte Ende 2024 rund 448 000 Einwohnerinnen und Einwohner; "
            "sie ist die grösste Stadt der Schweiz."
        ),
        metadata={"source": "https://www.stadt-zuerich.ch/bevoelkerung", "title": "Bevölkerung"},
    ),
    Document(
        page_content="Zürich liegt auf 408 m ü. M. am nördlichen Ende des Zürichsees.",
        metadata={"source": "https://de.wikipedia.org/wiki/Z%C3%BCrich", "title": "Zürich"},
    ),
    Document(
        page_content="Genève compte environ 203 000 habitants et accueille l'ONU.",
        metadata={"source": "https://fr.wikipedia.org/wiki/Gen%C3%A8ve", "title": "Genève"},
    ),
    Document(
        page_content="Lugano si trova sul lago omonimo, a 273 metri sul livello del mare.",
        metadata={"source": "https://it.wikipedia.org/wiki/Lugano", "title": "Lugano"},
    ),
]


class WordEmbeddings(Embeddings):
    """Hashed bag-of-words vectors: good enough to rank four documents, and offline."""

    def _embed(self, text: str) -> list[float]:
        vector = [0.05] + [0.0] * 127
        for word in re.findall(r"\w{3,}", text.lower()):
            slot = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 127
            vector[1 + slot] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded response unless ``OPENAI_API_KEY`` asks for a live call."""
    try:
        return live_or_replay(CASSETTE, env="OPENAI_API_KEY")
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def main() -> None:
    with replay():
        answer = ask(QUESTION)
    print(unicite.render(answer, "terminal", hyperlinks=False, width=88))
    print()
    print("Each claim as [source] origin: text (origin marker: the model wrote the [n] after it):")
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        print(f"[{numbers}] {citation.origin}: {citation.text!r}")


def ask(question: str) -> unicite.CitedAnswer:
    """Run the RAG chain once; the handler gives back its cited answer."""
    store = InMemoryVectorStore(WordEmbeddings())
    store.add_documents(DOCUMENTS)
    retriever = store.as_retriever(search_kwargs={"k": 3})

    chain = (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt("Beantworte die Frage auf Deutsch, nur mit den Quellen unten.")
        | ChatOpenAI(model="gpt-5.2", temperature=0)
        | StrOutputParser()
    )
    handler = CitationCallbackHandler()
    chain.invoke(question, config={"callbacks": [handler]})
    if handler.answer is None:
        sys.exit("the run ended without an answer")
    return handler.answer


if __name__ == "__main__":
    main()
