"""A real `OpenAIChatGenerator` in a Haystack pipeline, replaying cassettes.

Haystack's OpenAI chat generator keeps only ``model``, ``index``, ``finish_reason`` and
``usage`` (and ``logprobs``) of the reply in ``ChatMessage.meta``: a search model's
``url_citation`` annotations are lost before `CitedAnswerBuilder` sees the message.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("haystack.core")
pytest.importorskip("openai")
pytest.importorskip("vcr")

from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils import Secret

from unicite import CitedAnswer
from unicite_haystack import CitationStreamingCallback, CitedAnswerBuilder

KEY = Secret.from_token("sk-test")
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
QUESTION = "Hauteur du viaduc de Millau, longueur de la Köhlbrandbrücke, pont de Normandie ?"
CITED = (
    "Le viaduc de Millau culmine à 343 mètres [1] et a été inauguré en 2004 [1]. "
    "Die Köhlbrandbrücke ist 3 618 Meter lang [2]. 明石海峡大橋は1998年に開通しました。"
)


def store() -> InMemoryDocumentStore:
    documents = InMemoryDocumentStore()
    documents.write_documents(DOCUMENTS)
    return documents


def pipeline(generator: OpenAIChatGenerator) -> Pipeline:
    pipe = Pipeline()
    # The three documents in BM25 order, as the recorded prompt numbered them.
    pipe.add_component("retriever", InMemoryBM25Retriever(store(), top_k=3, scale_score=False))
    pipe.add_component("prompt", ChatPromptBuilder(template=TEMPLATE, required_variables="*"))
    pipe.add_component("llm", generator)
    pipe.add_component("answers", CitedAnswerBuilder())
    pipe.connect("retriever.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.messages")
    pipe.connect("llm.replies", "answers.replies")
    pipe.connect("retriever.documents", "answers.documents")
    return pipe


def documents_for(query: str) -> list[Document]:
    found = InMemoryBM25Retriever(store(), top_k=3, scale_score=False).run(query=query)
    return list(found["documents"])


def inputs(query: str = QUESTION) -> dict[str, Any]:
    return {"retriever": {"query": query}, "prompt": {"query": query}, "answers": {"query": query}}


def numbered(query: str = QUESTION) -> dict[str, int]:
    return {doc.id: number for number, doc in enumerate(documents_for(query), start=1)}


@pytest.mark.vcr
def test_openai_chat_pipeline() -> None:
    # The recorded reply cites [2] for Millau and [3] for the Köhlbrandbrücke, as numbered.
    assert numbered() == {"normandie": 1, "millau": 2, "koehlbrand": 3}
    result = pipeline(OpenAIChatGenerator(api_key=KEY, model="gpt-4o-mini")).run(inputs())
    answer = result["answers"]["answers"][0]
    assert answer.data == CITED
    assert [d.id for d in answer.documents] == ["millau", "koehlbrand"]
    assert answer.meta["model"] == "gpt-4o-mini-2024-07-18"
    assert answer.meta["finish_reason"] == "stop"
    cited: CitedAnswer = answer.meta["citations"]
    assert cited.provider is None  # Haystack's meta names no provider shape
    assert all(c.origin == "marker" for c in cited.citations)
    assert any("[9]" in note for note in cited.diagnostics)
    for citation in cited.citations:
        assert cited.text[citation.start : citation.end] == citation.text


@pytest.mark.vcr
def test_openai_chat_pipeline_streaming() -> None:
    shown: list[str] = []
    stream = CitationStreamingCallback(documents_for(QUESTION), lambda c: shown.append(c.content))
    generator = OpenAIChatGenerator(api_key=KEY, model="gpt-4o-mini")
    result = pipeline(generator).run({**inputs(), "llm": {"streaming_callback": stream}})
    answer = result["answers"]["answers"][0]
    assert "".join(shown) == answer.data == stream.answer.text == CITED
    assert len(shown) > 3  # it did stream


@pytest.mark.vcr
def test_openai_search_model_annotations_are_lost() -> None:
    generator = OpenAIChatGenerator(api_key=KEY, model="gpt-4o-search-preview")
    result = generator.run([ChatMessage.from_user("Hauteur du viaduc de Millau ?")])
    (message,) = result["replies"]
    assert "url_citation" not in repr(message.meta)  # the generator dropped the annotations
    answer = CitedAnswerBuilder().run(query="Millau", replies=[message])["answers"][0]
    cited: CitedAnswer = answer.meta["citations"]
    assert answer.data == message.text
    assert cited.citations == []
    assert cited.sources == []
