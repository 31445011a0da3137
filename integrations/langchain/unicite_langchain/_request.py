"""The documents a model request carried, and native sources linked back to retrieved ones.

An Anthropic request may hand the model ``document`` and ``search_result`` blocks; the native
citations of the reply name them by position (``document:N``). When such a block holds a
retrieved document's text, the citation names that retrieved source, with its URL and
metadata, instead of an anonymous request block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from unicite import CitedAnswer, Source

__all__ = ["Request", "link_request_sources"]


class Request:
    """The ``document`` and ``search_result`` blocks of a chat model request, in order."""

    __slots__ = ("documents", "search_results")

    def __init__(self, documents: list[Mapping[str, Any]], results: list[Mapping[str, Any]]):
        self.documents = documents
        self.search_results = results

    @classmethod
    def of(cls, messages: list[list[BaseMessage]]) -> Request | None:
        """The blocks of a request's first prompt; None when it carries none."""
        documents: list[Mapping[str, Any]] = []
        results: list[Mapping[str, Any]] = []
        for message in messages[0] if messages else []:
            content = message.content
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, Mapping):
                    kind = block.get("type")
                    if kind == "document":
                        documents.append(block)
                    elif kind == "search_result":
                        results.append(block)
        return cls(documents, results) if documents or results else None

    def block(self, provider_id: str | None) -> Mapping[str, Any] | None:
        """The block a native source's ``document:N`` / ``search_result:N`` id names."""
        if not provider_id or ":" not in provider_id:
            return None
        kind, _, number = provider_id.partition(":")
        blocks = {"document": self.documents, "search_result": self.search_results}.get(kind)
        if blocks is None or not number.isdigit() or int(number) >= len(blocks):
            return None
        return blocks[int(number)]


def link_request_sources(
    answer: CitedAnswer, request: Request, captured: Sequence[Source]
) -> CitedAnswer:
    """The answer with sources naming a request block replaced by the captured source it holds.

    A block matches a captured source by its text, else by its title or URL.
    """
    if not captured or not answer.citations:
        return answer
    replace: dict[str, Source] = {}
    for source in answer.sources:
        block = request.block(source.provider_id)
        if block is None:
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
