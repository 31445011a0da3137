"""`with_citations`: any runnable returning ``{"answer": str, "citations": CitedAnswer}``.

Each call runs the wrapped runnable under its own `CitationCallbackHandler`, which cites the
answer when the run ends; streaming shows the text as that answer will read. A LangGraph graph
(a `langchain.agents.create_agent` agent) streams its state, not its text: its model's message
chunks are read from the graph's ``"messages"`` stream instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from functools import partial
from typing import Any
from uuid import UUID, uuid4

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    BaseCallbackManager,
    CallbackManagerForChainRun,
)
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableSerializable,
)
from langchain_core.runnables.config import patch_config
from langchain_core.runnables.utils import AddableDict
from pydantic import ConfigDict, PrivateAttr

from unicite import CitedAnswer, CitePolicy, UsageError
from unicite.sources import ExtractorRegistry, as_source
from unicite_langchain._capture import DocumentSources
from unicite_langchain._handler import CitationCallbackHandler
from unicite_langchain._live import LiveText
from unicite_langchain._options import citation_policy

__all__ = ["CitedRunnable", "with_citations"]

_DIVERGED = "the text shown while streaming differs from the final answer's text"


def _text_of(value: Any) -> str:
    """The answer text in a runnable's output (or output chunk).

    A graph's state answers with its last message, when the model wrote it.
    """
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
        messages = value.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], AIMessage):
            return str(messages[-1].text)
    return ""


def _is_graph(runnable: Runnable[Any, Any]) -> bool:
    """Whether a runnable is a LangGraph graph (through ``with_config`` and ``bind``)."""
    try:
        from langgraph.pregel import Pregel
    except ImportError:
        return False
    while isinstance(runnable, RunnableBinding):
        runnable = runnable.bound
    return isinstance(runnable, Pregel)


GRAPH_STREAM_MODES = ["messages", "values"]
"""What `with_citations` asks a graph to stream: model message chunks, and the state (which
holds the numbers a `CitationMiddleware` showed the model)."""


class _GraphText:
    """The answer text in a graph's ``"messages"`` and ``"values"`` stream, as it will read.

    Each model message is its own text (a new `LiveText`): an agent's last message is its
    answer, and text it wrote before calling tools was shown as it came. Markers are read
    against the numbers a `CitationMiddleware` showed the model (the state's
    ``citation_sources``), else against the handler's ledger.
    """

    def __init__(self, policy: CitePolicy, handler: CitationCallbackHandler, run_id: UUID):
        self._policy = policy
        self._handler = handler
        self._run_id = run_id
        self._shown: list[Any] | None = None
        self._message: object = None
        self.live: LiveText | None = None

    def _sources(self) -> object:
        if self._shown is not None:
            return {n: as_source(item) for n, item in enumerate(self._shown, start=1)}
        return self._handler.ledger(self._run_id)

    def feed(self, item: Any) -> str:
        """The text now certain after one ``(mode, data)`` item of the stream."""
        if not isinstance(item, tuple) or len(item) != 2:
            return ""
        mode, data = item
        if mode == "values":
            shown = data.get("citation_sources") if isinstance(data, Mapping) else None
            if isinstance(shown, list):
                self._shown = shown
            return ""
        if mode != "messages" or not isinstance(data, tuple) or len(data) != 2:
            return ""
        message, metadata = data
        if not isinstance(message, AIMessage):
            return ""
        if isinstance(metadata, Mapping) and metadata.get("langgraph_node") == "tools":
            return ""  # a model a tool ran
        shown = ""
        if self.live is None or message.id != self._message:
            shown = self.close()
            self._message = message.id
            self.live = LiveText(self._policy, self._sources)
        return shown + self.live.feed(str(message.text))

    def close(self) -> str:
        """The text of the current message held back until now."""
        return self.live.close() if self.live is not None else ""


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
    policy: CitePolicy
    """How answers are cited (`unicite.cite`); disabled gives the plain text, uncited."""
    registry: ExtractorRegistry | None = None
    """The extractor registry reading tool outputs."""
    on_citations: Callable[[CitedAnswer], object] | None = None
    """Called with the `CitedAnswer` of each call when it ends."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _documents: DocumentSources | None = PrivateAttr(default=None)

    def _handler(self, sink: list[CitedAnswer]) -> CitationCallbackHandler:
        # One handler per call: concurrent calls (batch) never share run state. They share
        # the sources read from retrieved documents, which depend on the documents only.
        callback = self.on_citations

        def publish(answer: CitedAnswer) -> None:
            sink.append(answer)
            if callback is not None:
                callback(answer)

        handler = CitationCallbackHandler(
            policy=self.policy, on_citations=publish, keep=1, registry=self.registry
        )
        if self._documents is None:
            self._documents = DocumentSources(self.registry)
        handler._share_documents(self._documents)
        return handler

    @staticmethod
    def _result(answer: CitedAnswer) -> dict[str, Any]:
        return {"answer": answer.text, "citations": answer}

    def _graph_options(self, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        """The stream options for a graph (its model's messages and its state); None if not one.

        Raises:
            UsageError: ``stream_mode`` was given: the stream's chunks are the answer's.
        """
        if not _is_graph(self.bound):
            return None
        if "stream_mode" in kwargs:
            raise UsageError(
                "with_citations streams {'answer': ...} then {'citations': ...} chunks; "
                "stream the graph itself for other stream modes"
            )
        return {**kwargs, "stream_mode": GRAPH_STREAM_MODES}

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
        if not self.policy.enabled:
            output = self.bound.invoke(input, config, **kwargs)
            return self._result(CitedAnswer(text=_text_of(output)))
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        child = patch_config(config, callbacks=_with_handler(config, handler))
        output = self.bound.invoke(input, child, **kwargs)
        return self._result(sink[-1] if sink else CitedAnswer(text=_text_of(output)))

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
        if not self.policy.enabled:
            output = await self.bound.ainvoke(input, config, **kwargs)
            return self._result(CitedAnswer(text=_text_of(output)))
        sink: list[CitedAnswer] = []
        handler = self._handler(sink)
        child = patch_config(config, callbacks=_with_handler(config, handler))
        output = await self.bound.ainvoke(input, child, **kwargs)
        return self._result(sink[-1] if sink else CitedAnswer(text=_text_of(output)))

    # --- stream -----------------------------------------------------------------------------

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[dict[str, Any]]:
        """Stream ``{"answer": delta}`` chunks as the text arrives, then ``{"citations": …}``.

        The deltas join to exactly ``citations.text``: markers are shown once complete, with
        their final numbers, and invalid ones never appear (`unicite.MarkerStream`). A graph
        (an agent) streams the text of its model's messages; what the model wrote before
        calling tools is shown too, and ``citations`` is the answer of its last message.

        Raises:
            UsageError: ``stream_mode`` given for a graph.
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
        graph = self._graph_options(kwargs)
        for value in inputs:
            inner = uuid4()
            child = patch_config(config, callbacks=_with_handler(config, handler))
            child["run_id"] = inner
            if graph is not None:
                text = _GraphText(self.policy, handler, inner)
                for item in self.bound.stream(value, child, **graph):
                    shown = text.feed(item)
                    if shown:
                        yield AddableDict(answer=shown)
                rest, live = text.close(), text.live
            else:
                live = LiveText(self.policy, partial(handler.ledger, inner))
                for chunk in self.bound.stream(value, child, **kwargs):
                    shown = live.feed(_text_of(chunk))
                    if shown:
                        yield AddableDict(answer=shown)
                rest = live.close()
            if rest:
                yield AddableDict(answer=rest)
            yield AddableDict(citations=_final(sink, live))

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
        graph = self._graph_options(kwargs)
        async for value in inputs:
            inner = uuid4()
            child = patch_config(config, callbacks=_with_handler(config, handler))
            child["run_id"] = inner
            if graph is not None:
                text = _GraphText(self.policy, handler, inner)
                async for item in self.bound.astream(value, child, **graph):
                    shown = text.feed(item)
                    if shown:
                        yield AddableDict(answer=shown)
                rest, live = text.close(), text.live
            else:
                live = LiveText(self.policy, partial(handler.ledger, inner))
                async for chunk in self.bound.astream(value, child, **kwargs):
                    shown = live.feed(_text_of(chunk))
                    if shown:
                        yield AddableDict(answer=shown)
                rest = live.close()
            if rest:
                yield AddableDict(answer=rest)
            yield AddableDict(citations=_final(sink, live))


def _final(sink: list[CitedAnswer], live: LiveText | None) -> CitedAnswer:
    """The streamed run's answer; a diagnostic says so if the text shown is not its text."""
    shown = live.shown if live is not None else ""
    if not sink:
        return CitedAnswer(text=shown)
    answer = sink[-1]
    if shown == answer.text:
        return answer
    return answer.model_copy(update={"diagnostics": [*answer.diagnostics, _DIVERGED]})


def with_citations(
    runnable: Runnable[Any, Any],
    *,
    policy: CitePolicy | None = None,
    persistent: bool | None = None,
    on_citations: Callable[[CitedAnswer], object] | None = None,
    registry: ExtractorRegistry | None = None,
    **options: Any,
) -> CitedRunnable:
    """Wrap a chain, agent or model so it returns ``{"answer": str, "citations": CitedAnswer}``.

    A `CitationCallbackHandler` watches each call (so ``batch`` calls never mix sources) and
    cites the answer with `unicite.cite` when the call ends. ``stream`` yields
    ``{"answer": delta}`` chunks while the text arrives and a last ``{"citations": answer}``
    chunk; added up, the chunks equal what ``invoke`` returns: the deltas already carry the
    final marker numbers. A LangGraph graph (a ``create_agent`` agent) streams the text of its
    model's messages; with ``CitationMiddleware`` the answer is the one the middleware cited.

    Args:
        runnable: Any LangChain runnable whose output is text, a message, or a dict with an
            ``"answer"``.
        policy: The `unicite.CitePolicy`; the keyword options override its fields.
        persistent: A persistent on/off setting, below ``enabled``.
        on_citations: Called with the `CitedAnswer` of each call when it ends (its errors
            are logged, never raised).
        registry: The `unicite.sources.ExtractorRegistry` reading tool outputs.
        **options: `CitePolicy` fields, as `CitationCallbackHandler` takes them (``enabled``,
            ``require``, ``attribute``, ``renumber``, ``sources``, ...).

    Raises:
        UsageError: ``runnable`` is not a LangChain runnable, or an option is invalid.
    """
    if not isinstance(runnable, Runnable):
        raise UsageError(
            f"with_citations needs a LangChain Runnable, got {type(runnable).__name__}"
        )
    if registry is not None and not isinstance(registry, ExtractorRegistry):
        raise UsageError("registry must be a unicite.sources.ExtractorRegistry")
    if on_citations is not None and not callable(on_citations):
        raise UsageError("on_citations must be callable: it takes the CitedAnswer")
    resolved = citation_policy(policy, options, persistent=persistent)
    return CitedRunnable(
        bound=runnable, policy=resolved, registry=registry, on_citations=on_citations
    )
