"""A Gemini answer as frameworks keep it: content items plus candidate fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.providers.gemini._shape import _camel

__all__ = ["content_response"]


def _part(block: Any) -> dict[str, Any] | None:
    """One ``Part`` of the candidate, from a content item (a part, or a typed block made of one)."""
    if isinstance(block, str):
        return {"text": block}
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind is None:
        return dict(block)
    if kind == "text":
        text = block.get("text")
        return {"text": text if isinstance(text, str) else ""}
    if kind in ("thinking", "reasoning"):
        thought = block.get("thinking", block.get("reasoning"))
        return {"text": thought if isinstance(thought, str) else "", "thought": True}
    if kind == "executable_code":
        return {
            "executableCode": {
                "code": block.get("executable_code"),
                "language": block.get("language"),
            }
        }
    if kind == "code_execution_result":
        return {
            "codeExecutionResult": {
                "output": block.get("code_execution_result"),
                "outcome": block.get("outcome"),
            }
        }
    if kind in ("image_url", "image"):
        return {"inlineData": {"mimeType": block.get("mime_type", "image/*")}}
    return None


def _grounding_from_v1(blocks: list[Any]) -> dict[str, Any] | None:
    """Grounding metadata rebuilt from LangChain's standard (v1) Gemini citations.

    Each ``citation`` annotation keeps its chunk index, search queries and scores in
    ``extras["google_ai_metadata"]`` and its segment's offsets (still UTF-8 bytes) in its
    ``start_index`` / ``end_index``; annotations of one segment become one support.
    """
    chunks: dict[int, dict[str, Any]] = {}
    supports: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    queries: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            continue
        annotations = block.get("annotations")
        for ann in annotations if isinstance(annotations, list) else []:
            if not isinstance(ann, Mapping) or ann.get("type") != "citation":
                continue
            extras = ann.get("extras")
            google = extras.get("google_ai_metadata") if isinstance(extras, Mapping) else None
            if not isinstance(google, Mapping):
                continue
            index = google.get("grounding_chunk_index")
            if not isinstance(index, int) or isinstance(index, bool):
                continue
            chunks.setdefault(index, {"web": {"uri": ann.get("url"), "title": ann.get("title")}})
            for query in google.get("web_search_queries") or []:
                if isinstance(query, str) and query not in queries:
                    queries.append(query)
            key = (ann.get("start_index"), ann.get("end_index"), ann.get("cited_text"))
            support = supports.setdefault(
                key,
                {
                    "segment": {"start_index": key[0], "end_index": key[1], "text": key[2]},
                    "grounding_chunk_indices": [],
                },
            )
            support["grounding_chunk_indices"].append(index)
            scores = google.get("confidence_scores")
            if scores:
                support["confidence_scores"] = scores
    if not chunks:
        return None
    listed = [chunks.get(n, {}) for n in range(max(chunks) + 1)]
    return {
        "grounding_chunks": listed,
        "grounding_supports": list(supports.values()),
        "web_search_queries": queries,
    }


def _field(fields: Mapping[str, Any], snake: str) -> Any:
    value = fields.get(snake)
    return value if value is not None else fields.get(_camel(snake))


def content_response(content: str | list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``GenerateContentResponse`` of one candidate kept as content items plus fields."""
    blocks = [content] if isinstance(content, str) else content
    parts = [part for part in map(_part, blocks) if part is not None]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    grounding = _field(fields, "grounding_metadata")
    if grounding is None:
        grounding = _grounding_from_v1(blocks)
    if grounding is not None:
        candidate["groundingMetadata"] = grounding
    for key in ("citation_metadata", "finish_reason"):
        value = _field(fields, key)
        if value is not None:
            candidate[_camel(key)] = value
    response: dict[str, Any] = {"candidates": [candidate]}
    model = next(
        (
            value
            for value in map(fields.get, ("model", "model_version", "modelVersion"))
            if isinstance(value, str) and value
        ),
        None,
    )
    if model:
        response["modelVersion"] = model
    return response
