"""`CitedQueryEngine`: LlamaIndex's `CitationQueryEngine`, with citations you can trust."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

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

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, MarkerStream, UsageError
from unicite.exceptions import describe_error
from unicite.sources import SourceLedger
from unicite_llamaindex._capture import QueryCapture, install
from unicite_llamaindex._convert import table_from_nodes
from unicite_llamaindex._nodes import default_splitter
from unicite_llamaindex._policy import (
    OPTION_NAMES,
    answer_input,
    asker,
    cite_answer,
    origin_of,
    resolve_policy,
)
from unicite_llamaindex._postprocessor import CitationPostprocessor, Labelled, relabel
from unicite_llamaindex.events import CitationsEvent, dispatcher

__all__ = ["CitedQueryEngine"]

logger = logging.getLogger("unicite.llamaindex")

OnCitations = Callable[[CitedAnswer], Any]


@dataclass
class FinalTextStreamingResponse(StreamingResponse):
    """A `StreamingResponse` whose final text is the cited answer's, however it is read.

    LlamaIndex's `get_response`, ``str()`` and `print_response_stream` rebuild the text from
    the tokens; here they keep the text the citations index, which is the text streamed.
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
        """Print the text as it streams."""
        if self.response_txt is None and self.response_gen is not None:
            for text in self.response_gen:
                print(text, end="", flush=True)
        else:
            print(self.response_txt)


class _LiveText:
    """The answer's text as it streams, already carrying its final citation numbers.

    A `unicite.MarkerStream` over the sources the prompt numbered holds back a marker until
    it is complete, drops invalid ones and writes valid ones in first-cited numbering, as
    `unicite.cite` will; `finish` gives what is left of the cited answer's text.
    """

    def __init__(self, labelled: Labelled, policy: CitePolicy) -> None:
        self.markers = MarkerStream(
            labelled.table(),
            style=policy.markers,
            on_invalid=policy.on_invalid,
            renumber=policy.renumber,
            keep_unused=policy.sources == "all",
        )

    def feed(self, token: str) -> str:
        return self.markers.feed(token)

    def finish(self, answer: CitedAnswer) -> tuple[str, CitedAnswer]:
        """The rest of the text to stream, and the answer (with a note if they disagree)."""
        shown = self.markers.text
        if answer.text.startswith(shown):
            return answer.text[len(shown) :], answer
        # What was streamed cannot be taken back: say so.
        rest = self.markers.close()
        note = (
            "the text streamed differs from the cited answer's text, which the citations "
            "index and the response holds"
        )
        return rest, answer.model_copy(update={"diagnostics": [*answer.diagnostics, note]})


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
    """A drop-in `CitationQueryEngine` whose responses carry a `CitedAnswer`.

    Same construction (``CitedQueryEngine.from_args(index, llm=...)`` or with a retriever),
    prompts, streaming and async. Each response gets ``response.metadata["citations"]``: the
    `unicite.CitedAnswer` that `unicite.cite` makes of the answer and the nodes the prompt
    numbered (``Source N:``), with the response text and ``source_nodes`` rewritten to match.
    Provider-native citations (OpenAI, Anthropic, Gemini through their LlamaIndex
    integrations) are read from the LLM call behind the answer. A streaming response streams
    the cited text itself: markers arrive complete, already renumbered, invalid ones never
    appear, and the text streamed is ``metadata["citations"].text``.

    ``source_nodes`` follow the answer's numbering: the cited nodes first, labelled with their
    footnote numbers, then the others labelled after every listed source, so a ``Source N:``
    label never names another source than ``[N]`` in the text.

    Chunks of long nodes are sources with their own ids and offsets (see
    `CitationPostprocessor`). Citation work never raises into the query: problems become
    diagnostics. The one deliberate exception is ``require``, which raises
    `unicite.GroundingRequiredError` when the answer fails it (for a stream, once the text
    has streamed), after the answer was put on the response and published. Disabled
    (``enabled=False``), it behaves exactly as `CitationQueryEngine`.
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
        policy: CitePolicy | None = None,
        ledger: SourceLedger | None = None,
        on_citations: OnCitations | None = None,
        **options: Any,
    ) -> None:
        """Build the engine; the arguments before ``*`` are `CitationQueryEngine`'s.

        Args:
            retriever: Finds the nodes to cite.
            llm: The LLM (default: ``Settings.llm``); also the model ``attribute="llm"``
                asks, unless the policy names another.
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
            policy: How answers are cited (`unicite.CitePolicy`; default ``CitePolicy()``).
            ledger: Number nodes by this ledger's sids (default: the current ledger, if any).
            on_citations: Called with each query's `CitedAnswer` (for a stream, once it has
                streamed); what it raises is logged at DEBUG level and ignored.
            **options: `CitePolicy` fields overriding ``policy``'s: ``enabled``, ``markers``,
                ``renumber``, ``attribute``, ``require``, ``exclude_inline``, ``sources``,
                ``keep``, ``on_invalid``, ``all_supporting``. ``attribution_llm`` is the
                policy's ``llm`` (a callable from a prompt to the reply).

        Raises:
            UsageError: An unknown option, a bad option value, or a ledger that is not one.
        """
        resolved = self._resolve(llm, policy, options)
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
        self._configure(resolved, ledger, on_citations)

    @staticmethod
    def _resolve(llm: LLM | None, policy: CitePolicy | None, options: dict[str, Any]) -> CitePolicy:
        return resolve_policy(policy, options, default_llm=asker(llm))

    def _configure(
        self, policy: CitePolicy, ledger: SourceLedger | None, on_citations: OnCitations | None
    ) -> None:
        if ledger is not None and not isinstance(ledger, SourceLedger):
            raise UsageError(f"ledger must be a SourceLedger, got {type(ledger).__name__}")
        if on_citations is not None and not callable(on_citations):
            raise UsageError("on_citations must be callable: it is called with a CitedAnswer")
        self._policy = policy
        self._enabled = policy.enabled
        self._on_citations = on_citations
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
        policy: CitePolicy | None = None,
        ledger: SourceLedger | None = None,
        on_citations: OnCitations | None = None,
        **kwargs: Any,
    ) -> CitedQueryEngine:
        """Build the engine over an index, as `CitationQueryEngine.from_args`.

        The arguments are `CitationQueryEngine.from_args`'s (retriever arguments such as
        ``similarity_top_k`` included), plus the keyword-only ones of the constructor: the
        `CitePolicy` field names (and ``attribution_llm``) are citation options, everything
        else goes to LlamaIndex.
        """
        options = {name: kwargs.pop(name) for name in list(kwargs) if name in OPTION_NAMES}
        resolved = cls._resolve(llm, policy, options)
        engine = super().from_args(index, llm, *args, **kwargs)
        if not isinstance(engine, CitedQueryEngine):  # pragma: no cover - from_args builds cls
            raise UsageError("from_args built an engine of another class")
        engine._configure(resolved, ledger, on_citations)
        return engine

    @property
    def policy(self) -> CitePolicy:
        """How the engine cites its answers."""
        return self._policy

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

    def _blocking(self) -> bool:
        """Whether citing may call a model (attribution), to keep off the event loop."""
        return self._policy.attribute not in (None, "lexical")

    def _answer(
        self, text: str, labelled: Labelled, capture: QueryCapture, notes: list[str]
    ) -> tuple[CitedAnswer, GroundingRequiredError | None]:
        """The cited answer and the grounding failure, if any; never another exception."""
        try:
            base = answer_input(capture.native_for(text), text)
            return cite_answer(base, labelled.table(), self._policy, notes), None
        except GroundingRequiredError as failure:
            answer = failure.answer or CitedAnswer(text=text, diagnostics=list(notes))
            return answer, failure
        except Exception as err:
            logger.debug("citing the answer failed", exc_info=True)
            return CitedAnswer(text=text, diagnostics=[*notes, f"internal error: {err!r}"]), None

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
            answer, failure = self._answer(response.response or "", labelled, capture, notes)
            self._finish(response, answer, labelled, failure)
            return response
        return self._other(response, notes)

    async def _acite(
        self, response: RESPONSE_TYPE, labelled: Labelled, capture: QueryCapture
    ) -> RESPONSE_TYPE:
        if isinstance(response, Response) and self._blocking():
            notes = self._notes(labelled)
            answer, failure = await asyncio.to_thread(
                self._answer, response.response or "", labelled, capture, notes
            )
            self._finish(response, answer, labelled, failure)
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
        failure: GroundingRequiredError | None,
    ) -> None:
        """Put the answer on the response, publish it, then raise the grounding failure."""
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
        self._publish(answer)
        if failure is not None:
            raise failure

    def _publish(self, answer: CitedAnswer) -> None:
        """Dispatch the `CitationsEvent` and call ``on_citations``."""
        dispatcher.event(CitationsEvent(answer=answer, origin=origin_of(answer)))
        if self._on_citations is not None:
            try:
                self._on_citations(answer)
            except Exception:
                logger.debug("on_citations raised", exc_info=True)

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
        if not self._policy.renumber or not answer.citations:
            # Nothing was renumbered: the prompt's labels are the text's numbers.
            return
        ids = {
            id(node): source.id
            for node, source in zip(labelled.nodes, labelled.sources, strict=True)
        }
        ledger = labelled.ledger
        listed = len(answer.sources)
        after: dict[str, int] = {}

        def number(node: NodeWithScore) -> int | None:
            sid = ids.get(id(node))
            if sid is None:
                return None
            if ledger is not None:
                sid = ledger.resolve(sid) or sid
            found = answer.footnote_number(sid)
            if found is None:
                # Not listed: numbered after every listed source, where no marker points.
                found = after.setdefault(sid, listed + len(after) + 1)
            return found

        numbers = [number(node) for node in response.source_nodes]
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
        live: _LiveText,
        text: str,
        labelled: Labelled,
        capture: QueryCapture,
        notes: list[str],
        error: Exception,
    ) -> str:
        """Cite what a stream gave before it raised; return the rest of its text to stream.

        The caller streams the rest, then re-raises the error unchanged. The answer (with a
        diagnostic naming the error) goes in ``metadata["citations"]`` and is published; the
        response's text and nodes are left as they are, and no grounding policy applies: the
        error is what the caller gets.
        """
        try:
            note = f"the LLM stream broke off after {len(text)} characters: {describe_error(error)}"
            with capture.active():
                answer, _ = self._answer(text, labelled, capture, [*notes, note])
            rest, answer = live.finish(answer)
            metadata = response.metadata if response.metadata is not None else {}
            metadata["citations"] = answer
            response.metadata = metadata
            self._publish(answer)
        except Exception:
            logger.debug("citing a broken stream failed", exc_info=True)
            return ""
        return rest

    def _wrap_stream(
        self,
        response: StreamingResponse,
        labelled: Labelled,
        capture: QueryCapture,
        notes: list[str],
    ) -> StreamingResponse:
        tokens = response.response_gen
        cited = FinalTextStreamingResponse(
            response_gen=_no_tokens(),
            source_nodes=list(response.source_nodes),
            metadata=response.metadata if response.metadata is not None else {},
        )
        live = _LiveText(labelled, self._policy)

        def gen() -> Generator[str, None, None]:
            pieces: list[str] = []
            while True:
                try:
                    with capture.active():
                        token = next(tokens)
                except StopIteration:
                    break
                except Exception as err:
                    text = "".join(pieces)
                    rest = self._broken(cited, live, text, labelled, capture, notes, err)
                    if rest:
                        yield rest
                    raise
                pieces.append(token)
                shown = live.feed(token)
                if shown:
                    yield shown
            with capture.active():
                answer, failure = self._answer("".join(pieces), labelled, capture, notes)
            rest, answer = live.finish(answer)
            if rest:
                yield rest
            self._finish(cited, answer, labelled, failure)

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
        live = _LiveText(labelled, self._policy)

        async def gen() -> AsyncGenerator[str, None]:
            pieces: list[str] = []
            while True:
                try:
                    with capture.active():
                        token = await tokens.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as err:
                    text = "".join(pieces)
                    rest = self._broken(response, live, text, labelled, capture, notes, err)
                    if rest:
                        yield rest
                    raise
                pieces.append(token)
                shown = live.feed(token)
                if shown:
                    yield shown
            with capture.active():
                text = "".join(pieces)
                if self._blocking():
                    answer, failure = await asyncio.to_thread(
                        self._answer, text, labelled, capture, notes
                    )
                else:
                    answer, failure = self._answer(text, labelled, capture, notes)
            rest, answer = live.finish(answer)
            if rest:
                yield rest
            # LlamaIndex adds up the streamed pieces as they pass; the cited text is the same.
            self._finish(response, answer, labelled, failure)

        response.response_gen = gen()
        return response
