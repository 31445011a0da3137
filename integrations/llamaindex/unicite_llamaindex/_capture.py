"""The LLM calls of a cited query, read from LlamaIndex instrumentation events.

`CitedQueryEngine` needs the `ChatResponse` behind the text its synthesizer returns, because
provider citations live there. One event handler on the root dispatcher hands each LLM event to
the query whose context it fires in (a context variable, so concurrent queries in threads or
tasks never see each other's calls); outside a cited query it does nothing.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar, Token
from typing import Any

from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatInProgressEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
)

from unicite import CitedAnswer
from unicite_llamaindex._stream import LLMCallReader

__all__ = ["QueryCapture", "active_capture", "install", "same_text"]

_ACTIVE: ContextVar[QueryCapture | None] = ContextVar("unicite_llamaindex_query", default=None)
_INSTALL_LOCK = threading.Lock()
_installed = False


def active_capture() -> QueryCapture | None:
    """The cited query running in this thread or task, if any."""
    return _ACTIVE.get()


def same_text(a: str, b: str) -> bool:
    """Equal up to whitespace: integrations join an answer's text blocks differently."""
    return "".join(a.split()) == "".join(b.split())


class QueryCapture:
    """The LLM calls made while one cited query runs, with their native citations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, LLMCallReader] = {}
        self._answers: list[CitedAnswer] = []

    def active(self) -> _Active:
        """Route the LLM events of this context to the capture for the ``with`` block.

        A streamed query enters it around every chunk it reads: a plain object, not a
        generator-based context manager.
        """
        return _Active(self)

    def handle(self, event: BaseEvent) -> None:
        """Read one instrumentation event."""
        key = event.span_id or ""
        if isinstance(event, (LLMChatInProgressEvent, LLMCompletionInProgressEvent)):
            with self._lock:
                reader = self._calls.get(key)
                if reader is None:
                    reader = self._calls[key] = LLMCallReader()
            reader.feed(event.response)
        elif isinstance(event, (LLMChatEndEvent, LLMCompletionEndEvent)):
            with self._lock:
                reader = self._calls.pop(key, LLMCallReader())
            answer = reader.finish(event.response)
            if answer is not None:
                with self._lock:
                    self._answers.append(answer)

    def native_for(self, text: str) -> CitedAnswer | None:
        """The last LLM answer whose text is `text` (the synthesizer's answer), if any."""
        with self._lock:
            answers = list(self._answers)
        for answer in reversed(answers):
            if same_text(answer.text, text):
                return answer
        return None


class _Active:
    """`QueryCapture.active`: the capture is the context's while the ``with`` block runs."""

    __slots__ = ("_capture", "_token")

    def __init__(self, capture: QueryCapture) -> None:
        self._capture = capture
        self._token: Token[QueryCapture | None] | None = None

    def __enter__(self) -> QueryCapture:
        self._token = _ACTIVE.set(self._capture)
        return self._capture

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None


class _CaptureHandler(BaseEventHandler):
    """Hands LLM events to the cited query of the context they fire in."""

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "UniciteQueryCaptureHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        """Pass the event on when a cited query is running here."""
        capture = _ACTIVE.get()
        if capture is not None:
            capture.handle(event)


def install() -> None:
    """Add the capture handler to LlamaIndex's root dispatcher, once per process."""
    global _installed
    if _installed:
        return
    with _INSTALL_LOCK:
        if not _installed:
            get_dispatcher().add_event_handler(_CaptureHandler())
            _installed = True
