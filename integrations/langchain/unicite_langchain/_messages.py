"""LangChain messages to `CitedAnswer` and back: provider shapes rebuilt, then the core's readers.

LangChain carries each provider's citations in its own way (Responses content blocks, Anthropic
text blocks, Gemini ``grounding_metadata``, v1 standard annotations). Each is turned back into the
provider's JSON and read by the same reader `unicite.extract` uses, so a LangChain answer and the
raw SDK response give the same citations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.messages import content as lc_content
from pydantic import ValidationError

from unicite import CitedAnswer, Source, UsageError
from unicite.model import Citation
from unicite.providers import AnswerBuilder, Provider
from unicite.providers.anthropic import ANTHROPIC
from unicite.providers.gemini import GEMINI
from unicite.providers.openai import OPENAI_CHAT, OPENAI_RESPONSES

__all__ = ["from_ai_message", "provider_of", "to_citation_annotations"]

_UNICITE_KEY = "unicite"
"""Key under a v1 annotation's ``extras`` holding what the v1 `Citation` has no field for."""

_GOOGLE_PROVIDERS = frozenset({"google_genai", "google_vertexai", "google", "gemini", "vertexai"})

# A Markdown link, optionally wrapped in parentheses as search models write them: ([site](url)).
_LINK_RE = re.compile(r"\(?\[([^\[\]\n]{1,200})\]\((https?://[^\s()]{1,2048})\)\)?")

# Anthropic citation types told apart by the location fields the v1 translation keeps in extras.
_ANTHROPIC_LOCATIONS = (
    ("start_char_index", "char_location", "document_title"),
    ("start_page_number", "page_location", "document_title"),
    ("search_result_index", "search_result_location", "title"),
    ("start_block_index", "content_block_location", "document_title"),
)


# --- provider detection ---------------------------------------------------------------------


def provider_of(message: BaseMessage) -> str | None:
    """The unicite provider name of a LangChain message (``"openai"``, ``"gemini"``, ...)."""
    metadata = message.response_metadata or {}
    raw = metadata.get("model_provider")
    if isinstance(raw, str) and raw:
        name = raw.lower()
        if name in _GOOGLE_PROVIDERS:
            return "gemini"
        if "openai" in name:
            return "openai"
        if "anthropic" in name:
            return "anthropic"
        return name
    if metadata.get("grounding_metadata") is not None:
        return "gemini"
    content = message.content
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if "citations" in block or kind in ("server_tool_use", "web_search_tool_result"):
                return "anthropic"
            annotations = block.get("annotations")
            if kind in ("web_search_call", "file_search_call") or (
                isinstance(annotations, list)
                and any(
                    isinstance(a, Mapping) and a.get("type") in ("url_citation", "file_citation")
                    for a in annotations
                )
            ):
                return "openai"
    return None


def _model_name(message: BaseMessage) -> str | None:
    metadata = message.response_metadata or {}
    for key in ("model_name", "model", "model_version"):
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _is_v1(message: BaseMessage) -> bool:
    return (message.response_metadata or {}).get("output_version") == "v1" and isinstance(
        message.content, list
    )


def _blocks(message: BaseMessage) -> list[Any]:
    content = message.content
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _without_index(block: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a content block without the ``index`` LangChain adds for stream merging."""
    return {key: value for key, value in block.items() if key != "index"}


# --- OpenAI ---------------------------------------------------------------------------------


def _openai_annotation(annotation: Any) -> Any:
    """An annotation as the Responses API writes it (LangChain renames file ``index``)."""
    if not isinstance(annotation, Mapping):
        return annotation
    if annotation.get("type") == "file_citation" and "file_index" in annotation:
        out = {k: v for k, v in annotation.items() if k != "file_index"}
        out["index"] = annotation["file_index"]
        return out
    return dict(annotation)


def _responses_payload(message: BaseMessage, blocks: list[Any]) -> dict[str, Any]:
    """The Responses API response a ``ChatOpenAI(use_responses_api=True)`` message came from."""
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
                annotations = block.get("annotations")
                part = {
                    "type": "output_text",
                    "text": block.get("text", ""),
                    "annotations": [
                        _openai_annotation(a)
                        for a in (annotations if isinstance(annotations, list) else [])
                    ],
                }
            item_id = block.get("id")
            if current is None or current.get("id") != item_id:
                current = {"type": "message", "role": "assistant", "content": []}
                if item_id is not None:
                    current["id"] = item_id
                output.append(current)
            current["content"].append(part)
        elif isinstance(kind, str):
            # Tool items (web_search_call, file_search_call, reasoning, function_call, ...) are
            # output items of their own, in the order the response gave them.
            output.append(_without_index(block))
            current = None
    tool_outputs = message.additional_kwargs.get("tool_outputs")
    if isinstance(tool_outputs, list):
        # langchain-openai 0.3 ("v0" output) kept tool items in additional_kwargs.
        output[:0] = [dict(item) for item in tool_outputs if isinstance(item, Mapping)]
    payload: dict[str, Any] = {"object": "response", "output": output}
    metadata = message.response_metadata or {}
    for key in ("id", "status", "incomplete_details"):
        if metadata.get(key) is not None:
            payload[key] = metadata[key]
    model = _model_name(message)
    if model:
        payload["model"] = model
    return payload


def _recovered_links(text: str) -> list[dict[str, Any]]:
    """``url_citation`` annotations rebuilt from the inline links a search model wrote.

    langchain-openai drops Chat Completions ``annotations``; search models place each one on a
    Markdown link in the text, so the links give back the cited URLs and their positions.
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


def _chat_payload(message: BaseMessage, text: str) -> dict[str, Any]:
    """The Chat Completions response a string-content ``ChatOpenAI`` message came from."""
    model = _model_name(message)
    metadata = message.response_metadata or {}
    annotations = _recovered_links(text) if model and "search" in model else []
    chat_message: dict[str, Any] = {"role": "assistant", "content": text}
    if annotations:
        chat_message["annotations"] = annotations
    refusal = message.additional_kwargs.get("refusal")
    if isinstance(refusal, str) and refusal:
        chat_message["refusal"] = refusal
    payload: dict[str, Any] = {
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": chat_message, "finish_reason": metadata.get("finish_reason")}
        ],
    }
    if model:
        payload["model"] = model
    if isinstance(metadata.get("id"), str):
        payload["id"] = metadata["id"]
    return payload


# --- Anthropic ------------------------------------------------------------------------------


def _anthropic_payload(message: BaseMessage, blocks: list[Any]) -> dict[str, Any]:
    """The Messages API response a ``ChatAnthropic`` message came from."""
    content: list[Any] = []
    for block in blocks:
        if isinstance(block, str):
            if block:
                content.append({"type": "text", "text": block})
        elif isinstance(block, Mapping):
            out = _without_index(block)
            if out.get("type") == "text" and "text" not in out:
                out["text"] = ""  # a streamed citations_delta chunk that carried no text
            content.append(out)
        else:
            content.append(block)
    payload: dict[str, Any] = {"type": "message", "role": "assistant", "content": content}
    model = _model_name(message)
    if model:
        payload["model"] = model
    metadata = message.response_metadata or {}
    for key in ("id", "stop_reason"):
        if metadata.get(key) is not None:
            payload[key] = metadata[key]
    return payload


# --- Gemini ---------------------------------------------------------------------------------


def _gemini_part(block: Any) -> dict[str, Any] | None:
    """One ``Part`` of the candidate, from the content item LangChain made of it."""
    if isinstance(block, str):
        return {"text": block}
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
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


def _gemini_payload(message: BaseMessage, blocks: list[Any]) -> dict[str, Any]:
    """The ``GenerateContentResponse`` a ``ChatGoogleGenerativeAI`` message came from.

    ``grounding_metadata`` is the SDK's own dump, so its segment offsets are still the UTF-8
    byte offsets the reader converts; LangChain's v1 translation copies them as str indices.
    """
    metadata = message.response_metadata or {}
    parts = [part for part in map(_gemini_part, blocks) if part is not None]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    grounding = metadata.get("grounding_metadata")
    if grounding is None:
        grounding = _grounding_from_v1(blocks)
    if grounding is not None:
        candidate["grounding_metadata"] = grounding
    finish = metadata.get("finish_reason")
    if finish is not None:
        candidate["finish_reason"] = finish
    payload: dict[str, Any] = {"candidates": [candidate]}
    model = _model_name(message)
    if model:
        payload["model_version"] = model
    return payload


def _grounding_from_v1(blocks: list[Any]) -> dict[str, Any] | None:
    """Grounding metadata rebuilt from LangChain's v1 Gemini citations (kept in their extras)."""
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
                    "segment": {
                        "start_index": key[0],
                        "end_index": key[1],
                        "text": key[2],
                    },
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


# --- v1 standard content blocks ---------------------------------------------------------------


def _v1_to_openai(blocks: list[Any]) -> list[Any]:
    """Responses-shaped blocks from v1 ones: annotations and web/file search calls restored."""
    results: dict[str, Mapping[str, Any]] = {
        str(b.get("tool_call_id")): b
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "server_tool_result"
    }
    out: list[Any] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text":
            annotations = block.get("annotations")
            out.append(
                {
                    **_without_index(block),
                    "annotations": [
                        _openai_annotation_from_v1(a)
                        for a in (annotations if isinstance(annotations, list) else [])
                    ],
                }
            )
        elif kind == "server_tool_call" and block.get("name") in ("web_search", "file_search"):
            out.append(_search_call_from_v1(block, results.get(str(block.get("id")))))
        elif kind in ("server_tool_result", "reasoning", "tool_call"):
            continue
        elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
            out.append(dict(block["value"]))
    return out


def _openai_annotation_from_v1(annotation: Any) -> Any:
    if not isinstance(annotation, Mapping):
        return annotation
    kind = annotation.get("type")
    if kind == "non_standard_annotation":
        return annotation.get("value")
    if kind != "citation":
        return dict(annotation)
    extras = annotation.get("extras")
    out: dict[str, Any] = dict(extras) if isinstance(extras, Mapping) else {}
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


def _v1_to_anthropic(blocks: list[Any]) -> list[Any]:
    """Anthropic-shaped blocks from v1 ones: citation types restored from their fields."""
    calls: dict[str, Mapping[str, Any]] = {}
    out: list[Any] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text":
            annotations = block.get("annotations")
            text_block: dict[str, Any] = {"type": "text", "text": block.get("text", "")}
            if isinstance(annotations, list) and annotations:
                text_block["citations"] = [_anthropic_citation_from_v1(a) for a in annotations]
            out.append(text_block)
        elif kind == "server_tool_call":
            calls[str(block.get("id"))] = block
            extras = block.get("extras")
            name = extras.get("tool_name") if isinstance(extras, Mapping) else None
            out.append(
                {
                    "type": "server_tool_use",
                    "id": block.get("id"),
                    "name": name or block.get("name"),
                    "input": block.get("args") or {},
                }
            )
        elif kind == "server_tool_result":
            extras = block.get("extras")
            block_type = extras.get("block_type") if isinstance(extras, Mapping) else None
            out.append(
                {
                    "type": block_type or "web_search_tool_result",
                    "tool_use_id": block.get("tool_call_id"),
                    "content": block.get("output", []),
                }
            )
        elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
            out.append(dict(block["value"]))
    return out


def _anthropic_citation_from_v1(annotation: Any) -> Any:
    if not isinstance(annotation, Mapping):
        return annotation
    kind = annotation.get("type")
    if kind == "non_standard_annotation":
        return annotation.get("value")
    if kind != "citation":
        return dict(annotation)
    extras = annotation.get("extras")
    out: dict[str, Any] = dict(extras) if isinstance(extras, Mapping) else {}
    if "cited_text" in annotation:
        out["cited_text"] = annotation["cited_text"]
    if "url" in annotation:
        out.update(type="web_search_result_location", url=annotation["url"])
        if "title" in annotation:
            out["title"] = annotation["title"]
        return out
    for field, name, title_key in _ANTHROPIC_LOCATIONS:
        if field in out:
            out["type"] = name
            if "title" in annotation:
                out[title_key] = annotation["title"]
            return out
    out["type"] = "citation"  # unknown: the reader records it in extras["unknown"]
    return out


def _read_v1(blocks: list[Any], builder: AnswerBuilder) -> None:
    """Read v1 text blocks and their standard `Citation` annotations (any provider)."""
    groups: dict[tuple[int, int], dict[str, Any]] = {}
    for n, block in enumerate(blocks):
        path = f"content[{n}]"
        if isinstance(block, str):
            builder.append_text(block)
            continue
        if not isinstance(block, Mapping) or block.get("type") != "text":
            continue
        text = block.get("text")
        text = text if isinstance(text, str) else ""
        base = builder.append_text(text)
        annotations = block.get("annotations")
        for k, ann in enumerate(annotations if isinstance(annotations, list) else []):
            where = f"{path}.annotations[{k}]"
            if not isinstance(ann, Mapping):
                builder.note(f"{where}: expected an annotation object")
                continue
            if ann.get("type") != "citation":
                builder.note(f"{where}: annotation type {ann.get('type')!r} kept in extras")
                builder.extras.setdefault("unknown", []).append({"path": where, "value": ann})
                continue
            _v1_citation(builder, ann, text, base, where, groups, n)
    for group in groups.values():
        builder.cite(group["start"], group["end"], group["source_ids"], **group["fields"])


def _v1_span(ann: Mapping[str, Any], text: str) -> tuple[int, int] | None:
    start, end = ann.get("start_index"), ann.get("end_index")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text):
        return start, end
    if start is None and end is None:
        # No span: the citation covers its whole block, as Anthropic cites blocks.
        stripped = text.strip()
        lead = len(text) - len(text.lstrip())
        return (lead, lead + len(stripped)) if stripped else (0, len(text))
    return None


def _v1_citation(
    builder: AnswerBuilder,
    ann: Mapping[str, Any],
    text: str,
    base: int,
    where: str,
    groups: dict[tuple[int, int], dict[str, Any]],
    block_number: int,
) -> None:
    extras = ann.get("extras")
    extras = dict(extras) if isinstance(extras, Mapping) else {}
    saved = extras.pop(_UNICITE_KEY, None)
    saved = saved if isinstance(saved, Mapping) else {}
    source_data = saved.get("source")
    try:
        if isinstance(source_data, Mapping):
            source = Source.model_validate(dict(source_data))
        else:
            url = ann.get("url")
            source = Source.model_validate(
                {
                    "kind": "web" if isinstance(url, str) and url else "document",
                    "url": url if isinstance(url, str) and url else None,
                    "title": ann.get("title") if isinstance(ann.get("title"), str) else None,
                }
            )
    except ValidationError as err:
        builder.note(f"{where}: unusable source ({err.errors()[0]['msg']}); dropped")
        return
    if source.url is None and source.title is None and not saved:
        builder.note(f"{where}: citation names no url or title; dropped")
        return
    sid = builder.add_source(source)
    span = _v1_span(ann, text)
    if span is None:
        builder.note(
            f"{where}: span {ann.get('start_index')}..{ann.get('end_index')} is outside its "
            f"text block (0..{len(text)}); source kept without a span"
        )
        return
    fields: dict[str, Any] = {
        "quote": ann.get("cited_text") if isinstance(ann.get("cited_text"), str) else None,
        "extras": extras,
        "where": where,
    }
    citation_data = saved.get("citation")
    if isinstance(citation_data, Mapping):
        restored = {
            key: citation_data[key]
            for key in ("origin", "confidence", "location", "extras", "marker_span")
            if citation_data.get(key) is not None
        }
        try:
            # Checked here: a bad saved field must not fail the whole answer at build time.
            check = Citation.model_validate(
                {"start": 0, "end": 0, "text": "", "source_ids": ["x"]} | restored
            )
        except ValidationError as err:
            builder.note(f"{where}: saved citation fields unusable ({err.errors()[0]['msg']})")
        else:
            fields.update(
                origin=check.origin,
                confidence=check.confidence,
                location=check.location,
                extras=check.extras,
            )
            if check.marker_span is not None:
                fields["marker_span"] = (base + check.marker_span[0], base + check.marker_span[1])
    group = saved.get("group")
    key = (block_number, group) if isinstance(group, int) else (block_number, -1 - len(groups))
    entry = groups.get(key)
    if entry is None:
        groups[key] = {
            "start": base + span[0],
            "end": base + span[1],
            "source_ids": [sid],
            "fields": fields,
        }
    else:
        entry["source_ids"].append(sid)


# --- the public functions -------------------------------------------------------------------


def _provider_reader(provider: str | None, message: BaseMessage) -> tuple[Provider, Any] | None:
    """The core reader for a message and the provider payload rebuilt for it, if any."""
    v1 = _is_v1(message)
    blocks = _blocks(message)
    if provider == "gemini":
        return GEMINI, _gemini_payload(message, blocks)
    if provider == "anthropic":
        if v1:
            blocks = _v1_to_anthropic(blocks)
        return ANTHROPIC, _anthropic_payload(message, blocks)
    if provider == "openai":
        if isinstance(message.content, str):
            return OPENAI_CHAT, _chat_payload(message, message.content)
        if v1:
            if not any(
                isinstance(b, Mapping)
                and (b.get("annotations") or b.get("type") in ("server_tool_call", "non_standard"))
                for b in blocks
            ):
                # Chat Completions in v1 blocks: only text, as in the string form.
                return OPENAI_CHAT, _chat_payload(message, str(message.text))
            blocks = _v1_to_openai(blocks)
        return OPENAI_RESPONSES, _responses_payload(message, blocks)
    return None


def _has_v1_citations(blocks: list[Any]) -> bool:
    for block in blocks:
        annotations = block.get("annotations") if isinstance(block, Mapping) else None
        if isinstance(annotations, list) and any(
            isinstance(a, Mapping) and a.get("type") in ("citation", "non_standard_annotation")
            for a in annotations
        ):
            return True
    return False


def from_ai_message(message: BaseMessage, *, strict: bool = False) -> CitedAnswer:
    """The `CitedAnswer` of a LangChain chat model's message, with its native citations.

    Reads what the provider integrations put in the message: langchain-openai Responses
    content blocks (``annotations``, web and file search calls) and Chat Completions text,
    langchain-anthropic text blocks with ``citations`` (streamed ``citations_delta`` chunks
    included), langchain-google-genai ``response_metadata["grounding_metadata"]`` (UTF-8 byte
    offsets converted to str indices), and v1 standard content blocks with `Citation`
    annotations from any provider. ``answer.text`` equals ``message.text``.

    Args:
        message: An ``AIMessage`` or an aggregated ``AIMessageChunk``.
        strict: Raise `unicite.CitationError` instead of recording diagnostics.

    Raises:
        UsageError: ``message`` is not a LangChain message.
    """
    if not isinstance(message, BaseMessage):
        raise UsageError(f"expected a LangChain message, got {type(message).__name__}")
    provider = provider_of(message)
    found = _provider_reader(provider, message)
    if found is not None:
        reader, payload = found
        builder = AnswerBuilder(reader.name)
        try:
            reader.read(payload, builder, candidate=0)
        except Exception as err:
            builder.note(f"internal error reading the {reader.name} message: {err!r}")
    else:
        builder = AnswerBuilder(provider)
        blocks = _blocks(message)
        if _has_v1_citations(blocks):
            _read_v1(blocks, builder)
        else:
            builder.append_text(message.text)
    if builder.model is None:
        builder.model = _model_name(message)
    if builder.text != message.text:
        builder.note("the rebuilt provider response does not hold the message's exact text")
    return builder.build(strict=strict)


def to_citation_annotations(answer: CitedAnswer) -> list[lc_content.Citation]:
    """The answer's citations as LangChain v1 `Citation` annotations on its text.

    One annotation per (citation, source) pair, in citation order; ``start_index`` and
    ``end_index`` index ``answer.text``, so the annotations belong on one text block holding it.
    ``url``, ``title`` and ``cited_text`` (the citation's quote) are the standard fields; what
    the v1 type has no field for (the source's other fields, origin, confidence, location,
    marker span) goes to ``extras["unicite"]``, so `from_ai_message` on a message carrying
    them gives back the same citations and cited sources.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"expected a CitedAnswer, got {type(answer).__name__}")
    annotations: list[lc_content.Citation] = []
    for group, citation in enumerate(answer.citations):
        for sid in citation.source_ids:
            source = answer.source(sid)
            if source is None:
                continue
            annotations.append(_annotation(citation, source, group))
    return annotations


def _annotation(citation: Citation, source: Source, group: int) -> lc_content.Citation:
    saved: dict[str, Any] = {
        "group": group,
        "source": source.model_dump(mode="json", exclude={"raw"}),
        "citation": {
            "origin": citation.origin,
            "confidence": citation.confidence,
            "location": (
                None if citation.location is None else citation.location.model_dump(mode="json")
            ),
            "marker_span": (
                None
                if citation.marker_span is None
                else [citation.marker_span[0], citation.marker_span[1]]
            ),
            "extras": citation.extras,
        },
    }
    annotation: dict[str, Any] = {
        "type": "citation",
        "start_index": citation.start,
        "end_index": citation.end,
        "extras": {_UNICITE_KEY: saved},
    }
    if source.url:
        annotation["url"] = source.url
    if source.title:
        annotation["title"] = source.title
    if citation.quote is not None:
        annotation["cited_text"] = citation.quote
    return cast("lc_content.Citation", annotation)
