"""`CitationCallbackHandler`: one callback that gives any chain or agent a `CitedAnswer` per run.

The handler only wires LangChain's callbacks to the parts that do the work: `RunTable` (which
root each run belongs to), `SourceCapture` (retrieved documents and tool outputs into the
root's ledger), `AnswerCapture` (the model's answer) and `Publisher` (where the answer goes).
How the answer is cited is `unicite.cite`'s decision, taken once when the root run ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, UsageError, cite
from unicite.exceptions import describe_error
from unicite.model import CitationOrigin
from unicite.sources import ExtractorRegistry, SourceLedger
from unicite_langchain._answer import AnswerCapture
from unicite_langchain._capture import DocumentSources, SourceCapture, run_name
from unicite_langchain._options import citation_policy
from unicite_langchain._publish import CITATIONS_EVENT, MIDDLEWARE_KEY, Answers, Publisher
from unicite_langchain._runs import Root, RunTable

__all__ = ["CitationCallbackHandler"]

logger = logging.getLogger("unicite.langchain")


class CitationCallbackHandler(BaseCallbackHandler):
    """Collects sources and the answer of every root run, and cites the answer when it ends.

    Pass it in ``config={"callbacks": [handler]}`` of any chain, agent or model call. For each
    root run it gathers sources from ``on_retriever_end`` and ``on_tool_end`` (through the
    `unicite.sources` extractor registry) into one `unicite.sources.SourceLedger`, numbered as
    `number_sources` and `cite_tools` show them to the model, and keeps the last model message
    that answers. When the root run ends, `unicite.cite` cites that answer against the ledger,
    once: native provider citations, ``[n]`` markers, renumbering, post-hoc attribution and
    ``require`` all follow the policy. The answer's ``extras`` add ``citation_origin`` (the
    origin of its citations: ``"native"`` when the provider cited, else the first citation's,
    None when nothing is cited) and ``langchain_run_id``.

    The answer goes to `answer`, `answers`, ``on_citations(answer)`` and a LangChain custom
    event named ``"unicite_citations"`` (seen in ``astream_events`` and by every handler's
    ``on_custom_event``; it needs a run with children, as any chain has) whose data is
    ``{"run_id": str, "origin": citation_origin, "answer": CitedAnswer}``. When sources were
    captured but nothing was cited, one WARNING is logged, and the answer's diagnostics say
    why and what to do (number the sources in the prompt, or ``attribute="lexical"``).

    An agent built with ``CitationMiddleware`` cites its own answer, against the numbers it
    showed the model; the handler takes that answer as the run's (the middleware's options
    apply to it) unless a later model message in the run answers instead.

    The handler is safe in sync and async runs, across threads and concurrent batches, and
    forgets a run as soon as it ends (only the last ``keep`` answers are kept). It never raises
    into the chain: internal problems become diagnostics of the answer. The one exception is
    ``require``, which raises `unicite.GroundingRequiredError` at the end of a root run whose
    answer does not meet it (after the answer was published). Disabled (``enabled=False``,
    see `unicite.resolve_enabled`), it does no work, emits nothing and logs nothing.

    Args:
        policy: The `unicite.CitePolicy`; the keyword options below override its fields.
        persistent: A persistent on/off setting (``/set``-style), below ``enabled``.
        on_citations: Called with the `CitedAnswer` of each root run when it ends.
        registry: The `unicite.sources.ExtractorRegistry` reading tool outputs.
        **options: `CitePolicy` fields: ``enabled`` (None follows ``persistent``, then on),
            ``markers``, ``renumber``, ``attribute`` (also a chat model or ``str -> reply``
            callable: LLM attribution with that model), ``llm``, ``require``
            (``"citations"`` or ``"grounding"``), ``exclude_inline``, ``sources``, ``keep``
            (how many recent answers `answers` keeps), ``on_invalid``, ``all_supporting``.

    Raises:
        UsageError: An unknown option, or an invalid value.
    """

    raise_error: bool = True
    """Let `GroundingRequiredError` reach the caller; every other error is caught inside."""
    run_inline: bool = True
    """In async runs, handle events on the event loop, before other handlers see the run end."""
    relays_middleware: bool = True
    """Of ``unicite_citations`` events, the handler takes only those a middleware publishes."""

    def __init__(
        self,
        *,
        policy: CitePolicy | None = None,
        persistent: bool | None = None,
        on_citations: Callable[[CitedAnswer], object] | None = None,
        registry: ExtractorRegistry | None = None,
        **options: Any,
    ) -> None:
        if on_citations is not None and not callable(on_citations):
            raise UsageError("on_citations must be callable: it takes the CitedAnswer")
        if registry is not None and not isinstance(registry, ExtractorRegistry):
            raise UsageError("registry must be a unicite.sources.ExtractorRegistry")
        self._policy = citation_policy(policy, options, persistent=persistent)
        self.enabled = self._policy.enabled
        self._runs = RunTable()
        self._sources = SourceCapture(self._runs, registry)
        self._answers = AnswerCapture(self._runs)
        self._publisher = Publisher(self._policy.keep, on_citations)

    # --- settings and results ---------------------------------------------------------------

    @property
    def policy(self) -> CitePolicy:
        """The citation policy every root run's answer is cited with."""
        return self._policy

    @property
    def registry(self) -> ExtractorRegistry | None:
        """The extractor registry reading tool outputs (None: the default one)."""
        return self._sources.registry

    @property
    def on_citations(self) -> Callable[[CitedAnswer], object] | None:
        """Called with each root run's answer."""
        return self._publisher.on_citations

    @property
    def answer(self) -> CitedAnswer | None:
        """The answer of the root run that ended last (None before any)."""
        return self._publisher.last

    @property
    def answers(self) -> Mapping[UUID, CitedAnswer]:
        """Answers of the last ``keep`` root runs, by root run id (a UUID or its string)."""
        answers: Answers = self._publisher.answers
        return answers

    def ledger(self, run_id: UUID) -> SourceLedger | None:
        """The source ledger of the root run that `run_id` (any run in it) belongs to."""
        root = self._runs.root_of(run_id)
        return None if root is None else root.ledger

    def tool_call_id(self, run_id: UUID) -> str | None:
        """The model's tool-call id of a running tool run, when its start gave one."""
        tool = self._runs.tool(run_id)
        return None if tool is None else tool.call_id

    @property
    def active_runs(self) -> int:
        """How many runs (root and child) the handler is tracking right now."""
        return len(self._runs)

    def _share_documents(self, documents: DocumentSources) -> None:
        """Read retrieved documents through a cache shared with other handlers."""
        self._sources.documents = documents

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
        """Skip custom events when disabled; it reads only a `CitationMiddleware`'s answer."""
        return not self.enabled

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
            self._runs.start(run_id, parent_run_id, tags, metadata)
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
            root = self._runs.start(run_id, parent_run_id, tags, metadata)
            self._answers.chat_started(root, run_id, messages)
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
            self._runs.start(run_id, parent_run_id, tags, metadata)
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
            root = self._runs.start(run_id, parent_run_id, tags, metadata)
            name = run_name(serialized, kwargs, "retriever")
            self._sources.retriever_started(root, run_id, name, query)
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
            root = self._runs.start(run_id, parent_run_id, tags, metadata)
            self._sources.tool_started(
                root,
                run_id,
                run_name(serialized, kwargs, "tool"),
                kwargs.get("tool_call_id"),
                inputs if isinstance(inputs, Mapping) else {"input": input_str},
                metadata,
            )
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
        if chunk is not None:
            self._answers.token(run_id, chunk)

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the model's message as the run's latest answer."""
        root = self._runs.root_of(run_id)
        if root is not None:
            try:
                self._answers.ended(root, run_id, response)
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
        """A failed model run: its partial answer, if any, is kept, and the failure noted."""
        root = self._runs.root_of(run_id)
        if root is not None:
            try:
                self._answers.failed(root, run_id, error)
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
        root = self._runs.root_of(run_id, parent_run_id)
        if root is not None:
            try:
                self._sources.retrieved(root, run_id, list(documents), parent_run_id)
            except Exception as err:
                self._note(root, "on_retriever_end", err)
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
        root = self._runs.root_of(run_id, parent_run_id)
        if root is not None:
            try:
                self._sources.tool_output(root, run_id, output)
            except Exception as err:
                self._note(root, "on_tool_end", err)
        self._finish_if_root(run_id, None)

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
        root = self._runs.root_of(run_id, parent_run_id)
        if root is not None:
            self._sources.failed(root, run_id, error, what)
        self._finish_if_root(run_id, error)

    # --- an agent middleware's answer --------------------------------------------------------

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the answer a ``CitationMiddleware`` cited inside the run."""
        if name != CITATIONS_EVENT or not isinstance(data, Mapping):
            return
        answer = data.get("answer")
        if not isinstance(answer, CitedAnswer) or not answer.extras.get(MIDDLEWARE_KEY):
            return
        root = self._runs.root_of(run_id)
        if root is not None:
            with self._runs.lock:
                root.adopted = (root.message, answer)

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
        root = self._runs.root_of(run_id)
        if root is not None and run_id == root.run_id:
            self._answers.output(root, outputs)
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
        root, is_root = self._runs.end(run_id)
        if root is None or not is_root or error is not None:
            return
        adopted = root.adopted
        if adopted is not None and adopted[0] is root.message:
            # The agent's middleware cited its answer, with the numbers it showed the model.
            try:
                answer = self._finished(root, adopted[1], own=False)
            except Exception as err:
                self._note(root, "taking the middleware's answer", err)
                return
            self._publisher.publish(root, answer, warn=False)
            return
        failure: GroundingRequiredError | None = None
        try:
            base = self._answers.answer(root)
            if base is None:
                return
            try:
                answer = cite(base, root.ledger, policy=self._policy)
            except GroundingRequiredError as err:
                if err.answer is None:
                    raise
                # The answer is published before the policy's failure reaches the caller.
                answer, failure = err.answer, err
            answer = self._finished(root, answer)
        except GroundingRequiredError:
            raise
        except Exception as err:
            self._note(root, "citing the answer", err)
            return
        self._publisher.publish(root, answer)
        if failure is not None:
            raise GroundingRequiredError(
                str(failure), provider=failure.provider, reason=failure.reason, answer=answer
            ) from None

    def _finished(self, root: Root, answer: CitedAnswer, *, own: bool = True) -> CitedAnswer:
        """The cited answer with the run's notes and extras.

        ``own=False``: a middleware's answer, which carries its own notes on its sources.
        """
        notes = [*answer.diagnostics]
        if own:
            notes += [*root.ledger.diagnostics, *root.diagnostics]
        return answer.model_copy(
            update={
                "diagnostics": list(dict.fromkeys(notes)),
                "extras": {
                    **answer.extras,
                    "citation_origin": _origin(answer),
                    "langchain_run_id": str(root.run_id),
                },
            }
        )

    def _note(self, root: Root | None, where: str, err: Exception) -> None:
        message = f"unicite-langchain: internal error in {where}: {describe_error(err)}"
        self._runs.note(root, message)
        logger.debug(message)


def _origin(answer: CitedAnswer) -> CitationOrigin | None:
    """How the answer is cited: ``"native"`` if the provider cited, else its first citation's."""
    if not answer.citations:
        return None
    if any(c.origin == "native" for c in answer.citations):
        return "native"
    return answer.citations[0].origin
