"""Readers for pages: fetch and scrape (MCP fetch, Jina Reader, Firecrawl), HTML, Wikipedia."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from unicite.model import Source, SourceKind
from unicite.sources._common import (
    MODIFIED_KEYS,
    PUBLISHED_KEYS,
    TITLE_KEYS,
    ToolCall,
    as_mapping,
    collect,
    first_str,
    first_value,
    heading_title,
    html_page,
    is_url,
    looks_like_html,
    strip_tags,
    url_in,
)
from unicite.sources._decode import (
    NO_RESULTS_RE,
    dicts,
    read_error,
)
from unicite.sources._search import (
    generic_result,
)

__all__ = [
    "fetched_text",
    "firecrawl_jina",
    "html_text",
    "page_dict",
    "page_source",
    "wikipedia",
    "wikipedia_named",
    "wikipedia_text",
]

_LANG_RE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")


def _wiki_base(call: ToolCall) -> str:
    """The article URL prefix of the Wikipedia the call searched (``lang`` argument, else en)."""
    lang = next(
        (
            v.strip().lower()
            for k in ("lang", "language", "wiki_lang", "lang_code")
            if isinstance(v := call.arguments.get(k), str)
        ),
        "en",
    )
    return f"https://{lang if _LANG_RE.fullmatch(lang) else 'en'}.wikipedia.org/wiki/"


def _wiki_url(call: ToolCall, title: str) -> str:
    """The URL of the article with this title."""
    return _wiki_base(call) + quote(title.replace(" ", "_"), safe="()_,:'!-.~")


def wikipedia(data: Any, call: ToolCall) -> list[Source] | None:
    """MediaWiki ``list=search`` and ``prop=extracts``, REST summary, REST search, opensearch."""
    if isinstance(data, list):
        # opensearch: [query, [titles], [descriptions], [urls]]
        if (
            len(data) == 4
            and isinstance(data[0], str)
            and all(isinstance(part, list) for part in data[1:])
            and all(is_url(u) for u in data[3])
        ):
            return collect(
                call.source(kind="web", raw=data, url=url, title=title, snippet=desc, rank=rank)
                for rank, (title, desc, url) in enumerate(
                    zip(data[1], data[2], data[3], strict=False)
                )
            )
        return None
    mapping = as_mapping(data)
    if mapping is None:
        return None
    urls = as_mapping(mapping.get("content_urls"))
    if urls is not None and "extract" in mapping:
        desktop = as_mapping(urls.get("desktop")) or {}
        return collect(
            [
                call.source(
                    kind="web",
                    raw=mapping,
                    url=first_str(desktop, "page"),
                    title=first_str(mapping, "title"),
                    snippet=first_str(mapping, "extract"),
                    modified=mapping.get("timestamp"),
                    extras={"description": first_str(mapping, "description")},
                )
            ]
        )
    pages = dicts(mapping.get("pages"))
    if pages and all("key" in p and "title" in p for p in pages):
        return collect(
            call.source(
                kind="web",
                raw=page,
                url=_wiki_base(call) + quote(str(page["key"]), safe="()_,:'!-.~"),
                title=first_str(page, "title"),
                snippet=strip_tags(first_str(page, "excerpt") or "")
                or first_str(page, "description"),
                rank=rank,
            )
            for rank, page in enumerate(pages)
        )
    query = as_mapping(mapping.get("query"))
    if query is None:
        return None
    hits = dicts(query.get("search"))
    if hits:
        return collect(
            call.source(
                kind="web",
                raw=hit,
                url=_wiki_url(call, str(hit.get("title", ""))) if hit.get("title") else None,
                title=first_str(hit, "title"),
                snippet=strip_tags(first_str(hit, "snippet") or ""),
                rank=rank,
                modified=hit.get("timestamp"),
                extras={"pageid": hit.get("pageid")},
            )
            for rank, hit in enumerate(hits)
        )
    raw_pages = query.get("pages")
    page_list = dicts(list(raw_pages.values()) if isinstance(raw_pages, Mapping) else raw_pages)
    if page_list and any("extract" in p for p in page_list):
        return collect(
            call.source(
                kind="web",
                raw=page,
                url=first_str(page, "fullurl", "canonicalurl")
                or (_wiki_url(call, str(page["title"])) if page.get("title") else None),
                title=first_str(page, "title"),
                content=first_str(page, "extract"),
                rank=rank,
                modified=page.get("touched"),
            )
            for rank, page in enumerate(page_list)
            if "missing" not in page
        )
    return None


_WIKI_PAGE_RE = re.compile(r"^Page: (.+)\nSummary: ", re.MULTILINE)


def wikipedia_text(text: str, call: ToolCall) -> list[Source] | None:
    """LangChain ``WikipediaQueryRun``: ``Page: <title>`` and ``Summary: <text>`` line pairs."""
    matches = list(_WIKI_PAGE_RE.finditer(text))
    if not matches or text[: matches[0].start()].strip():
        return None
    sources = []
    for rank, match in enumerate(matches):
        end = matches[rank + 1].start() if rank + 1 < len(matches) else len(text)
        title = match.group(1).strip()
        sources.append(
            call.source(
                kind="web",
                raw=text[match.start() : end],
                url=_wiki_url(call, title),
                title=title,
                content=text[match.end() : end],
                rank=rank,
            )
        )
    return collect(sources)


def wikipedia_named(data: Any, call: ToolCall) -> list[Source] | None:
    """Wikipedia tools also return bare page text; its title comes from the arguments."""
    found = wikipedia(data, call)
    if found is not None or not isinstance(data, str):
        return found
    found = wikipedia_text(data, call)
    if found is not None:
        return found
    title = next(
        (
            v.strip()
            for k in ("title", "page", "query")
            if isinstance(v := call.arguments.get(k), str)
        ),
        None,
    )
    if title is None or read_error(data) is not None or NO_RESULTS_RE.match(data):
        return None
    return collect(
        [call.source(kind="web", raw=data, url=_wiki_url(call, title), title=title, content=data)]
    )


def page_source(
    call: ToolCall,
    *,
    raw: Any,
    url: str | None,
    body: str,
    title: str | None = None,
    description: str | None = None,
    published: object = None,
    modified: object = None,
    kind: SourceKind = "web",
) -> Source | None:
    """A fetched page: the text of HTML (with its title), or Markdown/plain text as it is."""
    meta: dict[str, str] = {}
    if looks_like_html(body):
        page_title, body, meta = html_page(body)
        title = title or page_title
        description = description or meta.get("description") or meta.get("og:description")
        published = published or meta.get("article:published_time")
        modified = modified or meta.get("article:modified_time") or meta.get("og:updated_time")
    elif title is None:
        title = heading_title(body)
    return call.source(
        kind=kind if url else "document",
        raw=raw,
        url=url,
        title=title,
        snippet=description,
        content=body,
        published=published,
        modified=modified,
    )


def firecrawl_jina(data: Any, call: ToolCall) -> list[Source] | None:
    """Firecrawl scrape/crawl/search (``data`` + ``metadata.sourceURL``) and Jina Reader JSON."""
    mapping = as_mapping(data)
    if mapping is None or "data" not in mapping:
        return None
    payload = mapping["data"]
    if isinstance(payload, list):
        items = dicts(payload)
    else:
        inner = as_mapping(payload)
        if inner is None:
            return None
        if any(isinstance(inner.get(k), list) for k in ("web", "news")):
            found = [
                generic_result(i, r, call)
                for k in ("web", "news")
                for r, i in enumerate(dicts(inner.get(k)))
            ]
            return collect(found)
        items = [inner]
    if not items or not all(
        any(k in i for k in ("markdown", "content", "html", "metadata", "description"))
        for i in items
    ):
        return None
    sources = []
    for rank, item in enumerate(items):
        meta = as_mapping(item.get("metadata")) or {}
        status = meta.get("statusCode")
        url = first_str(meta, "sourceURL", "url") or url_in(item)
        if isinstance(status, int) and status >= 400:
            call.note(f"page {url!r} answered HTTP {status}")
            continue
        body = first_str(item, "markdown", "content", "text") or first_str(item, "html", "rawHtml")
        if body is None:
            sources.append(generic_result(item, rank, call))
            continue
        source = page_source(
            call,
            raw=item,
            url=url,
            body=body,
            title=first_str(meta, "title", "ogTitle") or first_str(item, "title"),
            description=first_str(meta, "description", "ogDescription")
            or first_str(item, "description"),
            published=meta.get("publishedTime") or item.get("publishedTime"),
            modified=meta.get("modifiedTime"),
        )
        if source is not None and len(items) > 1:
            source = source.model_copy(update={"rank": rank})
        sources.append(source)
    return collect(sources)


def page_dict(data: Any, call: ToolCall) -> list[Source] | None:
    """A single fetched page given as a dict: url plus content/text/markdown/html."""
    mapping = as_mapping(data)
    if mapping is None:
        return None
    url = url_in(mapping) or call.argument_url()
    body = first_str(mapping, "content", "text", "markdown", "page_content", "html", "body")
    if url is None or body is None:
        return None
    return collect(
        [
            page_source(
                call,
                raw=mapping,
                url=url,
                body=body,
                title=first_str(mapping, *TITLE_KEYS),
                description=first_str(mapping, "description", "summary"),
                published=first_value(mapping, PUBLISHED_KEYS),
                modified=first_value(mapping, MODIFIED_KEYS),
            )
        ]
    )


_MCP_FETCH_RE = re.compile(r"\A\s*(?:[^\n]*\n)?Contents of (\S+):\n")
_MCP_FETCH_TAIL_RE = re.compile(r"\n*<error>Content truncated\..*?</error>\s*\Z", re.DOTALL)


_JINA_RE = re.compile(r"\A\s*(?:Title: (?P<title>[^\n]*)\n+)?URL Source: (?P<url>\S+)\n")
_JINA_FIELD_RE = re.compile(r"^(Published Time|Markdown Content|Warning): ?(.*)$", re.MULTILINE)


def fetched_text(text: str, call: ToolCall) -> list[Source] | None:
    """Pages fetched as text: MCP fetch server, Jina Reader, or any text with a URL argument."""
    match = _MCP_FETCH_RE.match(text)
    if match and is_url(match.group(1)):
        body = _MCP_FETCH_TAIL_RE.sub("", text[match.end() :])
        return collect([page_source(call, raw=text, url=match.group(1), body=body)])
    match = _JINA_RE.match(text)
    if match and is_url(match.group("url")):
        fields = {m.group(1): m for m in _JINA_FIELD_RE.finditer(text, match.end())}
        content = fields.get("Markdown Content")
        body = text[content.end() :] if content else text[match.end() :]
        published = fields.get("Published Time")
        return collect(
            [
                page_source(
                    call,
                    raw=text,
                    url=match.group("url"),
                    body=body,
                    title=match.group("title"),
                    published=published.group(2).strip() if published else None,
                )
            ]
        )
    url = call.argument_url()
    if url is not None:
        return collect([page_source(call, raw=text, url=url, body=text)])
    return None


def html_text(text: str, call: ToolCall) -> list[Source] | None:
    """A whole HTML document, read as a page (at the URL of the call's arguments, if any)."""
    if not looks_like_html(text):
        return None
    return collect([page_source(call, raw=text, url=call.argument_url(), body=text)])
