"""A scripted pydantic-ai model: it calls the search tool once, then answers from the prompt.

`FunctionModel` stands in for a provider: the first request gets a tool call with the user's
question, the next the reply `answer(prompt)` gives for everything the model was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


def prompt_text(messages: list[ModelMessage]) -> str:
    """Everything the model was sent, as text."""
    pieces: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    pieces.append(part.model_response_str())
                elif isinstance(part, UserPromptPart):
                    content = part.content
                    pieces.append(content if isinstance(content, str) else str(content))
    return "\n".join(pieces)


def _question(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _searched(messages: list[ModelMessage]) -> bool:
    return any(
        isinstance(part, ToolReturnPart)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def scripted_model(
    answer: Callable[[str], str],
    chunk: Callable[[], int | None] = lambda: None,
    tool: str = "search",
) -> FunctionModel:
    """A model that searches with the question, then replies ``answer(prompt)``."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not _searched(messages):
            return ModelResponse(parts=[ToolCallPart(tool, {"query": _question(messages)})])
        return ModelResponse(parts=[TextPart(answer(prompt_text(messages)))])

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if not _searched(messages):
            args = json.dumps({"query": _question(messages)})
            yield {0: DeltaToolCall(name=tool, json_args=args)}
            return
        text = answer(prompt_text(messages))
        size = chunk() or len(text) or 1
        for start in range(0, len(text), size):
            yield text[start : start + size]

    return FunctionModel(respond, stream_function=stream)


def run(agent: Any, prompt: str) -> Any:
    """``agent.run(prompt)`` in a loop of its own, closed after (``run_sync`` keeps its loop)."""
    return asyncio.run(agent.run(prompt))
