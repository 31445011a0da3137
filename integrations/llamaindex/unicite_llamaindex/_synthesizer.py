"""`CitedSynthesizer`: a LlamaIndex response synthesizer whose answers cite their nodes.

Any query engine that takes a ``response_synthesizer`` (``index.as_query_engine``,
`RetrieverQueryEngine`, ...) gets answers from `unicite.generate_cited`: the retrieved nodes
are the numbered sources, the model's citations are checked and retried, and the response
carries the `unicite.CitedGeneration`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.callbacks.schema import CBEventType, EventPayload
from llama_index.core.indices.prompt_helper import PromptHelper
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events.synthesis import (
    SynthesizeEndEvent,
    SynthesizeStartEvent,
)
from llama_index.core.llms import LLM, MockLLM
from llama_index.core.prompts.mixin import PromptDictType
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, QueryType
from llama_index.core.types import RESPONSE_TEXT_TYPE

from unicite import CitedAnswer, Source, UsageError
from unicite.generation import (
    CitedGeneration,
    Retry,
    agenerate_cited,
    astream_cited,
    generate_cited,
    stream_cited,
)
from unicite.providers import llm_kind
from unicite_llamaindex._engine import FinalTextStreamingResponse
from unicite_llamaindex._nodes import sources_from_nodes
from unicite_llamaindex._policy import origin_of
from unicite_llamaindex.events import CitationsEvent
from unicite_llamaindex.events import dispatcher as citations_dispatcher

__all__ = [
    "CITATIONS_KEY",
    "GENERATION_KEY",
    "AsyncCitedStreamingResponse",
    "CitedStreamingResponse",
    "CitedSynthesizer",
]

logger = logging.getLogger("unicite.llamaindex")

dispatcher = get_dispatcher(__name__)

CITATIONS_KEY = "citations"
"""``response.metadata`` key of the `unicite.CitedAnswer` (as `CitedQueryEngine` puts it)."""

GENERATION_KEY = "generation"
"""``response.metadata`` key of the `unicite.CitedGeneration`."""

OPTION_NAMES = frozenset(
    name
    for name, parameter in inspect.signature(generate_cited).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
)
"""The options `CitedSynthesizer` takes: `unicite.generate_cited`'s keyword arguments."""

_NO_NODES = "the retriever returned no nodes: there is nothing to cite"

Item = str | Retry | CitedGeneration
"""What a cited stream yields: text deltas, `Retry` notices, the `CitedGeneration` last."""


@dataclass
class _Request:
    """One synthesis: the question, the nodes as sources, and how to give them back."""

    question: str
    nodes: list[NodeWithScore]
    sources: list[Source]
    notes: list[str]
    additional: list[NodeWithScore]

    def node_of(self, source: Source) -> NodeWithScore | None:
        for node, given in zip(self.nodes, self.sources, strict=True):
            if given.id == source.id:
                return node
        return None


def _noted(generation: CitedGeneration, notes: Sequence[str]) -> CitedGeneration:
    """The generation with what reading the nodes noted in its answer's diagnostics."""
    if not notes:
        return generation
    answer = generation.answer
    diagnostics = [*answer.diagnostics, *(n for n in notes if n not in answer.diagnostics)]
    return generation.model_copy(update={"answer": answer.replace(diagnostics=diagnostics)})


@dataclass
class CitedStreamingResponse(FinalTextStreamingResponse):
    """A `StreamingResponse` of a `CitedSynthesizer`: the text streams, the result follows.

    ``response_gen`` yields the text deltas, markers already carrying their final numbers.
    When a round fails its checks the model is asked again: the `unicite.generation.Retry`
    is appended to ``retries`` and the deltas that follow start the answer anew (the text
    shown so far is to be discarded). To see the retries as they come, read ``cited_gen``
    instead of ``response_gen``: it yields the deltas, the `Retry` notices and the
    `unicite.CitedGeneration` last (the two share one stream: read one of them).

    Once the stream is consumed, ``generation`` is the `CitedGeneration`, ``response_txt``
    (``str(response)``, ``get_response()``) its content, ``source_nodes`` the nodes in the
    answer's numbering, and ``metadata["generation"]`` / ``metadata["citations"]`` the
    generation and its `unicite.CitedAnswer`.
    """

    generation: CitedGeneration | None = None
    retries: list[Retry] = field(default_factory=list)
    cited_gen: Iterator[Item] | None = None


@dataclass
class AsyncCitedStreamingResponse(AsyncStreamingResponse):
    """`CitedStreamingResponse` for ``aquery``: ``response_gen`` and ``cited_gen`` are async.

    ``async_response_gen()``, ``get_response()`` and ``print_response_stream()`` work as in
    LlamaIndex; ``response_txt`` is the generation's content once the stream is consumed.
    """

    generation: CitedGeneration | None = None
    retries: list[Retry] = field(default_factory=list)
    cited_gen: AsyncIterator[Item] | None = None

    async def _yield_response(self) -> AsyncGenerator[str, None]:
        async with self._lock:
            if self.response_txt is None and self.response_gen is not None:
                async for text in self.response_gen:
                    yield text
                if self.response_txt is None:
                    self.response_txt = ""
            else:
                yield self.response_txt or ""


def _texts(items: Iterator[Item]) -> Generator[str, None, None]:
    for item in items:
        if isinstance(item, str):
            yield item


async def _atexts(items: AsyncIterator[Item]) -> AsyncGenerator[str, None]:
    async for item in items:
        if isinstance(item, str):
            yield item


# LlamaIndex's text for a query without nodes, when no `empty_response` is given.
_EMPTY_RESPONSE = "Empty Response"
_BASE_TAKES_EMPTY = "empty_response" in inspect.signature(BaseSynthesizer.__init__).parameters


def _once(text: str) -> Generator[str, None, None]:
    yield text


async def _aonce(text: str) -> AsyncGenerator[str, None]:
    yield text


class CitedSynthesizer(BaseSynthesizer):
    """A response synthesizer answering from the retrieved nodes with checked citations.

    ``index.as_query_engine(response_synthesizer=CitedSynthesizer(llm=llm))`` or
    ``RetrieverQueryEngine(retriever, response_synthesizer=...)``: each node is a numbered
    source (read as `source_from_node` reads it), the model is prompted per
    `unicite.generate_cited`, its citations are checked and retried, and the response is:

    - ``response.response``: the `CitedGeneration`'s ``content`` (markers ``[[S:n]]`` for
      Markdown, numbered as the answer's sources);
    - ``response.source_nodes``: the nodes of the sources the answer used
      (``CitedGeneration.sources_used``: those it cites, in first-cited order, so ``[n]`` in
      the text is ``source_nodes[n - 1]``), then any ``additional_source_nodes``; retrieved
      nodes the answer does not use are left out (none are listed when it cites nothing);
    - ``response.metadata["generation"]``: the `unicite.CitedGeneration` (``finished``,
      ``retries``, ``reason``, ``stats``, ``envelope()``); ``metadata["citations"]``: its
      `unicite.CitedAnswer`, where `CitedQueryEngine` puts it; and, as LlamaIndex does, each
      source node's metadata under its node id.

    With ``streaming=True`` (given here: query engines ignore their own ``streaming=`` when
    handed a synthesizer) a query returns a `CitedStreamingResponse` (an
    `AsyncCitedStreamingResponse` from ``aquery``) whose ``response_gen`` yields the text
    deltas; the generation is on the response once the stream is consumed. A query without
    nodes gets LlamaIndex's empty response without asking the model. Each finished answer is
    also dispatched as a `CitationsEvent`.
    """

    def __init__(
        self,
        llm: Any = None,
        *,
        streaming: bool = False,
        callback_manager: CallbackManager | None = None,
        prompt_helper: PromptHelper | None = None,
        empty_response: str | None = None,
        **options: Any,
    ) -> None:
        """Build the synthesizer.

        Args:
            llm: The model: a LlamaIndex LLM (default: ``Settings.llm``), or anything else
                `unicite.generate_cited` takes (an SDK client with ``model=``, a LangChain
                chat model, a callable).
            streaming: Queries return streaming responses.
            callback_manager: LlamaIndex's (legacy) callback manager.
            prompt_helper: LlamaIndex's prompt helper (unused by the citing prompt, which
                fits the sources into ``budget_tokens``).
            empty_response: The text of the response to a query without nodes.
            **options: `unicite.generate_cited`'s keyword arguments: ``format``, ``schema``,
                ``strategy``, ``require``, ``max_retries``, ``budget_tokens``, ``prefer``,
                ``policy``, ``model``.

        Raises:
            UsageError: An unknown option, or an llm unicite does not know.
        """
        unknown = sorted(set(options) - OPTION_NAMES)
        if unknown:
            raise UsageError(
                f"CitedSynthesizer: unknown option(s) {', '.join(map(repr, unknown))}; the "
                f"options are generate_cited's: {', '.join(sorted(OPTION_NAMES))}"
            )
        framework_llm = llm is None or isinstance(llm, LLM)
        # LlamaIndex's base needs one of its own LLMs (for its callbacks and prompt helper);
        # another kind of model is asked by unicite and the base gets a stand-in.
        # `empty_response` is known to LlamaIndex's base from llama-index-core 0.14.13 on (an
        # older base raises TypeError on it); the synthesizer answers empty queries itself.
        extra: dict[str, Any] = {"empty_response": empty_response} if _BASE_TAKES_EMPTY else {}
        super().__init__(
            llm=llm if framework_llm else MockLLM(),
            callback_manager=callback_manager,
            prompt_helper=prompt_helper,
            streaming=streaming,
            **extra,
        )
        self._empty_text = empty_response or _EMPTY_RESPONSE
        self._model: Any = self._llm if framework_llm else llm
        llm_kind(self._model, model=options.get("model"))  # raises UsageError if unknown
        self._options = dict(options)

    @property
    def llm(self) -> Any:
        """The model the answers come from."""
        return self._model

    @property
    def options(self) -> dict[str, Any]:
        """The `unicite.generate_cited` keyword arguments."""
        return dict(self._options)

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        """No LlamaIndex prompt: the citing prompt is unicite's."""

    # --- text chunks (LlamaIndex's lower-level interface) -----------------------------------

    def get_response(
        self, query_str: str, text_chunks: Sequence[str], **response_kwargs: Any
    ) -> RESPONSE_TEXT_TYPE:
        """The cited content for text chunks (each one a source), or its deltas when streaming.

        Without nodes there is nowhere to put the `CitedGeneration`: use `synthesize`.
        """
        sources = [{"content": chunk} for chunk in text_chunks]
        if self._streaming:
            items = stream_cited(self._model, query_str, sources, **self._options)
            return _texts(items)
        return generate_cited(self._model, query_str, sources, **self._options).content

    async def aget_response(
        self, query_str: str, text_chunks: Sequence[str], **response_kwargs: Any
    ) -> RESPONSE_TEXT_TYPE:
        """`get_response`, asynchronously."""
        sources = [{"content": chunk} for chunk in text_chunks]
        if self._streaming:
            items = astream_cited(self._model, query_str, sources, **self._options)
            return _atexts(items)
        generation = await agenerate_cited(self._model, query_str, sources, **self._options)
        return generation.content

    # --- nodes ------------------------------------------------------------------------------

    @staticmethod
    def _request(
        query: QueryBundle,
        nodes: Sequence[NodeWithScore | BaseNode],
        additional: Sequence[NodeWithScore] | None,
    ) -> _Request:
        given = [n if isinstance(n, NodeWithScore) else NodeWithScore(node=n) for n in nodes]
        notes: list[str] = []
        sources = sources_from_nodes(
            [(node, rank, None) for rank, node in enumerate(given)], diagnostics=notes
        )
        return _Request(query.query_str, given, sources, notes, list(additional or ()))

    def _finish(
        self,
        response: Response | CitedStreamingResponse | AsyncCitedStreamingResponse,
        generation: CitedGeneration,
        request: _Request,
    ) -> CitedGeneration:
        """Put the generation on the response: content, nodes in its numbering, metadata."""
        generation = _noted(generation, request.notes)
        nodes: list[NodeWithScore] = []
        for source in generation.sources_used:
            node = request.node_of(source)
            if node is not None and all(node is not seen for seen in nodes):
                nodes.append(node)
        nodes.extend(request.additional)
        metadata = self._get_metadata_for_response([n.node for n in nodes]) or {}
        metadata.update(response.metadata or {})
        metadata[GENERATION_KEY] = generation
        metadata[CITATIONS_KEY] = generation.answer
        response.metadata = metadata
        response.source_nodes = nodes
        if isinstance(response, Response):
            response.response = generation.content
        else:
            response.generation = generation
            response.response_txt = generation.content
        citations_dispatcher.event(
            CitationsEvent(answer=generation.answer, origin=origin_of(generation.answer))
        )
        return generation

    def _empty(self, streaming: str | None) -> RESPONSE_TYPE:
        """LlamaIndex's response to a query without nodes (the model is not asked)."""
        metadata: dict[str, Any] = {CITATIONS_KEY: CitedAnswer(diagnostics=[_NO_NODES])}
        if streaming == "sync":
            return StreamingResponse(_once(self._empty_text), metadata=metadata)
        if streaming == "async":
            return AsyncStreamingResponse(_aonce(self._empty_text), metadata=metadata)
        return Response(self._empty_text, metadata=metadata)

    def _stream(self, request: _Request) -> CitedStreamingResponse:
        response = CitedStreamingResponse(
            response_gen=_texts(iter(())), source_nodes=list(request.nodes), metadata={}
        )

        def items() -> Generator[Item, None, None]:
            stream = stream_cited(self._model, request.question, request.sources, **self._options)
            for item in stream:
                if isinstance(item, CitedGeneration):
                    item = self._finish(response, item, request)
                elif isinstance(item, Retry):
                    response.retries.append(item)
                yield item

        cited = items()
        response.cited_gen = cited
        response.response_gen = _texts(cited)
        return response

    def _astream(self, request: _Request) -> AsyncCitedStreamingResponse:
        response = AsyncCitedStreamingResponse(
            response_gen=_atexts(_nothing()), source_nodes=list(request.nodes), metadata={}
        )

        async def items() -> AsyncGenerator[Item, None]:
            stream = astream_cited(self._model, request.question, request.sources, **self._options)
            async for item in stream:
                if isinstance(item, CitedGeneration):
                    item = self._finish(response, item, request)
                elif isinstance(item, Retry):
                    response.retries.append(item)
                yield item

        cited = items()
        response.cited_gen = cited
        response.response_gen = _atexts(cited)
        return response

    def synthesize(
        self,
        query: QueryType,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: Any,
    ) -> RESPONSE_TYPE:
        """Answer the query from the nodes, with checked citations."""
        dispatcher.event(SynthesizeStartEvent(query=query))
        if not nodes:
            empty = self._empty("sync" if self._streaming else None)
            dispatcher.event(SynthesizeEndEvent(query=query, response=empty))
            return empty
        bundle = query if isinstance(query, QueryBundle) else QueryBundle(query_str=str(query))
        response: RESPONSE_TYPE
        with self._callback_manager.event(
            CBEventType.SYNTHESIZE, payload={EventPayload.QUERY_STR: bundle.query_str}
        ) as event:
            request = self._request(bundle, nodes, additional_source_nodes)
            if self._streaming:
                response = self._stream(request)
            else:
                generation = generate_cited(
                    self._model, request.question, request.sources, **self._options
                )
                response = Response(generation.content)
                self._finish(response, generation, request)
            event.on_end(payload={EventPayload.RESPONSE: response})
        dispatcher.event(SynthesizeEndEvent(query=query, response=response))
        return response

    async def asynthesize(
        self,
        query: QueryType,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: Any,
    ) -> RESPONSE_TYPE:
        """`synthesize`, asynchronously (a streaming response is an async one)."""
        dispatcher.event(SynthesizeStartEvent(query=query))
        if not nodes:
            empty = self._empty("async" if self._streaming else None)
            dispatcher.event(SynthesizeEndEvent(query=query, response=empty))
            return empty
        bundle = query if isinstance(query, QueryBundle) else QueryBundle(query_str=str(query))
        response: RESPONSE_TYPE
        with self._callback_manager.event(
            CBEventType.SYNTHESIZE, payload={EventPayload.QUERY_STR: bundle.query_str}
        ) as event:
            request = self._request(bundle, nodes, additional_source_nodes)
            if self._streaming:
                response = self._astream(request)
            else:
                generation = await agenerate_cited(
                    self._model, request.question, request.sources, **self._options
                )
                response = Response(generation.content)
                self._finish(response, generation, request)
            event.on_end(payload={EventPayload.RESPONSE: response})
        dispatcher.event(SynthesizeEndEvent(query=query, response=response))
        return response


async def _nothing() -> AsyncGenerator[Item, None]:
    return
    yield  # an async generator that yields nothing
