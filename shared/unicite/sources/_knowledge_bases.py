"""Amazon Bedrock Knowledge Bases: retrieved chunks as sources.

One reading for the two places a knowledge base hands out chunks: the results of ``Retrieve``
(``retrievalResults[]``: ``content``, ``location``, ``metadata``, ``score``, ``documentId``) and
the ``retrievedReferences[]`` of ``RetrieveAndGenerate`` citations (the same fields but the
score). The provider reader (`unicite.providers.bedrock_kb`) and the extractor registry both
read them through `bedrock_kb_source`, and LangChain's ``AmazonKnowledgeBasesRetriever``
documents (the result as ``metadata``, its own ``metadata`` renamed ``source_metadata``) too.

Where a chunk lives:

- ``WEB``, ``CONFLUENCE``, ``SALESFORCE``, ``SHAREPOINT``, ``ONEDRIVE``, ``GOOGLEDRIVE``: an
  ``http(s)`` URL, the source's `url`.
- ``S3``: an ``s3://`` URI, which no browser opens: kept in ``extras["uri"]``, never as the
  `url` (only web links are links), and the file's name is the title.
- ``KENDRA``: the document's URI, the `url` when it is a web link, else ``extras["uri"]``.
- ``SQL``: the query that produced the rows, ``extras["sql_query"]``; ``CUSTOM``: the
  document's id, ``extras["custom_document_id"]``.

The title is the metadata's ``title`` (or a Kendra GenAI index's
``x-amz-kendra-document-title``), else an S3 file's name. ``extras["location_type"]`` keeps the
type. Without a location, the metadata's ``x-amz-bedrock-kb-source-uri`` stands for it. The
metadata is kept whole in ``extras["metadata"]``; its chunk id is the source's `provider_id`
(so a chunk cited twice is one source), its data source id ``extras["data_source_id"]``.

Pages: ``x-amz-bedrock-kb-document-page-number`` (PDF chunks in some vector stores) is read as
a 0-based page index. AWS does not document its base; users who linked it as it is found their
pages one off (aws-samples/bedrock-chat#811), so the 1-based ``extras["page_number"]`` is the
index plus one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from unicite.model import Source, SourceKind, SourceOrigin
from unicite.sources._common import ToolCall, as_mapping, first_str, shown
from unicite.sources._decode import dicts

__all__ = [
    "bedrock_kb_documents",
    "bedrock_kb_results",
    "bedrock_kb_source",
    "is_bedrock_kb_metadata",
]

_LOCATIONS: dict[str, tuple[str, str]] = {
    "S3": ("s3Location", "uri"),
    "WEB": ("webLocation", "url"),
    "CONFLUENCE": ("confluenceLocation", "url"),
    "SALESFORCE": ("salesforceLocation", "url"),
    "SHAREPOINT": ("sharePointLocation", "url"),
    "ONEDRIVE": ("oneDriveLocation", "url"),
    "GOOGLEDRIVE": ("googleDriveLocation", "url"),
    "KENDRA": ("kendraDocumentLocation", "uri"),
    "SQL": ("sqlLocation", "query"),
    "CUSTOM": ("customDocumentLocation", "id"),
}
"""Location type → the key of its object and the field naming the place."""

_BY_KEY = {key: kind for kind, (key, _) in _LOCATIONS.items()}

SOURCE_URI = "x-amz-bedrock-kb-source-uri"
CHUNK_ID = "x-amz-bedrock-kb-chunk-id"
DATA_SOURCE_ID = "x-amz-bedrock-kb-data-source-id"
PAGE_NUMBER = "x-amz-bedrock-kb-document-page-number"
KENDRA_TITLE = "x-amz-kendra-document-title"


def _is_web(value: str | None) -> bool:
    return value is not None and value.lower().startswith(("http://", "https://"))


def _page_index(value: object) -> int | None:
    """A page index given as a whole number (``3``, ``3.0``, ``"3"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        value = int(value.strip())
    return value if isinstance(value, int) and 0 <= value < 10**9 else None


def _place(
    location: Mapping[str, Any], notes: list[str], where: str
) -> tuple[str | None, str | None]:
    """The location's type and the URL, URI, query or id it names."""
    kind = location.get("type")
    kind = kind.upper() if isinstance(kind, str) else None
    if kind not in _LOCATIONS:
        # No type, or one this reader does not know: the first location object present.
        found = next((k for k in _BY_KEY if isinstance(location.get(k), Mapping)), None)
        if found is None:
            if kind is not None or location:
                notes.append(f"{where}: unknown location {shown(dict(location))}; kept in raw")
            return kind, None
        kind = _BY_KEY[found]
    key, field = _LOCATIONS[kind]
    detail = as_mapping(location.get(key)) or {}
    return kind, first_str(detail, field)


def _content(content: Mapping[str, Any], extras: dict[str, Any]) -> str | None:
    """The chunk's text: its text, a table row, an audio transcription or a video summary."""
    text = first_str(content, "text")
    kind = content.get("type")
    if isinstance(kind, str):
        extras["content_type"] = kind
    row = content.get("row")
    if text is None and isinstance(row, list) and row:
        cells = dicts(row)
        pairs = {str(c.get("columnName")): c.get("columnValue") for c in cells}
        text = json.dumps(pairs, ensure_ascii=False)
    for media, field in (("audio", "transcription"), ("video", "summary")):
        segment = as_mapping(content.get(media))
        if segment is not None:
            extras[f"{media}_uri"] = first_str(segment, "s3Uri")
            text = text or first_str(segment, field)
    if content.get("byteContent") is not None:
        extras["byte_content"] = True  # an image as a data URI: no text to cite or show
    return text


def bedrock_kb_source(
    reference: Mapping[str, Any],
    *,
    rank: int | None = None,
    origin: SourceOrigin | None = None,
    text: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    diagnostics: list[str] | None = None,
    where: str = "reference",
) -> Source | None:
    """A Bedrock Knowledge Bases chunk (a ``Retrieve`` result or a cited reference) as a source.

    See the module's docstring for where each location type goes. ``text`` and ``metadata``
    stand for the chunk's own when a framework moved them (LangChain keeps the text as the
    document's ``page_content`` and the metadata as ``source_metadata``).

    Args:
        reference: The result or reference: ``content``, ``location``, ``metadata``, and for
            ``Retrieve`` results ``score`` and ``documentId``.
        rank: Its place among the results it came with.
        origin: The tool or retriever call it came from.
        text: The chunk's text, when not under ``content``.
        metadata: The chunk's metadata, when not under ``metadata``.
        diagnostics: A list to append what could not be read to.
        where: How diagnostics name the reference.

    Returns:
        The source, or None (with a diagnostic) when the reference names nothing to cite.
    """
    notes: list[str] = diagnostics if diagnostics is not None else []
    extras: dict[str, Any] = {}
    content = as_mapping(reference.get("content"))
    body = text if text is not None else _content(content, extras) if content else None
    meta = metadata if metadata is not None else as_mapping(reference.get("metadata"))
    meta = meta or {}
    location = as_mapping(reference.get("location"))
    kind, place = _place(location, notes, where) if location is not None else (None, None)
    if place is None:
        place = first_str(meta, SOURCE_URI)
        if place is not None and kind is None:
            kind = "WEB" if _is_web(place) else "S3" if place.startswith("s3://") else None
    url = uri = None
    if kind in ("SQL", "CUSTOM"):
        extras["sql_query" if kind == "SQL" else "custom_document_id"] = place
    elif _is_web(place):
        url = place
    elif place is not None:
        uri = place
    page = _page_index(meta.get(PAGE_NUMBER))
    score = reference.get("score")
    extras.update(
        {
            "location_type": kind,
            "uri": uri,
            "document_id": first_str(reference, "documentId"),
            "data_source_id": first_str(meta, DATA_SOURCE_ID),
            "page_number": page + 1 if page is not None else None,
            "score": score
            if isinstance(score, (int, float)) and not isinstance(score, bool)
            else None,
            "metadata": dict(meta) if meta else None,
        }
    )
    title = first_str(meta, "title", "document_title", KENDRA_TITLE)
    if title is None and uri is not None:
        title = uri.rstrip("/").rsplit("/", 1)[-1] or uri
    source_kind: SourceKind = "web" if kind == "WEB" else "document"
    fields: dict[str, Any] = {
        "kind": source_kind,
        "url": url,
        "title": title,
        "content": body,
        "provider_id": first_str(meta, CHUNK_ID),
        "rank": rank,
        "origin": origin,
        "extras": {k: v for k, v in extras.items() if v is not None},
        "raw": reference,
    }
    if not any(fields[k] for k in ("url", "title", "content", "provider_id")):
        if not fields["extras"].get("sql_query") and not fields["extras"].get("custom_document_id"):
            notes.append(f"{where}: names no chunk (no text, location or chunk id); dropped")
            return None
        fields["title"] = fields["extras"].get("custom_document_id") or "SQL query"
    try:
        return Source(**fields)
    except ValidationError as err:
        notes.append(f"{where}: not a valid source: {err.errors()[0]['msg']}")
        return None


def _is_chunk(item: Mapping[str, Any]) -> bool:
    """Whether a dict is a knowledge base result: content and a location or KB metadata."""
    if not isinstance(item.get("content"), Mapping):
        return False
    location = as_mapping(item.get("location"))
    if location is not None and (
        location.get("type") in _LOCATIONS or any(k in location for k in _BY_KEY)
    ):
        return True
    return is_bedrock_kb_metadata(as_mapping(item.get("metadata")) or {})


def is_bedrock_kb_metadata(metadata: Mapping[str, Any]) -> bool:
    """Whether a chunk's metadata carries the keys a knowledge base adds (``x-amz-bedrock-kb-``)."""
    return any(isinstance(k, str) and k.startswith("x-amz-bedrock-kb-") for k in metadata)


def _chunks(items: list[Any], call: ToolCall, where: str, *, ranked: bool) -> list[Source]:
    found = []
    notes: list[str] = []
    for n, item in enumerate(dicts(items)):
        source = bedrock_kb_source(
            item,
            rank=n if ranked else None,
            origin=call.origin,
            diagnostics=notes,
            where=f"{where}[{n}]",
        )
        if source is not None:
            found.append(source)
    for note in notes:
        call.note(note)
    return found


def bedrock_kb_results(data: Any, call: ToolCall) -> list[Source] | None:
    """A ``Retrieve`` response, a list of its results, or a ``RetrieveAndGenerate`` response.

    ``Retrieve`` results are numbered in the order the knowledge base ranked them. Of a
    ``RetrieveAndGenerate`` response (a tool that answers from a knowledge base) the sources
    are the references its citations name, each once, in the order first cited.
    """
    mapping = as_mapping(data)
    if mapping is not None:
        results = mapping.get("retrievalResults")
        if isinstance(results, list):
            if mapping.get("guardrailAction") == "INTERVENED":
                call.note("a guardrail intervened in the knowledge base's results")
            if not results:
                call.note("the knowledge base returned no results")
                return []
            return _chunks(results, call, "retrievalResults", ranked=True)
        citations = mapping.get("citations")
        output = as_mapping(mapping.get("output"))
        if isinstance(citations, list) and output is not None and "text" in output:
            references = [
                ref
                for citation in dicts(citations)
                for ref in dicts(citation.get("retrievedReferences"))
            ]
            found = _chunks(references, call, "retrievedReferences", ranked=False)
            first: dict[str, Source] = {}
            for source in found:
                first.setdefault(source.id, source)
            return list(first.values())
        return None
    items = dicts(data)
    if isinstance(data, list) and items and len(items) == len(data) and all(map(_is_chunk, items)):
        return _chunks(items, call, "results", ranked=True)
    return None


def bedrock_kb_documents(
    metadata: Mapping[str, Any],
    text: object,
    rank: int | None,
    call: ToolCall,
    *,
    score: object = None,
) -> Source | bool | None:
    """A retrieved document of a framework's knowledge base retriever; False when not one.

    LangChain's ``AmazonKnowledgeBasesRetriever`` keeps the ``Retrieve`` result without its
    ``content`` as a ``Document``'s metadata: ``location``, ``score``, ``type`` (the content
    type), ``source_metadata`` (the result's metadata) and, when given, ``documentId``; the
    chunk's text is the ``page_content``. LlamaIndex's (``llama-index-retrievers-bedrock``)
    keeps ``location`` and ``sourceMetadata`` as a node's metadata, the score on the
    ``NodeWithScore``.

    Args:
        metadata: The document's or node's metadata.
        text: Its text.
        rank: Its place among the documents retrieved with it.
        call: The retriever or tool call being read.
        score: The score the framework keeps beside the metadata, if any.
    """
    location = as_mapping(metadata.get("location"))
    source_metadata = as_mapping(metadata.get("source_metadata")) or as_mapping(
        metadata.get("sourceMetadata")
    )
    if location is None and source_metadata is None:
        return False
    if location is not None and not (
        location.get("type") in _LOCATIONS or any(k in location for k in _BY_KEY)
    ):
        return False
    if location is None and not is_bedrock_kb_metadata(source_metadata or {}):
        return False
    reference = dict(metadata)
    if metadata.get("type") == "IMAGE":
        text = None  # LangChain's text of an image chunk is its bytes as a data URI
    if score is not None:
        reference["score"] = score
    notes: list[str] = []
    source = bedrock_kb_source(
        reference,
        rank=rank,
        origin=call.origin,
        text=text if isinstance(text, str) and text.strip() else None,
        metadata=source_metadata or {},
        diagnostics=notes,
        where="document",
    )
    for note in notes:
        call.note(note)
    if source is not None and isinstance(metadata.get("type"), str):
        extras = {**source.extras, "content_type": metadata["type"]}
        source = source.model_copy(update={"extras": extras})
    return source
