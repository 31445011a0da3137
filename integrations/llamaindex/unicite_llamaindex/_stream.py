"""One LLM call's native citations, from its streamed chunks or its final response.

A streamed call's last `ChatResponse` often loses what the provider said: the Anthropic
integration keeps citations in a flat list without their text block, the Gemini one only the
last chunk's grounding. Each chunk's ``raw`` is the provider's stream event, so the chunks are
fed to unicite's stream collector instead, repairing what the integrations leave out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite import CitedAnswer, StreamCollector
from unicite_llamaindex._convert import from_llamaindex_response, plain, provider_payload

__all__ = ["LLMCallReader"]

_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
# The block a delta belongs to, for the content_block_start the Anthropic integration drops.
_BLOCK_FOR_DELTA: dict[str, dict[str, Any]] = {
    "text_delta": {"type": "text", "text": ""},
    "citations_delta": {"type": "text", "text": ""},
    "thinking_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "signature_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "input_json_delta": {"type": "tool_use", "id": "", "name": "", "input": {}},
}


class _AnthropicRepair:
    """Puts back the Anthropic stream events the LlamaIndex integration does not yield.

    It yields chunks for block deltas, block stops and message deltas only, so the message
    start and each block's start are rebuilt from the deltas that follow them.
    """

    def __init__(self) -> None:
        self.started = False
        self.blocks: set[int] = set()
        self.skipped = 0

    def events(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        out: list[dict[str, Any]] = []
        if kind == "message_start":
            self.started = True
            return [event]
        if not self.started:
            self.started = True
            out.append(
                {"type": "message_start", "message": {"type": "message", "role": "assistant"}}
            )
        index = event.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            self.blocks.add(index)
        elif (
            kind in ("content_block_delta", "content_block_stop")
            and isinstance(index, int)
            and index not in self.blocks
        ):
            delta = event.get("delta")
            delta_kind = delta.get("type") if isinstance(delta, Mapping) else None
            block = _BLOCK_FOR_DELTA.get(delta_kind) if isinstance(delta_kind, str) else None
            if block is None:
                # A block that arrived whole in its start event (a server tool result):
                # the integration dropped it, and its stop alone says nothing.
                self.skipped += 1
                return out
            self.blocks.add(index)
            out.append({"type": "content_block_start", "index": index, "content_block": block})
        out.append(event)
        return out


class LLMCallReader:
    """Native citations of one LLM call: feed its streamed responses, then finish it."""

    def __init__(self) -> None:
        self._collector: StreamCollector | None = None
        self._anthropic: _AnthropicRepair | None = None
        self.diagnostics: list[str] = []

    def feed(self, response: Any) -> None:
        """Take one streamed `ChatResponse`/`CompletionResponse`; never raises."""
        try:
            self._feed(getattr(response, "raw", None))
        except Exception as err:
            self.diagnostics.append(f"internal error reading a streamed chunk: {err!r}")

    def _feed(self, raw: Any) -> None:
        if raw is None:
            return
        payload, name = provider_payload(raw)
        if name == "gemini" and payload is not None:
            events = [payload]
        else:
            event = plain(raw)
            if not isinstance(event, dict):
                return
            if event.get("type") in _ANTHROPIC_EVENTS:
                if self._anthropic is None:
                    self._anthropic = _AnthropicRepair()
                events = self._anthropic.events(event)
            else:
                events = [event]
        if self._collector is None:
            self._collector = StreamCollector()
        for item in events:
            self._collector.feed(item)

    def finish(self, response: Any) -> CitedAnswer | None:
        """The call's answer with its native citations; None when there is nothing to read."""
        try:
            return self._finish(response)
        except Exception as err:
            return CitedAnswer(diagnostics=[*self.diagnostics, f"internal error: {err!r}"])

    def _finish(self, response: Any) -> CitedAnswer | None:
        streamed: CitedAnswer | None = None
        if self._collector is not None:
            if self._anthropic is not None:
                self._collector.feed({"type": "message_stop"})
                if self._anthropic.skipped:
                    self.diagnostics.append(
                        f"{self._anthropic.skipped} streamed content block(s) arrived whole in "
                        "events the LlamaIndex Anthropic integration does not pass on "
                        "(server tool results); their sources come from the citations alone"
                    )
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
