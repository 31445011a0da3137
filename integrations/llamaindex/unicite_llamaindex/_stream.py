"""One LLM call's native citations, from its streamed chunks or its final response.

A streamed call's last `ChatResponse` often loses what the provider said: the Anthropic
integration keeps citations in a flat list without their text block, the Gemini one only the
last chunk's grounding. Each chunk's ``raw`` is the provider's stream event (a bare candidate
for Gemini, a shallow ``dict`` of the event for Anthropic, without the message and block
starts), so the chunks are fed to unicite's stream collector, whose readers take those as they
are, instead.
"""

from __future__ import annotations

from typing import Any

from unicite import CitedAnswer, StreamCollector
from unicite.providers import to_data
from unicite_llamaindex._convert import from_llamaindex_response

__all__ = ["LLMCallReader"]


class LLMCallReader:
    """Native citations of one LLM call: feed its streamed responses, then finish it."""

    def __init__(self) -> None:
        self._collector: StreamCollector | None = None
        self.diagnostics: list[str] = []

    def feed(self, response: Any) -> None:
        """Take one streamed `ChatResponse`/`CompletionResponse`; never raises."""
        raw = getattr(response, "raw", None)
        if raw is None:
            return  # nothing the provider said (a scripted or custom LLM)
        try:
            self._feed(raw)
        except Exception as err:
            self.diagnostics.append(f"internal error reading a streamed chunk: {err!r}")

    def _feed(self, raw: Any) -> None:
        event = to_data(raw)
        if not isinstance(event, dict):
            return
        if self._collector is None:
            self._collector = StreamCollector()
        self._collector.feed(event)

    def finish(self, response: Any) -> CitedAnswer | None:
        """The call's answer with its native citations; None when there is nothing to read."""
        try:
            return self._finish(response)
        except Exception as err:
            return CitedAnswer(diagnostics=[*self.diagnostics, f"internal error: {err!r}"])

    def _finish(self, response: Any) -> CitedAnswer | None:
        streamed: CitedAnswer | None = None
        if self._collector is not None:
            streamed = self._collector.result()
            if streamed.provider is None and not streamed.text:
                streamed = None
        # A streamed call's last chunk holds only part of the answer: read it only when the
        # chunks themselves said nothing readable.
        answer = streamed
        if answer is None and response is not None:
            answer = from_llamaindex_response(response)
        if answer is None:
            return None
        if self.diagnostics:
            answer = answer.model_copy(
                update={"diagnostics": [*answer.diagnostics, *self.diagnostics]}
            )
        return answer
