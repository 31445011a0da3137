"""`CitationCallbackHandler`: one callback that gives any chain or agent a `CitedAnswer` per run.

Sources come from the retriever and tool runs of a root run (correlated by ``run_id`` and
``parent_run_id``) into one `SourceLedger`; the answer is the last model message of the run.
When the root run ends the handler decides how the answer is cited (native, markers, post-hoc),
publishes the result and forgets the run.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, CallbackManager
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.outputs.chat_generation import merge_chat_generation_chunks
from langchain_core.runnables import Runnable, ensure_config
from pydantic_core import to_jsonable_python

from unicite import CitedAnswer, GroundingRequiredError, UsageError, resolve_enabled
from unicite.attribution import attribute as attribute_answer
from unicite.exceptions import describe_error
from unicite.markers import parse_markers, renumber
from unicite.model import CitationOrigin, Source
from unicite.sources import ExtractorRegistry, SourceLedger, default_registry, from_tool_output
from unicite_langchain._messages import from_ai_message

__all__ = [
    "CITATIONS_EVENT",
    "CITED_TOOL_METADATA_KEY",
    "CitationCallbackHandler",
    "read_documents",
]

logger = logging.getLogger("unicite.langchain")

CITATIONS_EVENT = "unicite_citations"
"""Name of the LangChain custom event carrying a root run's answer (see `astream_events`)."""

CITED_TOOL_METADATA_KEY = "unicite_cited_tool"
"""Run metadata marking a `cite_tools` run: it adds its sources to the ledger itself."""

Attribute = Literal["lexical", "llm"] | Callable[[str], Any] | Runnable[Any, Any] | None
"""What ``attribute=`` accepts: a method name, or the model (any ``str -> reply`` callable or
LangChain runnable) that post-hoc LLM attribution asks."""

_DEFAULT_KEEP = 100
_FINISH_KEYS = {
    "openai": ("finish_reason", "status"),
    "anthropic": ("stop_reason",),
    "google_genai": ("finish_reason",),
}
"""Where each provider's LangChain messages keep the reason a complete response ended
(Chat Completions ``finish_reason``, Responses ``status``)."""


class _ToolRun:
    """What a tool or retriever run's start said, needed when it ends."""

    __slots__ = ("arguments", "call_id", "cited", "name")

    def __init__(
        self, name: str, call_id: str | None, arguments: Mapping[str, Any] | None, cited: bool
    ) -> None:
        self.name = name
        self.call_id = call_id
        self.arguments = arguments
        self.cited = cited


class _Request:
    """The documents a model request carried (Anthropic ``document`` / ``search_result`` blocks).

    Native citations name them by position (``document_index``); their text links the cited
    source back to the retrieved document it came from.
    """

    __slots__ = ("documents", "search_results")

    def __init__(self, documents: list[Mapping[str, Any]], results: list[Mapping[str, Any]]):
        self.documents = documents
        self.search_results = results

    @classmethod
    def of(cls, messages: list[list[BaseMessage]]) -> _Request | None:
        documents: list[Mapping[str, Any]] = []
        results: list[Mapping[str, Any]] = []
        for message in messages[0] if messages else []:
            content = message.content
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, Mapping):
                    kind = block.get("type")
                    if kind == "document":
                        documents.append(block)
                    elif kind == "search_result":
                        results.append(block)
        return cls(documents, results) if documents or results else None

    def block(self, provider_id: str | None) -> Mapping[str, Any] | None:
        """The request block a native source's ``document:N`` / ``search_result:N`` id names."""
        if not provider_id or ":" not in provider_id:
            return None
        kind, _, number = provider_id.partition(":")
        blocks = {"document": self.documents, "search_result": self.search_results}.get(kind)
        if blocks is None or not number.isdigit() or int(number) >= len(blocks):
            return None
        return blocks[int(number)]


class _Root:
    """Everything the handler keeps about one root run until it ends."""

    __slots__ = (
        "chunks",
        "diagnostics",
        "handlers",
        "ledger",
        "message",
        "metadata",
        "request",
        "requests",
        "run_id",
        "runs",
        "tags",
        "tools",
    )

    def __init__(
        self, run_id: UUID, tags: list[str] | None, metadata: dict[str, Any] | None
    ) -> None:
        self.run_id = run_id
        self.tags = list(tags or [])
        self.metadata = dict(metadata or {})
        self.ledger = SourceLedger()
        self.runs: set[UUID] = {run_id}
        self.tools: dict[UUID, _ToolRun] = {}
        self.chunks: dict[UUID, list[ChatGenerationChunk | GenerationChunk]] = {}
        self.message: BaseMessage | None = None
        self.requests: dict[UUID, _Request] = {}
        self.request: _Request | None = None
        self.diagnostics: list[str] = []
        self.handlers: list[BaseCallbackHandler] | None = None


class _DocumentSources:
    """Sources of retrieved documents already read, so a corpus is not re-read on every run.

    RAG retrieves from a fixed corpus: the same documents come back run after run. Each is
    keyed by its id, text and metadata (and the extractor that read it); a hit gives the same
    `Source` the registry made, re-ranked for its position. Bounded (least recently used out).
    """

    def __init__(self, registry: ExtractorRegistry | None, size: int = 4096) -> None:
        self._registry = registry
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], Source] = OrderedDict()

    @staticmethod
    def _key(extractor: int, name: str, document: Any) -> tuple[Any, ...] | None:
        if not isinstance(document, Document):
            return None
        try:
            metadata = tuple(sorted((str(k), repr(v)) for k, v in document.metadata.items()))
        except Exception:
            return None
        return (extractor, name, document.id, document.page_content, metadata)

    def _keys(self, name: str, documents: list[Any]) -> list[tuple[Any, ...] | None]:
        # The extractor that reads this tool name is part of the key: a new registration
        # for the name reads its documents afresh.
        extractor = id((self._registry or default_registry).extractor_for(name))
        return [self._key(extractor, name, document) for document in documents]

    def get(self, name: str, documents: list[Any]) -> list[Source] | None:
        """The sources of all `documents` when every one was read before, else None."""
        keys = self._keys(name, documents)
        found: list[Source] = []
        with self._lock:
            for key in keys:
                source = None if key is None else self._entries.get(key)
                if key is None or source is None:
                    return None
                self._entries.move_to_end(key)
                found.append(source)
        return [
            source if source.rank == rank else source.model_copy(update={"rank": rank})
            for rank, source in enumerate(found)
        ]

    def put(self, name: str, documents: list[Any], sources: list[Source | None]) -> None:
        """Remember what the registry read from each document (one source per document)."""
        if len(sources) != len(documents):
            return
        keys = self._keys(name, documents)
        with self._lock:
            for key, source in zip(keys, sources, strict=True):
                if key is not None and source is not None:
                    self._entries[key] = source
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class _Answers(Mapping[UUID, CitedAnswer]):
    """The answers of recent root runs by run id (a `UUID` or its string form)."""

    def __init__(self, answers: dict[UUID, CitedAnswer]) -> None:
        self._answers = answers

    def __getitem__(self, key: UUID | str) -> CitedAnswer:
        if isinstance(key, str):
            try:
                key = UUID(key)
            except ValueError:
                raise KeyError(key) from None
        return self._answers[key]

    def __iter__(self) -> Iterator[UUID]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)


class CitationCallbackHandler(BaseCallbackHandler):
    """Collects sources and the answer of every root run, and cites the answer when it ends.

    Pass it in ``config={"callbacks": [handler]}`` of any chain, agent or model call. For each
    root run it gathers sources from ``on_retriever_end`` and ``on_tool_end`` (through the
    `unicite.sources` extractor registry) and reads the last model message of the run. When the
    run ends the answer gets native citations if the provider gave them; else the markers in
    its text (``[1]``, ``[[S:1]]``, ...) are matched against the sources captured; else, when
    ``attribute`` is set, post-hoc attribution cites it against them. Each citation's
    ``origin`` says which. The result goes to `answer`, `answers`, the ``on_citations``
    callable and a LangChain custom event named ``"unicite_citations"`` (seen in
    ``astream_events``; it needs a run with children, as any chain has).

    The handler is safe in sync and async runs, across threads and concurrent batches, and
    forgets a run as soon as it ends (only the last ``keep`` answers are kept). It never raises
    into the chain: internal problems become diagnostics of the answer. The one exception is
    ``require="citations"``, which raises `unicite.GroundingRequiredError` at the end of a root
    run whose answer has no citations. Disabled (``enabled=False``, see
    `unicite.resolve_enabled`), it does no work, emits nothing and logs nothing.

    Args:
        enabled: Turn citations on or off; None follows ``persistent``, then on.
        persistent: A persistent setting (``/set``-style), below ``enabled``.
        require: ``"citations"`` to fail runs whose answer has none.
        attribute: Post-hoc attribution for answers that cite nothing: ``"lexical"`` (local),
            or a chat model / ``str -> reply`` callable to attribute with an LLM.
        on_citations: Called with the `CitedAnswer` of each root run when it ends.
        renumber: Renumber marker citations in first-cited order (`unicite.renumber`).
        keep: How many recent answers `answers` keeps.
        registry: The `unicite.sources.ExtractorRegistry` reading tool outputs.
    """

    raise_error: bool = True
    """Let `GroundingRequiredError` reach the caller; every other error is caught inside."""
    run_inline: bool = True
    """In async runs, handle events on the event loop, before other handlers see the run end."""

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        persistent: bool | None = None,
        require: Literal["citations"] | None = None,
        attribute: Attribute = None,
        on_citations: Callable[[CitedAnswer], object] | None = None,
        renumber: bool = True,
        keep: int = _DEFAULT_KEEP,
        registry: ExtractorRegistry | None = None,
    ) -> None:
        if require not in (None, "citations"):
            raise UsageError(f"require must be None or 'citations', got {require!r}")
        if on_citations is not None and not callable(on_citations):
            raise UsageError("on_citations must be callable")
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise UsageError(f"keep must be a positive integer, got {keep!r}")
        if not isinstance(renumber, bool):
            raise UsageError(f"renumber must be a bool, got {renumber!r}")
        if registry is not None and not isinstance(registry, ExtractorRegistry):
            raise UsageError("registry must be a unicite.sources.ExtractorRegistry")
        self.enabled = resolve_enabled(enabled, persistent, default=True)
        self.require = require
        self._method, self._llm = _attribution(attribute)
        self.on_citations = on_citations
        self.renumber = renumber
        self.keep = keep
        self.registry = registry
        self._lock = threading.Lock()
        self._roots: dict[UUID, _Root] = {}
        self._runs: dict[UUID, _Root] = {}
        self._answers: OrderedDict[UUID, CitedAnswer] = OrderedDict()
        self._last: CitedAnswer | None = None
        self._documents = _DocumentSources(registry)

    # --- results ----------------------------------------------------------------------------

    @property
    def answer(self) -> CitedAnswer | None:
        """The answer of the root run that ended last (None before any)."""
        return self._last

    @property
    def answers(self) -> Mapping[UUID, CitedAnswer]:
        """Answers of the last `keep` root runs, by root run id (a UUID or its string)."""
        with self._lock:
            return _Answers(dict(self._answers))

    def ledger(self, run_id: UUID) -> SourceLedger | None:
        """The source ledger of the root run that `run_id` (any run in it) belongs to."""
        with self._lock:
            root = self._runs.get(run_id)
            return None if root is None else root.ledger

    def tool_call_id(self, run_id: UUID) -> str | None:
        """The model's tool-call id of a running tool run, when its start gave one."""
        with self._lock:
            root = self._runs.get(run_id)
            tool = None if root is None else root.tools.get(run_id)
            return None if tool is None else tool.call_id

    @property
    def active_runs(self) -> int:
        """How many runs (root and child) the handler is tracking right now."""
        with self._lock:
            return len(self._runs)

    # --- disabled: LangChain does not call a handler that ignores everything -----------------

    @property
    def ignore_llm(self) -> bool:
        """Skip LLM events when disabled."""
        return not self.enabled

    @property
    def ignore_chat_model(self) -> bool:
        """Skip chat model events when disabled."""
        return not self.enabled

    @property
    def ignore_chain(self) -> bool:
        """Skip chain events when disabled."""
        return not self.enabled

    @property
    def ignore_agent(self) -> bool:
        """Skip tool (and agent) events when disabled: LangChain files tools under agents."""
        return not self.enabled

    @property
    def ignore_retriever(self) -> bool:
        """Skip retriever events when disabled."""
        return not self.enabled

    @property
    def ignore_retry(self) -> bool:
        """Retries carry no sources."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """The handler's own event (and others') carry nothing it needs."""
        return True

    # --- run bookkeeping --------------------------------------------------------------------

    def _start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> _Root:
        with self._lock:
            root = self._runs.get(parent_run_id) if parent_run_id is not None else None
            if root is None:
                root = self._roots.get(run_id)
            if root is None:
                root = _Root(run_id, tags, metadata)
                self._roots[run_id] = root
            self._runs[run_id] = root
            root.runs.add(run_id)
            capture = root.handlers is None and run_id != root.run_id
        if capture:
            self._capture_handlers(root)
        return root

    def _capture_handlers(self, root: _Root) -> None:
        """Keep the callback handlers of the run tree, to publish the custom event with.

        A child run starts inside its parent's config context, whose callback manager holds
        every inheritable handler of the tree (``astream_events``' collector included).
        """
        manager = ensure_config().get("callbacks")
        if isinstance(manager, BaseCallbackManager) and manager.parent_run_id in root.runs:
            with self._lock:
                if root.handlers is None:
                    root.handlers = list(manager.handlers)

    def _root_of(self, run_id: UUID, parent_run_id: UUID | None = None) -> _Root | None:
        with self._lock:
            root = self._runs.get(run_id)
            if root is None and parent_run_id is not None:
                root = self._runs.get(parent_run_id)
            return root

    def _end(self, run_id: UUID) -> tuple[_Root | None, bool]:
        """Forget a finished run; return its root and whether the run was the root."""
        with self._lock:
            root = self._runs.pop(run_id, None)
            if root is None:
                return None, False
            root.runs.discard(run_id)
            root.tools.pop(run_id, None)
            root.chunks.pop(run_id, None)
            root.requests.pop(run_id, None)
            if run_id != root.run_id:
                return root, False
            self._roots.pop(run_id, None)
            for child in root.runs:
                self._runs.pop(child, None)
            root.runs.clear()
            return root, True

    def _note(self, root: _Root | None, where: str, err: Exception) -> None:
        message = f"unicite-langchain: internal error in {where}: {describe_error(err)}"
        if root is not None:
            with self._lock:
                root.diagnostics.append(message)
        logger.debug(message)

    # --- starts -----------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a chain run."""
        try:
            self._start(run_id, parent_run_id, tags, metadata)
        except Exception as err:
            self._note(None, "on_chain_start", err)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a chat model run, and the documents its request carries."""
        try:
            root = self._start(run_id, parent_run_id, tags, metadata)
            request = _Request.of(messages)
            if request is not None:
                with self._lock:
                    root.requests[run_id] = request
        except Exception as err:
            self._note(None, "on_chat_model_start", err)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a text-completion model run."""
        try:
            self._start(run_id, parent_run_id, tags, metadata)
        except Exception as err:
            self._note(None, "on_llm_start", err)

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a retriever run and its name."""
        try:
            root = self._start(run_id, parent_run_id, tags, metadata)
            name = _run_name(serialized, kwargs, "retriever")
            with self._lock:
                root.tools[run_id] = _ToolRun(name, None, {"query": query}, False)
        except Exception as err:
            self._note(None, "on_retriever_start", err)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a tool run: its name, arguments and the model's tool-call id."""
        try:
            root = self._start(run_id, parent_run_id, tags, metadata)
            call_id = kwargs.get("tool_call_id")
            cited = bool((metadata or {}).get(CITED_TOOL_METADATA_KEY))
            tool = _ToolRun(
                _run_name(serialized, kwargs, "tool"),
                call_id if isinstance(call_id, str) and call_id else None,
                inputs if isinstance(inputs, Mapping) else {"input": input_str},
                cited,
            )
            with self._lock:
                root.tools[run_id] = tool
        except Exception as err:
            self._note(None, "on_tool_start", err)

    # --- the model's answer -----------------------------------------------------------------

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep streamed chunks: they are the answer if the model run ends without one."""
        if chunk is None:
            return
        with self._lock:
            root = self._runs.get(run_id)
            if root is not None:
                root.chunks.setdefault(run_id, []).append(chunk)

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the model's message as the run's latest answer."""
        root = self._root_of(run_id)
        try:
            if root is not None:
                with self._lock:
                    chunks = root.chunks.pop(run_id, [])
                    request = root.requests.pop(run_id, None)
                message = _message_of(response) or _merged(chunks)
                if message is not None and _has_answer(message):
                    root.message = message
                    root.request = request
                    if chunks and _unfinished(message):
                        with self._lock:
                            root.diagnostics.append(
                                "the model's stream ended before a finish reason: "
                                "the answer may be cut short"
                            )
        except Exception as err:
            self._note(root, "on_llm_end", err)
        self._finish_if_root(run_id, None)

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A failed model run: a stream cut short still leaves the text it sent.

        The run's root may still end with an answer (a fallback model, a retry, code that
        catches the error): the answer then says the model failed and why.
        """
        root = self._root_of(run_id)
        try:
            if root is not None:
                with self._lock:
                    chunks = root.chunks.pop(run_id, [])
                    request = root.requests.pop(run_id, None)
                message = _merged(chunks)
                if message is not None and _has_answer(message):
                    root.message = message
                    root.request = request
                    note = (
                        f"the model run failed mid-stream ({describe_error(error)}); "
                        "its partial answer is kept"
                    )
                else:
                    note = f"a model run failed: {describe_error(error)}"
                with self._lock:
                    root.diagnostics.append(note)
        except Exception as err:
            self._note(root, "on_llm_error", err)
        self._finish_if_root(run_id, error)

    # --- sources ----------------------------------------------------------------------------

    def on_retriever_end(
        self,
        documents: Sequence[Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Add the retrieved documents to the run's ledger."""
        self._add_output(run_id, parent_run_id, documents, "on_retriever_end")
        self._finish_if_root(run_id, None)

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Add the sources in a tool's output (``ToolMessage`` content or artifact)."""
        self._add_output(run_id, parent_run_id, output, "on_tool_end")
        self._finish_if_root(run_id, None)

    def _add_output(
        self, run_id: UUID, parent_run_id: UUID | None, output: Any, where: str
    ) -> None:
        root = self._root_of(run_id, parent_run_id)
        if root is None:
            return
        try:
            with self._lock:
                tool = root.tools.get(run_id)
            if tool is None:
                tool = _ToolRun(
                    "tool" if where == "on_tool_end" else "retriever", None, None, False
                )
            if tool.cited:
                return  # a cite_tools wrapper added these sources itself
            if where == "on_retriever_end":
                documents = list(output)
                sources = self._documents.get(tool.name, documents)
                if sources is not None:
                    root.ledger.add_all(sources)
                    return
                notes: list[str] = []
                found = read_documents(
                    tool.name,
                    documents,
                    notes,
                    arguments=tool.arguments,
                    registry=self.registry,
                )
                ids = root.ledger.add_all(found)
                if notes:
                    with self._lock:
                        root.diagnostics.extend(notes)
                self._documents.put(tool.name, documents, [root.ledger.get(i) for i in ids])
                return
            root.ledger.add_tool_output(
                tool.name,
                output,
                call_id=tool.call_id,
                arguments=tool.arguments,
                registry=self.registry,
            )
        except Exception as err:
            self._note(root, where, err)

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A failed tool gives no sources; the run's answer says so."""
        self._failed(error, run_id, parent_run_id, "a tool")

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A failed retriever gives no sources."""
        self._failed(error, run_id, parent_run_id, "a retriever")

    def _failed(
        self, error: BaseException, run_id: UUID, parent_run_id: UUID | None, what: str
    ) -> None:
        root = self._root_of(run_id, parent_run_id)
        if root is not None:
            with self._lock:
                tool = root.tools.get(run_id)
                name = tool.name if tool is not None else what
                root.diagnostics.append(f"{name} failed: {describe_error(error)}")
        self._finish_if_root(run_id, error)

    # --- the end of a run -------------------------------------------------------------------

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """At the end of a root run, cite its answer."""
        root = self._root_of(run_id)
        if root is not None and run_id == root.run_id and root.message is None:
            message = _output_message(outputs)
            if message is not None:
                root.message = message
        self._finish_if_root(run_id, None)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A failed root run has no answer; forget it."""
        self._finish_if_root(run_id, error)

    def _finish_if_root(self, run_id: UUID, error: BaseException | None) -> None:
        root, is_root = self._end(run_id)
        if root is None or not is_root or error is not None:
            return
        answer: CitedAnswer | None = None
        try:
            answer = self._cite(root)
        except Exception as err:
            self._note(root, "citing the answer", err)
        if answer is None:
            return
        with self._lock:
            self._answers[root.run_id] = answer
            self._answers.move_to_end(root.run_id)
            while len(self._answers) > self.keep:
                self._answers.popitem(last=False)
            self._last = answer
        self._publish(root, answer)
        if self.require == "citations" and not answer.citations:
            reason = "no citations" if len(root.ledger) else "no grounding"
            raise GroundingRequiredError(
                f"run {root.run_id}: the answer carries no citations"
                + (f" ({len(root.ledger)} sources were captured)" if len(root.ledger) else ""),
                provider=answer.provider,
                reason=reason,
            )

    def _publish(self, root: _Root, answer: CitedAnswer) -> None:
        origin = answer.extras.get("citation_origin")
        if root.handlers:
            try:
                CallbackManager(
                    handlers=root.handlers, tags=root.tags, metadata=root.metadata
                ).on_custom_event(
                    CITATIONS_EVENT,
                    {"run_id": str(root.run_id), "origin": origin, "answer": answer},
                    run_id=root.run_id,
                )
            except Exception as err:
                logger.debug("unicite-langchain: the custom event failed: %r", err)
        if self.on_citations is not None:
            try:
                self.on_citations(answer)
            except Exception as err:
                logger.warning("unicite-langchain: on_citations raised %r", err)
        if len(root.ledger) and not answer.citations:
            logger.warning(
                "run %s: %d sources were captured but no citation could be extracted",
                root.run_id,
                len(root.ledger),
            )
        else:
            logger.debug(
                "run %s: %d citations (%s), %d sources",
                root.run_id,
                len(answer.citations),
                origin,
                len(answer.sources),
            )

    # --- deciding how the answer is cited ---------------------------------------------------

    def _cite(self, root: _Root) -> CitedAnswer | None:
        message = root.message
        if message is None:
            if not len(root.ledger):
                return None
            message = AIMessage(content="")
        native = from_ai_message(message)
        captured = root.ledger.sources
        origin: CitationOrigin | None = None
        notes: list[str] = []
        if native.citations:
            if root.request is not None:
                native = _link_request_sources(native, root.request, captured)
            answer = _merge_sources(native, captured)
            origin = "native"
        else:
            answer = native
            if captured and native.text:
                marked = parse_markers(native.text, root.ledger)
                if marked.citations:
                    answer = marked
                    if self.renumber and not _numbered_in_citation_order(marked):
                        answer = renumber(marked, keep_unused=True)
                    origin = "marker"
                elif marked.text != native.text:
                    answer = marked  # invalid markers were dropped from the text
                notes.extend(marked.diagnostics)
            if origin is None and self._method is not None and captured and answer.text:
                attributed = attribute_answer(
                    answer.text, captured, method=self._method, llm=self._llm
                )
                notes.extend(attributed.diagnostics)
                if attributed.citations:
                    answer = attributed
                    origin = attributed.citations[0].origin
            answer = _merge_sources(answer, [*native.sources, *captured])
        diagnostics = list(native.diagnostics)
        for note in (*notes, *root.ledger.diagnostics, *root.diagnostics):
            if note not in diagnostics:
                diagnostics.append(note)
        extras = {
            **native.extras,
            "citation_origin": origin,
            "langchain_run_id": str(root.run_id),
        }
        return answer.model_copy(
            update={
                "provider": native.provider,
                "model": native.model,
                "diagnostics": diagnostics,
                "extras": extras,
            }
        )


# --- helpers --------------------------------------------------------------------------------


def _attribution(
    attribute: Attribute,
) -> tuple[Literal["lexical", "llm"] | None, Callable[[str], Any] | None]:
    if attribute is None:
        return None, None
    if attribute == "lexical":
        return "lexical", None
    if attribute == "llm":
        raise UsageError("attribute='llm' needs a model: pass the chat model (or callable) itself")
    if isinstance(attribute, Runnable):
        model = attribute

        def ask(prompt: str) -> Any:
            # No callbacks: the attribution call must not become part of the cited run.
            return model.invoke(prompt, config={"callbacks": []})

        return "llm", ask
    if callable(attribute):
        return "llm", attribute
    raise UsageError(
        f"attribute must be 'lexical', a chat model or a callable, got {type(attribute).__name__}"
    )


def read_documents(
    name: str,
    documents: list[Any],
    notes: list[str],
    *,
    arguments: Mapping[str, Any] | None = None,
    registry: ExtractorRegistry | None = None,
) -> list[Source]:
    """The sources of retrieved documents; garbage among them is skipped and reported in `notes`.

    A retriever may return items that are not documents, or documents whose metadata cannot
    be read as data (objects that fail to serialize, or raise on ``str()``). Read as a whole,
    such a list can lose its good documents silently; so when fewer sources than documents
    come back, or the list was read as raw output, it is read again without what cannot be
    read.
    """
    read: list[str] = []
    found: list[Source] | None = None
    if all(_well_formed(document) for document in documents):
        try:
            found = from_tool_output(
                name, documents, arguments=arguments, diagnostics=read, registry=registry
            )
        except Exception:
            found = None
    # A list the extractors could not read as documents comes back as one raw "tool" source.
    if (
        found is not None
        and len(found) >= len(documents)
        and not any(source.kind == "tool" for source in found)
    ):
        notes.extend(read)
        return found
    readable = _readable_documents(name, documents, notes)
    read.clear()
    try:
        found = from_tool_output(
            name, readable, arguments=arguments, diagnostics=read, registry=registry
        )
    except Exception as err:
        notes.append(f"{name}: its documents could not be read ({describe_error(err)})")
        return []
    notes.extend(read)
    if len(found) < len(documents):
        notes.append(
            f"{name}: {len(documents) - len(found)} of {len(documents)} retrieved items "
            "gave no source"
        )
    return found


def _well_formed(document: Any) -> bool:
    """Whether a retrieved item is a `Document` as LangChain types it (text, dict metadata)."""
    return (
        isinstance(document, Document)
        and isinstance(document.page_content, str)
        and isinstance(document.metadata, dict)
    )


def _plain(value: Any) -> tuple[bool, Any]:
    """Whether a metadata value can be read as data, and the value to read.

    NumPy scalars (scores and ids some vector stores put in metadata) become Python numbers.
    """
    try:
        to_jsonable_python(value)
        return True, value
    except Exception:
        item = getattr(value, "item", None)
    if not callable(item):
        return False, None
    try:
        number = item()
        to_jsonable_python(number)
    except Exception:
        return False, None
    return True, number


def _readable_documents(name: str, documents: list[Any], notes: list[str]) -> list[Any]:
    """The readable part of a retriever's output, with what cannot be read left out.

    Items that are neither documents nor mappings are skipped; a document keeps only the
    metadata values that can be read as data, and text that is not a string is dropped.
    Each thing left out is reported in `notes`.
    """
    readable: list[Any] = []
    skipped: list[str] = []
    for number, item in enumerate(documents, start=1):
        if isinstance(item, Mapping):
            readable.append(item)
            continue
        if not isinstance(item, Document):
            skipped.append(type(item).__name__)
            continue
        metadata = item.metadata if isinstance(item.metadata, Mapping) else {}
        kept: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in metadata.items():
            ok, plain = _plain(value)
            if ok and isinstance(key, str):
                kept[key] = plain
            else:
                dropped.append(key if isinstance(key, str) else type(key).__name__)
        text = item.page_content
        if not isinstance(text, str):
            notes.append(f"{name}: document {number} has no text ({type(text).__name__})")
            text = ""
        if dropped:
            notes.append(
                f"{name}: metadata of document {number} could not be read and was ignored: "
                + ", ".join(sorted(dropped)[:10])
                + (f" (and {len(dropped) - 10} more)" if len(dropped) > 10 else "")
            )
        document_id = item.id if isinstance(item.id, str) else None
        readable.append(Document.model_construct(id=document_id, page_content=text, metadata=kept))
    if skipped:
        kinds = ", ".join(sorted(set(skipped)))
        notes.append(f"{name}: {len(skipped)} retrieved items are not documents ({kinds}); skipped")
    return readable


def _unfinished(message: BaseMessage) -> bool:
    """Whether a streamed message of a known provider lacks its finish reason: a cut stream.

    The last event of a complete stream carries the reason the response ended.
    """
    metadata = message.response_metadata or {}
    keys = _FINISH_KEYS.get(str(metadata.get("model_provider")))
    return keys is not None and not any(metadata.get(key) for key in keys)


def _run_name(serialized: dict[str, Any] | None, kwargs: Mapping[str, Any], default: str) -> str:
    name = kwargs.get("name")
    if isinstance(name, str) and name.strip():
        return name
    if isinstance(serialized, Mapping):
        name = serialized.get("name")
        if isinstance(name, str) and name.strip():
            return name
        ident = serialized.get("id")
        if isinstance(ident, list) and ident and isinstance(ident[-1], str):
            return ident[-1]
    return default


def _message_of(response: LLMResult) -> BaseMessage | None:
    generations = response.generations
    if not generations or not generations[0]:
        return None
    first = generations[0][0]
    if isinstance(first, ChatGeneration):
        return first.message
    return AIMessage(content=first.text) if first.text else None


def _merged(chunks: list[ChatGenerationChunk | GenerationChunk]) -> BaseMessage | None:
    """The message a run's streamed chunks add up to, as LangChain merges them."""
    chat = [chunk for chunk in chunks if isinstance(chunk, ChatGenerationChunk)]
    if chat:
        merged = merge_chat_generation_chunks(chat)
        return None if merged is None else merged.message
    text = "".join(chunk.text for chunk in chunks)
    return AIMessage(content=text) if text else None


def _has_answer(message: BaseMessage) -> bool:
    """Whether a model message is an answer (text), not only tool calls."""
    if message.text:
        return True
    metadata = message.response_metadata or {}
    return metadata.get("grounding_metadata") is not None


def _output_message(outputs: Any) -> BaseMessage | None:
    """An answer from a root run's output when no model run reported one."""
    if isinstance(outputs, AIMessage):
        return outputs
    if isinstance(outputs, str) and outputs:
        return AIMessage(content=outputs)
    return None


def _block_text(block: Mapping[str, Any]) -> str | None:
    """The text of a request ``document`` (text source or content blocks) or ``search_result``."""
    source = block.get("source")
    if isinstance(source, Mapping):
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return str(source["data"])
        if source.get("type") == "content":
            source = source.get("content")
    content = source if isinstance(source, list) else block.get("content")
    if isinstance(content, list):
        texts = [
            b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def _same_text(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and " ".join(a.split()) == " ".join(b.split())


def _link_request_sources(
    answer: CitedAnswer, request: _Request, captured: Sequence[Source]
) -> CitedAnswer:
    """Replace sources a native citation names by request position with the captured ones.

    An Anthropic document citation names ``document:N`` of the request; when that document's
    text (or title) is a retrieved document's, the citation cites the retrieved source, with
    its URL and metadata.
    """
    if not captured:
        return answer
    replace: dict[str, Source] = {}
    for source in answer.sources:
        block = request.block(source.provider_id)
        if block is None:
            continue
        text = _block_text(block)
        title = block.get("title") if isinstance(block.get("title"), str) else None
        url = block.get("source") if isinstance(block.get("source"), str) else None
        match = next((c for c in captured if _same_text(c.content, text)), None)
        if match is None:
            match = next(
                (c for c in captured if (title and c.title == title) or (url and c.url == url)),
                None,
            )
        if match is not None:
            replace[source.id] = match
    if not replace:
        return answer
    sources: list[Source] = []
    for source in answer.sources:
        kept = replace.get(source.id, source)
        if all(kept.id != s.id for s in sources):
            sources.append(kept)
    citations = [
        c.model_copy(
            update={
                "source_ids": list(
                    dict.fromkeys(replace[i].id if i in replace else i for i in c.source_ids)
                )
            }
        )
        for c in answer.citations
    ]
    fields = {name: getattr(answer, name) for name in type(answer).model_fields}
    fields.update(sources=sources, citations=citations)
    return CitedAnswer(**fields)


def _numbered_in_citation_order(answer: CitedAnswer) -> bool:
    """Whether the sources are already numbered in first-cited order (renumbering is a no-op)."""
    order: list[str] = []
    seen: set[str] = set()
    for citation in sorted(answer.citations, key=lambda c: c.marker_span or (c.end, c.end)):
        for sid in citation.source_ids:
            if sid not in seen:
                seen.add(sid)
                order.append(sid)
    return order == [source.id for source in answer.sources[: len(order)]]


def _merge_sources(answer: CitedAnswer, extra: Sequence[Source]) -> CitedAnswer:
    """The answer with `extra` sources appended (merged into equal ones, by URL or text)."""
    known = {source.id for source in answer.sources}
    if all(source.id in known for source in extra):
        return answer
    ledger = SourceLedger()
    for source in answer.sources:
        ledger.add(source)
    for source in extra:
        ledger.add(source)
    citations = []
    for citation in answer.citations:
        ids = list(dict.fromkeys(ledger.resolve(sid) or sid for sid in citation.source_ids))
        citations.append(
            citation
            if ids == citation.source_ids
            else citation.model_copy(update={"source_ids": ids})
        )
    fields = {name: getattr(answer, name) for name in type(answer).model_fields}
    fields.update(sources=ledger.sources, citations=citations)
    return CitedAnswer(**fields)
