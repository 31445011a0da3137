"""Anthropic Messages: per-block citations, server-side web search and fetch, the event stream."""

from __future__ import annotations

import heapq
import html
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from unicite.model import (
    Citation,
    Location,
    SearchResultLocation,
    UrlLocation,
)
from unicite.providers._base import CitationEvent, Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._locations import DocumentShape, checked_location, document_location
from unicite.providers._v1 import is_v1, v1_citation
from unicite.providers.shapes import ANTHROPIC_QUIET_BLOCKS

__all__ = ["ANTHROPIC", "AnthropicProvider"]

_SHAPES: dict[str, DocumentShape] = {
    "char_location": "char",
    "page_location": "page",
    "content_block_location": "block",
}
"""The document location kinds, by the shape of range each names."""


_DOCUMENT_CITATIONS = {
    "char_location": ("start_char_index", "end_char_index"),
    "page_location": ("start_page_number", "end_page_number"),
    "content_block_location": ("start_block_index", "end_block_index"),
}

_CITATION_FIELDS = {
    "char_location": {"document_index", "document_title", "start_char_index", "end_char_index"},
    "page_location": {"document_index", "document_title", "start_page_number", "end_page_number"},
    "content_block_location": {
        "document_index",
        "document_title",
        "start_block_index",
        "end_block_index",
    },
    "search_result_location": {
        "source",
        "title",
        "search_result_index",
        "start_block_index",
        "end_block_index",
    },
    "web_search_result_location": {"url", "title"},
}
"""Fields of each citation type that the model holds; the rest go to the citation's extras."""

_WEB_RESULT_FIELDS = {"type", "url", "title"}

_STREAM_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)

# Events the SDK's `MessageStream` helper synthesises from the raw ones (each repeats a delta).
_HELPER_EVENTS = frozenset({"text", "citation", "thinking", "input_json", "signature"})


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _kind(data: Mapping[str, Any]) -> str | None:
    """The ``type`` of a block, citation or event, when it is a string."""
    kind = data.get("type")
    return kind if isinstance(kind, str) else None


class _MessageReader:
    """Reads the content blocks of one message, in order, into a builder."""

    def __init__(self, builder: AnswerBuilder) -> None:
        self.builder = builder
        self.read = builder.read
        self.search_queries: list[str] = []
        self.web_search_errors: list[dict[str, Any]] = []
        self.web_fetch_errors: list[dict[str, Any]] = []
        self.unknown: list[dict[str, Any]] = []
        self.tool_calls = 0
        """Server tool uses (``server_tool_use`` blocks) of any tool."""
        self.searched = False
        """A web search or web fetch server tool ran."""
        self.cited = 0
        self.search_origins: dict[int, str] = {}
        """The ``source`` each cited search result index was first cited with."""
        """Citations the builder accepted."""

    # --- blocks -----------------------------------------------------------------------------

    def block(self, block: object, path: str) -> list[Citation]:
        """Read one content block; return the citations it made."""
        if not isinstance(block, Mapping):
            self.builder.note(
                f"{path}: expected a content block object, got {type(block).__name__}"
            )
            return []
        kind = _kind(block)
        if kind == "text":
            return self._text(block, path)
        if kind == "server_tool_use":
            self._server_tool_use(block, path)
        elif kind == "web_search_tool_result":
            self._web_search_result(block, path)
        elif kind == "web_fetch_tool_result":
            self._web_fetch_result(block, path)
        elif kind not in ANTHROPIC_QUIET_BLOCKS:
            self._unknown(f"{path}: unknown content block type {block.get('type')!r}", path, block)
        return []

    def _unknown(self, message: str, path: str, data: object) -> None:
        self.builder.note(f"{message}; kept in extras['unknown']")
        self.unknown.append({"path": path, "data": data})

    def _text(self, block: Mapping[str, Any], path: str) -> list[Citation]:
        text = self.read.text(block, "text", path)
        if text is None:
            if "text" not in block:
                self.builder.note(f"{path}: text block without text")
            text = ""
        offset = self.builder.append_text(text)
        # Anthropic cites whole text blocks, without offsets: the span is the block's range in
        # the text blocks joined with "", less the block's surrounding whitespace.
        citations = self.read.items(block, "citations", path)
        if not citations:
            return []
        stripped = text.strip()
        if stripped:
            start = offset + len(text) - len(text.lstrip())
            end = start + len(stripped)
        else:
            start, end = offset, offset + len(text)
        made = []
        for n, item in enumerate(citations):
            citation = self._citation(item, start, end, f"{path}.citations[{n}]")
            if citation is not None:
                made.append(citation)
        self.cited += len(made)
        return made

    def _server_tool_use(self, block: Mapping[str, Any], path: str) -> None:
        self.tool_calls += 1
        name = self.read.text(block, "name", path)
        if name == "web_search":
            self.builder.grounded = True
            self.searched = True
            query = self.read.text(self.read.obj(block, "input", path), "query", f"{path}.input")
            if query:
                self.search_queries.append(query)
        elif name == "web_fetch":
            self.builder.grounded = True
            self.searched = True

    def _web_search_result(self, block: Mapping[str, Any], path: str) -> None:
        self.builder.grounded = True
        self.searched = True
        tool_use_id = self.read.text(block, "tool_use_id", path)
        content = block.get("content")
        if isinstance(content, list):
            for rank, item in enumerate(content):
                self._web_result(item, rank, f"{path}.content[{rank}]")
        elif isinstance(content, Mapping) and content.get("type") == "web_search_tool_result_error":
            # A failed search is data about the answer, not a problem reading it.
            self.web_search_errors.append(
                {"tool_use_id": tool_use_id, "error_code": content.get("error_code")}
            )
        elif isinstance(content, Mapping):
            self._unknown(
                f"{path}.content: unknown result type {content.get('type')!r}", path, block
            )
        else:
            self.builder.note(f"{path}.content: expected a list or an error object")

    def _web_result(self, item: object, rank: int, path: str) -> None:
        if not isinstance(item, Mapping):
            self.builder.note(f"{path}: expected a search result object, got {type(item).__name__}")
            return
        if item.get("type") != "web_search_result":
            self._unknown(f"{path}: unknown search result type {item.get('type')!r}", path, item)
            return
        url = self.read.text(item, "url", path)
        if not url:
            self.builder.note(f"{path}: search result without a url")
            return
        extras = {k: v for k, v in item.items() if k not in _WEB_RESULT_FIELDS and v is not None}
        self.builder.add_source(
            {
                "kind": "web",
                "url": url,
                "title": self.read.text(item, "title", path),
                "rank": rank,
                "extras": extras,
                "raw": item,
            }
        )

    def _web_fetch_result(self, block: Mapping[str, Any], path: str) -> None:
        self.builder.grounded = True
        self.searched = True
        tool_use_id = self.read.text(block, "tool_use_id", path)
        content = self.read.obj(block, "content", path)
        if content is None:
            self.builder.note(f"{path}: web fetch result without content")
            return
        kind = content.get("type")
        cpath = f"{path}.content"
        if kind == "web_fetch_tool_result_error":
            self.web_fetch_errors.append(
                {"tool_use_id": tool_use_id, "error_code": content.get("error_code")}
            )
            return
        if kind != "web_fetch_result":
            self._unknown(f"{cpath}: unknown web fetch result type {kind!r}", path, block)
            return
        url = self.read.text(content, "url", cpath)
        if not url:
            self.builder.note(f"{cpath}: web fetch result without a url")
            return
        document = self.read.obj(content, "content", cpath)
        dpath = f"{cpath}.content"
        source = self.read.obj(document, "source", dpath)
        text = None
        if source is not None and source.get("type") == "text":
            text = self.read.text(source, "data", f"{dpath}.source")
        retrieved_at = self.read.text(content, "retrieved_at", cpath)
        self.builder.add_source(
            {
                "kind": "web",
                "url": url,
                "title": self.read.text(document, "title", dpath),
                "content": text or None,
                "extras": {"retrieved_at": retrieved_at} if retrieved_at else {},
                "raw": content,
            }
        )

    # --- citations --------------------------------------------------------------------------

    def _citation(self, item: object, start: int, end: int, path: str) -> Citation | None:
        if not isinstance(item, Mapping):
            self.builder.note(f"{path}: expected a citation object, got {type(item).__name__}")
            return None
        kind = _kind(item)
        if kind in _DOCUMENT_CITATIONS:
            found = self._document(item, kind, path)
        elif kind == "search_result_location":
            found = self._search_result(item, path)
        elif kind == "web_search_result_location":
            found = self._web(item, path)
        else:
            self._unknown(f"{path}: unknown citation type {item.get('type')!r}", path, item)
            return None
        if found is None or kind is None:
            return None
        source_id, location = found
        known = _CITATION_FIELDS[kind] | {"type", "cited_text"}
        extras = {k: v for k, v in item.items() if k not in known and v is not None}
        quote = self.read.text(item, "cited_text", path) or None
        if quote is not None and kind == "web_search_result_location":
            # Web search quotes come HTML-escaped (``Today&#x27;s``, ``&amp;``): unescaped here,
            # once, so the quote holds the characters and renderers escape it exactly once.
            # `raw` keeps the escaped original.
            quote = html.unescape(quote)
        return _cite(self.builder, start, end, source_id, quote, location, extras, item, path)

    def _location(
        self, factory: Callable[..., Location], path: str, **values: int | None
    ) -> Location | None:
        return checked_location(self.builder, factory, path, **values)

    def _document(
        self, item: Mapping[str, Any], kind: str, path: str
    ) -> tuple[str, Location | None] | None:
        index = self.read.integer(item, "document_index", path)
        file_id = self.read.text(item, "file_id", path)
        if index is None and not file_id:
            self.builder.note(f"{path}: citation names no document")
            return None
        first, last = _DOCUMENT_CITATIONS[kind]
        start = self.read.integer(item, first, path)
        end = self.read.integer(item, last, path)
        for key, value in ((first, start), (last, end)):
            if value is None and key not in item:
                self.builder.note(f"{path}: no {key}")
        location = document_location(self.builder, _SHAPES[kind], index, start, end, path)
        source_id = self.builder.add_source(
            {
                "kind": "document",
                "provider_id": f"document:{index}" if index is not None else file_id,
                "title": self.read.text(item, "document_title", path),
                "extras": {"file_id": file_id} if file_id else {},
            }
        )
        return source_id, location

    def _search_result(
        self, item: Mapping[str, Any], path: str
    ) -> tuple[str, Location | None] | None:
        index = self.read.integer(item, "search_result_index", path)
        origin = self.read.text(item, "source", path)
        if index is None and not origin:
            self.builder.note(f"{path}: citation names no search result")
            return None
        if index is not None and origin:
            first = self.search_origins.setdefault(index, origin)
            if first != origin:
                # One index, two sources: at most one of them is the result cited.
                self.builder.note(
                    f"{path}: search result {index} is cited as {origin!r}, earlier as "
                    f"{first!r}; left uncited"
                )
                return None
        url = origin if origin and _is_http(origin) else None
        location = None
        if index is not None:
            location = self._location(
                lambda i, a, b: SearchResultLocation(
                    search_result_index=i, start_block=a, end_block=b
                ),
                path,
                i=index,
                a=self.read.integer(item, "start_block_index", path),
                b=self.read.integer(item, "end_block_index", path),
            )
            if location is None and index >= 0:
                location = self._location(
                    lambda i: SearchResultLocation(search_result_index=i), path, i=index
                )
        source_id = self.builder.add_source(
            {
                "kind": "search_result",
                "provider_id": f"search_result:{index if index is not None else origin}",
                "url": url,
                "title": self.read.text(item, "title", path),
                "rank": index if index is not None and index >= 0 else None,
                "extras": {"source": origin} if origin and url is None else {},
            }
        )
        return source_id, location

    def _web(self, item: Mapping[str, Any], path: str) -> tuple[str, Location | None] | None:
        url = self.read.text(item, "url", path)
        if not url:
            self.builder.note(f"{path}: web search citation without a url")
            return None
        source_id = self.builder.add_source(
            {"kind": "web", "url": url, "title": self.read.text(item, "title", path)}
        )
        return source_id, UrlLocation(url=url)

    # --- answer-level data ------------------------------------------------------------------

    def close(self) -> None:
        """Write what the blocks said about the whole answer into the builder's extras.

        Always written: ``tool_calls``, the number of server tool uses (``server_tool_use``
        blocks, whatever the tool), and ``grounded_effective``, True when a web search or web
        fetch ran or the answer carries citations (False when neither).
        """
        extras = self.builder.extras
        extras["grounded_effective"] = self.searched or self.cited > 0
        extras["tool_calls"] = self.tool_calls
        for key, value in (
            ("search_queries", self.search_queries),
            ("web_search_errors", self.web_search_errors),
            ("web_fetch_errors", self.web_fetch_errors),
            ("unknown", self.unknown),
        ):
            if value:
                extras[key] = value


def _cite(
    builder: AnswerBuilder,
    start: int,
    end: int,
    source_id: str,
    quote: str | None,
    location: Location | None,
    extras: dict[str, Any],
    raw: Any,
    where: str,
) -> Citation | None:
    """Declare a citation and return the `Citation` the finished answer will hold."""
    if not builder.cite(
        start, end, [source_id], quote=quote, location=location, extras=extras, raw=raw, where=where
    ):
        return None
    return builder.made()


def _read_message(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "message")
    message_id = read.text(data, "id", "message")
    stop_reason = read.text(data, "stop_reason", "message")
    if "content" in data and not isinstance(data["content"], list):
        builder.note(f"message.content: expected a list, got {type(data['content']).__name__}")
    reader = _MessageReader(builder)
    content = data.get("content")
    for n, block in enumerate(content if isinstance(content, list) else []):
        reader.block(block, f"message.content[{n}]")
    if message_id:
        builder.extras["message_id"] = message_id
    if stop_reason:
        builder.extras["stop_reason"] = stop_reason
    reader.close()


# --- content as frameworks keep it ---------------------------------------------------------

_SEARCH_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})

# Citation types told apart by the location field LangChain's v1 translation keeps in extras,
# with the key their title goes under.
_V1_LOCATIONS = (
    ("start_char_index", "char_location", "document_title"),
    ("start_page_number", "page_location", "document_title"),
    ("search_result_index", "search_result_location", "title"),
    ("start_block_index", "content_block_location", "document_title"),
)
# Standard v1 block types with no Anthropic block of that name.
_V1_BLOCKS = frozenset(
    {
        "server_tool_call",
        "server_tool_result",
        "non_standard",
        "reasoning",
        "tool_call",
        "tool_call_chunk",
        "invalid_tool_call",
    }
)


def _citation_from_v1(annotation: Any) -> Any:
    out, kept = v1_citation(annotation)
    if out is None:
        return kept
    if "cited_text" in annotation:
        out["cited_text"] = annotation["cited_text"]
    if "url" in annotation:
        out.update(type="web_search_result_location", url=annotation["url"])
        if "title" in annotation:
            out["title"] = annotation["title"]
        return out
    for field_name, name, title_key in _V1_LOCATIONS:
        if field_name in out:
            out["type"] = name
            if "title" in annotation:
                out[title_key] = annotation["title"]
            return out
    out["type"] = "citation"  # unknown: the reader records it in extras["unknown"]
    return out


def _from_v1(blocks: list[Any]) -> list[Any]:
    """Anthropic content blocks from LangChain's standard (v1) ones.

    Text blocks get their ``citations`` back from their annotations, server tool calls and
    results their Anthropic block types (kept in ``extras``); other standard blocks (reasoning,
    function calls) carry no citation and are left out.
    """
    out: list[Any] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text":
            annotations = block.get("annotations")
            text_block: dict[str, Any] = {"type": "text", "text": block.get("text", "")}
            if isinstance(annotations, list) and annotations:
                text_block["citations"] = [_citation_from_v1(a) for a in annotations]
            out.append(text_block)
        elif kind == "server_tool_call":
            extras = block.get("extras")
            name = extras.get("tool_name") if isinstance(extras, Mapping) else None
            out.append(
                {
                    "type": "server_tool_use",
                    "id": block.get("id"),
                    "name": name or block.get("name"),
                    "input": block.get("args") or {},
                }
            )
        elif kind == "server_tool_result":
            extras = block.get("extras")
            block_type = extras.get("block_type") if isinstance(extras, Mapping) else None
            out.append(
                {
                    "type": block_type or "web_search_tool_result",
                    "tool_use_id": block.get("tool_call_id"),
                    "content": block.get("output", []),
                }
            )
        elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
            out.append(dict(block["value"]))
    return out


def _content_message(content: str | list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Message`` of content blocks kept by a framework, with its id, model and stop."""
    blocks = [content] if isinstance(content, str) else content
    if is_v1(blocks, _V1_BLOCKS):
        blocks = _from_v1(blocks)
    kept: list[Any] = []
    for block in blocks:
        if isinstance(block, str):
            if block:
                kept.append({"type": "text", "text": block})
        elif isinstance(block, Mapping):
            out = {key: value for key, value in block.items() if key != "index"}
            if out.get("type") == "text" and "text" not in out:
                out["text"] = ""  # a streamed citations_delta chunk that carried no text
            kept.append(out)
        else:
            kept.append(block)
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": kept}
    for key in ("model", "id", "stop_reason"):
        if fields.get(key) is not None:
            message[key] = fields[key]
    return message


# --- streaming ------------------------------------------------------------------------------


@dataclass
class _BlockState:
    """One content block being streamed: its start data plus the deltas received so far."""

    data: dict[str, Any]
    text: list[str] = field(default_factory=list)
    citations: list[Any] | None = None
    partial_json: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    signature: str | None = None
    stopped: bool = False

    def value(self) -> tuple[dict[str, Any], str | None]:
        """The block as the final message holds it, and a problem with its tool input if any."""
        block = dict(self.data)
        if self.text:
            start = block.get("text")
            block["text"] = (start if isinstance(start, str) else "") + "".join(self.text)
        if self.citations is not None:
            block["citations"] = list(self.citations)
        if self.thinking:
            start = block.get("thinking")
            block["thinking"] = (start if isinstance(start, str) else "") + "".join(self.thinking)
        if self.signature is not None:
            block["signature"] = self.signature
        problem = None
        if self.partial_json:
            try:
                block["input"] = json.loads("".join(self.partial_json))
            except ValueError as err:
                problem = f"tool input is not JSON ({err})"
        return block, problem


# The block a delta belongs to, when the stream did not carry that block's start.
_BLOCK_OF_DELTA: dict[str, dict[str, Any]] = {
    "text_delta": {"type": "text", "text": ""},
    "citations_delta": {"type": "text", "text": ""},
    "thinking_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "signature_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "input_json_delta": {"type": "tool_use", "id": "", "name": "", "input": {}},
}


class _AnthropicStream(RebuildingStream):
    """Rebuilds the final `Message` from raw stream events (dicts of SDK events or SSE data).

    Frameworks pass some events on and not others (LlamaIndex yields only block deltas, block
    stops and message deltas), so what is missing is rebuilt where the events that follow say
    enough: the message without its ``message_start`` (no id or model then), a text or thinking
    block from its first delta. A ``message_delta`` with a ``stop_reason`` ends the message as
    ``message_stop`` does: that event carries nothing more.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, _BlockState] = {}
        self._stopped = False
        self._unstarted_tools: list[int] = []
        # A live reader follows the blocks as they close, so citations can be announced with the
        # offsets the final answer will give them.
        self._live = AnswerBuilder(provider.name)
        self._live_reader = _MessageReader(self._live)
        # Indices of started blocks the live reader has not read yet, as a heap: closing a
        # block looks only at these, so a stream of many blocks is read in linear time.
        self._unread: list[int] = []
        self._closed: list[Citation] = []

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when it closed a block."""
        kind = _kind(event)
        if kind == "message_start":
            self._start(event)
        elif kind == "content_block_start":
            self._block_start(event)
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            return self._block_stop(event)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            error = event.get("error")
            error = error if isinstance(error, Mapping) else {}
            self.diagnostics.append(
                f"stream error event: {error.get('type')}: {error.get('message')}"
            )
        elif kind != "ping" and kind not in _HELPER_EVENTS:
            self.diagnostics.append(f"unknown stream event type {event.get('type')!r}")
        return False

    def _index(self, event: Mapping[str, Any]) -> int | None:
        index = event.get("index")
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            return index
        self.diagnostics.append(f"{event.get('type')} event without a valid index: {index!r}")
        return None

    def _start(self, event: Mapping[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, Mapping):
            self.diagnostics.append("message_start event without a message object")
            return
        if self._message is not None:
            self.diagnostics.append("a second message_start event replaced the first")
        self._message = dict(message)
        content = message.get("content")
        # A prefilled assistant turn arrives as content of message_start; the blocks follow it.
        for n, block in enumerate(content if isinstance(content, list) else []):
            self._live_reader.block(block, f"message.content[{n}]")

    def _open(self, index: int, block: Mapping[str, Any]) -> None:
        if index in self._blocks:
            self.diagnostics.append(f"content_block_start {index}: repeats an earlier block")
        else:
            heapq.heappush(self._unread, index)
        citations = block.get("citations")
        self._blocks[index] = _BlockState(
            data=dict(block), citations=list(citations) if isinstance(citations, list) else None
        )

    def _block_start(self, event: Mapping[str, Any]) -> None:
        index = self._index(event)
        block = event.get("content_block")
        if index is None:
            return
        if not isinstance(block, Mapping):
            self.diagnostics.append(f"content_block_start {index}: no content_block object")
            return
        self._open(index, block)

    def _delta(self, event: Mapping[str, Any]) -> None:
        index = self._index(event)
        if index is None:
            return
        state = self._blocks.get(index)
        delta = event.get("delta")
        if not isinstance(delta, Mapping):
            self.diagnostics.append(f"content_block_delta {index}: no delta object")
            return
        kind = _kind(delta)
        keys = {
            "text_delta": "text",
            "citations_delta": "citation",
            "input_json_delta": "partial_json",
            "thinking_delta": "thinking",
            "signature_delta": "signature",
        }
        if kind is None or kind not in keys:
            self.diagnostics.append(
                f"content_block_delta {index}: unknown delta type {delta.get('type')!r}"
            )
            return
        if state is None:
            # The block's start was not passed on: its first delta says what block it is.
            if kind == "input_json_delta":
                self._unstarted_tools.append(index)
            self._open(index, _BLOCK_OF_DELTA[kind])
            state = self._blocks[index]
        value = delta.get(keys[kind])
        if kind == "citations_delta":
            if state.citations is None:
                state.citations = []
            state.citations.append(value)
        elif not isinstance(value, str):
            self.diagnostics.append(
                f"content_block_delta {index}: {kind} without a string {keys[kind]}"
            )
        elif kind == "text_delta":
            state.text.append(value)
        elif kind == "input_json_delta":
            state.partial_json.append(value)
        elif kind == "thinking_delta":
            state.thinking.append(value)
        else:
            state.signature = value

    def _block_stop(self, event: Mapping[str, Any]) -> bool:
        index = self._index(event)
        if index is None:
            return False
        state = self._blocks.get(index)
        if state is None:
            self.diagnostics.append(
                f"content_block_stop {index}: the block never started (a block that arrives "
                "whole in its content_block_start, such as a server tool result, is lost "
                "without that event)"
            )
            return False
        state.stopped = True
        # Blocks close in index order; read every closed block not read yet, lowest first.
        while self._unread and self._blocks[self._unread[0]].stopped:
            n = heapq.heappop(self._unread)
            block, _ = self._blocks[n].value()
            self._closed.extend(self._live_reader.block(block, f"message.content[{n}]"))
        return bool(self._closed)

    def announce(self) -> list[CitationEvent]:
        """The citations of the text blocks closed since the last call."""
        closed, self._closed = self._closed, []
        announced = []
        for citation in closed:
            sources = [s for s in map(self._live.ledger.get, citation.source_ids) if s is not None]
            announced.append(CitationEvent(citation=citation, sources=sources))
        return announced

    def _message_delta(self, event: Mapping[str, Any]) -> None:
        delta = event.get("delta")
        if not isinstance(delta, Mapping):
            self.diagnostics.append("message_delta event without a delta")
            return
        if self._message is None:
            self._message = {"type": "message", "role": "assistant"}
        for key in ("stop_reason", "stop_sequence", "stop_details"):
            if key in delta:
                self._message[key] = delta[key]
        if delta.get("stop_reason") is not None:
            self._stopped = True
        if delta.get("container") is not None:
            self._message["container"] = delta["container"]
        usage = event.get("usage")
        if isinstance(usage, Mapping):
            before = self._message.get("usage")
            merged = dict(before) if isinstance(before, Mapping) else {}
            merged.update({k: v for k, v in usage.items() if v is not None})
            self._message["usage"] = merged

    def response(self) -> dict[str, Any]:
        """The message the events so far add up to (as the SDK's final message snapshot)."""
        message = dict(self._message or {"type": "message", "role": "assistant"})
        content = message.get("content")
        blocks = list(content) if isinstance(content, list) else []
        blocks.extend(self._blocks[n].value()[0] for n in sorted(self._blocks))
        message["content"] = blocks
        return message

    def problems(self) -> list[str]:
        """Tool input that is not JSON, tool blocks without a start, and a missing end."""
        notes = []
        for n in sorted(self._blocks):
            state = self._blocks[n]
            problem = state.value()[1]
            if problem and state.stopped:
                notes.append(f"content block {n}: {problem}")
        for n in self._unstarted_tools:
            notes.append(
                f"content block {n}: its content_block_start is missing; read as a tool_use "
                "block (a server tool's name and search query are lost)"
            )
        if not self._stopped:
            notes.append("stream ended before message_stop")
        return notes


class AnthropicProvider(Provider):
    """Anthropic Messages API responses (``Message``) and their raw event streams."""

    name = "anthropic"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """An assistant ``message`` with a list of content blocks."""
        content = data.get("content")
        if data.get("type") != "message" or not isinstance(content, list):
            return False
        if data.get("role", "assistant") != "assistant":
            return False
        # OpenAI Responses output items are also assistant "message"s, with "output_text" parts.
        return not any(isinstance(b, Mapping) and b.get("type") == "output_text" for b in content)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A raw Messages stream event (``message_start``, ``content_block_delta``, ...)."""
        return _kind(event) in _STREAM_EVENTS

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final ``Message``."""
        _read_message(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one raw event stream (whole, or as a framework passes it on)."""
        return _AnthropicStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The ``Message`` a framework's content blocks and fields came from.

        Blocks are the message's content blocks (a string is one text block); the ``index``
        frameworks add while streaming is dropped, and a text block a streamed
        ``citations_delta`` made without text gets an empty one. LangChain's standard (v1)
        blocks are put back in the API's shape: citation types told apart by the location
        fields kept in their ``extras``, server tool calls and results, non-standard wrappers.
        ``fields``: ``id``, ``model``, ``stop_reason``.
        """
        return _content_message(content, fields)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Blocks holding citations or server-side web search."""
        if isinstance(content, str):
            return False
        return any(
            isinstance(block, Mapping) and ("citations" in block or _kind(block) in _SEARCH_BLOCKS)
            for block in content
        )


ANTHROPIC = AnthropicProvider()
"""The Anthropic Messages reader registered with the dispatcher."""
