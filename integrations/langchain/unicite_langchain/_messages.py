"""LangChain messages to `CitedAnswer` and back: what a message holds, handed to the core.

LangChain carries each provider's citations in its own way (Responses content blocks, Anthropic
text blocks, Gemini ``grounding_metadata``, v1 standard annotations). The message's content and
response metadata go to `unicite.providers.extract_content`, whose provider readers put them
back in the provider's shape and read them as `unicite.extract` reads the raw response, so a
LangChain answer and the SDK response give the same citations. v1 `Citation` annotations of a
provider no reader takes are read as LangChain's standard type (unicite's own included).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.messages import content as lc_content
from pydantic import ValidationError

from unicite import CitationError, CitedAnswer, Source, UsageError
from unicite.model import Citation
from unicite.providers import AnswerBuilder, extract_content, registered

__all__ = ["from_ai_message", "provider_of", "to_citation_annotations"]

_UNICITE_KEY = "unicite"
"""Key under a v1 annotation's ``extras`` holding what the v1 `Citation` has no field for."""

_GOOGLE_PROVIDERS = frozenset({"google_genai", "google_vertexai", "google", "gemini", "vertexai"})


# --- what the message holds -------------------------------------------------------------------


def _named_provider(message: BaseMessage) -> str | None:
    """The unicite provider name the message's ``model_provider`` metadata gives, if any."""
    raw = (message.response_metadata or {}).get("model_provider")
    if not isinstance(raw, str) or not raw:
        return None
    name = raw.lower()
    if name in _GOOGLE_PROVIDERS:
        return "gemini"
    if "openai" in name:
        return _AZURE if _on_your_data(message) else "openai"
    if "anthropic" in name:
        return "anthropic"
    if name == "bedrock_converse":
        return "bedrock"  # langchain-aws's ChatBedrockConverse: Converse's content blocks
    if name == "bedrock":
        return None  # ChatBedrock (InvokeModel): the model's own shapes, told by the content
    if name == "mistralai":
        return "mistral"  # langchain-mistralai's ChatMistralAI: Mistral's content chunks
    return name


_AZURE = "azure"


def _on_your_data(message: BaseMessage) -> bool:
    """Whether the core's Azure On Your Data reader recognises the message's content.

    ``AzureChatOpenAI`` says ``model_provider: openai`` and drops the message's ``context``;
    the answer's ``[docN]`` markers (or a context kept in ``additional_kwargs``) still show
    it, and that reader says why the markers are left uncited when the context is missing.
    """
    content, fields = _content(message), _fields(message)
    return any(
        reader.name == _AZURE and reader.detect_content(content, fields) for reader in registered()
    )


def _model_name(message: BaseMessage) -> str | None:
    metadata = message.response_metadata or {}
    for key in ("model_name", "model", "model_version"):
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _blocks(message: BaseMessage) -> list[Any]:
    content = message.content
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _content(message: BaseMessage) -> str | list[Any]:
    """The message's content, with the tool items langchain-openai 0.3 kept aside put first."""
    content = message.content
    tool_outputs = message.additional_kwargs.get("tool_outputs")
    if isinstance(content, list) and isinstance(tool_outputs, list):
        return [*(item for item in tool_outputs if isinstance(item, Mapping)), *content]
    return content


def _fields(message: BaseMessage) -> dict[str, Any]:
    """The response fields the message keeps: its response metadata, model and refusal."""
    fields = dict(message.response_metadata or {})
    model = _model_name(message)
    if model:
        fields["model"] = model
    refusal = message.additional_kwargs.get("refusal")
    if isinstance(refusal, str) and refusal:
        fields["refusal"] = refusal
    context = message.additional_kwargs.get("context")
    if isinstance(context, Mapping):
        fields["context"] = context  # Azure On Your Data's, where an integration keeps it
    return fields


def provider_of(message: BaseMessage) -> str | None:
    """The unicite provider name of a LangChain message (``"openai"``, ``"gemini"``, ...).

    Its ``model_provider`` metadata when it has one, else what the core's readers recognise
    in its content (citation and tool shapes, grounding metadata).
    """
    named = _named_provider(message)
    if named is not None:
        return named
    return extract_content(_content(message), fields=_fields(message)).provider


# --- v1 standard content blocks ---------------------------------------------------------------


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
    offsets converted to str indices), langchain-aws ``ChatBedrockConverse`` text blocks with
    Bedrock ``citations`` (invoked or streamed), langchain-mistralai ``ChatMistralAI`` content
    chunks (its rewritten ``reference`` chunks put back; invoked or streamed), and v1 standard
    content blocks with `Citation` annotations from any provider. ``answer.text`` equals
    ``message.text``.

    Args:
        message: An ``AIMessage`` or an aggregated ``AIMessageChunk``.
        strict: Raise `unicite.CitationError` instead of recording diagnostics.

    Raises:
        UsageError: ``message`` is not a LangChain message.
    """
    if not isinstance(message, BaseMessage):
        raise UsageError(f"expected a LangChain message, got {type(message).__name__}")
    named = _named_provider(message)
    answer: CitedAnswer | None = None
    if named is None or named in {p.name.lower() for p in registered()}:
        answer = extract_content(_content(message), named, fields=_fields(message), strict=strict)
        if answer.provider is None and (named is not None or not isinstance(message.content, str)):
            # No reader took the content: read it as LangChain's standard. Plain text with no
            # provider named reads the same either way: the answer in hand is that reading.
            answer = None
    if answer is None:
        builder = AnswerBuilder(named)
        blocks = _blocks(message)
        if _has_v1_citations(blocks):
            _read_v1(blocks, builder)
        else:
            builder.append_text(message.text)
        builder.model = _model_name(message)
        answer = builder.build(strict=strict)
    if answer.model is None and (model := _model_name(message)) is not None:
        answer = answer.model_copy(update={"model": model})
    if answer.text != message.text:
        note = "the rebuilt provider response does not hold the message's exact text"
        if strict:
            raise CitationError(
                f"{answer.provider or 'provider'} data is not clean: {note}",
                provider=answer.provider,
                diagnostics=[*answer.diagnostics, note],
            )
        answer = answer.model_copy(update={"diagnostics": [*answer.diagnostics, note]})
    return answer


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
