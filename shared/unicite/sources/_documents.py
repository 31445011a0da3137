"""Readers for retrieved documents: LangChain ``Document`` and LlamaIndex node shapes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.model import Source
from unicite.sources._common import (
    MODIFIED_KEYS,
    PUBLISHED_KEYS,
    ToolCall,
    as_mapping,
    first_str,
    first_value,
    is_url,
    page_number,
    score_of,
    url_in,
)
from unicite.sources._decode import (
    as_data,
    dicts,
)
from unicite.sources._knowledge_bases import bedrock_kb_documents

__all__ = ["path_title", "retrieved_documents"]


def path_title(path: str) -> str:
    """The file name at the end of a path or URI, to title a source that has no title."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


def _document(
    item: Mapping[str, Any], rank: int | None, call: ToolCall, *, text: str | None, score: Any
) -> Source | None:
    """A retrieved chunk: URL or file path, title, page and score from its ``metadata``.

    ``extras["page_number"]`` is the 1-based page the chunk lies on (see `page_number`:
    LangChain's 0-based ``page`` plus one, LlamaIndex's numeric ``page_label``); ``page`` and
    ``page_label`` keep the loader's own values.
    """
    # LlamaIndex nodes dump their metadata as "extra_info" (its old name) in to_dict().
    metadata = as_mapping(item.get("metadata")) or as_mapping(item.get("extra_info")) or {}
    source_field = first_str(metadata, "source", "file_path", "path")
    url = url_in(metadata) or (source_field if is_url(source_field) else None)
    path = None if url or source_field is None else source_field
    title = first_str(metadata, "title", "document_title", "file_name", "filename", "name")
    if title is None and path is not None:
        title = path_title(path)
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        score = score_of(metadata)
    return call.source(
        kind="document",
        raw=item,
        url=url,
        title=title,
        snippet=first_str(metadata, "summary", "description"),
        content=text,
        rank=rank,
        provider_id=first_str(item, "id", "id_", "node_id"),
        published=first_value(metadata, PUBLISHED_KEYS),
        modified=first_value(metadata, MODIFIED_KEYS),
        extras={
            "score": score,
            "path": path,
            "page": metadata.get("page", metadata.get("page_number")),
            "page_label": metadata.get("page_label"),
            "page_number": page_number(metadata),
            "start_char": item.get("start_char_idx"),
            "end_char": item.get("end_char_idx"),
        },
    )


def _node_of(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The LlamaIndex node in `item` (itself, or inside a ``NodeWithScore``), if it is one."""
    node = as_mapping(as_data(item.get("node"))) if "node" in item else item
    if node is None or not ("id_" in node or "metadata" in node or "class_name" in node):
        return None
    resource = as_mapping(node.get("text_resource"))
    return node if "text" in node or (resource is not None and "text" in resource) else None


def _rag_item(item: Mapping[str, Any], rank: int | None, call: ToolCall) -> Source | bool | None:
    """A retrieved chunk as a source; False when `item` is neither shape.

    LangChain ``Document``: ``page_content`` + ``metadata.source/url/title/page`` (also in its
    serialized ``{"lc": 1, "kwargs": ...}`` form); those of ``AmazonKnowledgeBasesRetriever``
    (``metadata.location`` / ``source_metadata``) as `bedrock_kb_documents` reads them.
    LlamaIndex node or ``NodeWithScore``: ``text`` (or ``text_resource.text``) + ``metadata``
    + ``score`` (a Bedrock knowledge base's, with ``location`` / ``sourceMetadata``, as
    `bedrock_kb_documents` reads them).
    """
    if item.get("lc") == 1 and isinstance(item.get("kwargs"), Mapping):
        item = item["kwargs"]
    if "page_content" in item:
        metadata = as_mapping(item.get("metadata")) or {}
        bedrock = bedrock_kb_documents(metadata, item.get("page_content"), rank, call)
        if bedrock is not False:
            return bedrock
        return _document(item, rank, call, text=first_str(item, "page_content"), score=None)
    node = _node_of(item)
    if node is None:
        return False
    resource = as_mapping(node.get("text_resource")) or {}
    text = first_str(node, "text") or first_str(resource, "text")
    metadata = as_mapping(node.get("metadata")) or {}
    bedrock = bedrock_kb_documents(metadata, text, rank, call, score=item.get("score"))
    if bedrock is not False:
        return bedrock
    return _document(node, rank, call, text=text, score=item.get("score"))


def retrieved_documents(data: Any, call: ToolCall) -> list[Source] | None:
    """Retrieved documents: one, a list, or under ``documents``/``source_nodes``/``nodes``."""
    mapping = as_mapping(data)
    if mapping is not None:
        single = _rag_item(mapping, None, call)
        if single is not False:
            return [single] if isinstance(single, Source) else []
        for key in ("documents", "docs", "source_nodes", "nodes", "context"):
            if isinstance(mapping.get(key), list):
                found = retrieved_documents(mapping[key], call)
                if found is not None:
                    return found
        return None
    items = dicts(data)
    if not items:
        return None
    sources = [_rag_item(item, rank, call) for rank, item in enumerate(items)]
    if any(s is False for s in sources):
        return None
    return [s for s in sources if isinstance(s, Source)]
