"""`CitedQueryEngine`: LlamaIndex's `CitationQueryEngine`, with citations you can trust."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.callbacks.schema import CBEventType, EventPayload
from llama_index.core.indices.base import BaseGPTIndex
from llama_index.core.llms.llm import LLM
from llama_index.core.node_parser import TextSplitter
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.query_engine.citation_query_engine import (
    DEFAULT_CITATION_CHUNK_OVERLAP,
    DEFAULT_CITATION_CHUNK_SIZE,
)
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.settings import Settings

from unicite import CitedAnswer, GroundingRequiredError, UsageError, resolve_enabled
from unicite.attribution import AttributionMethod
from unicite.exceptions import describe_error
from unicite.sources import SourceLedger
from unicite_llamaindex._answer import (
    CiteOptions,
    OnInvalidMarker,
    check_options,
    cite,
    origin_of,
)
from unicite_llamaindex._capture import QueryCapture, install
from unicite_llamaindex._convert import table_from_nodes
from unicite_llamaindex._nodes import default_splitter
from unicite_llamaindex._postprocessor import CitationPostprocessor, Labelled, relabel
from unicite_llamaindex.events import CitationsEvent, dispatcher

__all__ = ["CitedQueryEngine"]

logger = logging.getLogger("unicite_llamaindex")

Require = Literal["citations"] | None


@dataclass
class _CitedStreamingResponse(StreamingResponse):
    """A `StreamingResponse` whose final text is the cited answer's, however it is read.

    LlamaIndex's `get_response`, ``str()`` and `print_response_stream` rebuild the text from
    the tokens; here they keep the text the citations index (markers renumbered).
    """

    def _drain(self) -> None:
        if self.response_txt is None and self.response_gen is not None:
            for _ in self.response_gen:
                pass
            if self.response_txt is None:
                # The stream broke off earlier: what is left of it is no text, as in LlamaIndex.
                self.response_txt = ""

    def __str__(self) -> str:
        self._drain()
        return self.response_txt or "None"

    def get_response(self) -> Response:
        """The response with the cited text and ``metadata["citations"]``."""
        self._drain()
        return Response(self.response_txt, self.source_nodes, self.metadata)

    def print_response_stream(self) -> None:
        """Print the tokens as they stream (as the model wrote them)."""
        if self.response_txt is None and self.response_gen is not None:
            for text in self.response_gen:
                print(text, end="", flush=True)
        else:
            print(self.response_txt)


def _no_tokens() -> Generator[str, None, None]:
    yield from ()


def _malformed(item: NodeWithScore) -> bool:
    """Whether LlamaIndex's own labelling may refuse the node: its text or metadata is odd."""
    base = item.node
    if not isinstance(getattr(base, "metadata", None), dict):
        return True
    try:
        return not isinstance(base.get_content(metadata_mode=MetadataMode.NONE), str)
    except Exception:
        return True


class CitedQueryEngine(CitationQueryEngine):
    """A drop-in `CitationQueryEngine` whose responses carry a validated `CitedAnswer`.

    Same construction (``CitedQueryEngine.from_args(index, llm=...)`` or with a retriever),
    prompts, streaming and async. Each response gets ``response.metadata["citations"]``: a
    `unicite.CitedAnswer` whose ``[N]`` markers were parsed and validated against the nodes the
    prompt showed (numbers naming no node are reported in ``diagnostics`` and removed), with
    sources renumbered in first-cited order (the model's ``[5] … [2]`` becomes ``[1] … [2]``),
    the response text and ``source_nodes`` rewritten to match, and exact spans. When the LLM
    returns provider-native citations (OpenAI, Anthropic, Gemini through their LlamaIndex
    integrations) those are used; with ``attribute=`` an answer without markers is attributed
    post hoc. A streaming response yields the model's tokens as they come; once consumed,
    ``get_response()`` has the same text and citations as the non-streaming query.

    Chunks of long nodes are sources with their own ids and offsets (see
    `CitationPostprocessor`). Citation work never raises into the query: problems become
    diagnostics. The one deliberate exception is ``require="citations"``, which raises
    `unicite.GroundingRequiredError` when the answer has no citations (for a stream, when it
    ends). Disabled (``enabled=False``), it behaves exactly as `CitationQueryEngine`.
    """

    def __init__(
        self,
        retriever: BaseRetriever,
        llm: LLM | None = None,
        response_synthesizer: BaseSynthesizer | None = None,
        citation_chunk_size: int = DEFAULT_CITATION_CHUNK_SIZE,
        citation_chunk_overlap: int = DEFAULT_CITATION_CHUNK_OVERLAP,
        text_splitter: TextSplitter | None = None,
        node_postprocessors: list[BaseNodePostprocessor] | None = None,
        callback_manager: CallbackManager | None = None,
        metadata_mode: MetadataMode = MetadataMode.NONE,
        multimodal: bool = False,
        *,
        enabled: bool | None = None,
        require: Require = None,
        attribute: AttributionMethod | None = None,
        attribution_llm: Callable[[str], Any] | None = None,
        on_invalid: OnInvalidMarker = "drop",
        renumber: bool = True,
        ledger: SourceLedger | None = None,
    ) -> None:
        """Build the engine; the arguments before ``*`` are `CitationQueryEngine`'s.

        Args:
            retriever: Finds the nodes to cite.
            llm: The LLM (default: ``Settings.llm``).
            response_synthesizer: Builds the prompt and calls the LLM (default: compact mode
                with LlamaIndex's citation prompts).
            citation_chunk_size: Nodes longer than this many tokens are split into chunks.
            citation_chunk_overlap: Tokens shared by adjacent chunks.
            text_splitter: The splitter for long nodes (default: LlamaIndex's sentence
                splitter, cutting sentences without nltk).
            node_postprocessors: Applied to the retrieved nodes before labelling.
            callback_manager: LlamaIndex's (legacy) callback manager.
            metadata_mode: Which node metadata the prompt shows under each ``Source N:``.
            multimodal: Image, audio and video nodes (LlamaIndex's own chunking is used).
            enabled: Cite at all (`unicite.resolve_enabled`; default on).
            require: ``"citations"`` raises `GroundingRequiredError` for an uncited answer.
            attribute: ``"lexical"`` or ``"llm"``: attribute an answer with no markers post hoc.
            attribution_llm: For ``attribute="llm"``: a callable from a prompt to a reply
                (default: the engine's LLM).
            on_invalid: ``"drop"`` removes markers naming no node from the text, ``"keep"``
                leaves them; both report them in ``diagnostics``.
            renumber: Number sources in first-cited order and rewrite markers to match.
            ledger: Number nodes by this ledger's sids (default: the current ledger, if any).
        """
        # Only llama-index-core 0.14.21 and later know multimodal citation engines.
        extra: dict[str, Any] = {"multimodal": True} if multimodal else {}
        super().__init__(
            retriever=retriever,
            llm=llm,
            response_synthesizer=response_synthesizer,
            citation_chunk_size=citation_chunk_size,
            citation_chunk_overlap=citation_chunk_overlap,
            text_splitter=text_splitter
            or default_splitter(citation_chunk_size, citation_chunk_overlap),
            node_postprocessors=node_postprocessors,
            callback_manager=callback_manager,
            metadata_mode=metadata_mode,
            **extra,
        )
        self._cite_llm = llm
        self._configure(
            enabled=enabled,
            require=require,
            attribute=attribute,
            attribution_llm=attribution_llm,
            on_invalid=on_invalid,
            renumber=renumber,
            ledger=ledger,
        )

    def _configure(
        self,
        *,
        enabled: bool | None,
        require: Require,
        attribute: AttributionMethod | None,
        attribution_llm: Callable[[str], Any] | None,
        on_invalid: OnInvalidMarker,
        renumber: bool,
        ledger: SourceLedger | None,
    ) -> None:
        if require not in (None, "citations"):
            raise UsageError(f"require must be None or 'citations', got {require!r}")
        if ledger is not None and not isinstance(ledger, SourceLedger):
            raise UsageError(f"ledger must be a SourceLedger, got {type(ledger).__name__}")
        self._enabled = resolve_enabled(enabled, default=True)
        self._require: Require = require
        self._options: CiteOptions = check_options(attribute, attribution_llm, on_invalid, renumber)
        self._labeller = CitationPostprocessor(
            text_splitter=self.text_splitter, metadata_mode=self._metadata_mode, ledger=ledger
        )
        if self._enabled:
            install()

    @classmethod
    def from_args(
        cls,
        index: BaseGPTIndex[Any],
        llm: LLM | None = None,
        *args: Any,
        enabled: bool | None = None,
        require: Require = None,
        attribute: AttributionMethod | None = None,
        attribution_llm: Callable[[str], Any] | None = None,
        on_invalid: OnInvalidMarker = "drop",
        renumber: bool = True,
        ledger: SourceLedger | None = None,
        **kwargs: Any,
    ) -> CitedQueryEngine:
        """Build the engine over an index, as `CitationQueryEngine.from_args`.

        The arguments are `CitationQueryEngine.from_args`'s (retriever arguments such as
        ``similarity_top_k`` included), plus the keyword-only options of the constructor.
        """
        engine = super().from_args(index, llm, *args, **kwargs)
        if not isinstance(engine, CitedQueryEngine):  # pragma: no cover - from_args builds cls
            raise UsageError("from_args built an engine of another class")
        engine._cite_llm = llm
        engine._configure(
            enabled=enabled,
            require=require,
            attribute=attribute,
            attribution_llm=attribution_llm,
            on_invalid=on_invalid,
            renumber=renumber,
            ledger=ledger,
        )
        return engine

    # --- labelling ------------------------------------------------------------------------

    def _label(self, nodes: list[NodeWithScore]) -> Labelled:
        malformed = [n for n in nodes if isinstance(n, NodeWithScore) and _malformed(n)]
        if malformed and not getattr(self, "_multimodal", False):
            # Nodes without text or metadata fail `CitationQueryEngine`'s labelling: the query
            # fails here with the very error it raises there (when it does not, the labelling
            # below reports the nodes in diagnostics).
            super()._create_citation_nodes(malformed)
        if getattr(self, "_multimodal", False):
            # LlamaIndex's own multimodal chunks (fresh ids), traced back to the retrieved nodes.
            labelled = Labelled(nodes=super()._create_citation_nodes(nodes))
            table = table_from_nodes(labelled.nodes, labelled.diagnostics, retrieved=nodes)
            labelled.sources = list(table.values())
            return labelled
        return self._labeller._label_nodes(nodes)

    def _create_citation_nodes(self, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        """Label the nodes ``Source N:``, splitting long ones into chunks with their own ids."""
        if not self._enabled:
            return super()._create_citation_nodes(nodes)
        return self._label(nodes).nodes

    # --- queries ----------------------------------------------------------------------------

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        """Answer a query, with citations."""
        if not self._enabled:
            return super()._query(query_bundle)
        capture = QueryCapture()
        with (
            capture.active(),
            self.callback_manager.event(
                CBEventType.QUERY, payload={EventPayload.QUERY_STR: query_bundle.query_str}
            ) as query_event,
        ):
            with self.callback_manager.event(
                CBEventType.RETRIEVE, payload={EventPayload.QUERY_STR: query_bundle.query_str}
            ) as retrieve_event:
                nodes = self.retrieve(query_bundle)
                labelled = self._label(nodes)
                retrieve_event.on_end(payload={EventPayload.NODES: labelled.nodes})
            response = self._response_synthesizer.synthesize(
                query=query_bundle, nodes=labelled.nodes
            )
            response = self._cite(response, labelled, capture)
            query_event.on_end(payload={EventPayload.RESPONSE: response})
        return response

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        """Answer a query asynchronously, with citations."""
        if not self._enabled:
            return await super()._aquery(query_bundle)
        capture = QueryCapture()
        with (
            capture.active(),
            self.callback_manager.event(
                CBEventType.QUERY, payload={EventPayload.QUERY_STR: query_bundle.query_str}
            ) as query_event,
        ):
            with self.callback_manager.event(
                CBEventType.RETRIEVE, payload={EventPayload.QUERY_STR: query_bundle.query_str}
            ) as retrieve_event:
                nodes = await self.aretrieve(query_bundle)
                labelled = self._label(nodes)
                retrieve_event.on_end(payload={EventPayload.NODES: labelled.nodes})
            response = await self._response_synthesizer.asynthesize(
                query=query_bundle, nodes=labelled.nodes
            )
            response = await self._acite(response, labelled, capture)
            query_event.on_end(payload={EventPayload.RESPONSE: response})
        return response

    def synthesize(
        self,
        query_bundle: QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
    ) -> RESPONSE_TYPE:
        """Synthesize an answer from already retrieved nodes, with citations."""
        if not self._enabled:
            return super().synthesize(query_bundle, nodes, additional_source_nodes)
        capture = QueryCapture()
        with capture.active():
            labelled = self._label(nodes)
            response = self._response_synthesizer.synthesize(
                query=query_bundle,
                nodes=labelled.nodes,
                additional_source_nodes=additional_source_nodes,
            )
            return self._cite(response, labelled, capture)

    async def asynthesize(
        self,
        query_bundle: QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
    ) -> RESPONSE_TYPE:
        """Synthesize an answer from already retrieved nodes asynchronously, with citations."""
        if not self._enabled:
            return await super().asynthesize(query_bundle, nodes, additional_source_nodes)
        capture = QueryCapture()
        with capture.active():
            labelled = self._label(nodes)
            response = await self._response_synthesizer.asynthesize(
                query=query_bundle,
                nodes=labelled.nodes,
                additional_source_nodes=additional_source_nodes,
            )
            return await self._acite(response, labelled, capture)

    # --- citing -----------------------------------------------------------------------------

    def _options_for_call(self) -> CiteOptions:
        options = self._options
        if options.attribute == "llm" and options.attribution_llm is None:
            llm = self._cite_llm or Settings.llm

            def ask(prompt: str) -> str:
                return llm.complete(prompt).text

            options = CiteOptions(
                attribute="llm",
                attribution_llm=ask,
                on_invalid=options.on_invalid,
                renumber=options.renumber,
            )
        return options

    def _answer(
        self, text: str, labelled: Labelled, capture: QueryCapture, notes: list[str]
    ) -> CitedAnswer:
        """The cited answer; an internal error becomes a diagnostic, never an exception."""
        try:
            native = capture.native_for(text)
            return cite(text, labelled.table(), native, self._options_for_call(), list(notes))
        except Exception as err:
            logger.debug("citing the answer failed", exc_info=True)
            return CitedAnswer(text=text, diagnostics=[*notes, f"internal error: {err!r}"])

    @staticmethod
    def _notes(labelled: Labelled) -> list[str]:
        notes = list(labelled.diagnostics)
        if not labelled.nodes:
            notes.append("the retriever returned no nodes: there is nothing to cite")
        return notes

    def _cite(
        self, response: RESPONSE_TYPE, labelled: Labelled, capture: QueryCapture
    ) -> RESPONSE_TYPE:
        notes = self._notes(labelled)
        if isinstance(response, StreamingResponse):
            return self._wrap_stream(response, labelled, capture, notes)
        if isinstance(response, AsyncStreamingResponse):
            return self._wrap_astream(response, labelled, capture, notes)
        if isinstance(response, Response):
            answer = self._answer(response.response or "", labelled, capture, notes)
            self._finish(response, answer, labelled)
            return response
        return self._other(response, notes)

    async def _acite(
        self, response: RESPONSE_TYPE, labelled: Labelled, capture: QueryCapture
    ) -> RESPONSE_TYPE:
        if isinstance(response, Response) and self._options.attribute == "llm":
            notes = self._notes(labelled)
            # LLM attribution calls the model synchronously: keep it off the event loop.
            answer = await asyncio.to_thread(
                self._answer, response.response or "", labelled, capture, notes
            )
            self._finish(response, answer, labelled)
            return response
        return self._cite(response, labelled, capture)

    def _other(self, response: RESPONSE_TYPE, notes: list[str]) -> RESPONSE_TYPE:
        if isinstance(response, PydanticResponse):
            metadata = response.metadata if response.metadata is not None else {}
            metadata["citations"] = CitedAnswer(
                diagnostics=[*notes, "a structured (Pydantic) response has no text to cite"]
            )
            response.metadata = metadata
        return response

    def _finish(
        self,
        response: Response | StreamingResponse | AsyncStreamingResponse,
        answer: CitedAnswer,
        labelled: Labelled,
    ) -> None:
        """Put the answer on the response, emit it, and apply the grounding policy."""
        try:
            self._apply(response, answer, labelled)
        except Exception as err:
            logger.debug("updating the response failed", exc_info=True)
            answer = answer.model_copy(
                update={"diagnostics": [*answer.diagnostics, f"internal error: {err!r}"]}
            )
        metadata = response.metadata if response.metadata is not None else {}
        metadata["citations"] = answer
        response.metadata = metadata
        dispatcher.event(CitationsEvent(answer=answer, origin=origin_of(answer)))
        if self._require == "citations" and not answer.citations:
            grounded = bool(labelled.nodes)
            raise GroundingRequiredError(
                f"the answer cites none of the {len(labelled.nodes)} retrieved nodes"
                if grounded
                else "the retriever returned no nodes, so the answer cites nothing",
                provider=answer.provider,
                reason="no citations" if grounded else "no grounding",
            )

    def _apply(
        self,
        response: Response | StreamingResponse | AsyncStreamingResponse,
        answer: CitedAnswer,
        labelled: Labelled,
    ) -> None:
        """Give the response the answer's text, and nodes in the answer's numbering."""
        if isinstance(response, Response):
            response.response = answer.text
        else:
            response.response_txt = answer.text
        ids = {
            id(node): source.id
            for node, source in zip(labelled.nodes, labelled.sources, strict=True)
        }
        ledger = labelled.ledger

        def number(node: NodeWithScore) -> int | None:
            sid = ids.get(id(node))
            if sid is not None and ledger is not None:
                sid = ledger.resolve(sid) or sid
            return None if sid is None else answer.footnote_number(sid)

        numbers = [number(node) for node in response.source_nodes]
        if not self._options.renumber or not any(numbers):
            return
        order = sorted(
            range(len(numbers)),
            key=lambda k: (numbers[k] is None, numbers[k] or 0, k),
        )
        response.source_nodes = [response.source_nodes[k] for k in order]
        for node, found in zip(response.source_nodes, (numbers[k] for k in order), strict=True):
            if found is not None:
                relabel(node, found)

    def _broken(
        self,
        response: StreamingResponse | AsyncStreamingResponse,
        text: str,
        labelled: Labelled,
        capture: QueryCapture,
        notes: list[str],
        error: Exception,
    ) -> None:
        """Cite what a stream gave before it raised; the caller re-raises the error unchanged.

        The answer (with a diagnostic naming the error) goes in ``metadata["citations"]`` and
        out as a `CitationsEvent`; the response's text and nodes are left as they are, and no
        grounding policy applies: the error is what the caller gets.
        """
        try:
            note = f"the LLM stream broke off after {len(text)} characters: {describe_error(error)}"
            answer = self._answer(text, labelled, capture, [*notes, note])
            metadata = response.metadata if response.metadata is not None else {}
            metadata["citations"] = answer
            response.metadata = metadata
            dispatcher.event(CitationsEvent(answer=answer, origin=origin_of(answer)))
        except Exception:
            logger.debug("citing a broken stream failed", exc_info=True)

    def _wrap_stream(
        self,
        response: StreamingResponse,
        labelled: Labelled,
        capture: QueryCapture,
        notes: list[str],
    ) -> StreamingResponse:
        tokens = response.response_gen
        cited = _CitedStreamingResponse(
            response_gen=_no_tokens(),
            source_nodes=list(response.source_nodes),
            metadata=response.metadata if response.metadata is not None else {},
        )

        def gen() -> Generator[str, None, None]:
            pieces: list[str] = []
            while True:
                with capture.active():
                    try:
                        token = next(tokens)
                    except StopIteration:
                        break
                    except Exception as err:
                        self._broken(cited, "".join(pieces), labelled, capture, notes, err)
                        raise
                pieces.append(token)
                yield token
            with capture.active():
                answer = self._answer("".join(pieces), labelled, capture, notes)
                self._finish(cited, answer, labelled)

        cited.response_gen = gen()
        return cited

    def _wrap_astream(
        self,
        response: AsyncStreamingResponse,
        labelled: Labelled,
        capture: QueryCapture,
        notes: list[str],
    ) -> AsyncStreamingResponse:
        tokens = response.response_gen
        if response.metadata is None:
            response.metadata = {}

        async def gen() -> AsyncGenerator[str, None]:
            pieces: list[str] = []
            while True:
                with capture.active():
                    try:
                        token = await tokens.__anext__()
                    except StopAsyncIteration:
                        break
                    except Exception as err:
                        self._broken(response, "".join(pieces), labelled, capture, notes, err)
                        raise
                pieces.append(token)
                yield token
            with capture.active():
                text = "".join(pieces)
                if self._options.attribute == "llm":
                    answer = await asyncio.to_thread(self._answer, text, labelled, capture, notes)
                else:
                    answer = self._answer(text, labelled, capture, notes)
                self._finish(response, answer, labelled)

        response.response_gen = gen()
        return response
