"""A scripted tool-calling chat model for agent tests, and helpers to script its replies.

LangChain's `GenericFakeChatModel` cannot be given tools (``bind_tools`` is not implemented)
and its stream drops tool calls, so under ``create_agent`` (which binds the tools, and streams
when the caller streams ``"messages"``) it could not call a tool. `ScriptedChatModel` can: it
replies with its scripted messages in order, streams their text word by word and then their
tool calls as tool-call chunks, and records every request it got.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Replies with the scripted messages in order, as a tool-calling chat model would."""

    requests: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every request, in order."""
    tool_names: list[str] = Field(default_factory=list)
    """The names of the tools last bound."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        self.tool_names = [getattr(t, "name", None) or t.get("name", "?") for t in tools]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.requests.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._generate(messages, stop=stop, run_manager=run_manager).generations[0].message
        assert isinstance(reply, AIMessage)
        pieces: list[AIMessageChunk] = [
            AIMessageChunk(content=word, id=reply.id)
            for word in re.split(r"(\s)", reply.text)
            if word
        ]
        if reply.tool_calls:
            pieces.append(
                AIMessageChunk(
                    content="",
                    id=reply.id,
                    tool_call_chunks=[
                        {
                            "name": call["name"],
                            "args": json.dumps(call["args"], ensure_ascii=False),
                            "id": call["id"],
                            "index": index,
                            "type": "tool_call_chunk",
                        }
                        for index, call in enumerate(reply.tool_calls)
                    ],
                )
            )
        for piece in pieces:
            chunk = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token(str(piece.content), chunk=chunk)
            yield chunk


def tool_call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    """A tool call as a model message carries it."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def calls(*tool_calls: dict[str, Any], text: str = "") -> AIMessage:
    """A model reply calling tools (with some text before, if given)."""
    return AIMessage(content=text, tool_calls=list(tool_calls))


def scripted(*replies: AIMessage | str) -> ScriptedChatModel:
    """A model giving these replies, in order (a string is a final answer)."""
    messages = [AIMessage(content=r) if isinstance(r, str) else r for r in replies]
    return ScriptedChatModel(messages=iter(messages))
