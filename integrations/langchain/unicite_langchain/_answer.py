"""The answer of a root run: the last model message that is an answer, read once at the end.

A model run's answer is the message its end reports, else the chunks it streamed (a run
ending without a generation, or failing mid-stream). Messages that only call tools are not
answers. A root run no model answered answers with its own text output.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.outputs.chat_generation import merge_chat_generation_chunks

from unicite import CitedAnswer
from unicite.exceptions import describe_error
from unicite_langchain._messages import from_ai_message
from unicite_langchain._request import Request, link_request_sources
from unicite_langchain._runs import Root, RunTable

__all__ = ["AnswerCapture"]

_FINISH_KEYS = {
    "openai": ("finish_reason", "status"),
    "anthropic": ("stop_reason",),
    "google_genai": ("finish_reason",),
}
"""Where each provider's LangChain messages keep the reason a complete response ended
(Chat Completions ``finish_reason``, Responses ``status``)."""


class AnswerCapture:
    """Keeps each root's latest model answer, and reads it into a `CitedAnswer` at the end."""

    def __init__(self, runs: RunTable) -> None:
        self._runs = runs

    def chat_started(self, root: Root, run_id: UUID, messages: list[list[BaseMessage]]) -> None:
        """Remember the documents a chat model request carries."""
        request = Request.of(messages)
        if request is not None:
            with self._runs.lock:
                root.requests[run_id] = request

    def token(self, run_id: UUID, chunk: GenerationChunk | ChatGenerationChunk) -> None:
        """Keep a streamed chunk: the chunks are the answer if the run ends without one."""
        with self._runs.lock:
            root = self._runs.root_locked(run_id)
            if root is not None:
                root.chunks.setdefault(run_id, []).append(chunk)

    def ended(self, root: Root, run_id: UUID, response: LLMResult) -> None:
        """Keep the model's message as the root's latest answer."""
        with self._runs.lock:
            chunks = root.chunks.pop(run_id, [])
            request = root.requests.pop(run_id, None)
        message = _message_of(response) or _merged(chunks)
        if message is None or not _has_answer(message):
            return
        with self._runs.lock:
            root.message = message
            root.request = request
            if chunks and _unfinished(message):
                root.diagnostics.append(
                    "the model's stream ended before a finish reason: the answer may be cut short"
                )

    def failed(self, root: Root, run_id: UUID, error: BaseException) -> None:
        """A failed model run: a stream cut short still leaves the text it sent.

        The root may still end with an answer (a fallback model, a retry, code that catches
        the error): the answer then says the model failed and why.
        """
        with self._runs.lock:
            chunks = root.chunks.pop(run_id, [])
            request = root.requests.pop(run_id, None)
        message = _merged(chunks)
        with self._runs.lock:
            if message is not None and _has_answer(message):
                root.message = message
                root.request = request
                root.diagnostics.append(
                    f"the model run failed mid-stream ({describe_error(error)}); "
                    "its partial answer is kept"
                )
            else:
                root.diagnostics.append(f"a model run failed: {describe_error(error)}")

    def output(self, root: Root, outputs: Any) -> None:
        """A root run's output stands for the answer when no model run gave one."""
        if root.message is None:
            message = _output_message(outputs)
            if message is not None:
                with self._runs.lock:
                    root.message = message

    @staticmethod
    def answer(root: Root) -> CitedAnswer | None:
        """The root's answer as its message reads (native citations and all), not yet cited.

        None when the run has neither an answer nor sources; native sources naming documents
        of the request are the captured sources those documents hold.
        """
        message = root.message
        if message is None:
            if not len(root.ledger):
                return None
            message = AIMessage(content="")
        answer = from_ai_message(message)
        if root.request is not None:
            answer = link_request_sources(answer, root.request, root.ledger.sources)
        return answer


def _message_of(response: LLMResult) -> BaseMessage | None:
    generations = response.generations
    if not generations or not generations[0]:
        return None
    first = generations[0][0]
    if isinstance(first, ChatGeneration):
        return first.message
    return AIMessage(content=first.text) if first.text else None


def _merged(chunks: list[ChatGenerationChunk | GenerationChunk]) -> BaseMessage | None:
    """The message a run's streamed chunks add up to, as LangChain merges them."""
    chat = [chunk for chunk in chunks if isinstance(chunk, ChatGenerationChunk)]
    if chat:
        merged = merge_chat_generation_chunks(chat)
        return None if merged is None else merged.message
    text = "".join(chunk.text for chunk in chunks)
    return AIMessage(content=text) if text else None


def _has_answer(message: BaseMessage) -> bool:
    """Whether a model message is an answer (text), not only tool calls."""
    if message.text:
        return True
    metadata = message.response_metadata or {}
    return metadata.get("grounding_metadata") is not None


def _unfinished(message: BaseMessage) -> bool:
    """Whether a streamed message of a known provider lacks its finish reason: a cut stream.

    The last event of a complete stream carries the reason the response ended.
    """
    metadata = message.response_metadata or {}
    keys = _FINISH_KEYS.get(str(metadata.get("model_provider")))
    return keys is not None and not any(metadata.get(key) for key in keys)


def _output_message(outputs: Any) -> BaseMessage | None:
    """An answer from a root run's output."""
    if isinstance(outputs, AIMessage):
        return outputs
    if isinstance(outputs, str) and outputs:
        return AIMessage(content=outputs)
    return None
