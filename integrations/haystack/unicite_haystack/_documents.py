"""Haystack `Document`s as unicite sources, and back as the documents an answer cites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from haystack import Document

from unicite import CitedAnswer, Source

__all__ = ["cited_documents", "to_sources", "uncited_documents"]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def to_sources(documents: Sequence[Document]) -> tuple[list[Source], list[str]]:
    """The documents as sources numbered 1..n in input order, and what could not be read.

    A document's id is its source's id; ``meta["url"]`` and ``meta["title"]`` (when strings)
    become the source's URL and title, its content the source's content. A document that
    cannot be read stays a numbered source without content, so the numbers still line up.
    """
    sources: list[Source] = []
    diagnostics: list[str] = []
    for number, document in enumerate(documents, start=1):
        fallback = f"document-{number}"
        try:
            meta = document.meta if isinstance(document.meta, dict) else {}
            sources.append(
                Source(
                    id=_text(document.id) or fallback,
                    url=_text(meta.get("url")),
                    title=_text(meta.get("title")),
                    content=_text(document.content),
                )
            )
        except Exception as err:
            diagnostics.append(f"document {number} could not be read: {type(err).__name__}")
            sources.append(Source(id=fallback))
    return sources, diagnostics


def cited_documents(
    answer: CitedAnswer,
    documents: Sequence[Document],
    sources: Sequence[Source],
    *,
    only_cited: bool,
) -> list[Document]:
    """Copies of the cited documents, first-cited first, then (unless `only_cited`) the rest.

    Each copy's meta gains ``source_index`` (its 1-based place in `documents`, as Haystack's
    `AnswerBuilder` gives it), ``referenced`` and, when cited, ``citation_number`` (the number
    its markers carry in the answer text). The input documents are not changed.
    """
    index_of: dict[str, int] = {}
    for position, source in enumerate(sources):
        index_of.setdefault(source.id, position)
    cited: list[int] = []
    for source in answer.cited_sources():
        found = index_of.get(source.id)
        if found is not None and found not in cited:
            cited.append(found)
    result: list[Document] = []
    for index in cited:
        number = answer.footnote_number(sources[index].id)
        result.append(_copy(documents[index], index, referenced=True, number=number))
    rest = [index for index in range(len(documents)) if index not in cited]
    if not only_cited:
        result.extend(_copy(documents[i], i, referenced=False, number=None) for i in rest)
    return result


def uncited_documents(documents: Sequence[Document]) -> list[Document]:
    """Copies of every document in input order, none cited, each with its ``source_index``."""
    result = []
    for index, document in enumerate(documents):
        try:
            meta: dict[str, Any] = dict(document.meta or {})
            meta["source_index"] = index + 1
            result.append(replace(document, meta=meta))
        except Exception:
            result.append(document)  # unreadable: returned as it came
    return result


def _copy(document: Document, index: int, *, referenced: bool, number: int | None) -> Document:
    meta: dict[str, Any] = dict(document.meta or {})
    meta["source_index"] = index + 1
    meta["referenced"] = referenced
    if number is not None:
        meta["citation_number"] = number
    return replace(document, meta=meta)
