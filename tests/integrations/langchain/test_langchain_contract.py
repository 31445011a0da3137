"""The adapter contract for the LangChain entry points: the callback handler and ``with_citations``.

The chain is an ordinary RAG chain: a retriever, the numbered sources block
(`number_sources`) in a chat prompt, a chat model, a string parser.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest

pytest.importorskip("langchain_core")

from integrations.contract import (
    AdapterContract,
    Outcome,
    StreamingAdapterContract,
    chunks,
    dispatch,
    reply,
    retrieve,
    stream_chunk,
)
from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnablePassthrough

from unicite_langchain import CitationCallbackHandler, number_sources, with_citations


class ContractRetriever(BaseRetriever):
    """Returns the run's documents as LangChain `Document`s (URL and title in metadata)."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(
                id=doc.id,
                page_content=doc.text,
                metadata={"source": doc.url, "title": doc.title, **doc.metadata},
            )
            for doc in retrieve(query)
        ]


class ScriptedChatModel(BaseChatModel):
    """Answers with the run's scripted reply; streams it in the run's chunk size."""

    @property
    def _llm_type(self) -> str:
        return "contract-scripted"

    @staticmethod
    def _prompt(messages: list[BaseMessage]) -> str:
        return "\n".join(message.text for message in messages)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content=reply(self._prompt(messages)))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = reply(self._prompt(messages))
        for piece in chunks(text, stream_chunk() or len(text) or 1):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer from the numbered sources; cite them as [n].\n\n{context}"),
        ("human", "{question}"),
    ]
)


def rag_chain() -> Runnable[Any, str]:
    context = ContractRetriever() | number_sources()
    return (
        {"context": context, "question": RunnablePassthrough()}
        | PROMPT
        | ScriptedChatModel()
        | StrOutputParser()
    )


class TestCallbackHandler(AdapterContract):
    """`CitationCallbackHandler` in ``config={"callbacks": [handler]}`` of a RAG chain."""

    rewrites_result = False  # a callback cannot change what the chain returns

    def build(self, **options: Any) -> Any:
        return (CitationCallbackHandler(on_citations=dispatch, **options), rag_chain())

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        handler, chain = adapter
        run_id = uuid4()
        result = chain.invoke(question, config={"callbacks": [handler], "run_id": run_id})
        return Outcome(result=result, answer=handler.answers.get(run_id))


class TestWithCitations(StreamingAdapterContract):
    """``with_citations(chain)``: ``{"answer", "citations"}`` from invoke, deltas from stream."""

    rewrites_result = True

    def build(self, **options: Any) -> Any:
        return with_citations(rag_chain(), on_citations=dispatch, **options)

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        if chunk is None:
            output = adapter.invoke(question)
            return Outcome(result=output["answer"], answer=output["citations"])
        live: list[str] = []
        answer = None
        for piece in adapter.stream(question):
            if "answer" in piece:
                live.append(piece["answer"])
            if "citations" in piece:
                answer = piece["citations"]
        return Outcome(result="".join(live), answer=answer, live=live)
