"""Anthropic Messages responses read through the analytics sink give `extract()`'s row.

Fixtures are written here from the Messages API's documented shapes (content blocks ``text``
with ``citations``, ``server_tool_use``, ``web_search_tool_result``, ``web_fetch_tool_result``,
``thinking``...); the recorded corpus is `analytics._corpus`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

import pytest
from analytics._corpus import (
    assert_rows_agree,
    check_corpus_response,
    json_nodes,
    reader_of,
    responses,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite.analytics import analyze_one, fast_row

READER = "AnthropicProvider"

CORPUS = [(name, data) for name, data in responses() if reader_of(data) == READER]


def _message(*blocks: Any, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(blocks),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    }
    message.update(fields)
    return message


def _search(query: str, *results: tuple[str, str | None]) -> list[dict[str, Any]]:
    """A ``server_tool_use`` web search and its ``web_search_tool_result``."""
    return [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
            "name": "web_search",
            "input": {"query": query},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
            "content": [
                {
                    "type": "web_search_result",
                    "url": url,
                    "title": title,
                    "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1k",
                    "page_age": "April 30, 2025",
                }
                for url, title in results
            ],
        },
    ]


def _web_cite(url: str, title: str | None, text: str = "claim") -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm..",
        "cited_text": text,
    }


def _text(text: str, *citations: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if citations:
        block["citations"] = list(citations)
    return block


def _document_cite(kind: str, index: int | None, start: int, end: int) -> dict[str, Any]:
    first, last = {
        "char_location": ("start_char_index", "end_char_index"),
        "page_location": ("start_page_number", "end_page_number"),
        "content_block_location": ("start_block_index", "end_block_index"),
    }[kind]
    return {
        "type": kind,
        "cited_text": "The grass is green. ",
        "document_index": index,
        "document_title": "My Document",
        first: start,
        last: end,
    }


WEB_SEARCH = _message(
    {"type": "thinking", "thinking": "I should search.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
    *_search(
        "café tokyo 東京",
        ("https://www.example.com/a/", "Example A"),
        ("https://news.example.org/story?utm_source=x", "Story"),
        ("https://blog.example.net/post", "Post"),
    ),
    _text("Here is what I found. "),
    # Cites the third result before the first, and the first by another spelling of its URL.
    _text("Café 東京 😀 is open", _web_cite("https://blog.example.net/post", "Post")),
    _text(" and busy.", _web_cite("https://example.com/a", "Example A")),
)

DOCUMENTS = _message(
    _text("According to the document, "),
    _text("the grass is green", _document_cite("char_location", 0, 0, 20)),
    _text(" and ", _document_cite("page_location", 1, 1, 2)),
    _text("the sky is blue.", _document_cite("content_block_location", 0, 0, 1)),
)

SEARCH_RESULTS = _message(
    _text(
        "The Ruby language dates from 1993.",
        {
            "type": "search_result_location",
            "source": "https://example.com/ruby-facts",
            "title": "Ruby Facts",
            "cited_text": "Ruby was created in 1993.",
            "search_result_index": 0,
            "start_block_index": 0,
            "end_block_index": 1,
        },
        {
            "type": "search_result_location",
            "source": "kb://internal/ruby",
            "title": "Internal notes",
            "cited_text": "Ruby.",
            "search_result_index": 1,
            "start_block_index": 0,
            "end_block_index": 0,
        },
    ),
)

WEB_FETCH = _message(
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01234567890abcdef",
        "name": "web_fetch",
        "input": {"url": "https://example.com/article"},
    },
    {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_01234567890abcdef",
        "content": {
            "type": "web_fetch_result",
            "url": "https://example.com/article",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "Full text"},
                "title": "Article Title",
                "citations": {"enabled": True},
            },
            "retrieved_at": "2025-08-25T10:30:00Z",
        },
    },
    _text("The article says so."),
)

SEARCH_ERROR = _message(
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01",
        "name": "web_search",
        "input": {"query": "x"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    },
    {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_02",
        "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"},
    },
    _text("I could not search."),
)

FETCH_ONLY = _message(
    {"type": "server_tool_use", "id": "s", "name": "web_fetch", "input": {"url": "https://a.b/"}},
    _text("I tried to fetch it."),
)

PLAIN = _message(_text("Hello!"), {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}})

FAST = {
    "web_search": WEB_SEARCH,
    "documents": DOCUMENTS,
    "search_results": SEARCH_RESULTS,
    "web_fetch": WEB_FETCH,
    "search_error": SEARCH_ERROR,
    "plain": PLAIN,
    "fetch_only": FETCH_ONLY,
    "empty": _message(),
}


# --- the recorded corpus ---------------------------------------------------------------------


def test_the_corpus_has_anthropic_responses() -> None:
    assert len(CORPUS) >= 10


@pytest.mark.parametrize(("name", "data"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_rows_agree(name: str, data: Mapping[str, Any]) -> None:
    check_corpus_response(name, data)


# --- written fixtures ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FAST))
def test_documented_shapes_are_read_by_the_sink(name: str) -> None:
    data = FAST[name]
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_web_search_row() -> None:
    row = fast_row(WEB_SEARCH)
    assert row is not None
    # Rows list their sources in one canonical order (by URL), whatever order a reader met them in.
    assert row["urls"] == [
        "https://blog.example.net/post",
        "https://news.example.org/story?utm_source=x",
        "https://www.example.com/a/",
    ]
    assert row["cited"] == [True, False, True]
    assert row["domains"] == ["example.net", "example.org", "example.com"]
    assert row["tlds"] == ["net", "org", "com"]
    assert row["citations"] == 2
    assert row["grounded"] is True


def test_documents_are_sources_without_urls() -> None:
    row = analyze_one(DOCUMENTS)
    assert row["sources"] == 2  # document 0 (cited twice) and document 1
    assert row["urls"] == [None, None]
    assert row["citations"] == 3


def test_one_search_result_index_with_two_sources_agree() -> None:
    # The reader leaves the second citation uncited, with a diagnostic.
    data = _message(
        _text(
            "a",
            {
                "type": "search_result_location",
                "source": "https://a.example/",
                "search_result_index": 0,
            },
            {
                "type": "search_result_location",
                "source": "https://b.example/",
                "search_result_index": 0,
            },
        )
    )
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_search_result_index_names_the_source_before_its_url() -> None:
    # A second index with the first one's URL is the same page.
    data = _message(
        _text(
            "a",
            {
                "type": "search_result_location",
                "source": "https://a.example/",
                "search_result_index": 0,
            },
            {
                "type": "search_result_location",
                "source": "https://b.example",
                "search_result_index": 1,
            },
            {
                "type": "search_result_location",
                "source": "https://www.a.example",
                "search_result_index": 2,
            },
            {"type": "search_result_location", "source": "notes", "search_result_index": 3},
            {"type": "search_result_location", "search_result_index": 3},
            {"type": "search_result_location", "source": "https://c.example"},
        ),
        *_search("q", ("https://b.example/", "B"), ("https://c.example/x", None)),
    )
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_a_redirect_source_takes_a_later_sightings_domain() -> None:
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123"
    data = _message(
        *_search("q", (redirect, "Some page"), (redirect + "/", "bbc.co.uk")),
        _text("x", _web_cite(redirect, None)),
    )
    assert_rows_agree(data)
    row = fast_row(data)
    assert row is not None
    assert row["domains"] == ["bbc.co.uk"]
    assert row["redirects"] == [True]


ODD = {
    "unknown block": _message({"type": "image", "source": {}}, _text("a")),
    "block not an object": _message("text", _text("a")),
    "text not a string": _message({"type": "text", "text": 3}),
    "text block without text": _message({"type": "text"}),
    "citations not a list": _message({"type": "text", "text": "a", "citations": {}}),
    "unknown citation": _message(_text("a", {"type": "quote_location", "url": "https://a.b/"})),
    "web citation without url": _message(_text("a", _web_cite("", "t"))),
    "url not a string": _message(_text("a", {"type": "web_search_result_location", "url": 3})),
    "title not a string": _message(_text("a", _web_cite("https://a.example/", 3))),  # type: ignore[arg-type]
    "page range backwards": _message(_text("a", _document_cite("page_location", 0, 3, 2))),
    "negative char": _message(_text("a", _document_cite("char_location", 0, -1, 2))),
    "missing range": _message(
        _text("a", {"type": "char_location", "document_index": 0, "start_char_index": 0})
    ),
    "index as text": _message(_text("a", _document_cite("char_location", "0", 0, 2))),  # type: ignore[arg-type]
    "index a bool": _message(_text("a", _document_cite("char_location", True, 0, 2))),
    "no document": _message(_text("a", _document_cite("char_location", None, 0, 2))),
    "file id of a derived shape": _message(
        _text("a", {**_document_cite("char_location", None, 0, 2), "file_id": "u-123"})
    ),
    "negative search result": _message(
        _text(
            "a",
            {
                "type": "search_result_location",
                "source": "https://a.example/",
                "search_result_index": -1,
                "start_block_index": 0,
                "end_block_index": 1,
            },
        )
    ),
    "result without url": _message(*_search("q", ("", "t"))),
    "search content null": _message(
        {"type": "web_search_tool_result", "tool_use_id": "x", "content": None}
    ),
    "unknown search result": _message(
        {"type": "web_search_tool_result", "tool_use_id": "x", "content": [{"type": "image"}]}
    ),
    "fetch without content": _message({"type": "web_fetch_tool_result", "tool_use_id": "x"}),
    "model not a string": _message(_text("a"), model=4),
    "search input not an object": _message(
        {"type": "server_tool_use", "id": "s", "name": "web_search", "input": "q"}
    ),
    "query not a string": _message(
        {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": 1}}
    ),
    "tool name not a string": _message({"type": "server_tool_use", "id": "s", "name": 1}),
    "block type not a string": _message({"type": ["text"], "text": "a"}),
    "citation type not a string": _message(_text("a", {"type": ["char_location"]})),
    "citation not an object": _message(_text("a", "https://a.example/")),  # type: ignore[arg-type]
    "quote not a string": _message(
        _text("a", {**_web_cite("https://a.example/", "t"), "cited_text": 1})
    ),
    "document title not a string": _message(
        _text("a", {**_document_cite("char_location", 0, 0, 2), "document_title": 1})
    ),
    "file id not a string": _message(
        _text("a", {**_document_cite("char_location", 0, 0, 2), "file_id": 1})
    ),
    "search result source not a string": _message(
        _text("a", {"type": "search_result_location", "source": 1, "search_result_index": 0})
    ),
    "search result names nothing": _message(
        _text("a", {"type": "search_result_location", "source": "", "title": "t"})
    ),
    "search result block not an int": _message(
        _text(
            "a",
            {
                "type": "search_result_location",
                "source": "https://a.example/",
                "search_result_index": 0,
                "start_block_index": "0",
                "end_block_index": 1,
            },
        )
    ),
    "search result title not a string": _message(*_search("q", ("https://a.example/", 1))),  # type: ignore[arg-type]
    "search result not an object": _message(
        {"type": "web_search_tool_result", "tool_use_id": "x", "content": ["https://a.example/"]}
    ),
    "unknown search error": _message(
        {"type": "web_search_tool_result", "tool_use_id": "x", "content": {"type": "other"}}
    ),
    "tool use id not a string": _message(
        {"type": "web_search_tool_result", "tool_use_id": 1, "content": []}
    ),
    "fetch of unknown type": _message(
        {"type": "web_fetch_tool_result", "tool_use_id": "x", "content": {"type": "pdf"}}
    ),
    "fetch without url": _message(
        {
            "type": "web_fetch_tool_result",
            "tool_use_id": "x",
            "content": {"type": "web_fetch_result"},
        }
    ),
    "fetch document not an object": _message(
        {
            "type": "web_fetch_tool_result",
            "content": {"type": "web_fetch_result", "url": "https://a.example/", "content": "text"},
        }
    ),
    "fetch data not a string": _message(
        {
            "type": "web_fetch_tool_result",
            "content": {
                "type": "web_fetch_result",
                "url": "https://a.example/",
                "content": {"type": "document", "source": {"type": "text", "data": 1}},
            },
        }
    ),
    "fetch time not a string": _message(
        {
            "type": "web_fetch_tool_result",
            "content": {"type": "web_fetch_result", "url": "https://a.example/", "retrieved_at": 1},
        }
    ),
    "id not a string": _message(_text("a"), id=1),
    "stop reason not a string": _message(_text("a"), stop_reason=["end_turn"]),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_shapes_agree(name: str) -> None:
    data = ODD[name]
    assert reader_of(data) == READER
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_a_file_id_names_a_document() -> None:
    cite = {
        **_document_cite("char_location", None, 0, 2),
        "file_id": "file_011CNha8iCJcU1wXNR6q4V8w",
    }
    data = _message(_text("a", cite), _text("b", dict(cite)))
    assert_rows_agree(data)
    row = fast_row(data)
    assert row is not None
    assert row["sources"] == 1


# --- generated responses ---------------------------------------------------------------------

URLS = [
    "https://example.com/page",
    "https://www.example.com/page/",
    "http://example.com/page?utm_source=openai",
    "https://EXAMPLE.com/page#section",
    "https://example.com/other",
    "https://news.bbc.co.uk/x",
    "https://café.example/東京",
    "https://sub.example.org/a?b=1",
    "https://sub.example.org/a?b=2",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123/",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/XyZ",
    "https://127.0.0.1:8080/x",
    "not a url",
    "ftp://files.example.com/a",
]
TITLES = st.one_of(
    st.none(),
    st.sampled_from(
        ["example.com", "www.bbc.co.uk", "Some Title", "café 東京 😀", " nytimes.com "]
    ),
)
TEXT = st.text(alphabet=st.sampled_from("ab .\n\t café東京😀"), max_size=12)
QUIET = [
    "thinking",
    "redacted_thinking",
    "tool_use",
    "code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
]


@st.composite
def _web_citation(draw: st.DrawFn, urls: list[str]) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": draw(st.sampled_from(urls)),
        "title": draw(TITLES),
        "encrypted_index": "Eo8B",
        "cited_text": draw(st.one_of(st.none(), TEXT, st.just("Today&#x27;s"))),
    }


@st.composite
def _search_citation(draw: st.DrawFn, urls: list[str], origins: list[str]) -> dict[str, Any]:
    """A search result citation; the result at index i has the source ``origins[i]``."""
    index = draw(st.one_of(st.integers(0, 3), st.none()))
    source = draw(st.one_of(st.sampled_from(urls), st.just("kb://doc")))
    item: dict[str, Any] = {
        "type": "search_result_location",
        "search_result_index": index,
        "source": source if index is None else origins[index],
        "title": draw(TITLES),
        "cited_text": draw(TEXT),
    }
    if draw(st.booleans()):
        item["start_block_index"] = draw(st.integers(0, 3))
        item["end_block_index"] = draw(st.integers(0, 3))
    return item


@st.composite
def _document_citation(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["char_location", "page_location", "content_block_location"]))
    start = draw(st.integers(0, 5))
    item = _document_cite(kind, draw(st.integers(0, 2)), start, start + draw(st.integers(0, 5)))
    if draw(st.booleans()):
        item["document_index"] = None
        item["file_id"] = draw(st.sampled_from(["file_011CNha8", "file_02", "document:1"]))
    return item


@st.composite
def _search_blocks(draw: st.DrawFn, urls: list[str]) -> list[dict[str, Any]]:
    results = draw(st.lists(st.tuples(st.sampled_from(urls), TITLES), max_size=5))
    blocks = _search(draw(TEXT), *results)
    if draw(st.booleans()):
        blocks[0]["name"] = draw(st.sampled_from(["web_search", "web_fetch", "code_execution"]))
    if draw(st.integers(0, 4)) == 0:
        blocks[1]["content"] = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    if draw(st.integers(0, 4)) == 0:
        del blocks[draw(st.integers(0, 1))]  # one without the other
    return blocks


@st.composite
def _fetch(draw: st.DrawFn, urls: list[str]) -> dict[str, Any]:
    return {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_02",
        "content": {
            "type": "web_fetch_result",
            "url": draw(st.sampled_from(urls)),
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": draw(TEXT)},
                "title": draw(TITLES),
            },
            "retrieved_at": "2025-08-25T10:30:00Z",
        },
    }


@st.composite
def _clean(draw: st.DrawFn, max_blocks: int = 6) -> dict[str, Any]:
    """A response in the documented shape, as the API returns it.

    Each response draws its URLs from a few of `URLS`, so the same page comes back often,
    written differently.
    """
    urls = draw(st.lists(st.sampled_from(URLS), min_size=1, max_size=4, unique=True))
    origins = draw(st.lists(st.sampled_from([*urls, "kb://doc"]), min_size=4, max_size=4))
    citation = st.one_of(_web_citation(urls), _search_citation(urls, origins), _document_citation())
    blocks: list[Any] = []
    for _ in range(draw(st.integers(0, max_blocks))):
        choice = draw(st.sampled_from(["text", "cited", "cited", "search", "fetch", "quiet"]))
        if choice == "text":
            blocks.append(_text(draw(TEXT)))
        elif choice == "cited":
            blocks.append(_text(draw(TEXT), *draw(st.lists(citation, min_size=1, max_size=3))))
        elif choice == "search":
            blocks.extend(draw(_search_blocks(urls)))
        elif choice == "fetch":
            blocks.append(draw(_fetch(urls)))
        else:
            blocks.append({"type": draw(st.sampled_from(QUIET)), "id": "x", "input": {}})
    return _message(*blocks, model=draw(st.one_of(st.none(), st.just("claude-opus-4-1"))))


ODD_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    3,
    1.0,
    2.5,
    "",
    " ",
    "0",
    "-1",
    "x",
    "café 東京 😀",
    "https://x.example/",
    "kb://doc",
    "u-1",
    "document:0",
    "web_search",
    "web_fetch",
    "image",
    "web_search_result",
    "web_search_result_location",
    "char_location",
    "search_result_location",
    "web_search_tool_result_error",
    "web_fetch_result",
    [],
    {},
    [{"type": "text"}],
]
"""What a mutation puts in place of a value."""


def _odd(pick: random.Random, value: Any) -> Any:
    """An odd value; for an int, often another int (out of range, or out of order)."""
    if isinstance(value, int) and not isinstance(value, bool) and pick.random() < 0.5:
        return pick.randint(-3, 8)
    # Copied: a later mutation may change what it puts in place.
    return copy.deepcopy(pick.choice(ODD_VALUES))


KEYS = [
    "type",
    "text",
    "citations",
    "url",
    "title",
    "cited_text",
    "document_index",
    "document_title",
    "file_id",
    "start_char_index",
    "end_char_index",
    "start_page_number",
    "end_page_number",
    "start_block_index",
    "end_block_index",
    "search_result_index",
    "source",
    "name",
    "input",
    "query",
    "content",
    "tool_use_id",
    "retrieved_at",
    "data",
]
"""Keys a mutation may add to an object, besides changing or dropping those it has."""


@st.composite
def _hostile(draw: st.DrawFn) -> dict[str, Any]:
    """A clean response with a field dropped, added, retyped or put out of range (or a few).

    Mostly one change, and mostly to an object's field: a response with one odd thing in it
    shows whether the analytics sink notices that thing, where several would hide each other.
    Where to change is picked uniformly (Hypothesis's own draws favour the first choices).
    """
    data = copy.deepcopy(draw(_clean(max_blocks=4)))
    pick = draw(st.randoms(use_true_random=False))
    for _ in range(pick.choice([1, 1, 1, 2, 3])):
        nodes = json_nodes(data["content"])
        objects = [node for node in nodes if isinstance(node, dict)]
        if objects and pick.random() < 0.85:
            node = pick.choice(objects)
            key = pick.choice(sorted(node)) if node and pick.random() < 0.7 else pick.choice(KEYS)
            if key in node and pick.random() < 0.3:
                del node[key]
            else:
                node[key] = _odd(pick, node.get(key))
        else:
            arrays = [node for node in nodes if isinstance(node, list)]
            # The content list itself less often: a block that is not an object hides the rest.
            array = pick.choice(arrays[1:] if len(arrays) > 1 and pick.random() < 0.8 else arrays)
            if array and pick.random() < 0.5:
                array[pick.randrange(len(array))] = _odd(pick, None)
            else:
                array.append(_odd(pick, None))
    if pick.random() < 0.1:
        data[pick.choice(["model", "id", "stop_reason"])] = _odd(pick, None)
    return data


@given(_clean())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_clean_responses_are_read_by_the_sink(data: dict[str, Any]) -> None:
    assert reader_of(data) == READER
    assert fast_row(data) is not None
    assert_rows_agree(data)


# Most hostile responses are given up on at their one odd field: more of them, to try more.
@given(_hostile())
@settings(
    max_examples=settings.default.max_examples * 5 // 2,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_hostile_responses_agree(data: dict[str, Any]) -> None:
    assert_rows_agree(data)
