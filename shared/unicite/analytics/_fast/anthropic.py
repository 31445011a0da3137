"""Fast reader for Anthropic Messages responses (see `unicite.analytics._fast`).

It walks a final ``Message`` once and counts what `AnthropicProvider` would build: the sources
of ``web_search_tool_result`` and ``web_fetch_tool_result`` blocks and of the text blocks'
citations (``web_search_result_location``, ``search_result_location``, ``char_location``,
``page_location``, ``content_block_location``), the citations, and whether a search ran.

What the provider reader accepts without a diagnostic is modelled exactly; anything else (a
field of an unexpected type, a block or citation type it does not know, a location it would
reject, a result without a URL) makes the reader give up, and `extract()` reads the response.

Anthropic's sources are not all web pages found by URL: document citations name sources with
no URL (``document:<index>``, a file id), and search result citations name theirs by provider
id first (``search_result:<index>``) and by URL second, as `SourceLedger` keys them; both go
into `FastSources` by those keys. The row lists its sources in the ledger's order; `fast_row`
puts them in the canonical order every row has.
"""

from __future__ import annotations

from typing import Any

from unicite._ids import stable_source_id
from unicite.analytics._fast._sources import FastSources
from unicite.analytics._fast._types import FastReader
from unicite.analytics._rows import Row
from unicite.providers.shapes import ANTHROPIC_QUIET_BLOCKS
from unicite.sources import page_key

__all__ = ["READERS", "read_anthropic"]


_DOCUMENT_FIELDS = {
    "char_location": ("start_char_index", "end_char_index"),
    "page_location": ("start_page_number", "end_page_number"),
    "content_block_location": ("start_block_index", "end_block_index"),
}
"""The range fields of each document citation type."""

_HTTP = ("http://", "https://")
_MISSING = object()


class _GiveUp(Exception):
    """The response holds something the fast reader does not model exactly."""


def _text(value: object) -> str | None:
    """A string field the reader reads with ``Reader.text``: None or a str, else give up."""
    if value is None or type(value) is str:
        return value
    raise _GiveUp


def _integer(value: object) -> int | None:
    """An integer field: None or an int, else give up.

    The reader also takes integral floats and digit strings (and notes booleans): those are
    rare, so the fast reader gives up on them.
    """
    if value is None or type(value) is int:
        return value
    raise _GiveUp


class _Sources(FastSources):
    """`FastSources`, and the search result indexes cited so far.

    Document and search result sources have a provider id, by which the ledger finds them
    first, then by their URL's `page_key`.
    """

    __slots__ = ("search_origins",)

    def __init__(self) -> None:
        super().__init__()
        self.search_origins: dict[int, str] = {}
        """The ``source`` each cited search result index was first cited with."""

    def identified(self, source_id: str, url: str | None, title: str | None) -> int:
        """Add a source with a provider id (and perhaps a URL); return its position."""
        keys: list[object] = [("id", source_id)]
        if url is not None:
            keys.append(page_key(url))
        return self.keyed(keys, url, title)


def _document(item: dict[str, Any], kind: str, sources: _Sources) -> int:
    """A ``char_location``, ``page_location`` or ``content_block_location`` citation's source."""
    index = _integer(item.get("document_index"))
    file_id = _text(item.get("file_id"))
    for key in _DOCUMENT_FIELDS[kind]:
        if key not in item:
            raise _GiveUp  # noted: "no start_char_index"
    first, last = _DOCUMENT_FIELDS[kind]
    start = _integer(item[first])
    end = _integer(item[last])
    if start is not None and end is not None and not 0 <= start <= end:
        raise _GiveUp  # an unusable location is noted
    _text(item.get("document_title"))
    if index is not None:
        source_id = f"document:{index}"
    elif file_id and not file_id.startswith(("u-", "h-")):
        # A file id is the source's id as it is (lone surrogates spelled out); ``u-`` and
        # ``h-`` are the prefixes of derived ids, which a file id could collide with.
        source_id = stable_source_id(provider_id=file_id)
    else:
        raise _GiveUp  # a citation naming no document is noted
    return sources.identified(source_id, None, None)


def _search_result(item: dict[str, Any], sources: _Sources) -> int:
    """A ``search_result_location`` citation's source."""
    index = _integer(item.get("search_result_index"))
    origin = _text(item.get("source"))
    if index is None:
        if not origin:
            raise _GiveUp  # a citation naming no search result is noted
        source_id = stable_source_id(provider_id=f"search_result:{origin}")
    else:
        start = _integer(item.get("start_block_index"))
        end = _integer(item.get("end_block_index"))
        if start is not None and end is not None and (index < 0 or start < 0 or end < 0):
            raise _GiveUp  # an unusable location is noted
        source_id = f"search_result:{index}"
        if origin and sources.search_origins.setdefault(index, origin) != origin:
            raise _GiveUp  # one index cited with two sources is noted and left uncited
    url = origin if origin and origin.lower().startswith(_HTTP) else None
    return sources.identified(source_id, url, _text(item.get("title")))


def _web_fetch(block: dict[str, Any], sources: _Sources) -> None:
    """A ``web_fetch_tool_result`` block: its page is a source, an error is none."""
    _text(block.get("tool_use_id"))
    content = block.get("content")
    if type(content) is not dict:
        raise _GiveUp  # no content, or not an object: noted
    kind = content.get("type")
    if kind == "web_fetch_tool_result_error":
        return
    if kind != "web_fetch_result":
        raise _GiveUp
    url = _text(content.get("url"))
    if not url:
        raise _GiveUp
    _text(content.get("retrieved_at"))
    document = content.get("content")
    title = None
    if document is not None:
        if type(document) is not dict:
            raise _GiveUp
        title = _text(document.get("title"))
        source = document.get("source")
        if source is not None:
            if type(source) is not dict:
                raise _GiveUp
            if source.get("type") == "text":
                _text(source.get("data"))
    sources.web(url, title)


def _server_tool_use(block: dict[str, Any]) -> bool:
    """A ``server_tool_use`` block: whether it is a web search or fetch."""
    name = _text(block.get("name"))
    if name == "web_search":
        tool_input = block.get("input")
        if tool_input is not None:
            if type(tool_input) is not dict:
                raise _GiveUp
            _text(tool_input.get("query"))
        return True
    return name == "web_fetch"


def _web_source(entry: dict[str, Any], sources: _Sources) -> int:
    """The source of a web search result or of a citation of one, found by its URL."""
    url = entry.get("url")
    title = entry.get("title")
    if type(url) is not str or not url:
        raise _GiveUp  # a result or web citation without a url is noted
    if title is not None and type(title) is not str:
        raise _GiveUp
    return sources.web(url, title)


def _read(data: dict[str, Any]) -> Row:
    model = _text(data.get("model"))
    _text(data.get("id"))
    _text(data.get("stop_reason"))
    content = data.get("content")
    if type(content) is not list:
        raise _GiveUp
    sources = _Sources()
    cited = sources.cited
    citations = 0
    searched = False
    for block in content:
        if type(block) is not dict:
            raise _GiveUp
        kind = block.get("type")
        if kind == "text":
            text = block.get("text", _MISSING)
            if text is not None and type(text) is not str:
                raise _GiveUp  # a text block without text, or with something else, is noted
            items = block.get("citations")
            if not items:
                if items is None or type(items) is list:
                    continue
                raise _GiveUp
            if type(items) is not list:
                raise _GiveUp
            # Every citation the reader makes is kept: its span is its block's, inside the
            # text, and its source was just added.
            for item in items:
                if type(item) is not dict:
                    raise _GiveUp
                ctype = item.get("type")
                if ctype == "web_search_result_location":
                    position = _web_source(item, sources)
                elif ctype == "search_result_location":
                    position = _search_result(item, sources)
                elif type(ctype) is str and ctype in _DOCUMENT_FIELDS:
                    position = _document(item, ctype, sources)
                else:
                    raise _GiveUp  # an unknown citation type is noted
                quote = item.get("cited_text")
                if quote is not None and type(quote) is not str:
                    raise _GiveUp
                cited[position] = True
                citations += 1
        elif kind == "web_search_tool_result":
            searched = True
            _text(block.get("tool_use_id"))
            results = block.get("content")
            if type(results) is list:
                for result in results:
                    if type(result) is not dict or result.get("type") != "web_search_result":
                        raise _GiveUp
                    _web_source(result, sources)
            elif type(results) is not dict or results.get("type") != "web_search_tool_result_error":
                raise _GiveUp
        elif kind == "server_tool_use":
            if _server_tool_use(block):
                searched = True
        elif kind == "web_fetch_tool_result":
            searched = True
            _web_fetch(block, sources)
        elif type(kind) is not str or kind not in ANTHROPIC_QUIET_BLOCKS:
            raise _GiveUp  # an unknown block type is noted
    return sources.row(
        provider="anthropic", model=model, grounded=searched or citations > 0, citations=citations
    )


def read_anthropic(data: object) -> Row | None:
    """The row of a final Anthropic ``Message``, or None where it holds anything unusual."""
    if type(data) is not dict:
        return None
    try:
        return _read(data)
    except _GiveUp:
        return None


READERS: dict[str, FastReader] = {"AnthropicProvider": read_anthropic}
"""Fast readers by the class name of the provider reader they stand in for."""
