"""The adapter contract for `CitedAnswerBuilder` in a Haystack pipeline.

A retriever component returns the run's documents (URL and title in meta), a
`ChatPromptBuilder` numbers them, a scripted chat generator answers from the prompt it got,
and `CitedAnswerBuilder` cites the reply; streamed runs go through `CitationStreamingCallback`.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("haystack.core")

from haystack import Document, Pipeline, component
from haystack.components.builders import ChatPromptBuilder
from haystack.dataclasses import ChatMessage, StreamingChunk
from integrations.contract import (
    Outcome,
    StreamingAdapterContract,
    dispatch,
    reply,
    retrieve,
    stream_chunk,
)
from integrations.haystack.scripted import ScriptedChatGenerator

from unicite import CitePolicy
from unicite_haystack import CitationStreamingCallback, CitedAnswerBuilder

TEMPLATE = [
    ChatMessage.from_user(
        "Réponds en citant les sources [n].\n"
        "{% for doc in documents %}[{{ loop.index }}] {{ doc.content }}\n{% endfor %}"
        "Question : {{ query }}"
    )
]


def documents(query: str) -> list[Document]:
    return [
        Document(id=d.id, content=d.text, meta={"url": d.url, "title": d.title, **d.metadata})
        for d in retrieve(query)
    ]


@component
class ContractRetriever:
    """Returns the documents of the run in progress."""

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, list[Document]]:
        return {"documents": documents(query)}


class TestCitedAnswerBuilder(StreamingAdapterContract):
    """``CitedAnswerBuilder`` after a chat generator; ``answer.data`` is the cited text."""

    def build(self, **options: Any) -> Any:
        pipeline = Pipeline()
        pipeline.add_component("retriever", ContractRetriever())
        pipeline.add_component(
            "prompt", ChatPromptBuilder(template=TEMPLATE, required_variables=["query"])
        )
        pipeline.add_component("llm", ScriptedChatGenerator(reply, stream_chunk))
        pipeline.add_component(
            "answers", CitedAnswerBuilder(policy=CitePolicy(**options), on_citations=dispatch)
        )
        pipeline.connect("retriever.documents", "prompt.documents")
        pipeline.connect("prompt.prompt", "llm.messages")
        pipeline.connect("llm.replies", "answers.replies")
        pipeline.connect("retriever.documents", "answers.documents")
        return pipeline, options

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        pipeline, options = adapter
        data: dict[str, Any] = {
            "retriever": {"query": question},
            "prompt": {"query": question},
            "answers": {"query": question},
        }
        live: list[str] | None = None
        if chunk is not None:
            live = []

            def show(piece: StreamingChunk) -> None:
                assert live is not None
                live.append(piece.content)

            data["llm"] = {
                "streaming_callback": CitationStreamingCallback(
                    documents(question), show, policy=CitePolicy(**options)
                )
            }
        result = pipeline.run(data)
        answer = result["answers"]["answers"][0]
        return Outcome(result=answer.data, answer=answer.meta.get("citations"), live=live)
