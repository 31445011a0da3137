"""`CitationEventHandler`: citations for anything LlamaIndex runs, read from instrumentation.

The handler follows LlamaIndex's spans to group what happens in one run (a query, an agent or
workflow run: the outermost span, or a workflow run nested in another run): the nodes
retrievers return, the nodes each synthesizer puts in its prompt, the results of an agent's
tool calls (read as the tools returned them: nodes, query engine responses, search results),
and every LLM call's response. Each LLM answer with text is cited against what its own run
saw and dispatched as a `CitationsEvent`; an agent's final answer is also tied to the
`AgentOutput` (and `StopEvent`) its run returns, for `citations_of`. A run's state is dropped
when its outermost span ends (or, for a stream, when the stream does), so a long-lived
handler does not grow.
"""

from __future__ import annotations

import inspect
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llama_index.core.agent.workflow.workflow_events import (
    AgentOutput,
    ToolCall,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, ToolCallBlock
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import (  # type: ignore[attr-defined]
    Dispatcher,
    get_dispatcher,
)
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.exception import ExceptionEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatInProgressEvent,
    LLMChatStartEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span import SimpleSpan, active_span_id
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import NodeWithScore
from llama_index.core.workflow import StopEvent, Workflow

from unicite import CitedAnswer, CitePolicy, Source, UsageError
from unicite.exceptions import describe_error
from unicite.sources import SourceLedger
from unicite_llamaindex._capture import QueryCapture, active_capture, same_text
from unicite_llamaindex._convert import table_from_nodes
from unicite_llamaindex._nodes import SourceCache, cached_sources
from unicite_llamaindex._policy import (
    Table,
    answer_input,
    cite_answer,
    origin_of,
    resolve_policy,
)
from unicite_llamaindex._postprocessor import CitationPostprocessor
from unicite_llamaindex._results import recall, remember
from unicite_llamaindex._sources import is_handoff, tool_sources
from unicite_llamaindex._stream import LLMCallReader
from unicite_llamaindex.events import CitationsEvent, dispatcher

__all__ = ["CitationEventHandler", "run_ledgers", "tool_call_id"]

logger = logging.getLogger("unicite.llamaindex")

OnCitations = Callable[[CitedAnswer], Any]

_LINGERING = 64
"""Finished runs kept while one of their streams has not been consumed (oldest dropped)."""

_FOLLOWING: list[weakref.ref[_Core]] = []
"""The handlers following spans, in the order they started to (their state, weakly)."""
_FOLLOWING_LOCK = threading.Lock()


@dataclass
class _Run:
    """What one run (outermost span) has seen."""

    root: str
    ledger: SourceLedger = field(default_factory=SourceLedger)
    open_spans: int = 0
    closed: bool = False
    pending: set[str] = field(default_factory=set)
    """LLM spans whose end event has not come yet (streams being consumed)."""
    tool_calls: set[str] = field(default_factory=set)
    """Tool call ids whose results are already in the ledger."""
    failed_tools: dict[str, str] = field(default_factory=dict)
    """What went wrong, by the call id of each tool call that raised."""
    labelled: list[NodeWithScore] | None = None
    """The nodes a `CitationPostprocessor` labelled last in the run."""
    retrieved: list[NodeWithScore] = field(default_factory=list)
    """Every node the run's retrievers returned, to trace prompt chunks back to."""
    ranks: list[int] = field(default_factory=list)
    """Each retrieved node's rank in its retrieval."""
    in_ledger: int = 0
    """How many of the retrieved nodes are in the ledger (sources are read when needed)."""
    notes: list[str] = field(default_factory=list)
    parent: _Run | None = None
    """The run a nested workflow run (an agent run from a step or a tool) ran inside."""
    results: dict[str, list[Source]] = field(default_factory=dict)
    """The sources of each tool call's result, by call id, until its LLM call reads them."""
    result_order: list[str] = field(default_factory=list)
    """The call ids of `results`, in the order the tool calls ended."""
    result: Any = None
    """What the run's outermost span returned (a `StopEvent`, a query engine response)."""
    final: CitedAnswer | None = None
    """The run's last answer."""
    texts: dict[int, str] = field(default_factory=dict)
    """The content each cited `ChatMessage` (by identity) had when its LLM call ended."""


@dataclass
class _Pending:
    """A streamed synthesis whose LLM call has not started: its run and prompt nodes."""

    run: _Run
    nodes: list[NodeWithScore]


@dataclass(slots=True)
class _Span:
    run: _Run
    parent: str | None
    nodes: list[NodeWithScore] | None = None
    """The nodes a synthesizer span put in its prompt."""
    call_id: str | None = None
    """The tool call an agent's step span runs."""


@dataclass
class _Call:
    """One LLM call: its run, the sources its prompt numbered, and its stream reader."""

    run: _Run
    nodes: list[NodeWithScore] | None
    """The nodes its prompt numbered, when a synthesizer or postprocessor says."""
    reader: LLMCallReader = field(default_factory=LLMCallReader)
    outer: _Call | None = None
    """The LLM call this one runs inside (``acomplete`` calling ``complete``, a completion
    made of a chat call): only the innermost call that answers is cited."""
    answered: bool = False
    last: Any = None
    """The last streamed response, to cite what came before a stream broke off."""


class _Core:
    """The handler's state and logic, as a plain object: span events are frequent."""

    def __init__(self, policy: CitePolicy, on_citations: OnCitations | None) -> None:
        self.policy = policy
        self.on_citations = on_citations
        self.tracking: Dispatcher | None = None
        """The dispatcher the handler's span tracker is attached to (None: not yet)."""
        self.lock = threading.Lock()
        self.spans: dict[str, _Span] = {}
        self.calls: dict[str, _Call] = {}
        self.lingering: OrderedDict[str, _Run] = OrderedDict()
        self.answers: OrderedDict[str, CitedAnswer] = OrderedDict()
        self.last: CitedAnswer | None = None
        self.emitted: set[str] = set()
        self.sources = SourceCache()
        """Sources read from retrieved nodes, shared by every run (see `SourceCache`)."""
        self.streamed: ContextVar[_Pending | None] = ContextVar(
            "unicite_streamed_prompt", default=None
        )

    # --- spans ------------------------------------------------------------------------------

    def enter(
        self, id_: str, parent: str | None, instance: Any, bound_args: inspect.BoundArguments
    ) -> None:
        nodes = None
        if isinstance(instance, BaseSynthesizer):
            given = bound_args.arguments.get("nodes")
            if isinstance(given, list):
                nodes = [n for n in given if isinstance(n, NodeWithScore)]
        call_id = _tool_call_of(bound_args)
        with self.lock:
            parent_span = self.spans.get(parent) if parent is not None else None
            if parent_span is None:
                run = _Run(root=id_)
            elif _is_workflow_run(id_, instance):
                # A workflow or agent run inside another run (a step or a tool running an
                # agent, runs gathered in one step) sees its own sources: concurrent nested
                # runs never mix. What it found is handed to the outer run when it ends.
                run = _Run(root=id_, parent=parent_span.run)
            else:
                run = parent_span.run
            run.open_spans += 1
            self.spans[id_] = _Span(run, parent, nodes, call_id)

    def exit(self, id_: str, result: Any, *, dropped: bool = False, labeller: bool = False) -> None:
        with self.lock:
            span = self.spans.pop(id_, None)
            if span is None:
                return
            run = span.run
            if labeller and isinstance(result, list):
                run.labelled = [n for n in result if isinstance(n, NodeWithScore)]
            run.open_spans -= 1
            call = self.calls.get(id_)
            if call is not None and (dropped or not _is_stream(result)):
                # A stream's end event comes when it is consumed; anything else ended already.
                self.calls.pop(id_, None)
                run.pending.discard(id_)
            ended = id_ == run.root
            if ended:
                run.closed = True
                run.result = None if dropped else result
            if span.nodes is not None and _is_stream_response(result):
                # A streaming synthesizer calls its LLM only when the stream is read, after
                # this span (and maybe the whole run) has ended: leave its prompt to that call.
                self.streamed.set(_Pending(run=run, nodes=span.nodes))
            self._release(run)
        if isinstance(result, ToolCallResult):
            self._tool_result(run, result)
        if ended and not dropped:
            self._ended(run, result)

    def _tool_result(self, run: _Run, result: ToolCallResult) -> None:
        """Read the sources of a tool call's result as the tool returned them."""
        output = result.tool_output
        call_id = result.tool_id
        if output.is_error:
            run.failed_tools[call_id] = _failure_note(result)
            return
        if is_handoff(result.tool_name, result.return_direct):
            with self.lock:
                run.tool_calls.add(call_id)  # a control message, not a source
            return
        notes: list[str] = []
        found = tool_sources(
            result.tool_name,
            output.raw_output,
            output.content,
            call_id=call_id,
            arguments=result.tool_kwargs,
            diagnostics=notes,
        )
        with self.lock:
            run.notes.extend(n for n in notes if n not in run.notes)
            if call_id not in run.results:
                run.result_order.append(call_id)
            run.results[call_id] = found

    def _ended(self, run: _Run, result: Any) -> None:
        """A run's outermost span returned: give its answer to what it returned."""
        answer = run.final
        stop = result if isinstance(result, StopEvent) else None
        value = stop.result if stop is not None else result
        if isinstance(value, AgentOutput):
            answer = self._agent_answer(run, value) or answer
        if answer is not None:
            _remember_result(result, answer)
        parent = run.parent
        if parent is not None:
            self._flush(run)
            self._flush(parent)
            parent.ledger.add_all(run.ledger.sources)

    def _release(self, run: _Run) -> None:
        """Forget a finished run, or keep it (bounded) while a stream of it is pending."""
        if not run.closed or run.open_spans > 0:
            return
        if not run.pending:
            self.lingering.pop(run.root, None)
            return
        self.lingering[run.root] = run
        self.lingering.move_to_end(run.root)
        while len(self.lingering) > _LINGERING:
            _, old = self.lingering.popitem(last=False)
            for span_id in old.pending:
                self.calls.pop(span_id, None)
            old.pending.clear()

    def _run_of(self, span_id: str | None) -> _Run | None:
        span = self.spans.get(span_id) if span_id is not None else None
        return span.run if span is not None else None

    def _prompt_nodes(self, span_id: str | None) -> list[NodeWithScore] | None:
        """The nodes of the nearest synthesizer span around `span_id`."""
        seen = 0
        while span_id is not None and seen < 10_000:
            span = self.spans.get(span_id)
            if span is None:
                return None
            if span.nodes is not None:
                return span.nodes
            span_id = span.parent
            seen += 1
        return None

    # --- events -----------------------------------------------------------------------------

    def handle(self, event: BaseEvent) -> None:
        """Read one instrumentation event."""
        if isinstance(event, RetrievalEndEvent):
            self._retrieved(event)
            return
        if isinstance(event, CitationsEvent):
            self._reported(event)
            return
        if isinstance(event, ExceptionEvent):
            self._failed(event)
            return
        if (
            not isinstance(
                event,
                (
                    LLMChatStartEvent,
                    LLMCompletionStartEvent,
                    LLMChatInProgressEvent,
                    LLMCompletionInProgressEvent,
                    LLMChatEndEvent,
                    LLMCompletionEndEvent,
                ),
            )
            or active_capture() is not None
        ):
            # CitedQueryEngine cites its own LLM calls and emits its own event.
            return
        key = event.span_id or ""
        if isinstance(event, (LLMChatStartEvent, LLMCompletionStartEvent)):
            self._start(event, key)
        elif isinstance(event, (LLMChatInProgressEvent, LLMCompletionInProgressEvent)):
            with self.lock:
                call = self.calls.get(key)
            if call is not None:
                call.last = event.response
                call.reader.feed(event.response)
        else:
            self._end(event, key)

    def _retrieved(self, event: RetrievalEndEvent) -> None:
        with self.lock:
            run = self._run_of(event.span_id)
        if run is None:
            return
        with self.lock:
            for rank, node in enumerate(event.nodes):
                if isinstance(node, NodeWithScore):
                    run.retrieved.append(node)
                    run.ranks.append(rank)

    def _start(self, event: LLMChatStartEvent | LLMCompletionStartEvent, key: str) -> None:
        messages = event.messages if isinstance(event, LLMChatStartEvent) else []
        # An agent's LLM call (tool results in its prompt) cites by the run's numbering, not
        # by the labels of nodes a tool's query engine numbered for its own prompt.
        agent_turn = any(m.role == MessageRole.TOOL for m in messages)
        with self.lock:
            run = self._run_of(event.span_id)
            outer = self._outer_call(event.span_id)
            nodes = self._prompt_nodes(event.span_id)
            if nodes is None and outer is not None:
                outer.run.pending.add(key)
                self.calls[key] = _Call(run=outer.run, nodes=outer.nodes, outer=outer)
                return
            if nodes is None and run is not None and not (agent_turn or _had_tools(run)):
                nodes = run.labelled
            pending = self.streamed.get()
            if nodes is None and pending is not None and (run is None or not run.retrieved):
                self.streamed.set(None)
                run, nodes = pending.run, pending.nodes
            if run is None:
                run = _Run(root=key, closed=True)
            run.pending.add(key)
            # A finished run (a stream read after its query returned) is kept, bounded,
            # until the call ends.
            self._release(run)
        self._tool_results(run, messages)
        with self.lock:
            self.calls[key] = _Call(run=run, nodes=nodes, outer=outer)

    def _outer_call(self, span_id: str | None) -> _Call | None:
        """The LLM call whose span encloses `span_id`, if any."""
        span = self.spans.get(span_id) if span_id is not None else None
        parent = span.parent if span is not None else None
        seen = 0
        while parent is not None and seen < 10_000:
            call = self.calls.get(parent)
            if call is not None:
                return call
            above = self.spans.get(parent)
            parent = above.parent if above is not None else None
            seen += 1
        return None

    def _tool_results(self, run: _Run, messages: Sequence[ChatMessage]) -> None:
        """Sources in the tool results an agent passes back to its LLM (each read once).

        A result whose tool call ended in this run is read as the tool returned it (nodes,
        a query engine response, search results); others (a conversation's earlier turns)
        from the message's text. Results the prompt holds in other forms (a ReAct agent's
        observations) follow, in the order their tool calls ended.
        """
        names: dict[str, tuple[str, Any]] = {}
        for message in messages:
            for block in message.blocks:
                if isinstance(block, ToolCallBlock) and block.tool_call_id:
                    names[block.tool_call_id] = (block.tool_name, block.tool_kwargs)
            if message.role != MessageRole.TOOL:
                continue
            call_id = message.additional_kwargs.get("tool_call_id")
            call_id = call_id if isinstance(call_id, str) and call_id else None
            if call_id is not None and call_id in run.tool_calls:
                continue
            failure = run.failed_tools.get(call_id) if call_id is not None else None
            if call_id is not None and failure is not None:
                # The agent hands the tool's error message to the model: it is no source.
                run.notes.append(failure)
                run.tool_calls.add(call_id)
                continue
            self._flush(run)  # what the tool retrieved came first
            if call_id is not None and call_id in run.results:
                self._take_result(run, call_id)
                continue
            name, arguments = names.get(call_id or "", ("tool", None))
            name = message.additional_kwargs.get("name") or name
            run.ledger.add_tool_output(
                str(name) or "tool",
                message.content or "",
                call_id=call_id,
                arguments=arguments if isinstance(arguments, (dict, str)) else None,
            )
            if call_id is not None:
                run.tool_calls.add(call_id)
        self._take_pending(run)

    def _take_pending(self, run: _Run) -> None:
        """Put the results no prompt held as a tool message in the ledger, in call order."""
        with self.lock:
            pending = list(run.result_order)
        for call_id in pending:
            self._flush(run)
            self._take_result(run, call_id)

    def _take_result(self, run: _Run, call_id: str) -> None:
        """Put a tool call's sources in the run's ledger (once)."""
        with self.lock:
            found = run.results.pop(call_id, [])
            if call_id in run.result_order:
                run.result_order.remove(call_id)
            run.tool_calls.add(call_id)
        run.ledger.add_all(found)

    def _end(self, event: LLMChatEndEvent | LLMCompletionEndEvent, key: str) -> None:
        with self.lock:
            call = self.calls.pop(key, None)
            if call is not None:
                call.run.pending.discard(key)
                self._release(call.run)
        if call is None or event.response is None:
            return
        self._answered(call, event.response, key)

    def _failed(self, event: ExceptionEvent) -> None:
        """An LLM stream that raised (or was closed) before its end: forget the call.

        What it streamed until an error is cited, with a diagnostic saying it broke off; a
        stream its reader closed (``GeneratorExit``) was abandoned and is not cited.
        """
        key = event.span_id or ""
        with self.lock:
            call = self.calls.pop(key, None)
            if call is None:
                return
            call.run.pending.discard(key)
            self._release(call.run)
        error = event.exception
        if call.last is None or not isinstance(error, Exception):
            return
        self._answered(call, call.last, key, f"the LLM stream broke off: {describe_error(error)}")

    def _answered(self, call: _Call, response: Any, key: str, note: str | None = None) -> None:
        """Cite the answer `response` holds and dispatch it (not a tool call, not cited yet)."""
        text = (
            response.message.content or ""
            if isinstance(response, ChatResponse)
            else getattr(response, "text", "") or ""
        )
        if call.answered:
            return  # an inner call already cited this answer
        native = call.reader.finish(response)
        if call.last is not None and native is not None and not same_text(native.text, text):
            # Some integrations put only the last delta in a chunk, and a stream cut short
            # has no final response: the answer is what the provider's events spelled out.
            text = native.text or text
        if not text and (native is None or not native.text):
            return  # a tool call, not an answer
        outer = call.outer
        while outer is not None:
            outer.answered = True
            outer = outer.outer
        run = call.run
        answer = self._cite(run, answer_input(native, text), text, lambda: self._table(call), note)
        if isinstance(response, ChatResponse):
            # An agent's output holds this very message: `citations_of` finds the answer by it
            # (and the agent's final answer is cited again if the message changes).
            with self.lock:
                run.texts[id(response.message)] = response.message.content or ""
            remember(response, answer)
            remember(response.message, answer)
        self._emit(answer, run, key)

    def _cite(
        self,
        run: _Run,
        base: str | CitedAnswer,
        text: str,
        table: Callable[[], Table],
        note: str | None = None,
    ) -> CitedAnswer:
        """`unicite.cite` of one answer (shown as `text`) with the run's notes; never raises."""
        try:
            numbered = table()
            notes = list(run.notes) + list(run.ledger.diagnostics)
            if note is not None:
                notes.append(note)
            if self.policy.attribute in (None, "lexical"):
                return cite_answer(base, numbered, self.policy, notes)
            # The attribution model's own calls are not answers of the run.
            with QueryCapture().active():
                return cite_answer(base, numbered, self.policy, notes)
        except Exception as err:
            logger.debug("citing an LLM answer failed", exc_info=True)
            return CitedAnswer(text=text, diagnostics=[f"internal error: {err!r}"])

    def _agent_answer(self, run: _Run, output: AgentOutput) -> CitedAnswer | None:
        """The answer of an agent run's final `AgentOutput`, cited again if its text changed.

        It is normally the answer of the LLM call whose message the output holds. An agent
        may answer with other text: a ReAct agent keeps what follows ``Answer:``, a tool
        returning directly answers with its output; that text is what is cited then.
        """
        message = output.response
        text = message.content or ""
        answer = recall(message)
        with self.lock:
            said = run.texts.get(id(message))
        if answer is None and not text.strip():
            return None
        if answer is None or (said is not None and not same_text(said, text)):

            def table() -> Table:
                self._take_pending(run)
                self._flush(run)
                return run.ledger

            answer = self._cite(run, text, text, table)
            with self.lock:
                run.texts[id(message)] = text
            remember(message, answer)
            self._emit(answer, run, None)
        remember(output, answer)
        return answer

    def _table(self, call: _Call) -> Table:
        """What the call's prompt numbered: its nodes' labels, else the run's sources."""
        run = call.run
        with self.lock:
            retrieved = list(run.retrieved)
            ranks = list(run.ranks)
        if call.nodes is not None:
            notes: list[str] = []
            table = table_from_nodes(call.nodes, notes, retrieved, self.sources)
            run.notes.extend(notes)
            return table
        self._flush(run, retrieved, ranks)
        return run.ledger

    def _flush(
        self,
        run: _Run,
        retrieved: list[NodeWithScore] | None = None,
        ranks: list[int] | None = None,
    ) -> None:
        """Put the retrieved nodes not yet in the run's ledger there, in retrieval order."""
        if retrieved is None or ranks is None:
            with self.lock:
                retrieved, ranks = list(run.retrieved), list(run.ranks)
        if run.in_ledger < len(retrieved):
            fresh = zip(retrieved[run.in_ledger :], ranks[run.in_ledger :], strict=True)
            refs = [(node, rank, None) for node, rank in fresh]
            run.ledger.add_all(cached_sources(refs, self.sources, run.notes))
            run.in_ledger = len(retrieved)

    def _reported(self, event: CitationsEvent) -> None:
        """An answer a `CitedQueryEngine` cited: record it like one of ours."""
        with self.lock:
            if event.id_ in self.emitted:
                self.emitted.discard(event.id_)
                return
            run = self._run_of(event.span_id)
            if run is not None:
                run.final = event.answer
        root = event.root_span_id or (run.root if run is not None else event.span_id or "")
        self._record(event.answer, root)
        self._notify(event.answer)

    def _record(self, answer: CitedAnswer, root: str) -> None:
        with self.lock:
            self.last = answer
            self.answers[root] = answer
            self.answers.move_to_end(root)
            while len(self.answers) > self.policy.keep:
                self.answers.popitem(last=False)

    def _notify(self, answer: CitedAnswer) -> None:
        if self.on_citations is not None:
            try:
                self.on_citations(answer)
            except Exception:
                logger.debug("on_citations raised", exc_info=True)

    def _emit(self, answer: CitedAnswer, run: _Run, llm_span: str | None) -> None:
        root = run.root
        with self.lock:
            run.final = answer
            result = run.result if run.closed else None
        if result is not None:
            # A stream read after its run returned: the response it returned gets the answer.
            _remember_result(result, answer)
        self._record(answer, root)
        event = CitationsEvent(
            answer=answer, origin=origin_of(answer), root_span_id=root, llm_span_id=llm_span or None
        )
        with self.lock:
            self.emitted.add(event.id_)
        dispatcher.event(event)
        with self.lock:
            # Normally the event came back through the dispatcher and was ticked off.
            self.emitted.discard(event.id_)
        self._notify(answer)

    def ledger_of(self, span_id: str) -> SourceLedger | None:
        """The ledger of the run `span_id` belongs to, with what it retrieved so far."""
        with self.lock:
            run = self._run_of(span_id)
        if run is None:
            return None
        self._flush(run)
        return run.ledger

    def call_id_of(self, span_id: str) -> str | None:
        """The id of the tool call `span_id` runs in, if any."""
        with self.lock:
            seen = 0
            current: str | None = span_id
            while current is not None and seen < 10_000:
                span = self.spans.get(current)
                if span is None:
                    return None
                if span.call_id is not None:
                    return span.call_id
                current = span.parent
                seen += 1
        return None

    def size(self) -> int:
        """How many spans, calls and lingering runs are held (for memory checks)."""
        with self.lock:
            return len(self.spans) + len(self.calls) + len(self.lingering)


class _SpanTracker(BaseSpanHandler[SimpleSpan]):
    """Tells the handler which span is inside which (the events alone do not say).

    LlamaIndex calls it for every span of every run: it goes straight to the handler's state
    (kept in a slot: a pydantic private attribute costs a microsecond a read) and keeps no span
    objects of its own.
    """

    __slots__ = ("_hot",)
    if TYPE_CHECKING:  # a slot, not a pydantic private attribute
        _hot: _Core | None

    _core: _Core | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "UniciteSpanTracker"

    def follow(self, core: _Core) -> None:
        """Report spans to `core`."""
        self._core = core
        object.__setattr__(self, "_hot", core)

    def span_enter(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the span."""
        core = _hot_core(self)
        if core is not None:
            core.enter(id_, parent_id, instance, bound_args)

    def span_exit(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> None:
        """Forget the span (its run, when it was the outermost one)."""
        core = _hot_core(self)
        if core is not None:
            core.exit(id_, result, labeller=isinstance(instance, CitationPostprocessor))

    def span_drop(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        """Forget a span that ended with an error."""
        core = _hot_core(self)
        if core is not None:
            core.exit(id_, None, dropped=True)

    def new_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_span_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        """Record the span; keep no span object of our own."""
        self.span_enter(id_, bound_args, instance, parent_span_id, tags)
        return None

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        """Forget the span (its run, when it was the outermost one)."""
        self.span_exit(id_, bound_args, instance, result)
        return None

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        """Forget a span that ended with an error."""
        self.span_drop(id_, bound_args, instance, err)
        return None


class CitationEventHandler(BaseEventHandler):
    """Cite every LLM answer LlamaIndex produces: query engines, agents, workflows.

    Attach it once::

        handler = CitationEventHandler(on_citations=print).attach()

    It groups what happens in one run (the outermost span: a query, an agent or workflow run;
    a workflow or agent run inside another run is a run of its own, whose sources the outer
    run gets when it ends, so runs gathered in one step never mix): nodes from
    `RetrievalEndEvent`s, the nodes a synthesizer numbers in its prompt (``Source N:``), the
    results of an agent's tool calls, read as the tools returned them (nodes, a query engine
    response's source nodes, search results; a result's text when that is all there is) in
    the order the agent hands them to its LLM. Those are the run's sources, numbered in the
    order they were found: `cite_tools` shows the model those numbers. `AgentWorkflow`'s
    handoff message is no source.

    At the end of each LLM call that answered with text it reads the `ChatResponse` for
    provider citations (`CitationBlock`s, OpenAI annotations in ``additional_kwargs``, Gemini
    grounding in ``raw``, Anthropic citations, also when streamed), and has `unicite.cite`
    cite it against what the prompt numbered (else the run's sources) under the handler's
    `CitePolicy`; then dispatches a `CitationsEvent` through
    `unicite_llamaindex.events.dispatcher` and calls ``on_citations`` with the `CitedAnswer`.
    The last answer is `answer`; the last of each of the ``keep`` most recent runs is in
    `answers`. An agent run's answer is that of its final `AgentOutput` (cited again when the
    agent answers with other text than its LLM wrote, as a ReAct agent does): `citations_of`
    reads it from the output, the `StopEvent` or the `WorkflowHandler`.

    LLM calls inside a `CitedQueryEngine` query are left to the engine, which publishes its
    own answer (``on_citations`` is called with it too). LlamaIndex's dispatcher swallows
    handler exceptions, so the handler cannot enforce ``require``: use
    ``CitedQueryEngine(require=...)`` or check the answer. Disabled (``enabled=False``), it
    does nothing at all.
    """

    __slots__ = ("_hot",)
    """The handler's state again, read by every event (a private attribute costs more)."""
    if TYPE_CHECKING:
        _hot: _Core

    on_citations: OnCitations | None = Field(
        default=None, exclude=True, description="Called with every CitedAnswer."
    )

    _core: _Core = PrivateAttr()
    _tracker: _SpanTracker = PrivateAttr(default_factory=_SpanTracker)
    _attached: list[Dispatcher] = PrivateAttr(default_factory=list)

    def __init__(
        self,
        *,
        policy: CitePolicy | None = None,
        on_citations: OnCitations | None = None,
        **options: Any,
    ) -> None:
        """Build the handler.

        Args:
            policy: How answers are cited (`unicite.CitePolicy`; default ``CitePolicy()``).
            on_citations: Called with every `CitedAnswer`; what it raises is logged at DEBUG
                level and ignored.
            **options: `CitePolicy` fields overriding ``policy``'s: ``enabled``, ``markers``,
                ``renumber``, ``attribute``, ``llm`` (a callable from a prompt to the reply, or
                a LlamaIndex LLM), ``exclude_inline``, ``sources``, ``keep``, ``on_invalid``,
                ``all_supporting``.
                Older names still work: ``attribution_llm`` for ``llm``, ``history`` for
                ``keep``.

        Raises:
            UsageError: An unknown option, a bad option value, or ``require`` (which a
                handler cannot enforce).
        """
        resolved = resolve_policy(policy, options)
        if resolved.require is not None:
            raise UsageError(
                "CitationEventHandler cannot enforce require: LlamaIndex's dispatcher swallows "
                "handler exceptions. Use CitedQueryEngine(require=...) or check the answer"
            )
        if on_citations is not None and not callable(on_citations):
            raise UsageError("on_citations must be callable: it is called with a CitedAnswer")
        super().__init__(on_citations=on_citations)
        self._core = _Core(resolved, on_citations)
        object.__setattr__(self, "_hot", self._core)
        self._tracker.follow(self._core)

    @property
    def policy(self) -> CitePolicy:
        """How the handler cites answers."""
        return self._core.policy

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "CitationEventHandler"

    # --- attaching --------------------------------------------------------------------------

    def attach(self, dispatcher: Dispatcher | None = None) -> CitationEventHandler:
        """Add the handler (to the root dispatcher by default) and its span tracker; chainable."""
        target = dispatcher if dispatcher is not None else get_dispatcher()
        if not any(h is self for h in target.event_handlers):
            target.add_event_handler(self)
            self._attached.append(target)
        self._track()
        return self

    def detach(self) -> None:
        """Remove the handler and its span tracker from every dispatcher it was added to."""
        for target in self._attached:
            target.event_handlers = [h for h in target.event_handlers if h is not self]
        self._attached.clear()
        core = self._core
        if core.tracking is not None:
            tracker = self._tracker
            core.tracking.span_handlers = [
                h for h in core.tracking.span_handlers if h is not tracker
            ]
            core.tracking = None
            with _FOLLOWING_LOCK:
                _FOLLOWING[:] = [r for r in _FOLLOWING if r() not in (None, core)]

    def _track(self) -> None:
        """Follow spans from the root dispatcher, which sees every span."""
        core = self._core
        if core.tracking is None and core.policy.enabled:
            root = get_dispatcher()
            root.add_span_handler(self._tracker)
            core.tracking = root
            with _FOLLOWING_LOCK:
                _FOLLOWING[:] = [r for r in _FOLLOWING if r() is not None]
                _FOLLOWING.append(weakref.ref(core))

    def __enter__(self) -> CitationEventHandler:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    # --- results ----------------------------------------------------------------------------

    @property
    def answer(self) -> CitedAnswer | None:
        """The last answer cited, if any."""
        core = self._core
        with core.lock:
            return core.last

    @property
    def answers(self) -> dict[str, CitedAnswer]:
        """The last answer of each of the most recent runs, by the id of the run's span.

        The outermost span of a run, or the span of a workflow run nested in another run.
        """
        core = self._core
        with core.lock:
            return dict(core.answers)

    # --- events -----------------------------------------------------------------------------

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        """Read one instrumentation event; never raises."""
        core = _hot_core(self)
        if core is None or not core.policy.enabled:
            return
        if core.tracking is None:
            self._track()
        try:
            core.handle(event)
        except Exception:
            logger.debug(
                "CitationEventHandler could not read %s", type(event).__name__, exc_info=True
            )

    def _state_size(self) -> int:
        """How many spans, calls and lingering runs the handler holds (for memory checks)."""
        return self._core.size()


def run_ledgers() -> list[SourceLedger]:
    """The ledgers of the run in progress here: one per `CitationEventHandler` following it.

    The run is found from LlamaIndex's active span (a tool call inside an agent or workflow
    run); the first handler attached comes first. Empty outside any followed run.
    """
    span_id = active_span_id.get()
    if span_id is None:
        return []
    with _FOLLOWING_LOCK:
        cores = [core for core in (r() for r in _FOLLOWING) if core is not None]
    ledgers = (core.ledger_of(span_id) for core in cores)
    return [ledger for ledger in ledgers if ledger is not None]


def tool_call_id() -> str | None:
    """The id of the agent's tool call running here, when a handler follows the run."""
    span_id = active_span_id.get()
    if span_id is None:
        return None
    with _FOLLOWING_LOCK:
        cores = [core for core in (r() for r in _FOLLOWING) if core is not None]
    for core in cores:
        call_id = core.call_id_of(span_id)
        if call_id is not None:
            return call_id
    return None


def _hot_core(model: CitationEventHandler | _SpanTracker) -> _Core | None:
    """The handler state `model` keeps in its ``_hot`` slot, read without pydantic's lookup.

    A pydantic copy does not copy slots: the state is taken again from the private attribute.
    """
    try:
        return model._hot
    except AttributeError:
        core = model._core
        object.__setattr__(model, "_hot", core)
        return core


def _tool_call_of(bound_args: inspect.BoundArguments) -> str | None:
    """The id of the `ToolCall` event a step span was called with, if any."""
    for value in bound_args.arguments.values():
        if isinstance(value, ToolCall):
            return value.tool_id
    return None


def _had_tools(run: _Run) -> bool:
    """Whether tool calls ended in the run (it is an agent's)."""
    return bool(run.tool_calls or run.result_order or run.failed_tools)


def _failure_note(result: ToolCallResult) -> str:
    """The diagnostic for a tool call that raised: its error message is no source."""
    output = result.tool_output
    error = output.exception
    what = describe_error(error) if error is not None else (output.content or "an error")
    return (
        f"tool {result.tool_name!r} (call {result.tool_id}) failed ({what}); its error message "
        "went to the model and is not a source"
    )


def _is_workflow_run(span_id: str, instance: Any) -> bool:
    """Whether a span is a workflow's (or an agent's) run: ``<Workflow class>.run-<uuid>``."""
    return isinstance(instance, Workflow) and span_id.startswith(f"{type(instance).__name__}.run-")


def _remember_result(result: Any, answer: CitedAnswer) -> None:
    """Tie the run's answer to what its outermost span returned (and a `StopEvent`'s result)."""
    remember(result, answer)
    if isinstance(result, StopEvent):
        remember(result.result, answer)


def _is_stream(result: Any) -> bool:
    return inspect.isgenerator(result) or inspect.isasyncgen(result)


def _is_stream_response(result: Any) -> bool:
    return isinstance(result, (StreamingResponse, AsyncStreamingResponse))
