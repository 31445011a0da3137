"""LCEL pieces: `with_citations`, answer and citations from any runnable, and a parser.

`CitationOutputParser` turns model text or a message into a `CitedAnswer`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal
from uuid import UUID, uuid4

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    BaseCallbackManager,
    CallbackManagerForChainRun,
)
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import patch_config
from langchain_core.runnables.utils import AddableDict
from pydantic import ConfigDict, Field, PrivateAttr

from unicite import CitedAnswer, Source, UsageError
from unicite._segment import MARKER_RE
from unicite.markers import MarkerStream, OnInvalid, ParseStyle, parse_markers, renumber
from unicite.sources import ExtractorRegistry, SourceLedger, as_source
from unicite_langchain._context import run_ledgers
from unicite_langchain._handler import Attribute, CitationCallbackHandler, _DocumentSources
from unicite_langchain._messages import from_ai_message

__all__ = ["CitationOutputParser", "CitedRunnable", "with_citations"]


def _text_of(value: Any) -> str:
    """The answer text in a runnable's output (or output chunk)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return str(value.text)
    if isinstance(value, dict):
        answer = value.get("answer")
        if isinstance(answer, str):
            return answer
        if isinstance(answer, BaseMessage):
            return str(answer.text)
    return ""


def _with_handler(config: RunnableConfig, handler: CitationCallbackHandler) -> Any:
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.add_handler(handler, inherit=True)
        return manager
    if isinstance(callbacks, list):
        return [*callbacks, handler]
    return [handler]


class CitedRunnable(RunnableSerializable[Any, dict[str, Any]]):
    """A runnable whose output is ``{"answer": str, "citations": CitedAnswer}``.

    Made by `with_citations`.
    """

    bound: Runnable[Any, Any]
    """The chain, agent or model whose answer is cited."""
    enabled: bool | None = None
    """Citations on or off (`unicite.resolve_enabled`); off gives the plain text, uncited."""
    require: Literal["citations"] | None = None
    """``"citations"`` raises `unicite.GroundingRequiredError` for answers without any."""
    attribute: Any = None
    """Post-hoc attribution, as `CitationCallbackHandler`'s ``attribute``."""
    registry: ExtractorRegistry | None = None
    """The extractor registry reading tool outputs."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _documents: _DocumentSources | None = PrivateAttr(default=None)

    def _handler(self, sink: list[CitedAnswer]) -> CitationCallbackHandler:
        # One handler per call: concurrent calls (batch) never share run state. They share
        # the sources read from retrieved documents, which depend on the documents only.
        attribute: Attribute = self.attribute
        handler = CitationCallbackHandler(
            enabled=self.enabled,
            require=self.require,
            attribute=attribute,
            on_citations=sink.append,
            renumber=False,
            keep=1,
            registry=self.registry,
        )
        if self._documents is None:
            self._documents = handler._documents
        else:
            handler._documents = self._documents
        return handler

    @staticmethod
    def _result(sink: list[CitedAnswer], output: Any) -> dict[str, Any]:
        answer = sink[-1] if sink else CitedAnswer(text=_text_of(output))
        return {"answer": answer.text, "citations": answer}

    # --- invoke -----------------------------------------------------------------------------

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the bound runnable and cite its answer."""
        return self._call_with_config(self._invoke, input, config, **kwargs)

    def _invoke(
        self,
        input: Any,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
        **kwargs: Any,
    ) -> dict[str, Any]:
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        if not handler.enabled:
            return self._result(sink, self.bound.invoke(input, config, **kwargs))
        child = patch_config(config, callbacks=_with_handler(config, handler))
        return self._result(sink, self.bound.invoke(input, child, **kwargs))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the bound runnable asynchronously and cite its answer."""
        return await self._acall_with_config(self._ainvoke, input, config, **kwargs)

    async def _ainvoke(
        self,
        input: Any,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
        **kwargs: Any,
    ) -> dict[str, Any]:
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        if not handler.enabled:
            return self._result(sink, await self.bound.ainvoke(input, config, **kwargs))
        child = patch_config(config, callbacks=_with_handler(config, handler))
        return self._result(sink, await self.bound.ainvoke(input, child, **kwargs))

    # --- stream -----------------------------------------------------------------------------

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[dict[str, Any]]:
        """Stream ``{"answer": delta}`` chunks as the text arrives, then ``{"citations": …}``.

        The deltas join to exactly ``citations.text``: citation markers are held back until
        they are complete and invalid ones never appear (`unicite.markers.MarkerStream`).
        """
        yield from self._transform_stream_with_config(iter([input]), self._stream, config, **kwargs)

    def _stream(
        self,
        inputs: Iterator[Any],
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
        **kwargs: Any,
    ) -> Iterator[dict[str, Any]]:
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        for value in inputs:
            inner = uuid4()
            child = patch_config(config, callbacks=_with_handler(config, handler))
            child["run_id"] = inner
            text = _TextStream(handler, inner)
            for chunk in self.bound.stream(value, child, **kwargs):
                shown = text.feed(_text_of(chunk))
                if shown:
                    yield AddableDict(answer=shown)
            rest = text.close()
            if rest:
                yield AddableDict(answer=rest)
            yield AddableDict(citations=self._result(sink, text.raw)["citations"])

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> AsyncIterator[dict[str, Any]]:
        """`stream`, asynchronously."""

        async def once() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(
            once(), self._astream, config, **kwargs
        ):
            yield chunk

    async def _astream(
        self,
        inputs: AsyncIterator[Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        async for value in inputs:
            inner = uuid4()
            child = patch_config(config, callbacks=_with_handler(config, handler))
            child["run_id"] = inner
            text = _TextStream(handler, inner)
            async for chunk in self.bound.astream(value, child, **kwargs):
                shown = text.feed(_text_of(chunk))
                if shown:
                    yield AddableDict(answer=shown)
            rest = text.close()
            if rest:
                yield AddableDict(answer=rest)
            yield AddableDict(citations=self._result(sink, text.raw)["citations"])


class _TextStream:
    """Answer text as it streams: through a `MarkerStream` once the run has sources."""

    def __init__(self, handler: CitationCallbackHandler, run_id: UUID) -> None:
        self._handler = handler
        self._run_id = run_id
        self._markers: MarkerStream | None = None
        self._started = False
        self._parts: list[str] = []

    @property
    def raw(self) -> str:
        return "".join(self._parts)

    def feed(self, delta: str) -> str:
        if not delta:
            return ""
        self._parts.append(delta)
        if not self._started:
            self._started = True
            ledger = self._handler.ledger(self._run_id) if self._handler.enabled else None
            if ledger is not None and len(ledger):
                self._markers = MarkerStream(ledger)
        return self._markers.feed(delta) if self._markers is not None else delta

    def close(self) -> str:
        return self._markers.close() if self._markers is not None else ""


def with_citations(
    runnable: Runnable[Any, Any],
    *,
    enabled: bool | None = None,
    require: Literal["citations"] | None = None,
    attribute: Attribute = None,
    registry: ExtractorRegistry | None = None,
) -> CitedRunnable:
    """Wrap a chain, agent or model so it returns ``{"answer": str, "citations": CitedAnswer}``.

    A `CitationCallbackHandler` watches each call (so ``batch`` calls never mix sources).
    ``stream`` yields ``{"answer": delta}`` chunks while the text arrives and a last
    ``{"citations": answer}`` chunk; added up, the chunks equal what ``invoke`` returns.
    Markers keep the numbers the model wrote, so shown text never changes afterwards.

    Args:
        runnable: Any LangChain runnable whose output is text, a message, or a dict with an
            ``"answer"``.
        enabled: Citations on or off (off: the plain text, uncited).
        require: ``"citations"`` raises `unicite.GroundingRequiredError` when an answer has none.
        attribute: Post-hoc attribution for answers without citations (see the handler).
        registry: The `unicite.sources.ExtractorRegistry` reading tool outputs.

    Raises:
        UsageError: ``runnable`` is not a LangChain runnable, or an option is invalid.
    """
    if not isinstance(runnable, Runnable):
        raise UsageError(
            f"with_citations needs a LangChain Runnable, got {type(runnable).__name__}"
        )
    # Validate the options now rather than on the first call.
    CitationCallbackHandler(
        enabled=enabled, require=require, attribute=attribute, registry=registry
    )
    return CitedRunnable(
        bound=runnable, enabled=enabled, require=require, attribute=attribute, registry=registry
    )


class CitationOutputParser(BaseOutputParser[CitedAnswer]):
    """Parse a model's answer into a `CitedAnswer`: native citations, else its markers.

    Markers (``[1]``, ``[[S:1,3]]``, ``[^1]``, ...) are read against ``sources`` when given,
    else against the sources a `CitationCallbackHandler` captured for the run so far (the
    numbers `number_sources` showed the model). A message with native provider citations is
    read as `from_ai_message` reads it.
    """

    sources: Sequence[Source] | None = None
    """The sources the model was shown, in prompt order; None to use the run's ledger."""
    style: ParseStyle | Sequence[ParseStyle] = "auto"
    """Which marker styles to read (see `unicite.markers.parse_markers`)."""
    on_invalid: OnInvalid = "drop"
    """What happens to markers naming no source."""
    renumber: bool = Field(default=True)
    """Renumber sources in first-cited order and rewrite the markers."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _type(self) -> str:
        return "unicite_citation"

    def parse(self, text: str) -> CitedAnswer:
        """Parse marker text against ``sources``."""
        return self._parse_text(text, self._given_sources(), [])

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> CitedAnswer:
        """Parse the first generation: its message's native citations, else its markers."""
        return self._parse_generation(result, self._given_sources())

    def invoke(
        self, input: str | BaseMessage, config: RunnableConfig | None = None, **kwargs: Any
    ) -> CitedAnswer:
        """Parse a model's text or message, reading markers against the run's sources."""
        return self._call_with_config(self._invoke, input, config, run_type="parser")

    async def ainvoke(
        self,
        input: str | BaseMessage,
        config: RunnableConfig | None = None,
        **kwargs: Any | None,
    ) -> CitedAnswer:
        """`invoke`; parsing is CPU-only, so it runs as is."""
        return await self._acall_with_config(self._ainvoke, input, config, run_type="parser")

    def _invoke(
        self,
        input: str | BaseMessage,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> CitedAnswer:
        return self._parse_input(input, run_manager.run_id, config)

    async def _ainvoke(
        self,
        input: str | BaseMessage,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> CitedAnswer:
        return self._parse_input(input, run_manager.run_id, config)

    def _parse_input(
        self, input: str | BaseMessage, run_id: UUID, config: RunnableConfig
    ) -> CitedAnswer:
        sources: list[Source] | SourceLedger | None = self._given_sources()
        if sources is None:
            found = run_ledgers(config.get("callbacks"), run_id)
            sources = found[0][0] if found else None
        generation = (
            ChatGeneration(message=input)
            if isinstance(input, BaseMessage)
            else Generation(text=input)
        )
        return self._parse_generation([generation], sources)

    def _given_sources(self) -> list[Source] | None:
        if self.sources is None:
            return None
        if isinstance(self.sources, (str, bytes)):
            raise UsageError("sources must be a list of sources")
        return [as_source(source) for source in self.sources]

    def _parse_generation(
        self, result: list[Generation], sources: list[Source] | SourceLedger | None
    ) -> CitedAnswer:
        if not result:
            raise UsageError("no generation to parse")
        first = result[0]
        if isinstance(first, ChatGeneration):
            native = from_ai_message(first.message)
            if native.citations:
                return native
            return self._parse_text(native.text, sources, native.diagnostics)
        return self._parse_text(first.text, sources, [])

    def _parse_text(
        self, text: str, sources: list[Source] | SourceLedger | None, notes: list[str]
    ) -> CitedAnswer:
        if not isinstance(text, str):
            raise UsageError(f"expected text, got {type(text).__name__}")
        if sources is None or not len(sources):
            found = "" if MARKER_RE.search(text) is None else "; its markers were left as text"
            return CitedAnswer(
                text=text, diagnostics=[*notes, f"no sources to read markers against{found}"]
            )
        answer = parse_markers(text, sources, style=self.style, on_invalid=self.on_invalid)
        if self.renumber and answer.citations:
            answer = renumber(answer, keep_unused=True)
        if notes:
            answer = answer.model_copy(update={"diagnostics": [*notes, *answer.diagnostics]})
        return answer
