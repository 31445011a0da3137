"""AWS Bedrock Converse / ConverseStream: ``citationsContent`` blocks and their event stream.

A Converse response holds its answer as ``output.message.content``, a list of content blocks
each with one key: ``text``, ``citationsContent``, ``reasoningContent``, ``toolUse``,
``toolResult``, ``image``... (boto3 adds ``ResponseMetadata``, which is ignored). Citations
come in two forms:

- a ``citationsContent`` block with ``content`` (Claude with document or search-result
  citations enabled): its text, all of it, is the cited claim, as Anthropic cites whole text
  blocks; the span is the block's range in the answer, less its surrounding whitespace;
- a ``citationsContent`` block without ``content`` text (Amazon Nova web grounding): it
  follows the text it supports, as AWS's examples read them (each citation block appended after
  the text before it), so its citations cite the text block just before it; with no text block
  just before it (a tool call, reasoning, or the start of the message), its sources are kept
  and the text is left uncited, with a diagnostic.

Each citation's ``location`` says where the quote is in its source, and is kept as such, never
as a span of the answer: ``documentChar`` (0-based character offsets into the document's text,
end exclusive: Claude's ``char_location`` passed through) becomes a `CharLocation`,
``documentPage`` (1-based page numbers) a `PageLocation`, ``documentChunk`` (0-based chunk
indices of a custom-content document) a `BlockLocation`, ``searchResultLocation`` a
`SearchResultLocation`, ``web`` a `UrlLocation`. The quote is ``sourceContent``'s text.
Sources are the documents (by ``documentIndex``, with the citation's ``title``), the search
results (by ``searchResultIndex``, with their ``source`` and ``title``) and the web pages (by
URL), deduplicated.

``ConverseStream`` events are read as boto3 yields them (dicts with one key each:
``messageStart``, ``contentBlockStart``, ``contentBlockDelta``, ``contentBlockStop``,
``messageStop``, ``metadata``, or an exception), also from the raw AWS event-stream bytes or
the payloads of its messages logged without their event type (the wire's form). A
``contentBlockDelta`` carries ``text``, a whole ``citation`` of its block, ``reasoningContent``,
``toolUse`` input JSON or ``toolResult`` parts; a block that received a citation is a
``citationsContent`` block of the final response.
"""

from __future__ import annotations

import contextlib
import heapq
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

__all__ = ["BEDROCK_CONVERSE", "BedrockConverseProvider"]

_SHAPES: dict[str, DocumentShape] = {
    "documentChar": "char",
    "documentPage": "page",
    "documentChunk": "block",
}
"""The document location kinds, by the shape of range each names."""


_QUIET_BLOCKS = frozenset(
    {
        "reasoningContent",
        "toolUse",
        "toolResult",
        "image",
        "document",
        "video",
        "audio",
        "guardContent",
        "cachePoint",
        "searchResult",
        "toolAddition",
        "toolRemoval",
    }
)
"""Content blocks that hold no answer text (tool calls and results, reasoning, media)."""

_DOCUMENT_LOCATIONS = ("documentChar", "documentPage", "documentChunk")
_CITATION_FIELDS = frozenset({"title", "source", "sourceContent", "location"})

_STREAM_EVENTS = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)

_GROUNDING_TOOLS = frozenset({"nova_grounding"})
"""Server (system) tools that search the web for the answer."""


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _block_kind(block: Mapping[str, Any]) -> str | None:
    """The key naming a content block (its one key, or the first known of several)."""
    for key in ("citationsContent", "text", *sorted(_QUIET_BLOCKS)):
        if key in block:
            return key
    return None


@dataclass
class _Span:
    """Where a block's text lies in the answer (less its surrounding whitespace)."""

    start: int
    end: int


def _span(offset: int, text: str) -> _Span:
    stripped = text.strip()
    if not stripped:
        return _Span(offset, offset + len(text))
    start = offset + len(text) - len(text.lstrip())
    return _Span(start, start + len(stripped))


class _ConverseReader:
    """Reads the content blocks of one Converse message, in order, into a builder."""

    def __init__(self, builder: AnswerBuilder) -> None:
        self.builder = builder
        self.read = builder.read
        self.unknown: list[dict[str, Any]] = []
        self.search_queries: list[str] = []
        self.tool_calls = 0
        """Server tool uses (``toolUse`` blocks of ``type`` ``server_tool_use``)."""
        self.searched = False
        self.cited = 0
        self.search_origins: dict[int, str] = {}
        self.previous: _Span | None = None
        """The text a following citation-only block cites: the block just before, if text."""

    def _unknown(self, message: str, path: str, data: object) -> None:
        self.builder.note(f"{message}; kept in extras['unknown']")
        self.unknown.append({"path": path, "data": data})

    # --- blocks -----------------------------------------------------------------------------

    def block(self, block: object, path: str) -> list[Citation]:
        """Read one content block; return the citations it made."""
        if not isinstance(block, Mapping):
            self.builder.note(
                f"{path}: expected a content block object, got {type(block).__name__}"
            )
            self.previous = None
            return []
        kind = _block_kind(block)
        if kind == "citationsContent":
            return self._citations_content(block, path)
        if kind == "text":
            text = self.read.text(block, "text", path) or ""
            self.previous = _span(self.builder.append_text(text), text)
            return []
        self.previous = None
        if kind == "toolUse":
            self._tool_use(block, path)
        elif kind is None:
            keys = ", ".join(sorted(str(k) for k in block)) or "none"
            self._unknown(f"{path}: unknown content block (keys: {keys})", path, block)
        return []

    def _tool_use(self, block: Mapping[str, Any], path: str) -> None:
        use = self.read.obj(block, "toolUse", path)
        if use is None or use.get("type") != "server_tool_use":
            return  # a call of the application's own tool: no grounding
        self.tool_calls += 1
        name = self.read.text(use, "name", f"{path}.toolUse")
        if name in _GROUNDING_TOOLS:
            self.searched = True
            self.builder.grounded = True
            tool_input = use.get("input")
            query = tool_input.get("query") if isinstance(tool_input, Mapping) else None
            if isinstance(query, str) and query:
                self.search_queries.append(query)

    def _citations_content(self, block: Mapping[str, Any], path: str) -> list[Citation]:
        cpath = f"{path}.citationsContent"
        given = block.get("citationsContent")
        body: Mapping[str, Any]
        if isinstance(given, list):
            self.builder.note(f"{cpath}: a list, not the API's object; read as its citations")
            body = {"citations": given}
        else:
            body = self.read.obj(block, "citationsContent", path) or {}
        pieces = []
        own = block.get("text")
        if isinstance(own, str):
            # Not the API's shape (a content block has one key): the block's text is its claim.
            self.builder.note(f"{path}: text beside citationsContent; the text is what it cites")
            pieces.append(own)
        for n, part in enumerate(self.read.items(body, "content", cpath)):
            if not isinstance(part, Mapping):
                self.builder.note(f"{cpath}.content[{n}]: expected an object")
                continue
            text = self.read.text(part, "text", f"{cpath}.content[{n}]")
            if text is not None:
                pieces.append(text)
            elif part:
                self._unknown(f"{cpath}.content[{n}]: content without text", path, part)
        citations = self.read.items(body, "citations", cpath)
        text = "".join(pieces)
        span: _Span | None
        if text:
            span = _span(self.builder.append_text(text), text)
            self.previous = span
        else:
            span = self.previous
            if span is None and citations:
                self.builder.note(
                    f"{cpath}: citations without text and with no text block before them; "
                    "their sources are kept, no text is cited"
                )
        made = []
        for n, item in enumerate(citations):
            citation = self._citation(item, span, f"{cpath}.citations[{n}]")
            if citation is not None:
                made.append(citation)
        self.cited += len(made)
        return made

    # --- citations --------------------------------------------------------------------------

    def _citation(self, item: object, span: _Span | None, path: str) -> Citation | None:
        if not isinstance(item, Mapping):
            self.builder.note(f"{path}: expected a citation object, got {type(item).__name__}")
            return None
        location = self.read.obj(item, "location", path)
        kinds = [key for key in location or {} if location and location.get(key) is not None]
        if not kinds:
            self.builder.note(f"{path}: citation without a location; dropped")
            return None
        kind = kinds[0]
        lpath = f"{path}.location.{kind}"
        where = self.read.obj(location, kind, f"{path}.location")
        if where is None:
            return None
        if kind in _DOCUMENT_LOCATIONS:
            found = self._document(item, kind, where, lpath)
        elif kind == "searchResultLocation":
            found = self._search_result(item, where, lpath)
        elif kind == "web":
            found = self._web(item, where, lpath)
        else:
            self._unknown(f"{path}: unknown citation location {kind!r}", path, item)
            return None
        if found is None or span is None:
            return None
        source_id, place = found
        quote = self._quote(item, path)
        extras = {k: v for k, v in item.items() if k not in _CITATION_FIELDS and v is not None}
        if kind != "searchResultLocation" and isinstance(item.get("source"), str):
            extras["source"] = item["source"]
        if not self.builder.cite(
            span.start,
            span.end,
            [source_id],
            quote=quote,
            location=place,
            extras=extras,
            raw=item,
            where=path,
        ):
            return None
        return self.builder.made()

    def _quote(self, item: Mapping[str, Any], path: str) -> str | None:
        pieces = []
        for n, part in enumerate(self.read.items(item, "sourceContent", path)):
            text = self.read.text(part, "text", f"{path}.sourceContent[{n}]")
            if text is not None:
                pieces.append(text)
        # Several passages (a search result's content blocks) are quoted one per line.
        return "\n".join(pieces) if pieces else None

    def _location(
        self, factory: Callable[..., Location], path: str, **values: int | None
    ) -> Location | None:
        return checked_location(self.builder, factory, path, **values)

    def _document(
        self, item: Mapping[str, Any], kind: str, where: Mapping[str, Any], path: str
    ) -> tuple[str, Location | None] | None:
        index = self.read.integer(where, "documentIndex", path)
        if index is None:
            self.builder.note(f"{path}: citation names no document")
            return None
        start = self.read.integer(where, "start", path)
        end = self.read.integer(where, "end", path)
        location = document_location(self.builder, _SHAPES[kind], index, start, end, path)
        source_id = self.builder.add_source(
            {
                "kind": "document",
                "provider_id": f"document:{index}",
                "title": self.read.text(item, "title", path.rsplit(".location", 1)[0]),
            }
        )
        return source_id, location

    def _search_result(
        self, item: Mapping[str, Any], where: Mapping[str, Any], path: str
    ) -> tuple[str, Location | None] | None:
        ipath = path.rsplit(".location", 1)[0]
        index = self.read.integer(where, "searchResultIndex", path)
        origin = self.read.text(item, "source", ipath)
        if index is None:
            self.builder.note(f"{path}: citation names no search result")
            return None
        if origin:
            first = self.search_origins.setdefault(index, origin)
            if first != origin:
                # One index, two sources: at most one of them is the result cited.
                self.builder.note(
                    f"{ipath}: search result {index} is cited as {origin!r}, earlier as "
                    f"{first!r}; left uncited"
                )
                return None
        location = self._location(
            lambda i, a, b: SearchResultLocation(search_result_index=i, start_block=a, end_block=b),
            path,
            i=index,
            a=self.read.integer(where, "start", path),
            b=self.read.integer(where, "end", path),
        )
        if location is None and index >= 0:
            location = self._location(
                lambda i: SearchResultLocation(search_result_index=i), path, i=index
            )
        url = origin if origin and _is_http(origin) else None
        source_id = self.builder.add_source(
            {
                "kind": "search_result",
                "provider_id": f"search_result:{index}",
                "url": url,
                "title": self.read.text(item, "title", ipath),
                "rank": index if index >= 0 else None,
                "extras": {"source": origin} if origin and url is None else {},
            }
        )
        return source_id, location

    def _web(
        self, item: Mapping[str, Any], where: Mapping[str, Any], path: str
    ) -> tuple[str, Location | None] | None:
        url = self.read.text(where, "url", path)
        if not url:
            self.builder.note(f"{path}: web citation without a url; dropped")
            return None
        domain = self.read.text(where, "domain", path)
        source_id = self.builder.add_source(
            {
                "kind": "web",
                "url": url,
                "title": self.read.text(item, "title", path.rsplit(".location", 1)[0]),
                "extras": {"domain": domain} if domain else {},
            }
        )
        return source_id, UrlLocation(url=url)

    # --- answer-level data ------------------------------------------------------------------

    def close(self) -> None:
        """Write what the blocks said about the whole answer into the builder's extras.

        Always written: ``tool_calls``, the number of server tool uses (``toolUse`` blocks of
        ``type`` ``server_tool_use``, as Nova's ``nova_grounding``; calls of the application's
        own tools are not counted), and ``grounded_effective``, True when a grounding tool ran
        or the answer carries citations.
        """
        extras = self.builder.extras
        extras["grounded_effective"] = self.searched or self.cited > 0
        extras["tool_calls"] = self.tool_calls
        if self.search_queries:
            extras["search_queries"] = self.search_queries
        if self.unknown:
            extras["unknown"] = self.unknown


def _read_converse(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    output = read.obj(data, "output", "response")
    message = read.obj(output, "message", "response.output")
    if output is not None and message is None and "message" not in output:
        builder.note("response.output: no message")
    reader = _ConverseReader(builder)
    path = "response.output.message.content"
    for n, block in enumerate(read.items(message, "content", "response.output.message")):
        reader.block(block, f"{path}[{n}]")
    stop_reason = read.text(data, "stopReason", "response")
    if stop_reason:
        builder.extras["stop_reason"] = stop_reason
    reader.close()


# --- content as frameworks keep it ---------------------------------------------------------


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _camel_keys(value: Any) -> Any:
    """`value` with its mapping keys in camelCase (LangChain writes Bedrock's in snake_case)."""
    if isinstance(value, Mapping):
        return {_camel(str(k)): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(item) for item in value]
    return value


def _is_bedrock_citation(citation: object) -> bool:
    return (
        isinstance(citation, Mapping)
        and "type" not in citation
        and any(k in citation for k in ("location", "source_content", "sourceContent"))
    )


_LANGCHAIN_QUIET = {
    "reasoning_content": "reasoningContent",
    "tool_result": "toolResult",
    "server_tool_result": "toolResult",
    "image": "image",
    "video": "video",
    "document": "document",
    "guard_content": "guardContent",
    "json": "toolResult",
}


def _from_langchain(block: Mapping[str, Any]) -> dict[str, Any]:
    """The Converse content block a langchain-aws content block stands for."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        text = text if isinstance(text, str) else ""
        citations = block.get("citations")
        if isinstance(citations, list) and citations:
            return {
                "citationsContent": {
                    "content": [{"text": text}] if text else [],
                    "citations": _camel_keys(citations),
                }
            }
        return {"text": text}
    if kind in ("tool_use", "server_tool_use"):
        tool_input = block.get("input")
        if isinstance(tool_input, str):  # a streamed call keeps its input as JSON text
            with contextlib.suppress(ValueError):
                tool_input = json.loads(tool_input) if tool_input else {}
        use: dict[str, Any] = {
            "toolUseId": block.get("id"),
            "name": block.get("name"),
            "input": tool_input if tool_input is not None else {},
        }
        if kind == "server_tool_use":
            use["type"] = "server_tool_use"
        return {"toolUse": use}
    quiet = _LANGCHAIN_QUIET.get(str(kind))
    if quiet is not None:
        return {quiet: {}}
    return {key: value for key, value in block.items() if key != "index"}


_V1_BLOCKS = frozenset(
    {
        "reasoning",
        "tool_call",
        "tool_call_chunk",
        "invalid_tool_call",
        "server_tool_call",
        "server_tool_result",
        "non_standard",
    }
)
"""LangChain's standard (v1) block types with no langchain-aws block of that name."""


def _citation_from_v1(annotation: Any) -> Any:
    """The Bedrock citation a standard ``citation`` annotation stands for.

    langchain-aws keeps the citation's ``location`` (snake_case) in the annotation's
    ``extras``, its title and quote in the standard fields.
    """
    out, kept = v1_citation(annotation)
    if out is None:
        return _camel_keys(kept)
    citation: dict[str, Any] = _camel_keys(out)
    url = annotation.get("url")
    if "location" not in citation and isinstance(url, str):
        citation["location"] = {"web": {"url": url}}
    if isinstance(annotation.get("title"), str):
        citation["title"] = annotation["title"]
    if isinstance(annotation.get("cited_text"), str):
        citation["sourceContent"] = [{"text": annotation["cited_text"]}]
    return citation


def _from_v1(blocks: list[Any]) -> list[Any]:
    """langchain-aws blocks from LangChain's standard (v1) ones.

    Text blocks get their ``citations`` back from their annotations; ``non_standard`` blocks
    give the langchain-aws block they wrap (a server tool's call, with its streamed
    ``args``); tool calls become ``tool_use`` blocks, reasoning a block with no text.
    """
    out: list[Any] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            out.append(block)
            continue
        kind = block.get("type")
        value = block.get("value")
        if kind == "text":
            annotations = block.get("annotations")
            text_block: dict[str, Any] = {"type": "text", "text": block.get("text", "")}
            if isinstance(annotations, list) and annotations:
                text_block["citations"] = [_citation_from_v1(a) for a in annotations]
            out.append(text_block)
        elif kind == "non_standard" and isinstance(value, Mapping):
            wrapped = dict(value)
            if "input" not in wrapped and block.get("args") is not None:
                wrapped["input"] = block["args"]
            out.append(wrapped)
        elif kind in ("tool_call", "server_tool_call"):
            out.append(
                {
                    "type": "tool_use" if kind == "tool_call" else "server_tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("args") or {},
                }
            )
        elif kind == "reasoning":
            out.append({"type": "reasoning_content"})
    return out


def _content_response(content: str | list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    blocks = [content] if isinstance(content, str) else content
    kept: list[Any] = []
    for block in blocks:
        if isinstance(block, str):
            if block:
                kept.append({"text": block})
        elif isinstance(block, Mapping) and "type" in block:
            kept.append(_from_langchain(block))
        elif isinstance(block, Mapping):
            kept.append({key: value for key, value in block.items() if key != "index"})
        else:
            kept.append(block)
    response: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": kept}}}
    for key in ("stopReason", "stop_reason"):
        if isinstance(fields.get(key), str):
            response["stopReason"] = fields[key]
            break
    return response


# --- streaming ------------------------------------------------------------------------------


@dataclass
class _BlockState:
    """One content block being streamed: its start and the deltas received so far."""

    start: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    citations: list[Any] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: list[str] = field(default_factory=list)
    tool_input: list[str] = field(default_factory=list)
    tool_result: list[Any] = field(default_factory=list)
    other: dict[str, Any] = field(default_factory=dict)
    stopped: bool = False

    def value(self) -> tuple[dict[str, Any] | None, str | None]:
        """The block as the final response holds it (None for an empty one), and a problem."""
        start = self.start
        if isinstance(start.get("toolUse"), Mapping):
            use = dict(start["toolUse"])
            problem = None
            raw = "".join(self.tool_input)
            try:
                use["input"] = json.loads(raw) if raw else {}
            except ValueError as err:
                use["input"] = {}
                problem = f"tool input is not JSON ({err})"
            return {"toolUse": use}, problem
        if isinstance(start.get("toolResult"), Mapping) or self.tool_result:
            base = start.get("toolResult")
            result = dict(base) if isinstance(base, Mapping) else {}
            result["content"] = list(self.tool_result)
            return {"toolResult": result}, None
        if self.citations:
            text = "".join(self.text)
            body: dict[str, Any] = {"citations": list(self.citations)}
            if text:
                body["content"] = [{"text": text}]
            return {"citationsContent": body}, None
        if self.text:
            return {"text": "".join(self.text)}, None
        if self.reasoning or self.signature is not None:
            reasoning: dict[str, Any] = {"text": "".join(self.reasoning)}
            if self.signature is not None:
                reasoning["signature"] = self.signature
            return {"reasoningContent": {"reasoningText": reasoning}}, None
        if self.redacted:
            return {"reasoningContent": {"redactedContent": "".join(self.redacted)}}, None
        for key in ("image", *self.other):
            if key in start or key in self.other:
                return {key: self.other.get(key, start.get(key))}, None
        return None, None


_PADDING = "p"
"""The random padding field of event-stream payloads on the wire (boto3 drops it)."""


def _bare_kind(event: Mapping[str, Any]) -> str | None:
    """The event type of a payload logged without it (as the wire frames it), else None.

    A payload's fields say which event it is: ``contentBlockIndex`` with ``delta`` or
    ``start``, or alone (the stop); ``stopReason`` (the message stop); ``usage`` and
    ``metrics`` (the metadata); ``role`` alone (the message start).
    """
    if any(key in _STREAM_EVENTS or str(key).endswith("Exception") for key in event):
        return None
    keys = set(event) - {_PADDING}
    index = event.get("contentBlockIndex")
    if isinstance(index, int) and not isinstance(index, bool):
        if "delta" in keys:
            return "contentBlockDelta"
        if "start" in keys:
            return "contentBlockStart"
        return "contentBlockStop" if keys == {"contentBlockIndex"} else None
    if "stopReason" in keys:
        return "messageStop"
    if keys and keys <= {"usage", "metrics", "trace", "performanceConfig", "serviceTier"}:
        return "metadata" if "usage" in keys or "metrics" in keys else None
    return "messageStart" if keys == {"role"} else None


class _ConverseStream(RebuildingStream):
    """Rebuilds the Converse response from ``ConverseStream`` events (boto3's dicts).

    Frameworks pass some events on and not others (LlamaIndex's ``BedrockConverse`` yields only
    block starts, block deltas and the metadata), so a block is opened by its first delta
    when its start is missing; citations are announced when their block closes
    (``contentBlockStop``), all of them at the end without it.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._top: dict[str, Any] = {}
        self._role: Any = "assistant"
        self._blocks: dict[int, _BlockState] = {}
        self._stopped = False
        self._live = AnswerBuilder(provider.name)
        self._live_reader = _ConverseReader(self._live)
        # Indices of started blocks the live reader has not read yet, lowest first.
        self._unread: list[int] = []
        self._closed: list[Citation] = []

    def _index(self, kind: str, body: Mapping[str, Any]) -> int | None:
        index = body.get("contentBlockIndex")
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            return index
        self.diagnostics.append(f"{kind} event without a valid contentBlockIndex: {index!r}")
        return None

    def _state(self, index: int) -> _BlockState:
        state = self._blocks.get(index)
        if state is None:
            state = self._blocks[index] = _BlockState()
            heapq.heappush(self._unread, index)
        return state

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when it closed a block."""
        bare = _bare_kind(event)
        if bare is not None:
            event = {bare: event}
        for kind, body in event.items():
            if not isinstance(body, Mapping):
                self.diagnostics.append(f"{kind} event without an object")
                continue
            if kind == "messageStart":
                self._role = body.get("role", self._role)
            elif kind == "contentBlockStart":
                self._start(body)
            elif kind == "contentBlockDelta":
                self._delta(body)
            elif kind == "contentBlockStop":
                return self._stop(body)
            elif kind == "messageStop":
                self._stopped = True
                reason = body.get("stopReason")
                if reason is not None:
                    self._top["stopReason"] = reason
            elif kind == "metadata":
                pass  # usage, metrics and trace: nothing the answer holds
            elif str(kind).endswith("Exception"):
                self.diagnostics.append(f"stream error: {kind}: {body.get('message')}")
            else:
                self.diagnostics.append(f"unknown stream event {kind!r}")
        return False

    def _start(self, body: Mapping[str, Any]) -> None:
        index = self._index("contentBlockStart", body)
        start = body.get("start")
        if index is None:
            return
        if not isinstance(start, Mapping):
            self.diagnostics.append(f"contentBlockStart {index}: no start object")
            return
        state = self._state(index)
        if state.start:
            self.diagnostics.append(f"contentBlockStart {index}: repeats an earlier start")
        state.start = dict(start)

    def _delta(self, body: Mapping[str, Any]) -> None:
        index = self._index("contentBlockDelta", body)
        delta = body.get("delta")
        if index is None:
            return
        if not isinstance(delta, Mapping):
            self.diagnostics.append(f"contentBlockDelta {index}: no delta object")
            return
        state = self._state(index)
        for key, value in delta.items():
            if key == "text":
                if isinstance(value, str):
                    state.text.append(value)
                else:
                    self.diagnostics.append(f"contentBlockDelta {index}: text is not a string")
            elif key == "citation":
                state.citations.append(value)
            elif key == "reasoningContent" and isinstance(value, Mapping):
                self._reasoning(index, state, value)
            elif key == "toolUse" and isinstance(value, Mapping):
                piece = value.get("input")
                if isinstance(piece, str):
                    state.tool_input.append(piece)
                else:
                    self.diagnostics.append(f"contentBlockDelta {index}: toolUse without input")
            elif key == "toolResult" and isinstance(value, list):
                state.tool_result.extend(value)
            elif key == "image":
                state.other["image"] = value
            else:
                self.diagnostics.append(f"contentBlockDelta {index}: unknown delta {key!r}")

    def _reasoning(self, index: int, state: _BlockState, value: Mapping[str, Any]) -> None:
        for key, piece in value.items():
            if key == "text" and isinstance(piece, str):
                state.reasoning.append(piece)
            elif key == "signature" and isinstance(piece, str):
                state.signature = (state.signature or "") + piece
            elif key == "redactedContent" and isinstance(piece, str):
                state.redacted.append(piece)
            else:
                self.diagnostics.append(
                    f"contentBlockDelta {index}: unknown reasoning delta {key!r}"
                )

    def _stop(self, body: Mapping[str, Any]) -> bool:
        index = self._index("contentBlockStop", body)
        if index is None:
            return False
        state = self._state(index)
        state.stopped = True
        # Blocks close in index order; read every closed block not read yet, lowest first.
        while self._unread and self._blocks[self._unread[0]].stopped:
            n = heapq.heappop(self._unread)
            block, _ = self._blocks[n].value()
            if block is not None:
                path = f"response.output.message.content[{n}]"
                self._closed.extend(self._live_reader.block(block, path))
        return bool(self._closed)

    def announce(self) -> list[CitationEvent]:
        """The citations of the blocks closed since the last call."""
        closed, self._closed = self._closed, []
        return [
            CitationEvent(
                citation=citation,
                sources=[s for s in map(self._live.ledger.get, citation.source_ids) if s],
            )
            for citation in closed
        ]

    def response(self) -> dict[str, Any]:
        """The Converse response the events so far add up to."""
        content = []
        for n in sorted(self._blocks):
            block, _ = self._blocks[n].value()
            if block is not None:
                content.append(block)
        message = {"role": self._role, "content": content}
        return {"output": {"message": message}, **self._top}

    def problems(self) -> list[str]:
        """Tool input that is not JSON, and a stream without its ``messageStop``."""
        notes = []
        for n in sorted(self._blocks):
            problem = self._blocks[n].value()[1]
            if problem:
                notes.append(f"content block {n}: {problem}")
        if not self._stopped:
            notes.append("stream ended before messageStop")
        return notes


class BedrockConverseProvider(Provider):
    """AWS Bedrock Converse responses and ``ConverseStream`` events."""

    name = "bedrock"
    api = "converse"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A Converse response: ``output.message`` with a list of content blocks."""
        output = data.get("output")
        if not isinstance(output, Mapping):
            return False
        message = output.get("message")
        return isinstance(message, Mapping) and isinstance(message.get("content"), list)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A ``ConverseStream`` event: one key naming the event, or an exception.

        A payload logged without its event type (as the wire frames it: the type is a header)
        is one when its ``contentBlockIndex`` says so: a block's start, delta or stop.
        """
        if _bare_kind(event) in ("contentBlockStart", "contentBlockDelta", "contentBlockStop"):
            return True
        if len(event) != 1:
            return False
        ((kind, body),) = event.items()
        if not isinstance(body, Mapping) or not isinstance(kind, str):
            return False
        if kind == "metadata":
            return "usage" in body or "metrics" in body
        if kind in _STREAM_EVENTS:
            return True
        return kind.endswith("Exception") and "message" in body

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final Converse response."""
        _read_converse(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one ``ConverseStream`` (whole, or as a framework passes it on)."""
        return _ConverseStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The Converse response a framework's content blocks and fields came from.

        Blocks are Converse's own (camelCase, one key each) or langchain-aws's: ``text``
        blocks whose ``citations`` (Bedrock citations with snake_case keys) make them
        ``citationsContent`` blocks again, ``tool_use``, ``reasoning_content`` and the other
        blocks with no text. LangChain's standard (v1) blocks are put back in that shape: the
        ``citation`` annotations of text blocks (their ``location`` kept in ``extras``), the
        wrapped ``non_standard`` blocks. ``fields``: ``stopReason``.
        """
        blocks = [content] if isinstance(content, str) else content
        if is_v1(blocks, _V1_BLOCKS):
            blocks = _from_v1(blocks)
        return _content_response(blocks, fields)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Blocks holding Bedrock's citations or Converse's ``citationsContent`` blocks."""
        if isinstance(content, str):
            return False
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if "citationsContent" in block:
                return True
            citations = block.get("citations")
            if isinstance(citations, list) and any(_is_bedrock_citation(c) for c in citations):
                return True
        return False


BEDROCK_CONVERSE = BedrockConverseProvider()
"""The Bedrock Converse reader registered with the dispatcher."""
