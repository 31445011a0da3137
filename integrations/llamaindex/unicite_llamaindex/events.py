"""`CitationsEvent`, dispatched through LlamaIndex instrumentation when an answer is cited."""

from __future__ import annotations

from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events import BaseEvent

from unicite import CitedAnswer

__all__ = ["CitationsEvent", "dispatcher"]

dispatcher = get_dispatcher(__name__)
"""The dispatcher `CitationsEvent`s go through (a child of LlamaIndex's root dispatcher)."""


class CitationsEvent(BaseEvent):
    """The citations of one LLM answer, read by unicite.

    Dispatched by `CitedQueryEngine` at the end of each query (for a stream, once it has been
    consumed), by `CitedSynthesizer` for each answer it generates, and by
    `CitationEventHandler` after each LLM call that answered with text.
    ``span_id`` is the span the answer was produced in.
    """

    answer: CitedAnswer
    """The answer: text, sources and exact citation spans."""
    origin: str | None = None
    """How the citations came about (``"native"``, ``"marker"``, ``"posthoc-lexical"``, ...);
    None when the answer has none."""
    root_span_id: str | None = None
    """The outermost span of the run (the query, the agent or workflow run)."""
    llm_span_id: str | None = None
    """The span of the LLM call that produced the answer, when known."""

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "CitationsEvent"
