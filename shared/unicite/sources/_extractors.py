"""Shape sniffing over every reader (`sniff`), and the built-in readers for named tools.

What kind of source each output gives (seed 001's ``web`` / ``file`` / ``api`` / ``mcp``):

- A web page is ``web`` however it arrived: search results, a fetched or scraped page, an HTML
  body of an HTTP response, an MCP fetch or search tool's pages, a resource at an
  ``http(s)`` URI. Retrieved chunks (LangChain, LlamaIndex) are ``document``.
- ``api``: the JSON body of an HTTP client's response (``{url, status, headers, body}``, an
  httpx / requests response) that is not a list of search results or pages, kept whole at the
  response's URL; and any unrecognised output of a tool the ``http`` extractor reads
  (``http_get``, ``requests_post``, ``curl``, ``api_call``..., seed 001's ``http_client``).
- ``mcp``: what an MCP tool returns that is not a web page or a document: MCP resources
  (``resource_link`` and embedded ``resource`` content at a ``file://`` or other non-web URI)
  and the result's text when no reader recognises it. A result is an MCP one when it is shaped
  as a ``CallToolResult`` (``content`` with ``isError`` / ``structuredContent``, or resource
  content), arrives in an Anthropic ``mcp_tool_result`` block, or its tool is named like seed
  001's ``mcp.<server>__<tool>`` or ``mcp__<server>__<tool>`` (`MCP_TOOL_RE`).
- ``tool``: any other output no reader recognises, kept as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from unicite.model import Source, SourceKind
from unicite.sources._common import (
    MCP_TOOL_RE,
    ToolCall,
    as_mapping,
    collect,
    compact_json,
    first_str,
    is_url,
)
from unicite.sources._decode import (
    NO_RESULTS_RE,
    decode_output,
    dicts,
    http_status,
    mcp_text,
    read_error,
)
from unicite.sources._documents import path_title, retrieved_documents
from unicite.sources._knowledge_bases import bedrock_kb_results
from unicite.sources._pages import (
    fetched_text,
    firecrawl_jina,
    html_text,
    page_dict,
    page_source,
    wikipedia,
    wikipedia_named,
    wikipedia_text,
)
from unicite.sources._search import (
    answer_with_citations,
    bing,
    brave,
    duckduckgo_text,
    exa,
    generic_results,
    google_cse,
    listed_text,
    records_text,
    searxng,
    serper,
    tavily,
)

__all__ = ["NAMED_READERS", "Reader", "decode_output", "read_error", "sniff"]

Reader = Callable[[Any, ToolCall], list[Source] | None]
"""Reads one shape of decoded tool output; None when the output is not that shape."""


_MAX_DEPTH = 4
_MCP_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
_MCP_ONLY = frozenset({"resource_link", "resource"})
"""Content block types only MCP results have (Anthropic tool results have none of them)."""


def _is_web(uri: str | None) -> bool:
    return uri is not None and uri.lower().startswith(("http://", "https://"))


def _is_mcp_blocks(value: object) -> bool:
    """Whether `value` is a list of MCP (or Anthropic ``search_result``) content blocks."""
    if not isinstance(value, list) or not value:
        return False
    blocks = dicts(value)
    return len(blocks) == len(value) and all(
        isinstance(kind := b.get("type"), str) and (kind in _MCP_TYPES or kind == "search_result")
        for b in blocks
    )


def _mcp(data: Any, call: ToolCall, depth: int) -> list[Source] | None:
    """MCP ``CallToolResult``: text, ``resource_link`` and embedded ``resource`` content."""
    mapping = as_mapping(data)
    if mapping is not None:
        content = mapping.get("content")
        if not _is_mcp_blocks(content) and not (
            isinstance(content, list) and ("isError" in mapping or "structuredContent" in mapping)
        ):
            return None
        structured = mapping.get("structuredContent")
    elif _is_mcp_blocks(data):
        content, structured = data, None
    else:
        return None
    blocks = dicts(content)
    if mapping is not None or any(b.get("type") in _MCP_ONLY for b in blocks):
        call.raw_kind = "mcp"  # a CallToolResult, or content only MCP has
    found_in: list[tuple[Source, bool]] = []  # each source, and whether it is raw text
    if structured is not None:
        # The spec has servers repeat structured content as JSON text; read it once.
        found_in.extend((s, False) for s in _sniff_data(structured, call, depth + 1))
    for index, block in enumerate(blocks):
        is_text = block.get("type") == "text"
        if is_text and structured is not None:
            continue
        found = _mcp_block(block, index, call, depth)
        if len(found) == 1 and found[0].rank is None and len(blocks) > 1:
            found = [found[0].model_copy(update={"rank": index})]
        found_in.extend((s, is_text and s.kind == call.raw_kind) for s in found)
    if any(not raw for _, raw in found_in):
        # Text beside links and resources describes them; it is not a source of its own.
        return [s for s, raw in found_in if not raw]
    return [s for s, _ in found_in]


def _mcp_block(block: Mapping[str, Any], index: int, call: ToolCall, depth: int) -> list[Source]:
    """The sources in one MCP (or Anthropic tool-result) content block."""
    kind = block.get("type")
    if kind == "text":
        return _sniff_data(decode_output(block.get("text"), call), call, depth + 1)
    if kind == "resource_link":
        uri = first_str(block, "uri")
        return collect(
            [
                call.source(
                    kind="web" if _is_web(uri) else "mcp",
                    raw=block,
                    url=uri,
                    title=first_str(block, "title", "name"),
                    snippet=first_str(block, "description"),
                    extras={"mime_type": first_str(block, "mimeType"), "size": block.get("size")},
                )
            ]
        )
    if kind == "resource":
        resource = as_mapping(block.get("resource")) or {}
        uri = first_str(resource, "uri")
        text = first_str(resource, "text")
        if text is None and "blob" in resource:
            call.note(f"binary resource {uri!r} kept without its content")
        return collect(
            [
                call.source(
                    kind="web" if _is_web(uri) else "mcp",
                    raw=block,
                    url=uri,
                    title=first_str(resource, "title", "name")
                    or (path_title(uri) if uri else None),
                    content=text,
                    extras={"mime_type": first_str(resource, "mimeType")},
                )
            ]
        )
    if kind == "search_result":
        return collect([_search_result_block(block, index, call)])
    call.note(f"{kind} content is not a citable source; skipped")
    return []


def _search_result_block(block: Mapping[str, Any], rank: int, call: ToolCall) -> Source | None:
    """An Anthropic ``search_result`` content block (source, title, text content)."""
    source_field = first_str(block, "source")
    return call.source(
        kind="web" if is_url(source_field) else "document",
        raw=block,
        url=source_field if is_url(source_field) else None,
        title=first_str(block, "title"),
        content=mcp_text(block.get("content")),
        rank=rank,
        extras={"source": None if is_url(source_field) else source_field},
    )


def _http_response(data: Any, call: ToolCall, depth: int) -> list[Source] | None:
    """An HTTP client response: url, status, headers and a JSON or text body."""
    mapping = as_mapping(data)
    if mapping is None or not is_url(mapping.get("url")) or http_status(mapping) is None:
        return None
    body_key = next((k for k in ("json", "body", "text", "content", "data") if k in mapping), None)
    if body_key is None:
        return None
    url = str(mapping["url"]).strip()
    headers = {str(k).lower(): v for k, v in (as_mapping(mapping.get("headers")) or {}).items()}
    body = decode_output(mapping[body_key], call)
    modified = headers.get("last-modified")
    if isinstance(body, str):
        return collect([page_source(call, raw=mapping, url=url, body=body, modified=modified)])
    if body is None:
        return []
    inner = _sniff_data(body, call, depth + 1)
    if inner and not all(s.kind == call.raw_kind for s in inner):
        return inner  # search results or pages in the body: web pages, not the API's answer
    return collect(
        [
            call.source(
                kind="api",
                raw=mapping,
                url=url,
                title=call.tool,
                content=compact_json(body),
                modified=modified,
            )
        ]
    )


def _unwrap(data: Any, call: ToolCall) -> Any:
    """The payload inside framework and provider tool-result envelopes.

    LangChain ``ToolMessage`` (``artifact`` preferred: it holds the structured output of
    ``content_and_artifact`` tools), LangChain serialized objects, OpenAI
    ``function_call_output`` items and Anthropic ``tool_result`` / ``mcp_tool_result`` blocks
    (the latter marks the output as an MCP result); at most three
    envelopes deep (what is left is read as it is).
    """
    for _ in range(3):
        mapping = as_mapping(data)
        if mapping is None:
            return data
        kind = mapping.get("type")
        if kind == "tool" and "tool_call_id" in mapping:
            call.call_id = call.call_id or first_str(mapping, "tool_call_id")
            if mapping.get("status") == "error":
                return data
            artifact = mapping.get("artifact")
            data = artifact if isinstance(artifact, (Mapping, list)) else mapping.get("content")
        elif kind == "function_call_output" and "output" in mapping:
            call.call_id = call.call_id or first_str(mapping, "call_id")
            data = mapping["output"]
        elif kind in ("tool_result", "mcp_tool_result") and "tool_use_id" in mapping:
            call.call_id = call.call_id or first_str(mapping, "tool_use_id")
            if kind == "mcp_tool_result":
                call.raw_kind = "mcp"  # Anthropic's MCP connector
            if mapping.get("is_error") is True:
                return {"isError": True, "content": mapping.get("content")}
            data = mapping.get("content")
        elif mapping.get("lc") == 1 and isinstance(mapping.get("kwargs"), Mapping):
            data = dict(mapping["kwargs"])
        else:
            return data
        if isinstance(data, list) and all(
            as_mapping(b) is not None and b.get("type") == "text" for b in data
        ):
            data = mcp_text(data)
        data = decode_output(data, call)
    return data


def _raw_text(text: str, call: ToolCall) -> list[Source]:
    """Tool output read as it is: one source (``tool``, ``mcp``, ``api``) titled with the tool."""
    return collect([call.source(kind=call.raw_kind, raw=text, title=call.tool, content=text)])


_TEXT_READERS: tuple[Callable[[str, ToolCall], list[Source] | None], ...] = (
    fetched_text,
    duckduckgo_text,
    wikipedia_text,
    records_text,
    listed_text,
    html_text,
)


_SEED_TEXT_KEYS = ("url", "title", "text", "content")


def _is_seed_row(item: Mapping[str, Any]) -> bool:
    sid = item.get("sid")
    return (
        isinstance(sid, int)
        and not isinstance(sid, bool)
        and any(isinstance(item.get(k), str) and item.get(k) for k in _SEED_TEXT_KEYS)
    )


def seed_rows(data: Any, call: ToolCall) -> list[Source] | None:
    """Seed-004 source rows (``sid``, ``title``, ``url``, ``text``, ``content``, ...).

    A list of rows that all carry an integer ``sid``, at the top or under ``sources`` or
    ``results``. Each is read as `Source` reads a row (``text`` the snippet, ``sid`` and the
    relevance notes kept in ``extras``), with the call's origin and its rank in the list.
    """
    mapping = as_mapping(data)
    candidates = [data] if mapping is None else [mapping.get(k) for k in ("sources", "results")]
    for candidate in candidates:
        items = dicts(candidate)
        if not isinstance(candidate, list) or len(items) != len(candidate):
            continue
        if not items or not all(map(_is_seed_row, items)):
            continue
        found: list[Source] = []
        for rank, item in enumerate(items):
            fields = {"rank": rank, **item, "origin": call.origin, "raw": item}
            try:
                found.append(Source.model_validate(fields))
            except ValidationError as err:
                call.note(f"dropped source row sid {item['sid']}: {err.errors()[0]['msg']}")
        return found
    return None


_DATA_READERS: tuple[Reader, ...] = (
    seed_rows,
    bedrock_kb_results,
    answer_with_citations,
    brave,
    bing,
    serper,
    google_cse,
    exa,
    searxng,
    tavily,
    wikipedia,
    firecrawl_jina,
    retrieved_documents,
)


def _sniff_text(text: str, call: ToolCall) -> list[Source]:
    if not text.strip():
        call.note("returned empty output")
        return []
    if NO_RESULTS_RE.match(text):
        call.note(f"reported no results: {' '.join(text.split())[:120]!r}")
        return []
    for reader in _TEXT_READERS:
        found = reader(text, call)
        if found is not None:
            return found
    return _raw_text(text, call)


def _sniff_data(data: Any, call: ToolCall, depth: int = 0) -> list[Source]:
    if depth > _MAX_DEPTH:
        call.note("output is nested too deeply to read")
        return []
    data = _unwrap(data, call)
    error = read_error(data)
    if error is not None:
        call.note(f"the tool failed: {error}")
        return []
    if data is None:
        return []
    if isinstance(data, str):
        return _sniff_text(data, call)
    strings = isinstance(data, list) and data and all(isinstance(v, str) for v in data)
    if strings and not all(is_url(v) for v in data):
        return _sniff_text("\n\n".join(data), call)
    for special in (_mcp, _http_response):
        found = special(data, call, depth)
        if found is not None:
            return found
    for reader in (*_DATA_READERS, generic_results, page_dict):
        found = reader(data, call)
        if found is not None:
            return found
    if isinstance(data, (Mapping, list)) and not data:
        call.note("returned an empty result")
        return []
    if _no_results(data):
        call.note("found no results")
        return []
    return collect(
        [call.source(kind=call.raw_kind, raw=data, title=call.tool, content=compact_json(data))]
    )


_RESULT_KEYS = frozenset(
    ("results", "items", "data", "hits", "value", "sources", "search_results", "links", "organic")
)
# What a search API sends around its results without being content: the query echoed back,
# ids, statuses, timings.
_ECHO_KEYS = frozenset(("query", "q", "search_query", "request_id", "id", "status", "type"))


def _no_results(data: Any) -> bool:
    """A search response whose result list is empty and which says nothing else.

    ``{"query": "…", "results": [], "response_time": 0.4}`` found nothing; shown to a model as
    a source it would be a source of nothing. An answer engine's text next to an empty list
    (``{"answer": "…", "results": []}``) is content and is kept.
    """
    if not isinstance(data, Mapping):
        return False
    lists = [key for key in data if key in _RESULT_KEYS]
    if not lists or any(data[key] not in ([], None) for key in lists):
        return False
    for key, value in data.items():
        if key in _RESULT_KEYS or value is None or isinstance(value, (bool, int, float)):
            continue
        if isinstance(value, (list, dict, str)) and not value:
            continue
        if isinstance(value, str) and key in _ECHO_KEYS:
            continue
        return False
    return True


def sniff(data: Any, call: ToolCall) -> list[Source]:
    """Read decoded tool output of any supported shape; the fallback for unknown tools."""
    return _sniff_data(data, call)


def _named(*readers: Reader) -> Reader:
    """A reader that tries `readers` first and falls back to sniffing."""

    def read(data: Any, call: ToolCall) -> list[Source]:
        unwrapped = _unwrap(data, call)
        if read_error(unwrapped) is None:
            for reader in readers:
                found = reader(unwrapped, call)
                if found is not None:
                    return found
        return _sniff_data(unwrapped, call)

    return read


def _raw_as(kind: SourceKind, reader: Reader, *, override: bool) -> Reader:
    """`reader`, with output it does not recognise kept as a `kind` source (not ``tool``).

    With ``override=False`` a kind already known for the call (an MCP tool's) is kept.
    """

    def read(data: Any, call: ToolCall) -> list[Source] | None:
        if override or call.raw_kind == "tool":
            call.raw_kind = kind
        return reader(data, call)

    return read


def _text_reader(reader: Callable[[str, ToolCall], list[Source] | None]) -> Reader:
    """A text-format reader that declines data that is not text."""

    def read(data: Any, call: ToolCall) -> list[Source] | None:
        return reader(data, call) if isinstance(data, str) else None

    return read


NAMED_READERS: dict[str, tuple[str, Reader]] = {
    # name: (default tool-name pattern, reader); registered in this order, so later ones win.
    "auto": ("", sniff),
    # MCP tools first: a search or fetch server's own reader (below) wins over it by name.
    "mcp": (MCP_TOOL_RE.pattern, _raw_as("mcp", _named(), override=True)),
    "http": (
        r"http|requests?_(?:get|post)|curl|api_call",
        _raw_as("api", _named(), override=False),
    ),
    "fetch": (
        r"fetch|scrape|crawl|browse|read_?url|web_?page|get_?page|firecrawl|jina|reader",
        _named(firecrawl_jina, _text_reader(fetched_text), page_dict),
    ),
    "documents": (
        r"retriev|vector|(?<![a-z])rag(?![a-z])|knowledge|search_?docs|docs?_search|query_engine",
        _named(bedrock_kb_results, retrieved_documents),
    ),
    "wikipedia": (r"wiki", _named(wikipedia_named)),
    "duckduckgo": (r"duckduckgo|(?<![a-z])ddg(?![a-z])", _named(_text_reader(duckduckgo_text))),
    "bing": (r"(?<![a-z])bing(?![a-z])", _named(bing)),
    "searxng": (r"searx", _named(searxng)),
    "exa": (r"(?<![a-z])exa(?![a-z])", _named(exa)),
    "brave": (r"brave", _named(brave, _text_reader(records_text))),
    "google_cse": (r"google_?(?:custom_?)?search|google_cse|customsearch", _named(google_cse)),
    "serper": (r"serper", _named(serper)),
    "tavily": (r"tavily", _named(tavily)),
}
