"""Azure OpenAI On Your Data: ``[docN]`` markers into the documents a completion's context lists.

An On Your Data answer is a Chat Completions response (``data_sources`` in the request) whose
assistant message carries a ``context``:

- ``citations``: the retrieved chunks the answer was written from, each ``{"content", "title",
  "url", "filepath", "chunk_id"}`` (and ``rerank_score`` in newer API versions). ``content`` is
  the chunk's text, often led by the document's title; ``url`` may be null or a storage URL;
  ``filepath`` may be null.
- ``intent``: the search queries the service derived from the conversation, as a JSON-encoded
  list of strings (a string holding ``["Who is DRI?", "Define DRI"]``).
- ``all_retrieved_documents`` (when ``include_contexts`` asks for it): every document the
  searches returned, with ``search_queries``, ``data_source_index`` and ``filter_reason``.

The answer text writes ``[doc1]``, ``[doc2]`` where it uses a chunk: ``[docN]`` is
``context.citations[N - 1]``, counted from 1, often glued to the word before it
(``challenges[doc2].``) or to another marker (``[doc3][doc6]``). Offsets are not given by the
API: each marker cites the claim it closes (the markers package's claim rule), in Python str
indices of the text as received; the markers stay in the text, with ``marker_span`` on them.

Each citation becomes a source (kind ``document``): its title, its URL when it is an http(s)
one (any other in ``extras["url"]``), its chunk as ``content``, and ``filepath``, ``chunk_id``,
``rerank_score`` and any other field in ``extras``; a citation naming one chunk quotes it.
Chunks of one document (same URL, or same file path without a URL) are one source.
``intent`` goes to ``extras["intent"]`` (decoded), ``all_retrieved_documents`` to
``extras["all_retrieved_documents"]`` (they include documents the service filtered out, so
they are not sources); ``extras["grounded_effective"]`` says whether retrieval returned
documents and ``extras["tool_calls"]`` counts the intent's queries (at least one when documents
came back). A stream sends the ``context`` in its first chunk's ``delta`` and the
text in later ones; it is rebuilt into the final completion and read the same way.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from unicite._marker_syntax import marker_spans, read_token
from unicite.providers._base import Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._marker_cites import cite_markers

__all__ = ["AZURE_ON_YOUR_DATA", "AzureOnYourDataProvider"]

NAME = "azure"
_CONTEXT_KEYS = frozenset({"citations", "intent", "all_retrieved_documents"})
_CITATION_FIELDS = frozenset({"content", "title", "url"})
_DROPPED_NOTE = (
    "the text writes [docN] markers but the response carries no message.context (the "
    "documents they name): left uncited; LangChain's AzureChatOpenAI drops the context, and "
    "a stream sends it in its first chunk only (read the whole stream)"
)


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _has_doc_markers(text: str) -> bool:
    """Whether `text` writes a ``[docN]`` marker (outside code, not after a name from code)."""
    if "[doc" not in text:
        return False
    spans = marker_spans(text, 0, len(text))
    return any(
        (token := read_token(text, a, b)) is not None and token.kind == "docs" for a, b in spans
    )


def _is_context(value: object) -> bool:
    return isinstance(value, Mapping) and any(key in value for key in _CONTEXT_KEYS)


def _candidate(options: Mapping[str, Any]) -> int:
    candidate = options.get("candidate", 0)
    return candidate if isinstance(candidate, int) and not isinstance(candidate, bool) else 0


def _choice(
    builder: AnswerBuilder, data: Mapping[str, Any], candidate: int
) -> tuple[Mapping[str, Any] | None, str]:
    choices = builder.read.items(data, "choices", "completion")
    for n, choice in enumerate(choices):
        index = choice.get("index") if isinstance(choice, Mapping) else None
        if not isinstance(index, bool) and index == candidate:
            return choice, f"completion.choices[{n}]"
    if 0 <= candidate < len(choices) and isinstance(choices[candidate], Mapping):
        return choices[candidate], f"completion.choices[{candidate}]"
    builder.note(f"completion.choices: no choice {candidate}")
    return None, "completion.choices"


def _document(builder: AnswerBuilder, item: object, rank: int, path: str) -> str | None:
    """One ``context.citations`` entry as a source; None (with a diagnostic) when unusable."""
    if not isinstance(item, Mapping):
        builder.note(f"{path}: expected a citation object, got {type(item).__name__}")
        return None
    read = builder.read
    content = read.text(item, "content", path)
    title = read.text(item, "title", path)
    url = read.text(item, "url", path)
    filepath = read.text(item, "filepath", path)
    extras = {k: v for k, v in item.items() if k not in _CITATION_FIELDS and v is not None}
    if url and not _is_http(url):
        extras["url"] = url
        url = None
    if not (content or title or url or filepath):
        builder.note(f"{path}: citation without content, title, url or filepath")
        return None
    return builder.add_source(
        {
            "kind": "document",
            "url": url or None,
            "title": title or filepath or None,
            "content": content or None,
            "provider_id": None if url else filepath or None,
            "rank": rank,
            "extras": extras,
            "raw": item,
        }
    )


def _intent(builder: AnswerBuilder, context: Mapping[str, Any], path: str) -> list[str] | None:
    """The queries ``context.intent`` lists, decoded; kept as given (with a note) otherwise."""
    value = context.get("intent")
    if value is None:
        return None
    decoded: object = value
    if isinstance(value, str):
        if not value.strip():
            return []
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            builder.note(f"{path}.intent: not a JSON list of queries; kept as given")
            builder.extras["intent"] = value
            return None
    if isinstance(decoded, str):
        decoded = [decoded]
    if isinstance(decoded, list) and all(isinstance(q, str) for q in decoded):
        builder.extras["intent"] = decoded
        return list(decoded)
    builder.note(f"{path}.intent: expected a list of query strings; kept as given")
    builder.extras["intent"] = value
    return None


def _read_context(
    builder: AnswerBuilder, context: Mapping[str, Any], path: str
) -> tuple[list[str | None], list[str | None]]:
    """Sources of ``context.citations`` (by position) and their chunks; the rest to extras."""
    read = builder.read
    numbered: list[str | None] = []
    chunks: list[str | None] = []
    for n, item in enumerate(read.items(context, "citations", path)):
        numbered.append(_document(builder, item, n, f"{path}.citations[{n}]"))
        content = item.get("content") if isinstance(item, Mapping) else None
        chunks.append(content if isinstance(content, str) and content else None)
    queries = _intent(builder, context, path)
    retrieved = read.items(context, "all_retrieved_documents", path)
    if retrieved:
        builder.extras["all_retrieved_documents"] = retrieved
    others = {k: v for k, v in context.items() if k not in _CONTEXT_KEYS}
    if others:
        builder.extras["context"] = others
    found = any(sid is not None for sid in numbered) or bool(retrieved)
    builder.grounded = True
    builder.extras["grounded_effective"] = found
    # One search per query the intent lists; at least one when documents came back.
    builder.extras["tool_calls"] = max(len(queries or ()), int(found))
    return numbered, chunks


def _read_completion(data: Mapping[str, Any], builder: AnswerBuilder, candidate: int) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "completion")
    completion_id = read.text(data, "id", "completion")
    if completion_id:
        builder.extras["response_id"] = completion_id
    choice, path = _choice(builder, data, candidate)
    if choice is None:
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
    context = read.obj(message, "context", mpath)
    numbered: list[str | None] = []
    chunks: list[str | None] = []
    if context is not None:
        numbered, chunks = _read_context(builder, context, f"{mpath}.context")
    builder.append_text(text)
    if context is None:
        if _has_doc_markers(text):
            builder.note(_DROPPED_NOTE)
        return
    cite_markers(
        builder,
        text,
        lambda n: numbered[n - 1] if 1 <= n <= len(numbered) else None,
        f"{len(numbered)} citation(s) in message.context",
        kind="docs",
        quote_of=lambda n: chunks[n - 1] if 1 <= n <= len(chunks) else None,
        skip_empty=True,
    )


class _AzureStream(RebuildingStream):
    """Accumulates chunks (the first holding ``delta.context``) into the final completion.

    A marker's claim depends on the text around it, so every citation is announced at the
    chunk with the finish reason.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._candidate = _candidate(options)
        self._head: dict[str, Any] = {}
        self._parts: list[str] = []
        self._context: dict[str, Any] | None = None
        self._finish: Any = None

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one chunk; True at the first one with a finish reason."""
        for key in ("id", "model", "created"):
            value = event.get(key)
            if value and key not in self._head:
                self._head[key] = value
        choices = event.get("choices")
        if choices is not None and not isinstance(choices, list):
            self.diagnostics.append(f"chunk choices: expected a list, got {type(choices).__name__}")
            return False
        finished = self._finish is not None
        for choice in choices or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != self._candidate:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                content = delta.get("content")
                if isinstance(content, str):
                    self._parts.append(content)
                elif content is not None:
                    self.diagnostics.append(
                        f"chunk delta content: expected a string, got {type(content).__name__}"
                    )
                context = delta.get("context")
                if isinstance(context, Mapping):
                    # A later context (none seen in practice) adds to the first, field by field.
                    self._context = {**(self._context or {}), **copy.deepcopy(dict(context))}
                elif context is not None:
                    self.diagnostics.append(
                        f"chunk delta context: expected an object, got {type(context).__name__}"
                    )
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
        return not finished and self._finish is not None

    def response(self) -> dict[str, Any]:
        """The ``chat.completion`` the chunks so far add up to."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._parts)}
        if self._context is not None:
            message["context"] = self._context
        return {
            **self._head,
            "object": "chat.completion",
            "choices": [
                {"index": self._candidate, "message": message, "finish_reason": self._finish}
            ],
        }

    def problems(self) -> list[str]:
        """What a stream without its last chunk lacks."""
        if self._finish is None:
            return ["stream ended before a chunk with a finish_reason"]
        return []


class AzureOnYourDataProvider(Provider):
    """Azure OpenAI On Your Data: ``message.context.citations`` and ``[docN]`` markers."""

    name = NAME

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A Chat Completions response whose message has an On Your Data ``context``."""
        choices = data.get("choices")
        if not isinstance(choices, list):
            return False
        for choice in choices:
            message = choice.get("message") if isinstance(choice, Mapping) else None
            if isinstance(message, Mapping) and _is_context(message.get("context")):
                return True
        return False

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A completion chunk whose ``delta`` carries the ``context`` (the stream's first).

        Only that chunk: the text chunks after it look like any Chat Completions chunk, and
        the stream is read by the reader its first recognised chunk chose.
        """
        choices = event.get("choices")
        if not isinstance(choices, list):
            return False
        for choice in choices:
            delta = choice.get("delta") if isinstance(choice, Mapping) else None
            if isinstance(delta, Mapping) and _is_context(delta.get("context")):
                return True
        return False

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final On Your Data completion."""
        _read_completion(data, builder, _candidate(options))

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one chunk stream."""
        return _AzureStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The completion a framework's text answer came from, with the context it kept.

        ``fields``: ``id``, ``model``, ``finish_reason`` and ``context`` (the message's, when
        the framework kept it). Without a context, reading says the markers were left
        uncited because the documents they name are missing.
        """
        if not self.detect_content(content, fields):
            return None
        text = content if isinstance(content, str) else _joined(content)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        context = fields.get("context")
        if isinstance(context, Mapping):
            message["context"] = context
        response: dict[str, Any] = {
            key: fields[key] for key in ("id", "model") if isinstance(fields.get(key), str)
        }
        finish = fields.get("finish_reason")
        response["object"] = "chat.completion"
        response["choices"] = [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish if isinstance(finish, str) else None,
            }
        ]
        return response

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """A kept ``context``, or text writing ``[docN]`` markers (this API's own style).

        Frameworks that keep only the message text (LangChain's ``AzureChatOpenAI``) drop the
        context; their answer is still this API's, and reading it says why nothing is cited.
        """
        if _is_context(fields.get("context")):
            return True
        return _has_doc_markers(content if isinstance(content, str) else _joined(content))


def _joined(content: list[Any]) -> str:
    """The text of a list of content blocks (strings or ``{"type": "text", "text"}``)."""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


AZURE_ON_YOUR_DATA = AzureOnYourDataProvider()
"""The Azure OpenAI On Your Data reader registered with the dispatcher."""
