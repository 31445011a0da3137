"""OpenAI responses as frameworks keep them: content blocks plus a few response fields.

LangChain and LlamaIndex keep a Responses API answer as a flat list of content blocks: each
``output_text`` part as a ``{"type": "text", "text", "annotations", "id"}`` block carrying its
message item's id, tool items (``web_search_call``, ``reasoning``...) as blocks of their own,
file citations with ``index`` renamed ``file_index``, and an ``index`` added to every block while
streaming. A Chat Completions answer is kept as its text, without its ``annotations``. LangChain's
standard (``output_version="v1"``) blocks carry the same data in another shape: ``citation``
annotations with the provider's fields in ``extras``, ``server_tool_call`` /
``server_tool_result`` blocks, and ``non_standard`` wrappers around what has no standard form.
This module puts all of them back where the API has them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from unicite.providers._v1 import is_v1, v1_citation

__all__ = [
    "TOOL_ITEMS",
    "chat_completion",
    "has_citation_shapes",
    "is_chat_content",
    "responses_payload",
]

TOOL_ITEMS = frozenset({"web_search_call", "file_search_call"})
"""Output items whose presence says a list of blocks is a Responses output."""

_OPENAI_ANNOTATIONS = frozenset(
    {"url_citation", "file_citation", "container_file_citation", "file_path"}
)
_TEXT_BLOCKS = frozenset({"text", "output_text"})
# Standard v1 block types with no Responses output item of that name.
_V1_BLOCKS = frozenset(
    {
        "server_tool_call",
        "server_tool_result",
        "non_standard",
        "tool_call",
        "tool_call_chunk",
        "invalid_tool_call",
    }
)
_RESPONSE_FIELDS = ("id", "status", "incomplete_details", "error", "model")

# A Markdown link, optionally wrapped in parentheses as search models write them: ([site](url)).
_LINK_RE = re.compile(r"\(?\[([^\[\]\n]{1,200})\]\((https?://[^\s()]{1,2048})\)\)?")


def _type(value: object) -> str | None:
    """The ``type`` of a block or annotation, when it has a string one."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) else None


def _annotations(block: Mapping[str, Any]) -> list[Any]:
    annotations = block.get("annotations")
    return annotations if isinstance(annotations, list) else []


def has_citation_shapes(content: list[Any]) -> bool:
    """Whether blocks hold an OpenAI annotation or a web or file search call."""
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if _type(block) in TOOL_ITEMS:
            return True
        if any(_type(a) in _OPENAI_ANNOTATIONS for a in _annotations(block)):
            return True
    return False


def is_chat_content(content: str | list[Any], fields: Mapping[str, Any]) -> bool:
    """Whether content is a Chat Completions answer rather than a Responses output.

    A string is; so is a list of plain text blocks (no annotations, no tool items, nothing in
    LangChain's standard form) when the fields are a completion's (a ``finish_reason``, no
    Responses ``status``).
    """
    if isinstance(content, str):
        return True
    for block in content:
        if isinstance(block, str):
            continue
        if _type(block) not in _TEXT_BLOCKS:
            return False
        if _annotations(block):
            return False
    return fields.get("object") == "chat.completion" or (
        "finish_reason" in fields and "status" not in fields
    )


def _text_of(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


# --- Chat Completions ---------------------------------------------------------------------


def _recovered_links(text: str) -> list[dict[str, Any]]:
    """``url_citation`` annotations rebuilt from the inline links a search model wrote.

    Search models place each annotation on a Markdown link in the text, so when a framework
    dropped the annotations, the links give back the cited URLs and their positions.
    """
    annotations = []
    for match in _LINK_RE.finditer(text):
        start, end = match.span()
        wrapped = text[start] == "(" and text[end - 1] == ")" and match.group(0).endswith("))")
        if not wrapped:
            # Only one of the optional parentheses matched: cite the bare link.
            start = match.start() + (1 if text[start] == "(" else 0)
            end = start + len(f"[{match.group(1)}]({match.group(2)})")
        annotations.append(
            {
                "type": "url_citation",
                "url_citation": {
                    "start_index": start,
                    "end_index": end,
                    "url": match.group(2),
                    "title": match.group(1),
                },
                "recovered_from": "inline_link",
            }
        )
    return annotations


def chat_completion(content: str | list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions response a text answer and its fields came from.

    A search model's answer whose annotations were dropped gets them back from its links.
    """
    text = _text_of(content)
    model = fields.get("model")
    message: dict[str, Any] = {"role": "assistant", "content": text}
    annotations = _recovered_links(text) if isinstance(model, str) and "search" in model else []
    if annotations:
        message["annotations"] = annotations
    refusal = fields.get("refusal")
    if isinstance(refusal, str) and refusal:
        message["refusal"] = refusal
    payload: dict[str, Any] = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": fields.get("finish_reason")}],
    }
    if isinstance(model, str) and model:
        payload["model"] = model
    if isinstance(fields.get("id"), str):
        payload["id"] = fields["id"]
    return payload


# --- Responses API ------------------------------------------------------------------------


def _without_index(block: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a block without the ``index`` frameworks add for merging streamed chunks."""
    return {key: value for key, value in block.items() if key != "index"}


def _annotation(annotation: Any) -> Any:
    """An annotation as the Responses API writes it (LangChain renames file ``index``)."""
    if not isinstance(annotation, Mapping):
        return annotation
    if annotation.get("type") == "file_citation" and "file_index" in annotation:
        out = {k: v for k, v in annotation.items() if k != "file_index"}
        out["index"] = annotation["file_index"]
        return out
    return dict(annotation)


def _annotation_from_v1(annotation: Any) -> Any:
    out, kept = v1_citation(annotation)
    if out is None:
        return kept
    for key in ("start_index", "end_index"):
        if key in annotation:
            out[key] = annotation[key]
    if "url" in annotation:
        out["type"] = "url_citation"
        out["url"] = annotation["url"]
        if "title" in annotation:
            out["title"] = annotation["title"]
    else:
        out["type"] = "file_citation"
        if "title" in annotation:
            out["filename"] = annotation["title"]
        if "file_index" in out:
            out["index"] = out.pop("file_index")
    return out


def _search_call_from_v1(
    call: Mapping[str, Any], result: Mapping[str, Any] | None
) -> dict[str, Any]:
    args = call.get("args")
    args = dict(args) if isinstance(args, Mapping) else {}
    output = result.get("output") if result is not None else None
    output = output if isinstance(output, Mapping) else {}
    status = "completed"
    if result is not None and result.get("status") == "error":
        status = "failed"
    if call.get("name") == "web_search":
        action = {**args, **({"sources": output["sources"]} if "sources" in output else {})}
        return {"type": "web_search_call", "id": call.get("id"), "status": status, "action": action}
    return {
        "type": "file_search_call",
        "id": call.get("id"),
        "status": status,
        "queries": args.get("queries", []),
        "results": output.get("results"),
    }


def _from_v1(content: list[Any]) -> list[Any]:
    """Responses-shaped blocks from standard v1 ones: annotations and search calls restored.

    What has no Responses item (function calls, reasoning, other server tools) is left out.
    """
    results: dict[str, Mapping[str, Any]] = {
        str(b.get("tool_call_id")): b
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "server_tool_result"
    }
    out: list[Any] = []
    for block in content:
        if not isinstance(block, Mapping):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(
                {
                    **_without_index(block),
                    "annotations": [_annotation_from_v1(a) for a in _annotations(block)],
                }
            )
        elif kind == "server_tool_call" and block.get("name") in ("web_search", "file_search"):
            out.append(_search_call_from_v1(block, results.get(str(block.get("id")))))
        elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
            out.append(dict(block["value"]))
    return out


def responses_payload(content: list[Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses API response that content blocks and its fields came from.

    Consecutive text blocks of one message item (one ``id``) are its ``output_text`` parts;
    every other typed block is an output item of its own, in the order the blocks give.
    """
    blocks = _from_v1(content) if is_v1(content, _V1_BLOCKS) else content
    output: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for block in blocks:
        if not isinstance(block, Mapping):
            if isinstance(block, str) and block:
                block = {"type": "text", "text": block}
            else:
                continue
        kind = block.get("type")
        if kind in ("text", "output_text", "refusal"):
            if kind == "refusal":
                part: dict[str, Any] = {"type": "refusal", "refusal": block.get("refusal", "")}
            else:
                part = {
                    "type": "output_text",
                    "text": block.get("text", ""),
                    "annotations": [_annotation(a) for a in _annotations(block)],
                }
            item_id = block.get("id")
            if current is None or current.get("id") != item_id:
                current = {"type": "message", "role": "assistant", "content": []}
                if item_id is not None:
                    current["id"] = item_id
                output.append(current)
            current["content"].append(part)
        elif isinstance(kind, str):
            output.append(_without_index(block))
            current = None
    payload: dict[str, Any] = {"object": "response", "output": output}
    for key in _RESPONSE_FIELDS:
        if fields.get(key) is not None:
            payload[key] = fields[key]
    return payload
