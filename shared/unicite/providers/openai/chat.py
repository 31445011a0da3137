"""OpenAI Chat Completions: the ``url_citation`` annotations of search models, and chunk streams.

Reads plain JSON (SDK objects arrive already dumped), never the SDK's own types.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers.openai._annotations import (
    NAME,
    ClaimsKeptStream,
    annotation,
    announce_built,
    citation_key,
    is_placeholder,
)
from unicite.providers.openai._content import chat_completion, is_chat_content
from unicite.providers.openai._inline import PRIVATE_CHARS, read_part
from unicite.providers.openai._xai import XAI, all_citations, is_xai_completion

__all__ = ["OPENAI_CHAT", "OpenAIChatProvider"]


def _names(index: object, candidate: int) -> bool:
    """Whether a choice's ``index`` is `candidate`: ``false`` is none, though ``False == 0``."""
    return not isinstance(index, bool) and index == candidate


def _choice(
    builder: AnswerBuilder, data: Mapping[str, Any], candidate: int
) -> tuple[Mapping[str, Any] | None, str]:
    choices = builder.read.items(data, "choices", "completion")
    for n, choice in enumerate(choices):
        if isinstance(choice, Mapping) and _names(choice.get("index"), candidate):
            return choice, f"completion.choices[{n}]"
    if 0 <= candidate < len(choices) and isinstance(choices[candidate], Mapping):
        return choices[candidate], f"completion.choices[{candidate}]"
    builder.note(f"completion.choices: no choice {candidate}")
    return None, "completion.choices"


def _read_completion(data: Mapping[str, Any], builder: AnswerBuilder, candidate: int) -> None:
    read = builder.read
    xai = is_xai_completion(data)
    if xai:
        builder.provider = XAI
    builder.model = read.text(data, "model", "completion")
    completion_id = read.text(data, "id", "completion")
    if completion_id:
        builder.extras["response_id"] = completion_id
    if builder.model and ("search" in builder.model or builder.model.endswith(":online")):
        builder.grounded = True  # search models (and OpenRouter's :online) search first
    choice, path = _choice(builder, data, candidate)
    if choice is None:
        if xai:
            all_citations(builder, data, "completion")
        return
    finish_reason = read.text(choice, "finish_reason", path)
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason
    message = read.obj(choice, "message", path)
    if message is None:
        builder.note(f"{path}.message is missing")
        return
    mpath = f"{path}.message"
    text = read.text(message, "content", mpath) or ""
    refusal = read.text(message, "refusal", mpath)
    if refusal:
        builder.extras["refusal"] = refusal
    annotations = read.items(message, "annotations", mpath)
    if annotations:
        builder.grounded = True
    for cite in read_part(builder, text, annotations, mpath, links=xai):
        # Chat Completions show no search calls: nothing tells what a private marker names.
        builder.note(f"{cite.path}: a completion lists no search results; left uncited")
    if xai:
        all_citations(builder, data, "completion")
    _grounding(builder, annotations, data.get("citations") if xai else None)


def _grounding(builder: AnswerBuilder, annotations: list[Any], urls: object = None) -> None:
    """``extras["grounded_effective"]`` for a completion; Chat Completions show no tool calls.

    True when the message carries ``url_citation`` annotations (placeholders included), or an
    xAI completion a non-empty ``citations`` list (its Live Search found sources); False when a
    search model (``*search*``, OpenRouter's ``*:online``) answered without any, or an xAI
    completion's ``citations`` is empty; unset otherwise (whether a search was asked for is
    not in the response). ``extras["tool_calls"]`` is never set: the API does not say how many
    searches ran.
    """
    cited = any(isinstance(a, Mapping) and a.get("type") == "url_citation" for a in annotations)
    model = builder.model or ""
    if isinstance(urls, list):
        builder.extras["grounded_effective"] = cited or bool(urls)
    elif cited or "search" in model or model.endswith(":online"):
        builder.extras["grounded_effective"] = cited


class OpenAIChatProvider(Provider):
    """Chat Completions, with the ``url_citation`` annotations of search models.

    xAI's completions (a Grok model; ``answer.provider`` says ``"xai"``) are read here too:
    the top-level ``citations`` list of its (deprecated) Live Search are sources, and each
    ``[[n]](url)`` link in the text cites the claim before it (see
    `unicite.providers.openai._inline.cite_links`); their stream sends ``citations`` in its
    last chunk.
    """

    name = NAME
    api = "chat"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` is a Chat Completions response."""
        if data.get("object") == "chat.completion":
            return True
        choices = data.get("choices")
        return (
            isinstance(choices, list)
            and bool(choices)
            and isinstance(choices[0], Mapping)
            and "message" in choices[0]
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Whether `event` is a Chat Completions chunk (or the SDK helper's ``chunk`` event)."""
        if event.get("object") == "chat.completion.chunk":
            return True
        chunk = event.get("chunk")
        return (
            event.get("type") == "chunk"
            and isinstance(chunk, Mapping)
            and chunk.get("object") == "chat.completion.chunk"
        )

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final Chat Completions response."""
        candidate = options.get("candidate", 0)
        _read_completion(data, builder, candidate if isinstance(candidate, int) else 0)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one Chat Completions chunk stream."""
        return _ChatStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The completion a framework's text answer came from.

        Frameworks keep a completion's message as its text and drop its ``annotations``; a
        search model (its ``model`` names one) places each annotation on a Markdown link it
        writes, so the links give them back (``extras["recovered_from"] = "inline_link"``).
        ``fields``: ``id``, ``model``, ``finish_reason``, ``refusal``.
        """
        return chat_completion(content, fields) if is_chat_content(content, fields) else None


class _ChatStream(ClaimsKeptStream):
    """Accumulates chunks into the completion they add up to."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        candidate = options.get("candidate", 0)
        self._candidate = candidate if isinstance(candidate, int) else 0
        self._head: dict[str, Any] = {}
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._annotations: list[Any] = []
        self._finish_reason: Any = None
        self._announced = 0
        self._cited = 0  # citations announced
        # Private-use markers move the offsets after them, placeholder annotations are read
        # from the whole text: such a stream announces its citations when it ends.
        self._whole = False
        self._context_noted = False

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one chunk; True when it may have settled citations."""
        if event.get("object") != "chat.completion.chunk":
            chunk = event.get("chunk") if event.get("type") == "chunk" else None
            if not isinstance(chunk, Mapping):
                # The SDK's ChatCompletionStream helper events (content.delta, ...) repeat
                # what its `chunk` events already carry.
                return False
            event = chunk
        for key in ("id", "model", "created"):
            if key in event and key not in self._head:
                self._head[key] = event[key]
        if event.get("citations") is not None:
            # xAI sends the URLs its search met in the last chunk.
            self._head["citations"] = copy.deepcopy(event["citations"])
        # xAI's links are read from the whole text (see OpenAIChatProvider).
        self._whole = self._whole or is_xai_completion(event)
        choices = event.get("choices")
        if not isinstance(choices, list):
            self.diagnostics.append("chat.completion.chunk: choices is not a list")
            return False
        for n, choice in enumerate(choices):
            if not isinstance(choice, Mapping):
                self.diagnostics.append(f"chat.completion.chunk.choices[{n}]: not an object")
                continue
            index = choice.get("index", 0)
            if index != self._candidate:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                for key, target in (("content", self._content), ("refusal", self._refusal)):
                    value = delta.get(key)
                    if isinstance(value, str):
                        target.append(value)
                        self._whole = self._whole or any(c in value for c in PRIVATE_CHARS)
                    elif value is not None:
                        self.diagnostics.append(f"chunk delta.{key} is not a string")
                annotations = delta.get("annotations")
                if isinstance(annotations, list):
                    self._annotations.extend(copy.deepcopy(annotations))
                    self._whole = self._whole or any(is_placeholder(a) for a in annotations)
                elif annotations is not None:
                    self.diagnostics.append("chunk delta.annotations is not a list")
                if isinstance(delta.get("context"), Mapping) and not self._context_noted:
                    # Azure On Your Data sends its context in the first chunk; one that comes
                    # later reaches a stream already read as plain Chat Completions.
                    self._context_noted = True
                    self.diagnostics.append(
                        "a chunk carries an Azure On Your Data message context after the "
                        "stream's first chunk: its documents ([docN] markers) are not read"
                    )
            if choice.get("finish_reason") is not None:
                self._finish_reason = choice["finish_reason"]
        return True

    def response(self) -> dict[str, Any]:
        """The completion the chunks so far add up to."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._content),
            "refusal": "".join(self._refusal) or None,
            "annotations": self._annotations,
        }
        return {
            **self._head,
            "object": "chat.completion",
            "choices": [
                {"index": self._candidate, "message": message, "finish_reason": self._finish_reason}
            ],
        }

    def announce(self) -> list[CitationEvent]:
        """The annotations whose claim the text so far decides, in order."""
        if self._whole:
            return super().announce() if self._finish_reason is not None else []
        if self._announced >= len(self._annotations):
            return []
        text = "".join(self._content)
        complete = self._finish_reason is not None
        scratch = AnswerBuilder(NAME)
        scratch.append_text(text)
        while self._announced < len(self._annotations):
            ann = self._annotations[self._announced]
            if not annotation(scratch, ann, text, 0, "stream", complete=complete):
                break
            self._announced += 1
        events = announce_built(scratch, self._cited)
        self._cited += len(events)
        for item in events:
            self._told[citation_key(item.citation)] += 1
        return events

    def problems(self) -> list[str]:
        """What a stream without its last chunk lacks."""
        return [] if self._finish_reason is not None else ["stream ended before a finish_reason"]


OPENAI_CHAT = OpenAIChatProvider()
"""Reader of OpenAI Chat Completions responses and their chunk streams."""
