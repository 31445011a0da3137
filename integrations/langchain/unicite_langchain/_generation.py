"""`cited_generation`: a runnable answering a question from documents, its citations checked.

The runnable hands the question and the retrieved documents to `unicite.generate_cited` (or
its async and streaming twins) and returns the `unicite.CitedGeneration`. Documents are read
into sources as the `CitationCallbackHandler` reads a retriever's output, so a document cites
the same way whichever entry point saw it.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict

from unicite import Source, UsageError
from unicite.generation import (
    CitedGeneration,
    Retry,
    agenerate_cited,
    astream_cited,
    generate_cited,
    stream_cited,
)
from unicite.providers import llm_kind
from unicite_langchain._capture import read_documents

__all__ = [
    "GENERATION_DELTA_EVENT",
    "GENERATION_RETRY_EVENT",
    "CitedGenerationRunnable",
    "cited_generation",
]

GENERATION_DELTA_EVENT = "unicite_generation_delta"
"""Custom event dispatched per streamed text delta; its data is ``{"delta": str}``."""

GENERATION_RETRY_EVENT = "unicite_generation_retry"
"""Custom event dispatched when a streamed round failed its checks and the model is asked
again; its data is ``{"round": int, "reason": str}``. The text shown so far is discarded."""

QUESTION_KEYS = ("question", "input", "query")
"""Input keys holding the question, the first present wins."""

SOURCE_KEYS = ("documents", "sources", "context")
"""Input keys holding the documents or sources (one of them)."""

OPTION_NAMES = frozenset(
    name
    for name, parameter in inspect.signature(generate_cited).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
)
"""The options `cited_generation` takes: `unicite.generate_cited`'s keyword arguments."""

_RETRIEVER = "retriever"
"""The name documents are read under (as the handler reads a retriever's output)."""

Chunk = str | Retry | CitedGeneration
"""What streaming yields: text deltas, `Retry` notices, the `CitedGeneration` last."""


def _question(value: Mapping[str, Any]) -> str:
    for key in QUESTION_KEYS:
        if key in value:
            question = value[key]
            if not isinstance(question, str):
                raise UsageError(
                    f"cited_generation: the question under {key!r} must be a string, "
                    f"got {type(question).__name__}"
                )
            return question
    raise UsageError(
        "cited_generation: the input has no question; give it under 'question', 'input' or "
        f"'query' (keys given: {', '.join(map(repr, value)) or 'none'})"
    )


def _sources_value(value: Mapping[str, Any]) -> Any:
    found = [key for key in SOURCE_KEYS if key in value]
    if not found:
        raise UsageError(
            "cited_generation: the input has no sources; give the documents under "
            "'documents' (or 'sources', 'context')"
        )
    if len(found) > 1:
        raise UsageError(
            "cited_generation: give the sources under one key, not "
            + " and ".join(repr(key) for key in found)
        )
    return value[found[0]]


def sources_of(value: Any, notes: list[str]) -> Any:
    """The sources `generate_cited` is given for what the input holds.

    A list (or tuple) may mix LangChain `Document`s, `unicite.Source` objects and source
    dicts: each run of documents is read as retrieved documents (metadata ``source`` or
    ``url``, ``title``, ...; the page content is the source's content), what cannot be read
    is left out and noted in `notes`; the rest is passed on as it is, in order. Anything
    else (a `unicite.sources.SourceLedger`, a map from numbers to sources) goes to
    `unicite.generate_cited` unchanged.
    """
    if isinstance(value, Document):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return value
    sources: list[Source | Any] = []
    run: list[Document] = []
    for item in value:
        if isinstance(item, Document):
            run.append(item)
            continue
        if run:
            sources.extend(read_documents(_RETRIEVER, run, notes))
            run = []
        sources.append(item)
    if run:
        sources.extend(read_documents(_RETRIEVER, run, notes))
    return sources


def _noted(generation: CitedGeneration, notes: Sequence[str]) -> CitedGeneration:
    """The generation with what reading the documents noted in its answer's diagnostics."""
    if not notes:
        return generation
    answer = generation.answer
    diagnostics = [*answer.diagnostics, *(n for n in notes if n not in answer.diagnostics)]
    return generation.model_copy(update={"answer": answer.replace(diagnostics=diagnostics)})


class CitedGenerationRunnable(RunnableSerializable[dict[str, Any], CitedGeneration]):
    """A runnable from ``{"question", "documents"}`` to a `unicite.CitedGeneration`.

    The input is a dict with the question under ``"question"`` (or ``"input"``, ``"query"``)
    and the sources under ``"documents"`` (or ``"sources"``, ``"context"``): LangChain
    `Document`s, `unicite.Source` objects or source dicts. The model is prompted with the
    numbered sources, its citations are checked and the answer retried with the problems as
    feedback, per `unicite.generate_cited`.

    ``invoke``/``ainvoke`` (and ``batch``) return the `CitedGeneration`. ``stream``/``astream``
    yield the text deltas (``str``, markers already carrying their final numbers), a
    `unicite.generation.Retry` when a round failed its checks (discard the text shown so
    far: the next deltas start the answer again) and the `CitedGeneration` last. While
    streaming, each delta is also dispatched as the custom event ``unicite_generation_delta``
    (data ``{"delta": str}``) and each retry as ``unicite_generation_retry`` (data
    ``{"round", "reason"}``), so ``astream_events`` consumers see them; the run's output
    (``on_chain_end``) is the `CitedGeneration`.

    Made by `cited_generation`; ``CitedGenerationRunnable(llm, **options)`` is the same.
    """

    llm: Any
    """The model: a LangChain chat model, or anything `unicite.generate_cited` takes."""
    options: dict[str, Any]
    """`unicite.generate_cited`'s keyword arguments (``format``, ``strategy``, ...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def __init__(self, llm: Any = None, /, **kwargs: Any) -> None:
        """Build the runnable; see `cited_generation`.

        Raises:
            UsageError: ``llm`` is not a model unicite knows, or an option is unknown.
        """
        if llm is None:
            llm = kwargs.pop("llm", None)
        name = kwargs.pop("name", None)
        options = dict(kwargs.pop("options", None) or {})
        options.update(kwargs)
        unknown = sorted(set(options) - OPTION_NAMES)
        if unknown:
            raise UsageError(
                f"cited_generation: unknown option(s) {', '.join(map(repr, unknown))}; the "
                f"options are generate_cited's: {', '.join(sorted(OPTION_NAMES))}"
            )
        if llm is None:
            raise UsageError("cited_generation needs the model (llm) to ask")
        llm_kind(llm, model=options.get("model"))  # raises UsageError for an unknown llm
        super().__init__(llm=llm, options=options, name=name)

    def _request(self, input: Any) -> tuple[str, Any, list[str]]:
        """The question, the sources and the notes reading them left, from the input."""
        if not isinstance(input, Mapping):
            raise UsageError(
                "cited_generation takes a dict with the question and the documents, e.g. "
                '{"question": RunnablePassthrough(), "documents": retriever}; got '
                f"{type(input).__name__}"
            )
        notes: list[str] = []
        sources = sources_of(_sources_value(input), notes)
        return _question(input), sources, notes

    # --- invoke -----------------------------------------------------------------------------

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> CitedGeneration:
        """Answer the question from the documents; return the `CitedGeneration`."""
        return self._call_with_config(self._invoke, input, config, **kwargs)

    def _invoke(self, input: dict[str, Any]) -> CitedGeneration:
        question, sources, notes = self._request(input)
        generation = generate_cited(self.llm, question, sources, **self.options)
        return _noted(generation, notes)

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> CitedGeneration:
        """`invoke`, asynchronously."""
        return await self._acall_with_config(self._ainvoke, input, config, **kwargs)

    async def _ainvoke(self, input: dict[str, Any]) -> CitedGeneration:
        question, sources, notes = self._request(input)
        generation = await agenerate_cited(self.llm, question, sources, **self.options)
        return _noted(generation, notes)

    # --- stream -----------------------------------------------------------------------------

    def stream(  # type: ignore[override]
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[Chunk]:
        """Stream the text deltas, a `Retry` between rounds, and the `CitedGeneration` last."""
        stream = self._transform_stream_with_config(
            iter([input]),
            self._stream,  # type: ignore[arg-type]
            config,
            **kwargs,
        )
        yield from cast(Iterator[Chunk], stream)

    def _stream(
        self,
        inputs: Iterator[dict[str, Any]],
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> Iterator[Chunk]:
        for value in inputs:
            question, sources, notes = self._request(value)
            for item in stream_cited(self.llm, question, sources, **self.options):
                if isinstance(item, CitedGeneration):
                    yield _noted(item, notes)
                    continue
                name, data = _event(item)
                dispatch_custom_event(name, data, config=config)
                yield item

    async def astream(  # type: ignore[override]
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> AsyncIterator[Chunk]:
        """`stream`, asynchronously (what ``astream_events`` runs)."""

        async def once() -> AsyncIterator[dict[str, Any]]:
            yield input

        stream = self._atransform_stream_with_config(
            once(),
            self._astream,  # type: ignore[arg-type]
            config,
            **kwargs,
        )
        async for chunk in cast(AsyncIterator[Chunk], stream):
            yield chunk

    async def _astream(
        self,
        inputs: AsyncIterator[dict[str, Any]],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> AsyncIterator[Chunk]:
        async for value in inputs:
            question, sources, notes = self._request(value)
            async for item in astream_cited(self.llm, question, sources, **self.options):
                if isinstance(item, CitedGeneration):
                    yield _noted(item, notes)
                    continue
                name, data = _event(item)
                await adispatch_custom_event(name, data, config=config)
                yield item


def _event(item: str | Retry) -> tuple[str, dict[str, Any]]:
    """The custom event announcing a streamed delta or retry."""
    if isinstance(item, Retry):
        return GENERATION_RETRY_EVENT, {"round": item.round, "reason": item.reason}
    return GENERATION_DELTA_EVENT, {"delta": item}


def cited_generation(llm: Any, **options: Any) -> CitedGenerationRunnable:
    """A runnable answering ``{"question", "documents"}`` with a checked, cited answer.

    Example:
        ```python
        chain = {"question": RunnablePassthrough(), "documents": retriever} | cited_generation(
            model
        )
        generation = chain.invoke("Quand l’abbaye a-t-elle été fondée ?")
        generation.content  # the answer, markers [[S:n]] numbered as generation.answer.sources
        ```

    Args:
        llm: The model: a LangChain chat model (or a binding of one), or anything else
            `unicite.generate_cited` takes.
        **options: `unicite.generate_cited`'s keyword arguments: ``format``, ``schema``,
            ``strategy``, ``require``, ``max_retries``, ``budget_tokens``, ``prefer``,
            ``policy``, ``model``; and ``name``, the runnable's name.

    Raises:
        UsageError: ``llm`` is not a model unicite knows, or an option is unknown (bad option
            values are reported by the first call).
    """
    return CitedGenerationRunnable(llm, **options)
