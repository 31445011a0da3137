"""The documents a model request carried, and native sources linked back to retrieved ones.

An Anthropic request may hand the model ``document`` and ``search_result`` blocks; the native
citations of the reply name them by position (``document:N``). When such a block holds a
retrieved document's text, the citation names that retrieved source, with its URL and
metadata, instead of an anonymous request block.

A Mistral request hands the model its documents in tool results, each under a ``reference_id``
(a JSON object keyed by the ids, or a list of objects with a ``reference_id``, as Mistral's
citation guide writes them); the reply's reference chunks name them (``reference:N``). The
source then gets the document's URL, title and snippet from the request (or becomes the
captured source with that URL or title).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from unicite import CitedAnswer, Source

__all__ = ["Request", "link_request_sources"]


class Request:
    """The ``document`` and ``search_result`` blocks of a chat model request, in order."""

    __slots__ = ("documents", "references", "search_results")

    def __init__(
        self,
        documents: list[Mapping[str, Any]],
        results: list[Mapping[str, Any]],
        references: dict[str, Mapping[str, Any]] | None = None,
    ):
        self.documents = documents
        self.search_results = results
        self.references = references or {}

    @classmethod
    def of(cls, messages: list[list[BaseMessage]]) -> Request | None:
        """The blocks of a request's first prompt; None when it carries none."""
        documents: list[Mapping[str, Any]] = []
        results: list[Mapping[str, Any]] = []
        references: dict[str, Mapping[str, Any]] = {}
        for message in messages[0] if messages else []:
            content = message.content
            if isinstance(message, ToolMessage) and isinstance(content, str):
                for key, entry in _references(content).items():
                    references.setdefault(key, entry)
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, Mapping):
                    kind = block.get("type")
                    if kind == "document":
                        documents.append(block)
                    elif kind == "search_result":
                        results.append(block)
        if documents or results or references:
            return cls(documents, results, references)
        return None

    def block(self, provider_id: str | None) -> Mapping[str, Any] | None:
        """The block a native source's ``document:N`` / ``search_result:N`` id names."""
        if not provider_id or ":" not in provider_id:
            return None
        kind, _, number = provider_id.partition(":")
        blocks = {"document": self.documents, "search_result": self.search_results}.get(kind)
        if blocks is None or not number.isdigit() or int(number) >= len(blocks):
            return None
        return blocks[int(number)]


def _references(content: str) -> dict[str, Mapping[str, Any]]:
    """The documents a tool result names by reference id, when it is such a JSON value."""
    text = content.strip()
    if not text.startswith(("{", "[")):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    found: dict[str, Mapping[str, Any]] = {}
    if isinstance(value, Mapping):
        for key, entry in value.items():
            if isinstance(key, str) and key.isdigit() and isinstance(entry, Mapping):
                found[key] = entry
    elif isinstance(value, list):
        for entry in value:
            rid = entry.get("reference_id") if isinstance(entry, Mapping) else None
            if isinstance(rid, (int, str)) and not isinstance(rid, bool):
                found[str(rid)] = entry
    # A document has something to show: a URL or a title.
    return {
        key: entry
        for key, entry in found.items()
        if isinstance(entry.get("url"), str) or isinstance(entry.get("title"), str)
    }


def _text(entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    return value if isinstance(value, str) and value else None


def _snippet(entry: Mapping[str, Any]) -> str | None:
    """A reference's description, else its first snippet (Mistral's guide nests them)."""
    snippets = entry.get("snippets")
    while isinstance(snippets, list) and snippets:
        snippets = snippets[0]
    return _text(entry, "description") or (snippets if isinstance(snippets, str) else None)


def _referenced(source: Source, entry: Mapping[str, Any], captured: Sequence[Source]) -> Source:
    """The source a reference id names, from the request's document.

    The captured source with the document's URL or title, else the reader's source (its id
    kept) with the document's URL, title and snippet.
    """
    url = _text(entry, "url")
    title = _text(entry, "title")
    match = next(
        (c for c in captured if (url and c.url == url) or (title and c.title == title)), None
    )
    if match is not None:
        return match
    extras = {
        k: v
        for k, v in entry.items()
        if k not in ("url", "title", "description", "snippets", "reference_id") and v is not None
    }
    data = source.model_dump(exclude={"domain", "redirect", "raw"})
    data.update(
        url=url if url and url.lower().startswith(("http://", "https://")) else None,
        title=title,
        snippet=_snippet(entry),
        extras={**extras, **source.extras},
    )
    return Source.model_validate({**data, "raw": source.raw})


def link_request_sources(
    answer: CitedAnswer, request: Request, captured: Sequence[Source]
) -> CitedAnswer:
    """The answer with sources naming a request block replaced by the captured source it holds.

    A block matches a captured source by its text, else by its title or URL. A Mistral
    reference names a document of the request's tool results: the captured source with its URL
    or title, else the reader's source completed from the request.
    """
    if not answer.citations:
        return answer
    replace: dict[str, Source] = {}
    for source in answer.sources:
        pid = source.provider_id or ""
        entry = (
            request.references.get(pid.removeprefix("reference:"))
            if pid.startswith("reference:")
            else None
        )
        if entry is not None:
            replace[source.id] = _referenced(source, entry, captured)
            continue
        block = request.block(source.provider_id)
        if block is None or not captured:
            continue
        text = _block_text(block)
        title = block.get("title") if isinstance(block.get("title"), str) else None
        url = block.get("source") if isinstance(block.get("source"), str) else None
        match = next((c for c in captured if _same_text(c.content, text)), None)
        if match is None:
            match = next(
                (c for c in captured if (title and c.title == title) or (url and c.url == url)),
                None,
            )
        if match is not None:
            replace[source.id] = match
    if not replace:
        return answer
    sources: dict[str, Source] = {}
    for source in answer.sources:
        kept = replace.get(source.id, source)
        sources.setdefault(kept.id, kept)
    citations = [
        c.model_copy(
            update={
                "source_ids": list(
                    dict.fromkeys(replace[i].id if i in replace else i for i in c.source_ids)
                )
            }
        )
        for c in answer.citations
    ]
    return answer.replace(sources=list(sources.values()), citations=citations)


def _block_text(block: Mapping[str, Any]) -> str | None:
    """The text of a ``document`` (text source or content blocks) or ``search_result`` block."""
    source = block.get("source")
    if isinstance(source, Mapping):
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return str(source["data"])
        if source.get("type") == "content":
            source = source.get("content")
    content = source if isinstance(source, list) else block.get("content")
    if isinstance(content, list):
        texts = [
            b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def _same_text(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and " ".join(a.split()) == " ".join(b.split())
