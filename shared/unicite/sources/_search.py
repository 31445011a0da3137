"""Readers for web search results: search APIs, answer engines, result lists printed as text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from unicite.model import Source, SourceKind
from unicite.sources._common import (
    CONTENT_KEYS,
    MODIFIED_KEYS,
    PUBLISHED_KEYS,
    SNIPPET_KEYS,
    TITLE_KEYS,
    ToolCall,
    as_mapping,
    clean_snippet,
    collect,
    first_str,
    first_value,
    heading_title,
    is_url,
    score_of,
    strip_tags,
    url_in,
)
from unicite.sources._decode import (
    dicts,
    error_message,
)
from unicite.sources._inline import claims_by_number, split_sources_block

__all__ = [
    "answer_with_citations",
    "bing",
    "brave",
    "duckduckgo_text",
    "exa",
    "generic_result",
    "generic_results",
    "google_cse",
    "listed_text",
    "records_text",
    "searxng",
    "serper",
    "tavily",
]

_SNIPPET_MAX = 1000  # a generic result's "content" longer than this is page text, not a preview


def generic_result(
    item: Mapping[str, Any], rank: int | None, call: ToolCall, kind: SourceKind = "web"
) -> Source | None:
    """A search result or page of unknown provenance, read from the usual field names."""
    snippet = first_str(item, *SNIPPET_KEYS)
    content = first_str(item, *CONTENT_KEYS)
    loose = first_str(item, "content")
    if loose is not None:
        # "content" is a preview for Tavily and SearxNG but the page text elsewhere.
        if snippet is None and len(loose) <= _SNIPPET_MAX:
            snippet = loose
        elif content is None:
            content = loose
    snippet = clean_snippet(snippet)
    position = item.get("position")
    if isinstance(position, int) and not isinstance(position, bool) and position >= 1:
        rank = position - 1
    return call.source(
        kind=kind,
        raw=item,
        url=url_in(item),
        title=first_str(item, *TITLE_KEYS),
        snippet=snippet,
        content=content,
        rank=rank,
        published=first_value(item, PUBLISHED_KEYS),
        modified=first_value(item, MODIFIED_KEYS),
        extras={"score": score_of(item), "author": first_str(item, "author", "byline")},
    )


def tavily(data: Any, call: ToolCall) -> list[Source] | None:
    """Tavily search (``results[]`` url/title/content/score/raw_content) and extract."""
    mapping = as_mapping(data)
    if mapping is None:
        items = dicts(data)
        # LangChain's TavilySearchResults returns the bare list of {url, content[, title, score]}.
        if items and all("url" in i and "content" in i for i in items):
            mapping = {"results": items}
        else:
            return None
    results = dicts(mapping.get("results"))
    if not results or not all(
        "url" in r and ("content" in r or "raw_content" in r) for r in results
    ):
        return None
    sources = []
    for rank, result in enumerate(results):
        sources.append(
            call.source(
                kind="web",
                raw=result,
                url=first_str(result, "url"),
                title=first_str(result, "title")
                or heading_title(first_str(result, "raw_content") or ""),
                snippet=first_str(result, "content"),
                content=first_str(result, "raw_content"),
                rank=rank,
                published=result.get("published_date"),
                extras={"score": score_of(result), "favicon": first_str(result, "favicon")},
            )
        )
    for failed in dicts(mapping.get("failed_results")):
        call.note(f"could not extract {failed.get('url')!r}: {error_message(failed.get('error'))}")
    return collect(sources)


def exa(data: Any, call: ToolCall) -> list[Source] | None:
    """Exa search / contents (``results[]`` with id, url, text, highlights, publishedDate)."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    results = dicts(mapping.get("results"))
    exa_top = any(k in mapping for k in ("requestId", "resolvedSearchType", "autopromptString"))
    exa_items = results and all(
        "id" in r and "url" in r and any(k in r for k in ("publishedDate", "highlights", "author"))
        for r in results
    )
    if not results or not (exa_top or exa_items):
        return None
    sources = []
    for rank, result in enumerate(results):
        highlights = [h.strip() for h in result.get("highlights") or [] if isinstance(h, str)]
        snippet = first_str(result, "summary") or (" … ".join(highlights) if highlights else None)
        sources.append(
            call.source(
                kind="web",
                raw=result,
                url=first_str(result, "url"),
                title=first_str(result, "title"),
                snippet=snippet,
                content=first_str(result, "text"),
                rank=rank,
                published=result.get("publishedDate"),
                extras={"score": score_of(result), "author": first_str(result, "author")},
            )
        )
    return collect(sources)


def searxng(data: Any, call: ToolCall) -> list[Source] | None:
    """SearxNG ``format=json`` (``results[]`` with url/title/content/engine(s)/score)."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    results = dicts(mapping.get("results"))
    searx_top = "number_of_results" in mapping or "unresponsive_engines" in mapping
    searx_items = results and all("engine" in r or "engines" in r for r in results)
    if not results or not (searx_top or searx_items):
        return None
    sources = []
    for rank, result in enumerate(results):
        content = first_str(result, "content")
        sources.append(
            call.source(
                kind="web",
                raw=result,
                url=first_str(result, "url"),
                title=first_str(result, "title"),
                snippet=strip_tags(content) if content else None,
                rank=rank,
                published=result.get("publishedDate") or result.get("pubdate"),
                extras={"score": score_of(result), "engines": result.get("engines")},
            )
        )
    for engine in mapping.get("unresponsive_engines") or []:
        call.note(f"SearxNG engine did not answer: {engine}")
    return collect(sources)


def serper(data: Any, call: ToolCall) -> list[Source] | None:
    """Serper (Google) search: ``organic[]`` link/snippet/position, news, answers, questions."""
    mapping = as_mapping(data)
    if mapping is None or not (
        "searchParameters" in mapping
        or any(isinstance(mapping.get(k), list) for k in ("organic", "news", "topStories"))
    ):
        return None
    sources: list[Source | None] = []
    for section in ("organic", "news", "topStories"):
        for index, item in enumerate(dicts(mapping.get(section))):
            source = generic_result(item, index, call)
            if source is not None and section != "organic":
                source = source.model_copy(update={"extras": {**source.extras, "section": section}})
            sources.append(source)
    box = as_mapping(mapping.get("answerBox"))
    if box and is_url(box.get("link")):
        sources.append(
            call.source(
                kind="web",
                raw=box,
                url=first_str(box, "link"),
                title=first_str(box, "title"),
                snippet=first_str(box, "snippet", "answer"),
                extras={"section": "answerBox"},
            )
        )
    graph = as_mapping(mapping.get("knowledgeGraph"))
    if graph and is_url(graph.get("descriptionLink")):
        sources.append(
            call.source(
                kind="web",
                raw=graph,
                url=first_str(graph, "descriptionLink"),
                title=first_str(graph, "title"),
                snippet=first_str(graph, "description"),
                extras={
                    "section": "knowledgeGraph",
                    "publisher": first_str(graph, "descriptionSource"),
                },
            )
        )
    for index, question in enumerate(dicts(mapping.get("peopleAlsoAsk"))):
        sources.append(
            call.source(
                kind="web",
                raw=question,
                url=first_str(question, "link"),
                title=first_str(question, "title"),
                snippet=first_str(question, "snippet"),
                rank=index,
                extras={"section": "peopleAlsoAsk", "question": first_str(question, "question")},
            )
        )
    return collect(sources)


_CSE_PUBLISHED = ("article:published_time", "og:published_time", "datepublished", "date")
_CSE_MODIFIED = ("article:modified_time", "og:updated_time", "datemodified", "last-modified")


def google_cse(data: Any, call: ToolCall) -> list[Source] | None:
    """Google Programmable Search (Custom Search JSON API): ``items[]`` title/link/snippet."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    items = dicts(mapping.get("items"))
    is_cse = str(mapping.get("kind", "")).startswith("customsearch") or (
        items and all("link" in i and ("displayLink" in i or "htmlSnippet" in i) for i in items)
    )
    if not items or not is_cse:
        return None
    start = 0
    queries = as_mapping(mapping.get("queries")) or {}
    request = dicts(queries.get("request"))
    if request and isinstance(request[0].get("startIndex"), int):
        start = max(request[0]["startIndex"] - 1, 0)  # 1-based, for later result pages
    sources = []
    for index, item in enumerate(items):
        pagemap = as_mapping(item.get("pagemap")) or {}
        metatags = dicts(pagemap.get("metatags"))
        meta = metatags[0] if metatags else {}
        sources.append(
            call.source(
                kind="web",
                raw=item,
                url=first_str(item, "link"),
                title=first_str(item, "title"),
                snippet=first_str(item, "snippet"),
                rank=start + index,
                published=first_value(meta, _CSE_PUBLISHED),
                modified=first_value(meta, _CSE_MODIFIED),
                extras={"display_link": first_str(item, "displayLink")},
            )
        )
    return collect(sources)


def brave(data: Any, call: ToolCall) -> list[Source] | None:
    """Brave Web Search: ``web.results[]`` title/url/description(HTML)/page_age, news, FAQ."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    sections = [(name, as_mapping(mapping.get(name))) for name in ("web", "news", "discussions")]
    if not any(s and isinstance(s.get("results"), list) for _, s in sections):
        return None
    sources: list[Source | None] = []
    for name, section in sections:
        for rank, result in enumerate(dicts(section.get("results") if section else None)):
            description = first_str(result, "description")
            extra = [
                strip_tags(x) for x in result.get("extra_snippets") or [] if isinstance(x, str)
            ]
            sources.append(
                call.source(
                    kind="web",
                    raw=result,
                    url=first_str(result, "url"),
                    title=strip_tags(first_str(result, "title") or ""),
                    snippet=strip_tags(description) if description else None,
                    rank=rank,
                    published=result.get("page_age") or result.get("age"),
                    extras={
                        "section": None if name == "web" else name,
                        "extra_snippets": extra or None,
                    },
                )
            )
    return collect(sources)


def bing(data: Any, call: ToolCall) -> list[Source] | None:
    """Bing Web / News Search v7: ``webPages.value[]`` name/url/snippet, ``news.value[]``."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    kind = mapping.get("_type")
    sections: list[tuple[str, Any]] = []
    for name in ("webPages", "news"):
        section = as_mapping(mapping.get(name))
        if section is not None:
            sections.append((name, section.get("value")))
    if kind == "News":
        sections.append(("news", mapping.get("value")))
    if not sections or not any(isinstance(v, list) for _, v in sections):
        return None
    sources: list[Source | None] = []
    for name, values in sections:
        for rank, item in enumerate(dicts(values)):
            providers = dicts(item.get("provider"))
            sources.append(
                call.source(
                    kind="web",
                    raw=item,
                    url=first_str(item, "url"),
                    title=first_str(item, "name"),
                    snippet=first_str(item, "snippet", "description"),
                    rank=rank,
                    published=item.get("datePublished"),
                    extras={
                        "section": None if name == "webPages" else name,
                        "publisher": first_str(providers[0], "name") if providers else None,
                        "crawled": first_str(item, "dateLastCrawled"),
                    },
                )
            )
    return collect(sources)


def answer_with_citations(data: Any, call: ToolCall) -> list[Source] | None:
    """Answer engines (Perplexity-style): ``citations[]`` URLs numbered by ``[n]`` in the text."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    citations = mapping.get("citations")
    results = dicts(mapping.get("search_results"))
    if not (isinstance(citations, list) and all(isinstance(c, str) for c in citations)):
        if not results:
            return None
        citations = [first_str(r, "url") or "" for r in results]
    text = ""
    for choice in dicts(mapping.get("choices")):
        message = as_mapping(choice.get("message")) or {}
        text += first_str(message, "content") or ""
    text = text or first_str(mapping, "answer", "content", "text", "output") or ""
    claims = claims_by_number(text) if text else {}
    by_url = {first_str(r, "url"): r for r in results}
    sources = []
    for index, url in enumerate(citations):
        result = by_url.get(url) or {}
        claim = claims.get(index + 1)
        sources.append(
            call.source(
                kind="web",
                raw=result or url,
                url=url,
                title=first_str(result, "title"),
                snippet=first_str(result, "snippet") or (" … ".join(claim) if claim else None),
                rank=index,
                published=result.get("date"),
                modified=result.get("last_updated"),
                extras={"inline_marker": index + 1 if claim else None},
            )
        )
    return collect(sources)


_DDG_FIELD_RE = re.compile(r"(?:^|, |\[)(snippet|title|link|date|source): ")


def duckduckgo_text(text: str, call: ToolCall) -> list[Source] | None:
    """LangChain ``DuckDuckGoSearchResults`` string: ``[snippet: …, title: …, link: …], …``."""
    if not text.lstrip("[ ").startswith("snippet: ") or ", link: " not in text:
        return None
    fields = list(_DDG_FIELD_RE.finditer(text))
    records: list[dict[str, str]] = []
    for index, match in enumerate(fields):
        end = fields[index + 1].start() if index + 1 < len(fields) else len(text)
        value = text[match.end() : end].strip().rstrip(",").rstrip()
        if value.endswith("]"):
            value = value[:-1].rstrip()
        key = match.group(1)
        if key == "snippet" or not records or key in records[-1]:
            records.append({})
        records[-1][key] = value
    if not records or not all(is_url(r.get("link")) for r in records):
        return None
    return collect(
        call.source(
            kind="web",
            raw=record,
            url=record["link"],
            title=record.get("title"),
            snippet=record.get("snippet"),
            rank=rank,
            published=record.get("date"),
            extras={"publisher": record.get("source")},
        )
        for rank, record in enumerate(records)
    )


_KV_LINE_RE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?"
    r"(title|url|link|source|snippet|description|summary|content|text"
    r"|published(?: date| time)?|date|score|author)"
    r"(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*(.*)$",
    re.IGNORECASE,
)

_RECORD_KEYS = {"link": "url", "source": "url", "description": "snippet", "summary": "snippet"}


def records_text(text: str, call: ToolCall) -> list[Source] | None:
    """``Title: …`` / ``URL: …`` / ``Description: …`` blocks, the format most tools print."""
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    last_key: str | None = None
    for line in text.splitlines():
        match = _KV_LINE_RE.match(line)
        if match:
            key = match.group(1).lower().split()[0]
            key = _RECORD_KEYS.get(key, key)
            if key == "url" and not is_url(match.group(2).strip()):
                key = "publisher"
            if current is None or key in current:
                current = {}
                records.append(current)
            current[key] = match.group(2).strip()
            last_key = key
        elif not line.strip():
            last_key = None
        elif current is not None and last_key in ("snippet", "content", "text"):
            current[last_key] += "\n" + line.strip()
    useful = [r for r in records if is_url(r.get("url"))]
    if not useful or len(useful) < len(records) / 2:
        return None
    return collect(
        call.source(
            kind="web",
            raw=record,
            url=record["url"],
            title=clean_snippet(record.get("title")),
            snippet=clean_snippet(record.get("snippet")),
            content=record.get("content") or record.get("text"),
            rank=rank,
            published=record.get("published") or record.get("date"),
            extras={"author": record.get("author"), "publisher": record.get("publisher")},
        )
        for rank, record in enumerate(useful)
    )


def listed_text(text: str, call: ToolCall) -> list[Source] | None:
    """Prose with a ``Sources:`` list: the listed URLs, each with the claims it supports."""
    body, listed = split_sources_block(text)
    if not listed:
        return None
    claims = claims_by_number(body)
    sources = []
    for rank, entry in enumerate(listed):
        claim = claims.get(entry.number) if entry.number is not None else None
        sources.append(
            call.source(
                kind="web" if entry.url.lower().startswith("http") else "file",
                raw=entry.url,
                url=entry.url,
                title=entry.title,
                snippet=" … ".join(claim) if claim else None,
                rank=rank,
                extras={"inline_marker": entry.number},
            )
        )
    return collect(sources)


_RESULT_LISTS = ("results", "items", "data", "hits", "value", "sources", "search_results", "links")


def generic_results(data: Any, call: ToolCall) -> list[Source] | None:
    """A list of result-like dicts (each with a URL), at the top or under a usual key."""
    mapping = as_mapping(data)
    candidates = [data] if mapping is None else [mapping.get(k) for k in _RESULT_LISTS]
    for candidate in candidates:
        items = dicts(candidate)
        if items and sum(1 for i in items if url_in(i)) * 2 >= len(items):
            return collect(generic_result(item, rank, call) for rank, item in enumerate(items))
        if isinstance(candidate, list) and candidate and all(is_url(v) for v in candidate):
            return collect(
                call.source(kind="web", raw=v, url=v, rank=rank) for rank, v in enumerate(candidate)
            )
    return None
