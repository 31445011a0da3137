"""Mistral: chat completions with ``reference`` chunks, and Agents / Conversations answers.

Mistral's answers put their citations between the text chunks of a message's ``content``:

- **Chat completions** (``/v1/chat/completions``, and ``/v1/agents/completions``, which answers
  in the same shape): ``choices[0].message.content`` is a string, or a list of chunks:
  ``{"type": "text", "text"}``, ``{"type": "reference", "reference_ids": [...]}``,
  ``{"type": "thinking", "thinking": [...]}``, images and files. A reference chunk cites the
  claim before it: the sentence (or the part of it after an earlier citation) that ends where
  the chunk stands, found by the claim rule markers use (`unicite._segment.claim_spans`),
  exactly as a ``[n]`` marker at that place would. Its ids name documents the caller gave the
  model with ``reference_id``s (in tool results, as Mistral's citation guide does): they are
  in the request, not in the response, so each becomes a ``document`` source named by its id
  (``provider_id`` ``"reference:<id>"``, ``extras["reference_id"]``) with no title or URL;
  `unicite.cite` with the documents, or a framework adapter that saw the tool results, gives
  them theirs. A reference chunk that carries its own ``text`` cites that text.
- **Agents / Conversations** (``/v1/conversations``, ``/v1/agents/...``): ``outputs`` holds
  ``message.output`` entries, whose content chunks include
  ``{"type": "tool_reference", "tool": "web_search", "title", "url", "favicon",
  "description"}`` after the text they support, and ``tool.execution`` entries (the built-in
  tools that ran). Each tool reference is a source (a web page when it has a URL, else a
  ``document`` for the ``document_library`` connector, a ``tool`` result otherwise) and cites
  the text of its message since the reference chunk before it (a run of references shares
  that text), without the whitespace around it and the punctuation that closed the sentence
  cited before (``". Next"`` cites ``"Next"``). A reference with no text before it (or, in a
  chat completion, one that would claim the text after it) is left uncited, with a
  diagnostic.

Offsets: Mistral gives none. A citation's place is where its chunk stands among the text
chunks; the answer text is the text chunks (and a reference's own text) joined in order,
across messages, and every offset is a Python ``str`` index (code points) into it. Thinking
chunks are not answer text: their text is kept in ``extras["thinking"]`` (the references they
hold in ``extras["thinking_references"]``, uncited); images and other chunks are kept in
``extras["content_chunks"]``.

Streams: chat completion chunks (``delta.content`` a string or a list of chunks) and the
Conversations events (``conversation.response.started``, ``message.output.delta`` whose
``content`` is a string or one chunk, ``tool.execution.started`` / ``.delta`` / ``.done``,
``conversation.response.done``), as dicts, as the SDK's event objects, or wrapped in the
SDK's ``{"event", "data"}`` envelope. They are rebuilt into the final response and read by the
same reader; a claim can depend on the text after its reference, so the citations are
announced when the stream ends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from unicite._segment import claim_spans
from unicite.providers._base import Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder

__all__ = ["MISTRAL", "MODEL_RE", "MistralProvider"]

MODEL_RE = re.compile(
    r"^(mistral|magistral|ministral|codestral|devstral|pixtral|voxtral|mathstral"
    r"|open-mistral|open-mixtral|open-codestral)(-|$)"
)
"""Model names Mistral's own API answers with (a gateway's ``mistralai/...`` names do not)."""

_CHUNK_TYPES = frozenset({"text", "reference", "thinking", "tool_reference", "tool_file"})
"""Chunk types that show a content list is Mistral's."""
_KEPT_TYPES = frozenset(
    {"image_url", "document_url", "file", "input_audio", "tool_file", "resource", "resource_link"}
)
"""Chunks that are not answer text, kept in ``extras["content_chunks"]`` without a word."""
_OUTPUT_QUIET = frozenset({"function.call", "agent.handoff", "message.input"})
"""Conversation entries with nothing to read for citations."""
_GROUNDING_TOOLS = frozenset({"web_search", "web_search_premium", "document_library"})
"""Built-in connectors whose execution grounds the answer (a web search, a library search)."""

_EVENTS = frozenset(
    {
        "conversation.response.started",
        "conversation.response.done",
        "conversation.response.error",
        "message.output.delta",
        "tool.execution.started",
        "tool.execution.delta",
        "tool.execution.done",
        "agent.handoff.started",
        "agent.handoff.done",
        "function.call.delta",
    }
)
"""The Conversations stream's event types."""
_TOOL_REFERENCE_FIELDS = {"type", "url", "title", "description"}
_CLOSING = frozenset(".,;:!?)]}\u00bb\u201d\u2019\u3001\u3002\uff0c\uff0e\uff01\uff1f\uff09\u300d")
"""Punctuation that closes a sentence or clause (Latin, CJK full-width)."""


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _unwrap(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """An event the SDK yields wrapped (``{"data": {...}}``, ``{"event", "data"}``) unwrapped."""
    inner = data.get("data")
    if isinstance(inner, Mapping) and set(data) <= {"event", "data", "id", "retry"}:
        return inner
    return data


def _mistral_chunks(content: object) -> bool:
    """Whether a content list holds Mistral's chunks (and nothing but typed chunks)."""
    if not isinstance(content, list) or not content:
        return False
    kinds = [c.get("type") if isinstance(c, Mapping) else None for c in content]
    return all(isinstance(k, str) for k in kinds) and any(k in _CHUNK_TYPES for k in kinds)


def _mistral_model(data: Mapping[str, Any]) -> bool:
    model = data.get("model")
    return isinstance(model, str) and MODEL_RE.match(model.lower()) is not None


def _first_choice_field(data: Mapping[str, Any], key: str) -> object:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    inner = choices[0].get(key)
    return inner.get("content") if isinstance(inner, Mapping) else None


def _is_conversation(data: Mapping[str, Any]) -> bool:
    if data.get("object") == "conversation.response":
        return True
    return isinstance(data.get("outputs"), list) and isinstance(data.get("conversation_id"), str)


# --- reading content ---------------------------------------------------------------------------


@dataclass
class _Mark:
    """Where reference chunks stood in the text, and what they cite."""

    at: int
    ids: list[str]
    where: str
    kind: str  # "claim" (reference), "run" (tool_reference), "own" (a reference's own text)
    start: int  # for "run": where its text starts; for "own": where the reference text starts


@dataclass
class _Content:
    """Reads messages' content chunks into a builder; cites once every message is read."""

    builder: AnswerBuilder
    marks: list[_Mark] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    thinking_parts: list[Any] = field(default_factory=list)
    """What a thinking chunk holds beside its text (the references it thought with)."""
    kept: list[Any] = field(default_factory=list)
    run_start: int = 0
    """Where the text since the last reference chunk starts."""

    def message(self, content: object, path: str) -> None:
        """One message's content: a string or a list of chunks."""
        self.run_start = self.builder.length
        if content is None:
            return
        if isinstance(content, str):
            self.builder.append_text(content)
        elif isinstance(content, list):
            for n, chunk in enumerate(content):
                self.chunk(chunk, f"{path}[{n}]")
        else:
            self.builder.note(
                f"{path}: expected a string or a list of chunks, got {type(content).__name__}"
            )

    def chunk(self, chunk: object, path: str) -> None:
        builder = self.builder
        read = builder.read
        if isinstance(chunk, str):
            builder.append_text(chunk)
            return
        if not isinstance(chunk, Mapping):
            builder.note(f"{path}: expected a content chunk, got {type(chunk).__name__}")
            return
        kind = chunk.get("type")
        if kind == "text":
            text = read.text(chunk, "text", path)
            builder.append_text(text or "")
        elif kind == "reference":
            self.reference(chunk, path)
        elif kind == "tool_reference":
            sid = self.tool_source(chunk, path)
            if sid is not None:
                self.mark(_Mark(builder.length, [sid], path, "run", self.run_start))
            self.run_start = builder.length
        elif kind == "thinking":
            for k, part in enumerate(read.items(chunk, "thinking", path)):
                if isinstance(part, Mapping) and part.get("type") == "text":
                    text = read.text(part, "text", f"{path}.thinking[{k}]")
                    if text:
                        self.thinking.append(text)
                else:
                    self.thinking_parts.append(part)
        elif isinstance(kind, str) and kind in _KEPT_TYPES:
            self.kept.append(chunk)
        else:
            builder.note(f"{path}: unknown content chunk type {kind!r}; kept in extras")
            self.kept.append(chunk)

    def reference(self, chunk: Mapping[str, Any], path: str) -> None:
        builder = self.builder
        ids = []
        for k, rid in enumerate(builder.read.items(chunk, "reference_ids", path)):
            if isinstance(rid, bool) or not isinstance(rid, (int, str)) or rid == "":
                builder.note(f"{path}.reference_ids[{k}]: expected an id, got {rid!r}")
                continue
            ids.append(
                builder.add_source(
                    {
                        "kind": "document",
                        "provider_id": f"reference:{rid}",
                        "extras": {"reference_id": rid},
                        "raw": rid,
                    }
                )
            )
        if not ids:
            builder.note(f"{path}: reference chunk without ids")
        builder.grounded = True
        own = builder.read.text(chunk, "text", path)
        if own:
            start = builder.append_text(own)
            if ids:
                self.mark(_Mark(builder.length, ids, path, "own", start))
        elif ids:
            self.mark(_Mark(builder.length, ids, path, "claim", builder.length))
        self.run_start = builder.length

    def mark(self, mark: _Mark) -> None:
        """Record a citation; a reference right after another of its kind joins it."""
        last = self.marks[-1] if self.marks else None
        if last is not None and last.kind == mark.kind != "own" and last.at == mark.at:
            last.ids.extend(sid for sid in mark.ids if sid not in last.ids)
        else:
            self.marks.append(mark)

    def tool_source(self, chunk: Mapping[str, Any], path: str) -> str | None:
        builder = self.builder
        read = builder.read
        self.builder.grounded = True
        url = read.text(chunk, "url", path)
        title = read.text(chunk, "title", path)
        description = read.text(chunk, "description", path)
        extras = {k: v for k, v in chunk.items() if k not in _TOOL_REFERENCE_FIELDS and v}
        if url and not _is_http(url):
            builder.note(f"{path}: url {url[:80]!r} is not http(s); kept in extras")
            extras["url"] = url
            url = None
        if not url and not title:
            builder.note(f"{path}: tool reference without a url or a title; dropped")
            return None
        tool = chunk.get("tool")
        kind = "web" if url else "document" if tool == "document_library" else "tool"
        return builder.add_source(
            {
                "kind": kind,
                "url": url,
                "title": title or None,
                "snippet": description or None,
                "content": None if url else title,
                "extras": extras,
                "raw": chunk,
                **({"origin": {"tool": tool}} if isinstance(tool, str) and tool else {}),
            }
        )

    def close(self) -> None:
        """Cite every mark, now that the whole text is known; keep what is not text."""
        builder = self.builder
        text = builder.text
        claims = claim_spans(text, [(m.at, m.at) for m in self.marks if m.kind == "claim"])
        spans = iter(claims)
        previous = 0  # where the reference before stood: a claim starts after it
        for mark in self.marks:
            if mark.kind == "claim":
                start, end = next(spans)
                if start >= mark.at:
                    start = end = mark.at  # the text after it: not what a reference cites
                elif start < previous < end:
                    start, end = _trimmed(text, previous, end)
            elif mark.kind == "run":
                start, end = _trimmed(text, _after_closing(text, mark.start, mark.at), mark.at)
            else:
                start, end = _trimmed(text, mark.start, mark.at)
            if start >= end:
                builder.note(f"{mark.where}: no text before it to cite; left uncited")
            else:
                builder.cite(start, end, mark.ids, where=mark.where)
            previous = mark.at
        if self.thinking:
            builder.extras["thinking"] = "".join(self.thinking)
        if self.thinking_parts:
            builder.extras["thinking_references"] = self.thinking_parts
        if self.kept:
            builder.extras["content_chunks"] = self.kept


def _after_closing(text: str, start: int, end: int) -> int:
    """Where a run of text starts once the punctuation closing the sentence before is skipped.

    Text after a reference often begins with the end of the sentence it cited (``". Next"``).
    """
    while start < end and (text[start].isspace() or text[start] in _CLOSING):
        start += 1
    return start


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- final responses ---------------------------------------------------------------------------


def _read_chat(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "response")
    response_id = read.text(data, "id", "response")
    choices = read.items(data, "choices", "response")
    choice = choices[0] if choices else None
    if choices and not isinstance(choice, Mapping):
        builder.note(f"response.choices[0]: expected an object, got {type(choice).__name__}")
    message = read.obj(choice, "message", "response.choices[0]")
    finish_reason = read.text(choice, "finish_reason", "response.choices[0]")
    content = _Content(builder)
    content.message(read.get(message, "content"), "response.choices[0].message.content")
    content.close()
    if response_id:
        builder.extras["response_id"] = response_id
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason


def _read_conversation(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    conversation_id = read.text(data, "conversation_id", "response")
    content = _Content(builder)
    tools: list[str] = []
    for i, entry in enumerate(read.items(data, "outputs", "response")):
        path = f"response.outputs[{i}]"
        if not isinstance(entry, Mapping):
            builder.note(f"{path}: expected an entry object, got {type(entry).__name__}")
            continue
        kind = entry.get("type")
        if kind == "message.output":
            if builder.model is None:
                builder.model = read.text(entry, "model", path)
            content.message(read.get(entry, "content"), f"{path}.content")
        elif kind == "tool.execution":
            name = entry.get("name")
            tools.append(name if isinstance(name, str) else "")
        elif not (isinstance(kind, str) and kind in _OUTPUT_QUIET):
            builder.note(f"{path}: unknown output entry type {kind!r}")
    content.close()
    if conversation_id:
        builder.extras["conversation_id"] = conversation_id
    if tools:
        searched = any(name in _GROUNDING_TOOLS for name in tools)
        builder.grounded = builder.grounded or searched
        builder.extras["tool_calls"] = len(tools)
        builder.extras["grounded_effective"] = searched


# --- streams -----------------------------------------------------------------------------------


class _Text:
    """A streamed text chunk's pieces, joined when the response is rebuilt."""

    __slots__ = ("pieces",)

    def __init__(self, text: str) -> None:
        self.pieces = [text]


def _merge_chunk(chunks: list[Any], chunk: object) -> None:
    """Add one streamed chunk (or text) to a message's chunks, joining text and thinking.

    What is not a chunk is kept as it came, for the reader to name.
    """
    if isinstance(chunk, str):
        chunk = {"type": "text", "text": chunk}
    if not isinstance(chunk, Mapping):
        chunks.append(chunk)
        return
    last = chunks[-1] if chunks else None
    kind = chunk.get("type")
    text = chunk.get("text")
    if kind == "text" and isinstance(text, str):
        if isinstance(last, _Text):
            last.pieces.append(text)
        else:
            chunks.append(_Text(text))
    elif kind == "thinking":
        parts = chunk.get("thinking")
        parts = list(parts) if isinstance(parts, list) else []
        if isinstance(last, dict) and last.get("type") == "thinking":
            last["thinking"].extend(parts)
        else:
            chunks.append({**chunk, "thinking": parts})
    else:
        chunks.append(dict(chunk))


def _rebuilt(chunks: list[Any]) -> list[Any]:
    """A message's streamed chunks as the final response lists them."""
    return [
        {"type": "text", "text": "".join(c.pieces)}
        if isinstance(c, _Text)
        else (
            {**c, "thinking": list(c["thinking"])}
            if isinstance(c, dict) and c.get("type") == "thinking"
            else c
        )
        for c in chunks
    ]


class _MistralStream(RebuildingStream):
    """Rebuilds a chat completion from its chunks, or a conversation from its events."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._top: dict[str, Any] = {}
        self._chunks: list[Any] = []
        self._listed = False  # a delta came as a list of chunks
        self._finish: Any = None
        self._tool_calls: list[Any] = []
        self._conversation = False
        self._outputs: dict[int, dict[str, Any]] = {}
        self._index_of: dict[str, int] = {}
        self._ended = False
        self._bare = 0  # content chunks met in place of events

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when the answer is complete."""
        event = _unwrap(event)
        kind = event.get("type")
        if isinstance(kind, str) and kind in _EVENTS:
            self._conversation = True
            return self._take_event(kind, event)
        if "choices" in event or event.get("object") == "chat.completion.chunk":
            return self._take_chunk(event)
        if isinstance(kind, str) and (kind in _CHUNK_TYPES or kind in _KEPT_TYPES):
            # A content chunk kept in place of its event (LlamaIndex's MistralAI keeps the
            # last chunk of a delta's list as the response's raw): the chunks beside it in
            # that delta are gone, so its text is kept and no reference is placed.
            self._bare += 1
            if kind == "text":
                _merge_chunk(self._chunks, event)
            return False
        self.diagnostics.append(f"unknown stream event {str(kind or list(event)[:3])[:80]}")
        return False

    def _take_chunk(self, event: Mapping[str, Any]) -> bool:
        for key in ("id", "model", "created", "usage"):
            if event.get(key) is not None:
                self._top[key] = event[key]
        choices = event.get("choices")
        if not isinstance(choices, list):
            self.diagnostics.append(f"chunk choices: expected a list, got {type(choices).__name__}")
            return False
        finished = self._finish is not None
        for choice in choices:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            delta = delta if isinstance(delta, Mapping) else {}
            content = delta.get("content")
            if isinstance(content, list):
                self._listed = True
                for chunk in content:
                    _merge_chunk(self._chunks, chunk)
            elif isinstance(content, str):
                _merge_chunk(self._chunks, content)
            elif content is not None:
                self.diagnostics.append(
                    f"chunk delta content: expected a string or a list, got "
                    f"{type(content).__name__}"
                )
            if isinstance(delta.get("tool_calls"), list):
                self._tool_calls.extend(delta["tool_calls"])
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
        return not finished and self._finish is not None

    def _entry(self, event: Mapping[str, Any], kind: str) -> dict[str, Any]:
        """The output entry an event belongs to, made on its first event."""
        entry_id = event.get("id")
        index = event.get("output_index")
        if not isinstance(index, int) or isinstance(index, bool):
            known = self._index_of.get(entry_id) if isinstance(entry_id, str) else None
            index = known if known is not None else len(self._outputs)
        if isinstance(entry_id, str):
            self._index_of.setdefault(entry_id, index)
        entry = self._outputs.get(index)
        if entry is None:
            entry = {"object": "entry", "type": kind}
            if isinstance(entry_id, str):
                entry["id"] = entry_id
            self._outputs[index] = entry
        return entry

    def _take_event(self, kind: str, event: Mapping[str, Any]) -> bool:
        if kind == "conversation.response.started":
            if isinstance(event.get("conversation_id"), str):
                self._top["conversation_id"] = event["conversation_id"]
        elif kind == "message.output.delta":
            entry = self._entry(event, "message.output")
            for key in ("model", "agent_id", "role"):
                if event.get(key) is not None:
                    entry.setdefault(key, event[key])
            chunks = entry.setdefault("content", [])
            content = event.get("content")
            if isinstance(content, list):
                for chunk in content:
                    _merge_chunk(chunks, chunk)
            elif content is not None:
                _merge_chunk(chunks, content)
        elif kind in ("tool.execution.started", "tool.execution.delta", "tool.execution.done"):
            entry = self._entry(event, "tool.execution")
            if event.get("name") is not None:
                entry["name"] = event["name"]
            arguments = event.get("arguments")
            if isinstance(arguments, str):
                entry["arguments"] = entry.get("arguments", "") + arguments
            if kind == "tool.execution.done" and event.get("info") is not None:
                entry["info"] = event["info"]
        elif kind in ("agent.handoff.started", "agent.handoff.done"):
            self._entry(event, "agent.handoff")
        elif kind == "function.call.delta":
            self._entry(event, "function.call")
        elif kind == "conversation.response.error":
            self.diagnostics.append(
                f"stream error: {str(event.get('message') or event.get('code'))[:200]}"
            )
        elif kind == "conversation.response.done":
            if event.get("usage") is not None:
                self._top["usage"] = event["usage"]
            ended = self._ended
            self._ended = True
            return not ended
        return False

    def response(self) -> dict[str, Any]:
        """The final response the events so far add up to."""
        if self._conversation:
            outputs = [
                {**entry, "content": _rebuilt(entry["content"])} if "content" in entry else entry
                for entry in (self._outputs[n] for n in sorted(self._outputs))
            ]
            return {**self._top, "object": "conversation.response", "outputs": outputs}
        if self._bare:
            content: Any = [
                c
                for c in _rebuilt(self._chunks)
                if isinstance(c, Mapping) and c.get("type") == "text"
            ]
        elif self._listed:
            content = _rebuilt(self._chunks)
        else:
            content = "".join("".join(c.pieces) for c in self._chunks if isinstance(c, _Text))
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self._tool_calls:
            message["tool_calls"] = self._tool_calls
        return {
            **self._top,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }

    def problems(self) -> list[str]:
        """What a stream cut short lacks."""
        if self._conversation:
            return [] if self._ended else ["stream ended before conversation.response.done"]
        problems = []
        if self._bare:
            problems.append(
                f"{self._bare} stream event(s) were bare content chunks, not chunk events (a "
                "framework kept one chunk of a delta in place of the event, as LlamaIndex's "
                "MistralAI does): the chunks beside them are lost, so no reference is cited and "
                "the text may lack parts"
            )
        if self._finish is None:
            problems.append("stream ended before a chunk with a finish_reason")
        return problems


# --- the provider ------------------------------------------------------------------------------


def _v1_reference_ids(block: Mapping[str, Any]) -> list[Any] | None:
    """The reference ids a LangChain v1 text block's ``citation`` annotations carry."""
    annotations = block.get("annotations")
    if not isinstance(annotations, list):
        return None
    ids: list[Any] = []
    found = False
    for ann in annotations:
        extras = ann.get("extras") if isinstance(ann, Mapping) else None
        named = extras.get("reference_ids") if isinstance(extras, Mapping) else None
        if isinstance(ann, Mapping) and ann.get("type") == "citation" and isinstance(named, list):
            found = True
            ids.extend(rid for rid in named if rid not in ids)
    return ids if found else None


def _content_chunk(block: object) -> object:
    """A content block as a framework keeps it, back in Mistral's chunk shape.

    langchain-mistralai rewrites a ``reference`` chunk as a text block holding it under
    ``"reference"`` (``{"type": "text", "text": "", "reference": {"reference_ids"}}``), or,
    in LangChain's v1 output, as a text block with a ``citation`` annotation whose ``extras``
    hold the ids; it numbers streamed blocks with an ``index`` and turns thinking into v1
    ``reasoning`` blocks.
    """
    if not isinstance(block, Mapping):
        return block
    chunk = {k: v for k, v in block.items() if k != "index"}
    kind = chunk.get("type")
    text = chunk.get("text")
    reference = chunk.get("reference")
    if kind == "text" and isinstance(reference, Mapping):
        restored = {"type": "reference", **{k: v for k, v in reference.items() if k != "index"}}
        if isinstance(text, str) and text:
            restored["text"] = text
        return restored
    v1_ids = _v1_reference_ids(chunk) if kind == "text" else None
    if v1_ids is not None:
        restored = {"type": "reference", "reference_ids": v1_ids}
        if isinstance(text, str) and text:
            restored["text"] = text
        return restored
    if kind == "reasoning" and isinstance(chunk.get("reasoning"), str):
        return {"type": "thinking", "thinking": [{"type": "text", "text": chunk["reasoning"]}]}
    return chunk


class MistralProvider(Provider):
    """Mistral chat completions (reference chunks) and Conversations (tool references)."""

    name = "mistral"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A conversation response, or a chat completion with Mistral's chunks or model.

        A chat completion is Mistral's when its message content is a list of Mistral's chunks
        (OpenAI's is a string), or when its model is a Mistral model and it carries nothing
        another reader's API adds (``annotations``, ``citations``, ``search_results``).
        """
        if _is_conversation(data):
            return True
        if not isinstance(data.get("choices"), list):
            return False
        if _mistral_chunks(_first_choice_field(data, "message")):
            return True
        if not _mistral_model(data) or "citations" in data or "search_results" in data:
            return False
        choices = data["choices"]
        message = choices[0].get("message") if choices and isinstance(choices[0], Mapping) else None
        return not (isinstance(message, Mapping) and message.get("annotations"))

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A Conversations event, or a chat chunk with Mistral's chunks or model."""
        event = _unwrap(event)
        kind = event.get("type")
        if isinstance(kind, str) and kind in _EVENTS:
            return True
        if not isinstance(event.get("choices"), list):
            return False
        if _mistral_chunks(_first_choice_field(event, "delta")):
            return True
        return _mistral_model(event) and "citations" not in event and "search_results" not in event

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final chat completion or conversation response."""
        if _is_conversation(data) or ("outputs" in data and "choices" not in data):
            _read_conversation(data, builder)
        else:
            _read_chat(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one chat chunk stream or conversation event stream."""
        return _MistralStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The chat completion a framework's content and fields came from."""
        if isinstance(content, list):
            content = [_content_chunk(block) for block in content]
        response: dict[str, Any] = {
            key: fields[key] for key in ("id", "model") if isinstance(fields.get(key), str)
        }
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}}
        if isinstance(fields.get("finish_reason"), str):
            choice["finish_reason"] = fields["finish_reason"]
        return {**response, "object": "chat.completion", "choices": [choice]}

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Content with Mistral's reference or tool reference chunks (as a framework keeps them)."""
        if not isinstance(content, list):
            return False
        for block in content:
            chunk = _content_chunk(block)
            if isinstance(chunk, Mapping) and chunk.get("type") in ("reference", "tool_reference"):
                return True
        return False


MISTRAL = MistralProvider()
"""The Mistral reader registered with the dispatcher."""
