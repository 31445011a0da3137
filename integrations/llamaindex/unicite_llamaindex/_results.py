"""`citations_of`: the `CitedAnswer` of what LlamaIndex handed back, whatever its type.

Query engine responses carry their answer in ``metadata["citations"]``. Objects that have no
place for it (an agent's `AgentOutput`, a workflow's `StopEvent`, the `ChatMessage` an LLM
answered with) are remembered here by identity when `CitationEventHandler` cites them: weakly,
so an answer is forgotten with its object, and at most `_LIMIT` of them.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from llama_index.core.agent.workflow.workflow_events import AgentOutput
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.workflow import Event
from llama_index.core.workflow.handler import WorkflowHandler  # type: ignore[attr-defined]

from unicite import CitedAnswer, UsageError

__all__ = ["answer_of", "citations_of", "known_answer", "recall", "remember"]

_LIMIT = 4096
"""The most objects remembered at once (the oldest are forgotten first)."""

_lock = threading.Lock()
_answers: OrderedDict[int, tuple[weakref.ref[Any], CitedAnswer]] = OrderedDict()
_dead: list[tuple[int, weakref.ref[Any]]] = []
"""Entries whose object died: removed at the next access (a weakref callback may run in the
middle of a dict operation, holding the lock)."""


def _purge() -> None:
    """Drop the entries of dead objects (the lock is held)."""
    while _dead:
        key, ref = _dead.pop()
        entry = _answers.get(key)
        if entry is not None and entry[0] is ref:
            del _answers[key]


def remember(obj: Any, answer: CitedAnswer) -> None:
    """Remember `answer` as the answer of `obj`, as long as `obj` lives."""
    key = id(obj)

    def forget(dead: weakref.ref[Any]) -> None:
        _dead.append((key, dead))

    try:
        ref = weakref.ref(obj, forget)
    except TypeError:
        return  # str, int, dict...: nothing to tie the answer to
    with _lock:
        _purge()
        _answers[key] = (ref, answer)
        _answers.move_to_end(key)
        while len(_answers) > _LIMIT:
            _answers.popitem(last=False)


def recall(obj: Any) -> CitedAnswer | None:
    """The answer remembered for `obj` (this very object), if any."""
    with _lock:
        _purge()
        entry = _answers.get(id(obj))
    if entry is None or entry[0]() is not obj:
        return None
    return entry[1]


def answer_of(response: Any) -> CitedAnswer | None:
    """The `CitedAnswer` a query engine response carries in ``metadata["citations"]``."""
    metadata = getattr(response, "metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    answer = metadata.get("citations")
    return answer if isinstance(answer, CitedAnswer) else None


def known_answer(value: Any) -> CitedAnswer | None:
    """The answer `value` is or carries (a tool's output), without raising on any type."""
    if isinstance(value, CitedAnswer):
        return value
    if isinstance(value, (Response, StreamingResponse, AsyncStreamingResponse)):
        return answer_of(value) or recall(value)
    if isinstance(value, AgentOutput):
        return recall(value) or recall(value.response)
    if isinstance(value, (Event, ChatMessage, ChatResponse)):
        return recall(value)
    return None


def citations_of(response: Any) -> CitedAnswer | None:
    """The `unicite.CitedAnswer` of a LlamaIndex response, agent output or workflow run.

    Works on:

    - a query engine `Response` and a consumed `StreamingResponse` /
      `AsyncStreamingResponse` (`CitedQueryEngine`'s, `CitedSynthesizer`'s, or any engine's
      while a `CitationEventHandler` is attached);
    - an agent's `AgentOutput` (what ``await agent.run(...)`` returns), a workflow's
      `StopEvent` (or any workflow event it returned), and the `WorkflowHandler` that
      ``run()`` returned, once the run is done;
    - the `ChatResponse` or `ChatMessage` an LLM answered with, when a handler cited it;
    - a `CitedAnswer`, returned as it is.

    Answers of agents and workflows exist only where a `CitationEventHandler` was attached
    while they ran.

    Returns:
        The answer; None when there is none (yet): a stream not consumed, a run not finished,
        nothing cited, a structured (Pydantic) response.

    Raises:
        UsageError: `response` is none of the above (for a workflow that returns a plain value,
            pass its `WorkflowHandler` or its `StopEvent`).
    """
    if isinstance(response, CitedAnswer):
        return response
    if isinstance(response, (Response, StreamingResponse, AsyncStreamingResponse)):
        return answer_of(response) or recall(response)
    if isinstance(response, PydanticResponse):
        return None
    if isinstance(response, ChatResponse):
        return recall(response) or recall(response.message)
    if isinstance(response, ChatMessage):
        return recall(response)
    if isinstance(response, AgentOutput):
        return recall(response) or recall(response.response)
    if isinstance(response, Event):
        return recall(response)
    if isinstance(response, WorkflowHandler):
        stop = _stop_event(response)
        return None if stop is None else recall(stop)
    raise UsageError(
        "citations_of takes a LlamaIndex Response, StreamingResponse, AgentOutput, StopEvent, "
        f"WorkflowHandler, ChatResponse or ChatMessage, got {type(response).__name__}"
    )


def _stop_event(handler: WorkflowHandler) -> Any:
    """A finished run's `StopEvent`, else None."""
    try:
        return handler.get_stop_event()
    except Exception:  # an older or odd handler: no stop event to read
        return None
