"""A Haystack RAG pipeline with citations: BM25 retrieval, numbered documents, a cited answer.

`CitedAnswerBuilder` takes the place of Haystack's `AnswerBuilder`: the model's ``[n]`` markers
are checked against the documents the prompt numbered, renumbered in reading order, and a
marker naming no document is dropped. Runs offline by default, replaying a recorded OpenAI
response; with ``OPENAI_API_KEY`` set it calls the API live. Run it with
``uv run python examples/haystack_pipeline.py``.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils import Secret

import unicite
from unicite.testing import PLACEHOLDER_KEY, live_or_replay
from unicite_haystack import CitedAnswerBuilder

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes/examples/test_haystack_examples/test_pipeline_example.yaml"
QUESTION = "Hauteur du viaduc de Millau, longueur de la Köhlbrandbrücke, pont de Normandie ?"

DOCUMENTS = [
    Document(
        id="koehlbrand",
        content="Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet.",
        meta={"url": "https://de.wikipedia.org/wiki/Köhlbrandbrücke", "title": "Köhlbrandbrücke"},
    ),
    Document(
        id="normandie",
        content="Le pont de Normandie, long de 2 143 mètres, relie Le Havre à Honfleur.",
        meta={"url": "https://fr.wikipedia.org/wiki/Pont_de_Normandie", "title": "Pont"},
    ),
    Document(
        id="millau",
        content="Le viaduc de Millau culmine à 343 mètres ; il a été inauguré en 2004.",
        meta={"url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau", "title": "Viaduc"},
    ),
]
TEMPLATE = [
    ChatMessage.from_system("Réponds en citant les sources par [n]."),
    ChatMessage.from_user(
        "{% for doc in documents %}[{{ loop.index }}] {{ doc.content }}\n{% endfor %}"
        "Question : {{ query }}"
    ),
]


def replay() -> AbstractContextManager[Any]:
    """Replay the recorded response unless ``OPENAI_API_KEY`` asks for live calls."""
    try:
        return live_or_replay(CASSETTE, env="OPENAI_API_KEY", allow_playback_repeats=False)
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def build() -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents(DOCUMENTS)
    key = Secret.from_env_var("OPENAI_API_KEY", strict=False)
    if key.resolve_value() is None:
        key = Secret.from_token(PLACEHOLDER_KEY)
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=3, scale_score=False))
    pipeline.add_component("prompt", ChatPromptBuilder(template=TEMPLATE, required_variables="*"))
    pipeline.add_component("llm", OpenAIChatGenerator(api_key=key, model="gpt-4o-mini"))
    pipeline.add_component("answers", CitedAnswerBuilder())
    pipeline.connect("retriever.documents", "prompt.documents")
    pipeline.connect("prompt.prompt", "llm.messages")
    pipeline.connect("llm.replies", "answers.replies")
    pipeline.connect("retriever.documents", "answers.documents")
    return pipeline


def main() -> None:
    pipeline = build()
    query = {"query": QUESTION}
    with replay():
        result = pipeline.run({"retriever": query, "prompt": query, "answers": query})
    answer = result["answers"]["answers"][0]
    cited = answer.meta["citations"]
    print(unicite.render(cited, "terminal", hyperlinks=False, width=88))
    print()
    print("The cited documents, first-cited first (source_index: their place in the prompt):")
    for document in answer.documents:
        number, index = document.meta["citation_number"], document.meta["source_index"]
        print(f"[{number}] {document.id} (was [{index}])")
    for note in cited.diagnostics:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
