"""A scripted Haystack chat generator: answers from the prompt it got, streaming if asked."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from haystack import component, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.utils import deserialize_callable, serialize_callable

Reply = Callable[[str], str]


@component
class ScriptedChatGenerator:
    """Replies with ``answer(prompt)``; streams it in ``chunk``-character pieces when asked."""

    def __init__(self, answer: Reply, chunk: Callable[[], int | None] = lambda: None) -> None:
        self.answer = answer
        self.chunk = chunk

    def to_dict(self) -> dict[str, Any]:
        """The reply function by import path (the chunk size is not saved)."""
        return default_to_dict(self, answer=serialize_callable(self.answer))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedChatGenerator:
        """Load what `to_dict` saved."""
        params = data["init_parameters"]
        params["answer"] = deserialize_callable(params["answer"])
        return default_from_dict(cls, data)

    def _reply(self, messages: list[ChatMessage]) -> tuple[str, list[StreamingChunk]]:
        prompt = "\n".join(m.text or "" for m in messages)
        text = self.answer(prompt)
        size = self.chunk() or 5
        pieces = [StreamingChunk(content=text[i : i + size]) for i in range(0, len(text), size)]
        pieces.append(StreamingChunk(content="", finish_reason="stop"))
        return text, pieces

    @component.output_types(replies=list[ChatMessage])
    def run(
        self, messages: list[ChatMessage], streaming_callback: Any = None
    ) -> dict[str, list[ChatMessage]]:
        text, pieces = self._reply(messages)
        if streaming_callback is not None:
            for piece in pieces:
                streaming_callback(piece)
        meta = {"model": "scripted", "index": 0, "finish_reason": "stop"}
        return {"replies": [ChatMessage.from_assistant(text, meta=meta)]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], streaming_callback: Any = None
    ) -> dict[str, list[ChatMessage]]:
        text, pieces = self._reply(messages)
        if streaming_callback is not None:
            for piece in pieces:
                result = streaming_callback(piece)
                if inspect.isawaitable(result):
                    await result
        meta = {"model": "scripted", "index": 0, "finish_reason": "stop"}
        return {"replies": [ChatMessage.from_assistant(text, meta=meta)]}
