"""The adapter contract for the LlamaIndex entry points: `CitedQueryEngine` and the event handler.

The retriever returns the run's documents as nodes (URL and title in metadata) and the LLM is a
scripted completion model answering from the prompt it got.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from integrations.contract import (
    AdapterContract,
    Outcome,
    StreamingAdapterContract,
    answers_of_this_run,
    chunks,
    dispatch,
    reply,
    retrieve,
    stream_chunk,
)
from llama_index.core import get_response_synthesizer
from llama_index.core.base.response.schema import StreamingResponse
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from unicite_llamaindex import CitationEventHandler, CitedQueryEngine


class ContractRetriever(BaseRetriever):
    """Returns the run's documents as scored text nodes, in order."""

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(
                    id_=doc.id,
                    text=doc.text,
                    metadata={"url": doc.url, "title": doc.title, **doc.metadata},
                    # LlamaIndex's own prompt prints metadata it is not told to leave out:
                    # what the adapter makes of odd metadata is what the contract checks.
                    excluded_llm_metadata_keys=list(doc.metadata),
                ),
                score=1.0 - n / 100,
            )
            for n, doc in enumerate(retrieve(query_bundle.query_str))
        ]

    def _handle_recursive_retrieval(
        self, query_bundle: QueryBundle, nodes: list[NodeWithScore]
    ) -> list[NodeWithScore]:
        # Duplicates are dropped by node id, as llama-index-core does from 0.14.19 on: before,
        # it hashed each node with its metadata printed, so odd metadata failed in the
        # retriever itself, before any adapter saw it.
        seen: set[str] = set()
        return [n for n in nodes if not (n.node.node_id in seen or seen.add(n.node.node_id))]


class ScriptedCompletionLLM(CustomLLM):
    """Replies with the run's scripted text; streams it in the run's chunk size."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="contract-scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=reply(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = reply(prompt)
        size = stream_chunk() or len(text) or 1

        def gen() -> CompletionResponseGen:
            so_far = ""
            for piece in chunks(text, size):
                so_far += piece
                yield CompletionResponse(text=so_far, delta=piece)

        return gen()


def _streaming_synthesizer(llm: ScriptedCompletionLLM) -> Any:
    from llama_index.core.query_engine.citation_query_engine import (
        CITATION_QA_TEMPLATE,
        CITATION_REFINE_TEMPLATE,
    )

    return get_response_synthesizer(
        llm=llm,
        text_qa_template=CITATION_QA_TEMPLATE,
        refine_template=CITATION_REFINE_TEMPLATE,
        streaming=True,
    )


class TestCitedQueryEngine(StreamingAdapterContract):
    """`CitedQueryEngine`: the cited text in ``response.response``, the answer in metadata."""

    rewrites_result = True

    def build(self, **options: Any) -> Any:
        llm = ScriptedCompletionLLM()
        plain = CitedQueryEngine(ContractRetriever(), llm=llm, on_citations=dispatch, **options)
        streaming = CitedQueryEngine(
            ContractRetriever(),
            llm=llm,
            response_synthesizer=_streaming_synthesizer(llm),
            on_citations=dispatch,
            **options,
        )
        return plain, streaming

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        plain, streaming = adapter
        if chunk is None:
            response = plain.query(question)
            answer = (response.metadata or {}).get("citations")
            return Outcome(result=str(response.response), answer=answer)
        stream = streaming.query(question)
        assert isinstance(stream, StreamingResponse)
        live = list(stream.response_gen)
        final = stream.get_response()
        answer = (final.metadata or {}).get("citations")
        return Outcome(result=str(final.response), answer=answer, live=live)


class TestCitationEventHandler(AdapterContract):
    """`CitationEventHandler` attached while LlamaIndex's own `CitationQueryEngine` runs."""

    rewrites_result = False  # an event handler cannot change what the engine returns

    def build(self, **options: Any) -> Any:
        handler = CitationEventHandler(on_citations=dispatch, **options).attach()
        engine = CitationQueryEngine(ContractRetriever(), llm=ScriptedCompletionLLM())
        return handler, engine

    def close(self, adapter: Any) -> None:
        adapter[0].detach()

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        _, engine = adapter
        with answers_of_this_run() as seen:
            response = engine.query(question)
        return Outcome(result=str(response.response), answer=seen[-1] if seen else None)
