"""Where else Gemini and Vertex put grounding: the keys besides ``groundingChunks``.

Across API versions and SDKs, grounding has shown up under nine keys of ``groundingMetadata``
(camelCase or snake_case; the reader sees camelCase): ``citations``, ``citedSources``,
``groundingAttributions``, ``supportingContent``, ``sources``, ``groundingChunks``,
``groundingSupports``, ``webSearchSources`` and ``retrievalMetadata``. Two of them have a
documented shape besides chunks and supports:

- ``groundingAttributions`` of Vertex AI (v1beta1, 2024): ``{web: {uri, title} |
  retrievedContext: {uri, title}, segment: {partIndex, startIndex, endIndex}, confidenceScore}``;
  of the Gemini API (a candidate's, from ``generateAnswer``): ``{sourceId: {groundingPassage:
  {passageId, partIndex} | semanticRetrieverChunk: {source, chunk}}, content: {parts}}``;
- ``retrievalMetadata``: ``{googleSearchDynamicRetrievalScore}``, the score dynamic retrieval
  used to decide whether to search.

The others carry lists of entries whose shape no public schema fixes. An entry (or a bare URL
string) is read for what any of them holds: a URL (``uri``, ``url``, ``link``, ``sourceUri``, or
nested in ``web``, ``source``, ``reference``, ``retrievedContext``, ``document``), a title, a
domain hint (``domain``, ``host``, nested too) and a snippet. An end-site URL is preferred to a
Vertex ``grounding-api-redirect`` one wherever the entry has both, and the redirect it replaces
is remembered so that grounding chunks pointing at that redirect get the end-site URL as well.
A source's domain comes from its end-site URL, else from a ``domain``/``host`` hint, else from a
title that is a domain (Gemini puts the site's domain in ``web.title``).

Only entries holding a ``segment`` (as supports do) are cited; flat ``startIndex``/``endIndex``
of these undocumented shapes are of no known unit, so such entries stay uncited sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite._urls import domain_hint, is_redirect_url, registrable_domain

__all__ = [
    "EXTRA_KEYS",
    "Entry",
    "entries_of",
    "read_entry",
]

EXTRA_KEYS = (
    "citations",
    "citedSources",
    "groundingAttributions",
    "supportingContent",
    "sources",
    "webSearchSources",
    "retrievalMetadata",
)
"""The grounding keys read besides ``groundingChunks`` and ``groundingSupports``, in seed order."""

_URL_FIELDS = ("uri", "url", "link", "sourceUri", "sourceUrl")
_NESTED = ("web", "source", "reference", "retrievedContext", "document", "page", "site")
_TITLE_FIELDS = ("title", "displayName", "name")
_DOMAIN_FIELDS = ("domain", "host", "hostname", "sourceDomain")
_SNIPPET_FIELDS = ("snippet", "text", "excerpt", "quote", "content", "description")


def _is_link(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://", "gs://"))


class Entry:
    """What one grounding entry says: its source and, when it has one, the segment it supports."""

    __slots__ = ("confidence", "redirect", "segment", "source")

    def __init__(
        self,
        source: dict[str, Any],
        redirect: str | None,
        segment: Mapping[str, Any] | None,
        confidence: float | None,
    ) -> None:
        self.source = source
        self.redirect = redirect
        """The redirect URL the source's end-site URL replaces, when the entry had both."""
        self.segment = segment
        self.confidence = confidence


def entries_of(key: str, value: Any) -> list[tuple[str, Any]]:
    """The entries under one grounding key, each with its path below the key.

    A list gives its items; ``retrievalMetadata`` (an object) the items of its list fields and
    its object fields that hold a URL; any other object is one entry.
    """
    if isinstance(value, list):
        return [(f"{key}[{n}]", item) for n, item in enumerate(value)]
    if not isinstance(value, Mapping):
        return [(key, value)] if value not in (None, "", 0, False) else []
    if key != "retrievalMetadata":
        return [(key, value)]
    found: list[tuple[str, Any]] = []
    for name, item in value.items():
        if isinstance(item, list):
            found.extend((f"{key}.{name}[{n}]", entry) for n, entry in enumerate(item))
        elif isinstance(item, Mapping) and _urls(item):
            found.append((f"{key}.{name}", item))
    return found


def _urls(entry: Mapping[str, Any]) -> list[str]:
    """Every URL the entry holds, its own fields first, then its nested objects'."""
    urls = [entry[k] for k in _URL_FIELDS if _is_link(entry.get(k))]
    for name in _NESTED:
        nested = entry.get(name)
        if _is_link(nested):
            urls.append(nested)
        elif isinstance(nested, Mapping):
            urls.extend(nested[k] for k in _URL_FIELDS if _is_link(nested.get(k)))
    return list(dict.fromkeys(urls))


def _first_text(entry: Mapping[str, Any], fields: tuple[str, ...]) -> str | None:
    for scope in (entry, *(entry.get(n) for n in _NESTED)):
        if not isinstance(scope, Mapping):
            continue
        for name in fields:
            value = scope.get(name)
            if isinstance(value, str) and value.strip():
                return value
    return None


def _content_text(value: Any) -> str | None:
    """The text of a ``Content`` (``{parts: [{text}]}``) or of a plain string."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, Mapping):
        parts = value.get("parts")
        if isinstance(parts, list):
            texts = [
                p["text"]
                for p in parts
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
            ]
            return "".join(texts) or None
    return None


def _snippet(entry: Mapping[str, Any]) -> str | None:
    for scope in (entry, *(entry.get(n) for n in _NESTED)):
        if not isinstance(scope, Mapping):
            continue
        for name in _SNIPPET_FIELDS:
            text = _content_text(scope.get(name))
            if text and text.strip():
                return text
    return None


def _confidence(entry: Mapping[str, Any]) -> float | None:
    value = entry.get("confidenceScore")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    scores = entry.get("confidenceScores")
    if isinstance(scores, list):
        numbers = [
            float(s) for s in scores if isinstance(s, (int, float)) and not isinstance(s, bool)
        ]
        if numbers:
            return max(numbers)
    return None


def _attribution_source(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Gemini API ``GroundingAttribution`` (``sourceId`` + ``content``), as documented."""
    source_id = entry.get("sourceId")
    if not isinstance(source_id, Mapping):
        return None
    content = _content_text(entry.get("content"))
    passage = source_id.get("groundingPassage")
    chunk = source_id.get("semanticRetrieverChunk")
    if isinstance(passage, Mapping) and isinstance(passage.get("passageId"), str):
        extras: dict[str, Any] = {"passage_id": passage["passageId"]}
        if isinstance(passage.get("partIndex"), int):
            extras["passage_part_index"] = passage["partIndex"]
        return {
            "kind": "document",
            "provider_id": f"passage:{passage['passageId']}",
            "title": passage["passageId"],
            "content": content,
            "extras": extras,
        }
    if isinstance(chunk, Mapping) and isinstance(chunk.get("chunk"), str):
        extras = {"corpus": chunk["source"]} if isinstance(chunk.get("source"), str) else {}
        return {
            "kind": "document",
            "provider_id": chunk["chunk"],
            "content": content,
            "extras": extras,
        }
    return None


def read_entry(entry: Any) -> Entry | str:
    """The `Entry` an item of a grounding key holds, or why it holds none."""
    if isinstance(entry, str):
        if _is_link(entry):
            return Entry({"url": entry, "kind": "web"}, None, None, None)
        return "not a URL"
    if not isinstance(entry, Mapping):
        return f"expected an object or a URL, got {type(entry).__name__}"
    segment = entry.get("segment")
    segment = segment if isinstance(segment, Mapping) else None
    confidence = _confidence(entry)
    attributed = _attribution_source(entry)
    if attributed is not None:
        attributed = {k: v for k, v in attributed.items() if v is not None}
        return Entry({**attributed, "raw": dict(entry)}, None, segment, confidence)
    urls = _urls(entry)
    ends = [u for u in urls if not is_redirect_url(u)]
    url = ends[0] if ends else (urls[0] if urls else None)
    redirect = next((u for u in urls if is_redirect_url(u)), None) if ends else None
    title = _first_text(entry, _TITLE_FIELDS)
    snippet = _snippet(entry)
    hint = _first_text(entry, _DOMAIN_FIELDS)
    domain = None
    if url is not None and not is_redirect_url(url):
        domain = registrable_domain(url)
    if domain is None and hint is not None:
        domain = domain_hint(hint) or (
            registrable_domain(hint.strip()) if not any(c.isspace() for c in hint.strip()) else None
        )
    domain = domain or domain_hint(title)
    if not (url or title or snippet):
        return "no URL, title or text to cite"
    source: dict[str, Any] = {
        "kind": "web" if url and not url.startswith("gs://") else "document",
        "url": url,
        "title": title,
        "domain": domain,
        "snippet": snippet,
        "raw": dict(entry),
    }
    if url is not None:
        source["redirect"] = is_redirect_url(url)
    if redirect is not None:
        source["extras"] = {"redirect_url": redirect}
    return Entry({k: v for k, v in source.items() if v is not None}, redirect, segment, confidence)
