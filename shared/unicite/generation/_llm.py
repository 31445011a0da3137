"""The layer that talks to models: one `ChatModel` over SDK clients, frameworks and callables.

`as_chat_model` takes what a caller has (a LangChain chat model, a LlamaIndex LLM, an OpenAI,
Anthropic or google-genai client with a model name, a ``(client, "model")`` tuple, or a callable
``str -> str``) and returns a `ChatModel` that completes and streams a system + user prompt, sync
or async, and reports the text and token counts as a `Reply`. Objects are recognised duck-typed
(`unicite.providers.llm_kind`); no framework and no SDK is imported here, except LlamaIndex's
``ChatMessage``, imported when a LlamaIndex LLM is used. Errors from the SDKs propagate unchanged.

A sync client used through the async methods runs in a thread (`asyncio.to_thread`); an
async-only one (``AsyncOpenAI``, ``AsyncAnthropic``, ``client.aio``, an ``async def``) used
through the sync methods raises `UsageError`: nothing here starts an event loop.

``complete_native`` asks the provider's own citation API: Anthropic only (the client, or
LangChain's ``ChatAnthropic``), each source sent as a ``document`` content block before the
prompt, so that ``document_index`` *i* in the citations is ``sources[i]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.providers import LLMKind, llm_kind, to_data
from unicite.providers.anthropic import ANTHROPIC

__all__ = ["ChatModel", "Reply", "as_chat_model"]

ANTHROPIC_MAX_TOKENS = 4096
"""``max_tokens`` of Anthropic requests (required by the API; every Claude model takes 4096)."""


@dataclass(frozen=True)
class Reply:
    """What a model answered: its whole text, token counts when reported, and the response."""

    text: str
    """The model's whole text answer."""
    tokens_in: int | None = None
    """Prompt tokens, when the provider reports them."""
    tokens_out: int | None = None
    """Completion tokens (reasoning and thinking included), when reported."""
    raw: Any = None
    """The provider's response object or dict; for a stream, what it adds up to (the SDK's
    events as a list, the framework's last or merged chunk). For the native path, what
    `unicite.extract` reads."""


class ChatModel:
    """A model unicite can prompt: complete or stream a system + user prompt, sync or async.

    One subclass per kind of llm; `as_chat_model` picks it. ``stream`` and ``astream`` yield
    the text's deltas (``str``) and then one final `Reply` (the whole text and token counts).

    Attributes:
        provider: ``"openai"``, ``"anthropic"``, ``"gemini"``, ``"langchain"``,
            ``"llamaindex"`` or ``"callable"``: how unicite talks to the model.
        model: The model name, when known.
        native_citations: Whether `complete_native` works for this llm.
    """

    provider: str = ""
    model: str | None = None
    native_citations: bool = False
    async_only: bool = False

    def __init__(self, target: Any, *, model: str | None, label: str) -> None:
        self.target = target
        self.model = model
        self._label = label

    def __repr__(self) -> str:
        model = f" {self.model!r}" if self.model else ""
        return f"<{type(self).__name__} {self._label}{model}>"

    # --- what subclasses implement ------------------------------------------------------------

    def complete(self, system: str, prompt: str) -> Reply:
        """The model's answer to `prompt` under `system` (an empty system is not sent)."""
        raise NotImplementedError

    async def acomplete(self, system: str, prompt: str) -> Reply:
        """`complete`, async (a sync client runs in a thread)."""
        return await asyncio.to_thread(self.complete, system, prompt)

    def stream(self, system: str, prompt: str) -> Iterator[str | Reply]:
        """The answer's text deltas as they come, then one `Reply` with the whole of it."""
        raise NotImplementedError

    def astream(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        """`stream`, async (a sync client's stream is read in a thread)."""
        return _threaded(lambda: self.stream(system, prompt))

    def complete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        """The answer through the provider's own citation API; ``raw`` is what `extract` reads.

        Raises:
            UsageError: This llm has no native citation API unicite can use.
        """
        raise UsageError(
            f"{self._label} has no native citation API unicite can use: only Anthropic's (the "
            "anthropic client or LangChain's ChatAnthropic); use citation markers instead"
        )

    async def acomplete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        """`complete_native`, async (a sync client runs in a thread)."""
        if not self.native_citations:
            return self.complete_native(system, prompt, sources)  # raises
        return await asyncio.to_thread(self.complete_native, system, prompt, sources)

    # --- shared helpers -----------------------------------------------------------------------

    def _sync_only(self, method: str) -> UsageError:
        return UsageError(
            f"{self._label} is async-only: {method}() cannot call it; use the async API "
            "(acomplete/astream, unicite.agenerate_cited/astream_cited) or pass a sync client"
        )


async def _threaded(make: Callable[[], Iterator[str | Reply]]) -> AsyncIterator[str | Reply]:
    """A sync stream read in a worker thread, one item per hop: the event loop never blocks."""
    iterator = await asyncio.to_thread(lambda: iter(make()))
    try:
        while True:
            item = await asyncio.to_thread(next, iterator, None)
            if item is None:
                return
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if callable(close):
            with contextlib.suppress(ValueError):  # still running in its thread (cancelled)
                close()


def _close(stream: object) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


async def _aclose(stream: object) -> None:
    close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if callable(close):
        result = close()
        if inspect.isawaitable(result):
            await result


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _total(*values: object) -> int | None:
    counts = [c for c in (_count(v) for v in values) if c is not None]
    return sum(counts) if counts else None


def _field(obj: object, *names: str) -> Any:
    """The first of `names` present on an object or in a mapping (SDK objects and dicts alike)."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _messages(system: str, prompt: str) -> list[dict[str, str]]:
    head = [{"role": "system", "content": system}] if system else []
    return [*head, {"role": "user", "content": prompt}]


class _Tally:
    """What one streamed response adds up to: each event's text, then the `Reply`."""

    def take(self, event: Any) -> str:
        """The text `event` adds (noting usage on the way)."""
        raise NotImplementedError

    def reply(self, text: str, events: list[Any]) -> Reply:
        """The whole answer: its text, the token counts seen, the events as ``raw``."""
        raise NotImplementedError


class _SDKChat(ChatModel):
    """A provider SDK client: sync or async-only, each streamed the same way.

    Subclasses open a stream (`_open`, `_aopen`) and read its events with a `_Tally`.
    """

    def __init__(self, kind: LLMKind, model: str, label: str) -> None:
        super().__init__(kind.target, model=model, label=label)
        self.async_only = kind.async_only

    def _open(self, system: str, prompt: str) -> Any:
        raise NotImplementedError

    async def _aopen(self, system: str, prompt: str) -> Any:
        raise NotImplementedError

    def _tally(self) -> _Tally:
        raise NotImplementedError

    def _streams_async(self) -> bool:
        """Whether `astream` reads an async stream of the client's (else a sync one, threaded)."""
        return self.async_only

    def stream(self, system: str, prompt: str) -> Iterator[str | Reply]:
        if self.async_only:
            raise self._sync_only("stream")
        return self._read(system, prompt)

    def astream(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        if not self._streams_async():
            return super().astream(system, prompt)
        return self._aread(system, prompt)

    def _read(self, system: str, prompt: str) -> Iterator[str | Reply]:
        events = self._open(system, prompt)
        tally = self._tally()
        parts: list[str] = []
        seen: list[Any] = []
        try:
            for event in events:
                seen.append(event)
                text = tally.take(event)
                if text:
                    parts.append(text)
                    yield text
        finally:
            _close(events)
        yield tally.reply("".join(parts), seen)

    async def _aread(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        events = await self._aopen(system, prompt)
        tally = self._tally()
        parts: list[str] = []
        seen: list[Any] = []
        try:
            async for event in events:
                seen.append(event)
                text = tally.take(event)
                if text:
                    parts.append(text)
                    yield text
        finally:
            await _aclose(events)
        yield tally.reply("".join(parts), seen)


# --- OpenAI Chat Completions ------------------------------------------------------------------


class _OpenAITally(_Tally):
    def __init__(self) -> None:
        self.usage: Any = None

    def take(self, event: Any) -> str:
        found = _field(event, "usage")
        if found is not None:
            self.usage = found
        pieces = []
        for choice in _field(event, "choices") or ():
            if _field(choice, "index") not in (0, None):
                continue
            text = _field(_field(choice, "delta"), "content")
            if isinstance(text, str):
                pieces.append(text)
        return "".join(pieces)

    def reply(self, text: str, events: list[Any]) -> Reply:
        return Reply(
            text=text,
            tokens_in=_count(_field(self.usage, "prompt_tokens")),
            tokens_out=_count(_field(self.usage, "completion_tokens")),
            raw=events,
        )


class _OpenAIChat(_SDKChat):
    provider = "openai"

    def __init__(self, kind: LLMKind, model: str) -> None:
        super().__init__(kind, model, f"an {kind.class_name} client")

    def _request(self, system: str, prompt: str, *, stream: bool = False) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": _messages(system, prompt)}
        if stream:
            request.update(stream=True, stream_options={"include_usage": True})
        return request

    @staticmethod
    def _reply(response: Any) -> Reply:
        choices = _field(response, "choices") or []
        message = _field(choices[0], "message") if choices else None
        text = _field(message, "content") if message is not None else None
        usage = _field(response, "usage")
        return Reply(
            text=text if isinstance(text, str) else "",
            tokens_in=_count(_field(usage, "prompt_tokens")),
            tokens_out=_count(_field(usage, "completion_tokens")),
            raw=response,
        )

    def complete(self, system: str, prompt: str) -> Reply:
        if self.async_only:
            raise self._sync_only("complete")
        return self._reply(self.target.chat.completions.create(**self._request(system, prompt)))

    async def acomplete(self, system: str, prompt: str) -> Reply:
        if not self.async_only:
            return await super().acomplete(system, prompt)
        response = await self.target.chat.completions.create(**self._request(system, prompt))
        return self._reply(response)

    def _open(self, system: str, prompt: str) -> Any:
        return self.target.chat.completions.create(**self._request(system, prompt, stream=True))

    async def _aopen(self, system: str, prompt: str) -> Any:
        return await self.target.chat.completions.create(
            **self._request(system, prompt, stream=True)
        )

    def _tally(self) -> _Tally:
        return _OpenAITally()


# --- Anthropic Messages -----------------------------------------------------------------------


def document_blocks(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """Each source as an Anthropic ``document`` block with citations on, in the order given."""
    blocks = []
    for n, source in enumerate(sources):
        if not isinstance(source, Source):
            raise UsageError(f"sources[{n}] must be a Source, got {type(source).__name__}")
        data = source.content or source.snippet
        if not data:
            raise UsageError(
                f"source {source.id!r} has no content or snippet to send as a document"
            )
        block: dict[str, Any] = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": data},
        }
        if source.title:
            block["title"] = source.title
        if source.url:
            block["context"] = source.url
        block["citations"] = {"enabled": True}
        blocks.append(block)
    return blocks


def _anthropic_text(message: Any) -> str:
    pieces = []
    for block in _field(message, "content") or ():
        if _field(block, "type") == "text":
            text = _field(block, "text")
            if isinstance(text, str):
                pieces.append(text)
    return "".join(pieces)


def _anthropic_tokens_in(usage: Any) -> int | None:
    return _total(
        _field(usage, "input_tokens"),
        _field(usage, "cache_creation_input_tokens"),
        _field(usage, "cache_read_input_tokens"),
    )


class _AnthropicTally(_Tally):
    def __init__(self) -> None:
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None

    def take(self, event: Any) -> str:
        kind = _field(event, "type")
        if kind == "content_block_delta":
            delta = _field(event, "delta")
            if _field(delta, "type") == "text_delta":
                text = _field(delta, "text")
                return text if isinstance(text, str) else ""
        elif kind == "message_start":
            found = _field(_field(event, "message"), "usage")
            self.tokens_in = _anthropic_tokens_in(found)
            self.tokens_out = _count(_field(found, "output_tokens"))
        elif kind == "message_delta":  # cumulative counts
            found = _field(event, "usage")
            self.tokens_in = _anthropic_tokens_in(found) or self.tokens_in
            self.tokens_out = _count(_field(found, "output_tokens")) or self.tokens_out
        return ""

    def reply(self, text: str, events: list[Any]) -> Reply:
        return Reply(text, self.tokens_in, self.tokens_out, raw=events)


class _AnthropicChat(_SDKChat):
    provider = "anthropic"
    native_citations = True

    def __init__(self, kind: LLMKind, model: str) -> None:
        super().__init__(kind, model, f"an {kind.class_name} client")

    def _request(self, system: str, content: str | list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": ANTHROPIC_MAX_TOKENS,
            "messages": [{"role": "user", "content": content}],
        }
        if system:
            request["system"] = system
        return request

    @staticmethod
    def _reply(message: Any) -> Reply:
        usage = _field(message, "usage")
        return Reply(
            text=_anthropic_text(message),
            tokens_in=_anthropic_tokens_in(usage),
            tokens_out=_count(_field(usage, "output_tokens")),
            raw=message,
        )

    def _create(self, request: dict[str, Any]) -> Any:
        if self.async_only:
            raise self._sync_only("complete")
        return self.target.messages.create(**request)

    def complete(self, system: str, prompt: str) -> Reply:
        return self._reply(self._create(self._request(system, prompt)))

    async def acomplete(self, system: str, prompt: str) -> Reply:
        if not self.async_only:
            return await super().acomplete(system, prompt)
        return self._reply(await self.target.messages.create(**self._request(system, prompt)))

    def complete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        content = [*document_blocks(sources), {"type": "text", "text": prompt}]
        return self._reply(self._create(self._request(system, content)))

    async def acomplete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        if not self.async_only:
            return await super().acomplete_native(system, prompt, sources)
        content = [*document_blocks(sources), {"type": "text", "text": prompt}]
        return self._reply(await self.target.messages.create(**self._request(system, content)))

    def _open(self, system: str, prompt: str) -> Any:
        return self.target.messages.create(**self._request(system, prompt), stream=True)

    async def _aopen(self, system: str, prompt: str) -> Any:
        return await self.target.messages.create(**self._request(system, prompt), stream=True)

    def _tally(self) -> _Tally:
        return _AnthropicTally()


# --- Gemini (google-genai) ---------------------------------------------------------------------


def _gemini_text(response: Any) -> str:
    candidates = _field(response, "candidates") or []
    if not candidates:
        return ""
    pieces = []
    for part in _field(_field(candidates[0], "content"), "parts") or ():
        text = _field(part, "text")
        if isinstance(text, str) and not _field(part, "thought"):
            pieces.append(text)
    return "".join(pieces)


def _gemini_tokens(usage: Any) -> tuple[int | None, int | None]:
    if usage is None:
        return None, None
    return (
        _count(_field(usage, "prompt_token_count", "promptTokenCount")),
        _total(
            _field(usage, "candidates_token_count", "candidatesTokenCount"),
            _field(usage, "thoughts_token_count", "thoughtsTokenCount"),
        ),
    )


class _GeminiTally(_Tally):
    def __init__(self) -> None:
        self.usage: Any = None

    def take(self, event: Any) -> str:
        self.usage = _field(event, "usage_metadata") or self.usage
        return _gemini_text(event)

    def reply(self, text: str, events: list[Any]) -> Reply:
        tokens_in, tokens_out = _gemini_tokens(self.usage)
        return Reply(text, tokens_in, tokens_out, raw=events)


class _GeminiChat(_SDKChat):
    provider = "gemini"

    def __init__(self, kind: LLMKind, model: str) -> None:
        label = "a google.genai.client.AsyncClient" if kind.async_only else "a google.genai Client"
        super().__init__(kind, model, label)

    def _request(self, system: str, prompt: str) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "contents": prompt}
        if system:
            request["config"] = {"system_instruction": system}
        return request

    @property
    def _aio(self) -> Any:
        return self.target.models if self.async_only else self.target.aio.models

    @staticmethod
    def _reply(response: Any) -> Reply:
        tokens_in, tokens_out = _gemini_tokens(_field(response, "usage_metadata"))
        return Reply(_gemini_text(response), tokens_in, tokens_out, raw=response)

    def complete(self, system: str, prompt: str) -> Reply:
        if self.async_only:
            raise self._sync_only("complete")
        return self._reply(self.target.models.generate_content(**self._request(system, prompt)))

    async def acomplete(self, system: str, prompt: str) -> Reply:
        return self._reply(await self._aio.generate_content(**self._request(system, prompt)))

    def _streams_async(self) -> bool:
        return True  # a sync Client has its async twin at .aio

    def _open(self, system: str, prompt: str) -> Any:
        return self.target.models.generate_content_stream(**self._request(system, prompt))

    async def _aopen(self, system: str, prompt: str) -> Any:
        return await self._aio.generate_content_stream(**self._request(system, prompt))

    def _tally(self) -> _Tally:
        return _GeminiTally()


# --- LangChain ---------------------------------------------------------------------------------


def _content_text(content: Any) -> str:
    """The text of a LangChain message's content: a string, or text blocks (and strings)."""
    if isinstance(content, str):
        return content
    pieces = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                pieces.append(block)
            elif isinstance(block, Mapping) and block.get("type") in ("text", None):
                text = block.get("text")
                if isinstance(text, str):
                    pieces.append(text)
    return "".join(pieces)


def _langchain_usage(message: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if not isinstance(usage, Mapping):
        return None, None
    return _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))


def _merged(chunks: list[Any]) -> Any:
    """LangChain's own merge of stream chunks (``AIMessageChunk + [chunks]``), else the last."""
    if not chunks:
        return None
    try:
        return chunks[0] + chunks[1:] if len(chunks) > 1 else chunks[0]
    except Exception:
        return chunks[-1]


class _LangChainChat(ChatModel):
    provider = "langchain"

    def __init__(self, kind: LLMKind) -> None:
        super().__init__(kind.target, model=kind.model, label=f"LangChain {kind.class_name}")
        self.native_citations = kind.class_name in ("ChatAnthropic", "ChatAnthropicVertex")

    @staticmethod
    def _input(system: str, content: str | list[dict[str, Any]]) -> list[tuple[str, Any]]:
        head: list[tuple[str, Any]] = [("system", system)] if system else []
        return [*head, ("human", content)]

    @staticmethod
    def _reply(message: Any) -> Reply:
        tokens_in, tokens_out = _langchain_usage(message)
        text = _content_text(getattr(message, "content", message))
        return Reply(text, tokens_in, tokens_out, raw=message)

    def complete(self, system: str, prompt: str) -> Reply:
        return self._reply(self.target.invoke(self._input(system, prompt)))

    async def acomplete(self, system: str, prompt: str) -> Reply:
        return self._reply(await self.target.ainvoke(self._input(system, prompt)))

    @staticmethod
    def _chunk(chunk: Any, usage: list[int | None]) -> str:
        tokens_in, tokens_out = _langchain_usage(chunk)
        if tokens_in is not None:
            usage[0] = (usage[0] or 0) + tokens_in
        if tokens_out is not None:
            usage[1] = (usage[1] or 0) + tokens_out
        return _content_text(getattr(chunk, "content", chunk))

    def stream(self, system: str, prompt: str) -> Iterator[str | Reply]:
        parts: list[str] = []
        chunks: list[Any] = []
        usage: list[int | None] = [None, None]
        for chunk in self.target.stream(self._input(system, prompt)):
            chunks.append(chunk)
            text = self._chunk(chunk, usage)
            if text:
                parts.append(text)
                yield text
        yield Reply("".join(parts), usage[0], usage[1], raw=_merged(chunks))

    async def astream(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        parts: list[str] = []
        chunks: list[Any] = []
        usage: list[int | None] = [None, None]
        async for chunk in self.target.astream(self._input(system, prompt)):
            chunks.append(chunk)
            text = self._chunk(chunk, usage)
            if text:
                parts.append(text)
                yield text
        yield Reply("".join(parts), usage[0], usage[1], raw=_merged(chunks))

    def _native_reply(self, message: Any) -> Reply:
        """The reply, its ``raw`` the Anthropic ``Message`` the AIMessage's blocks came from."""
        reply = self._reply(message)
        metadata = getattr(message, "response_metadata", None) or {}
        fields = {
            "id": metadata.get("id") or getattr(message, "id", None),
            "model": metadata.get("model") or metadata.get("model_name") or self.model,
            "stop_reason": metadata.get("stop_reason"),
        }
        content = to_data(getattr(message, "content", ""))
        raw = ANTHROPIC.from_content(content, {k: v for k, v in fields.items() if v})
        usage = getattr(message, "usage_metadata", None)
        if raw is not None and isinstance(usage, Mapping):
            raw = {
                **raw,
                "usage": {
                    "input_tokens": usage.get("input_tokens"),
                    "output_tokens": usage.get("output_tokens"),
                },
            }
        return Reply(reply.text, reply.tokens_in, reply.tokens_out, raw=raw)

    def _native_input(self, system: str, prompt: str, sources: Sequence[Source]) -> list[Any]:
        if not self.native_citations:
            super().complete_native(system, prompt, sources)  # raises
        content = [*document_blocks(sources), {"type": "text", "text": prompt}]
        return self._input(system, content)

    def complete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        request = self._native_input(system, prompt, sources)
        return self._native_reply(self.target.invoke(request))

    async def acomplete_native(self, system: str, prompt: str, sources: Sequence[Source]) -> Reply:
        request = self._native_input(system, prompt, sources)
        return self._native_reply(await self.target.ainvoke(request))


# --- LlamaIndex --------------------------------------------------------------------------------


def _llamaindex_usage(response: Any) -> tuple[int | None, int | None]:
    """Token counts of a LlamaIndex response: from its provider ``raw``, else its kwargs."""
    raw = getattr(response, "raw", None)
    data = to_data(raw) if raw is not None else None
    if isinstance(data, Mapping):
        usage = _field(data, "usage")
        if isinstance(usage, Mapping):
            tokens_in = _field(usage, "prompt_tokens", "input_tokens")
            return _count(tokens_in), _count(_field(usage, "completion_tokens", "output_tokens"))
        found = _field(data, "usage_metadata", "usageMetadata")
        if isinstance(found, Mapping):
            return _gemini_tokens(found)
    extra = getattr(response, "additional_kwargs", None)
    if isinstance(extra, Mapping):
        return _count(extra.get("prompt_tokens")), _count(extra.get("completion_tokens"))
    return None, None


def _llamaindex_text(response: Any) -> str:
    message = getattr(response, "message", None)
    text = getattr(message, "content", None) if message is not None else None
    if text is None:
        text = getattr(response, "text", None)
    return text if isinstance(text, str) else ""


class _LlamaIndexChat(ChatModel):
    provider = "llamaindex"

    def __init__(self, kind: LLMKind) -> None:
        super().__init__(kind.target, model=kind.model, label=f"LlamaIndex {kind.class_name}")
        self._chat = callable(getattr(kind.target, "chat", None))

    @staticmethod
    def _messages(system: str, prompt: str) -> list[Any]:
        # Imported on first use: only a LlamaIndex LLM gets here, so LlamaIndex is installed.
        from llama_index.core.llms import ChatMessage, MessageRole

        head = [ChatMessage(role=MessageRole.SYSTEM, content=system)] if system else []
        return [*head, ChatMessage(role=MessageRole.USER, content=prompt)]

    @staticmethod
    def _prompt(system: str, prompt: str) -> str:
        return f"{system}\n\n{prompt}" if system else prompt

    @staticmethod
    def _reply(response: Any, text: str | None = None) -> Reply:
        tokens_in, tokens_out = _llamaindex_usage(response)
        whole = _llamaindex_text(response) if text is None else text
        return Reply(whole, tokens_in, tokens_out, raw=response)

    def complete(self, system: str, prompt: str) -> Reply:
        if self._chat:
            return self._reply(self.target.chat(self._messages(system, prompt)))
        return self._reply(self.target.complete(self._prompt(system, prompt)))

    async def acomplete(self, system: str, prompt: str) -> Reply:
        if self._chat:
            return self._reply(await self.target.achat(self._messages(system, prompt)))
        return self._reply(await self.target.acomplete(self._prompt(system, prompt)))

    def stream(self, system: str, prompt: str) -> Iterator[str | Reply]:
        if self._chat:
            responses = self.target.stream_chat(self._messages(system, prompt))
        else:
            responses = self.target.stream_complete(self._prompt(system, prompt))
        parts: list[str] = []
        last = None
        for response in responses:
            last = response
            delta = getattr(response, "delta", None)
            if isinstance(delta, str) and delta:
                parts.append(delta)
                yield delta
        yield self._reply(last, "".join(parts))

    async def astream(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        if self._chat:
            responses = await self.target.astream_chat(self._messages(system, prompt))
        else:
            responses = await self.target.astream_complete(self._prompt(system, prompt))
        parts: list[str] = []
        last = None
        async for response in responses:
            last = response
            delta = getattr(response, "delta", None)
            if isinstance(delta, str) and delta:
                parts.append(delta)
                yield delta
        yield self._reply(last, "".join(parts))


# --- callables ---------------------------------------------------------------------------------


class _CallableChat(ChatModel):
    """A function ``str -> str`` (or an iterator of str: a stream), sync or ``async def``.

    It gets one prompt: the system prompt, a blank line, and the user prompt (the prompt alone
    when there is no system prompt).
    """

    provider = "callable"

    def __init__(self, kind: LLMKind) -> None:
        name = getattr(kind.target, "__qualname__", None) or kind.class_name
        super().__init__(kind.target, model=kind.model, label=f"the callable {name}")
        self.async_only = kind.async_only

    @staticmethod
    def _prompt(system: str, prompt: str) -> str:
        return f"{system}\n\n{prompt}" if system else prompt

    def _wrong(self, result: object) -> UsageError:
        return UsageError(
            f"{self._label} must return a str or an iterator of str, got {type(result).__name__}"
        )

    def _check(self, piece: object) -> str:
        if not isinstance(piece, str):
            raise UsageError(f"{self._label} streamed a {type(piece).__name__}, not a str")
        return piece

    def _call(self, system: str, prompt: str, method: str) -> Any:
        if self.async_only:
            raise self._sync_only(method)
        result = self.target(self._prompt(system, prompt))
        if inspect.isawaitable(result) or isinstance(result, AsyncIterator):
            _discard(result)
            raise self._sync_only(method)
        return result

    def complete(self, system: str, prompt: str) -> Reply:
        result = self._call(system, prompt, "complete")
        if isinstance(result, str):
            return Reply(result)
        if isinstance(result, Iterator):
            return Reply("".join(self._check(piece) for piece in result))
        raise self._wrong(result)

    def stream(self, system: str, prompt: str) -> Iterator[str | Reply]:
        result = self._call(system, prompt, "stream")
        if not isinstance(result, (str, Iterator)):
            raise self._wrong(result)
        return self._pieces(result)

    def _pieces(self, result: str | Iterator[Any]) -> Iterator[str | Reply]:
        if isinstance(result, str):
            if result:
                yield result
            yield Reply(result)
            return
        parts = []
        for piece in result:
            text = self._check(piece)
            if text:
                parts.append(text)
                yield text
        yield Reply("".join(parts))

    async def _acall(self, system: str, prompt: str) -> Any:
        text = self._prompt(system, prompt)
        if self.async_only:
            result = self.target(text)
        else:  # a sync function runs in a thread; what it returns may still be awaitable
            result = await asyncio.to_thread(self.target, text)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def acomplete(self, system: str, prompt: str) -> Reply:
        result = await self._acall(system, prompt)
        if isinstance(result, str):
            return Reply(result)
        if isinstance(result, AsyncIterator):
            return Reply("".join([self._check(piece) async for piece in result]))
        if isinstance(result, Iterator):
            pieces = result
            return Reply(await asyncio.to_thread(lambda: "".join(map(self._check, pieces))))
        raise self._wrong(result)

    async def astream(self, system: str, prompt: str) -> AsyncIterator[str | Reply]:
        result = await self._acall(system, prompt)
        if isinstance(result, str):
            for item in self._pieces(result):
                yield item
            return
        if isinstance(result, Iterator):
            sync = result
            async for item in _threaded(lambda: self._pieces(sync)):
                yield item
            return
        if not isinstance(result, AsyncIterator):
            raise self._wrong(result)
        parts = []
        async for piece in result:
            text = self._check(piece)
            if text:
                parts.append(text)
                yield text
        yield Reply("".join(parts))


def _discard(result: object) -> None:
    """Close a coroutine or async generator never run, so Python does not warn about it."""
    close = getattr(result, "close", None)
    if inspect.iscoroutine(result) and callable(close):
        close()


# --- the entry point ---------------------------------------------------------------------------


def as_chat_model(llm: object, *, model: str | None = None) -> ChatModel:
    """The `ChatModel` for what a caller passed as ``llm``.

    Args:
        llm: A LangChain chat model, a LlamaIndex LLM, an ``openai.OpenAI`` /
            ``anthropic.Anthropic`` / ``google.genai.Client`` client (or an async one), a
            ``(client, "model-name")`` tuple, or a callable ``str -> str`` (sync or async; one
            returning an iterator of str streams). A `ChatModel` is returned as it is.
        model: The model name; required for an SDK client (unless the tuple names it). For a
            framework model or a callable it is only a label.

    Raises:
        UsageError: `llm` is none of these, or an SDK client comes without a model.
    """
    if isinstance(llm, ChatModel):
        return llm
    kind = llm_kind(llm, model=model)
    if kind.kind == "langchain":
        return _LangChainChat(kind)
    if kind.kind == "llamaindex":
        return _LlamaIndexChat(kind)
    if kind.kind == "callable":
        return _CallableChat(kind)
    if not kind.model:
        raise UsageError(
            f"an {kind.class_name} client needs a model: pass model='...' or a "
            f"(client, 'model-name') tuple"
        )
    if kind.kind == "openai":
        return _OpenAIChat(kind, kind.model)
    if kind.kind == "anthropic":
        return _AnthropicChat(kind, kind.model)
    return _GeminiChat(kind, kind.model)
