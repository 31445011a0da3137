"""Native citations of the answer's response, read from what pydantic-ai keeps of it.

pydantic-ai keeps each text part's provider citation payload in
``TextPart.provider_details["citations"]`` and a normalised form in ``TextPart.citations``.
Where the payload is the provider's own (OpenAI Responses annotations, Chat Completions
annotations, Anthropic text block citations, Gemini grounding supports with their chunks), the
part is put back in the provider's shape and read by unicite's reader for it; otherwise the
normalised citations with a place in the text are translated as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart

import unicite
from unicite import Citation, CitedAnswer, Source
from unicite.providers import extract_content

__all__ = ["native_answer"]

_ANTHROPIC_TYPES = frozenset(
    {
        "char_location",
        "page_location",
        "content_block_location",
        "web_search_result_location",
        "search_result_location",
    }
)


def _raw(part: TextPart) -> list[Any]:
    details = part.provider_details or {}
    raw = details.get("citations")
    return [item for item in raw if isinstance(item, Mapping)] if isinstance(raw, list) else []


def _openai_responses(text: str, raw: list[Any]) -> CitedAnswer:
    block = {"type": "output_text", "text": text, "annotations": raw}
    return extract_content([block], "openai")


def _openai_chat(text: str, raw: list[Any], model: str | None) -> CitedAnswer:
    completion = {
        "object": "chat.completion",
        "model": model or "",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text, "annotations": raw},
            }
        ],
    }
    return unicite.extract(completion, provider="openai")


def _anthropic(text: str, raw: list[Any]) -> CitedAnswer:
    return extract_content([{"type": "text", "text": text, "citations": raw}], "anthropic")


def _gemini(text: str, raw: list[Any]) -> CitedAnswer:
    """Grounding rebuilt from the supports pydantic-ai kept, each with the chunks it named."""
    chunks: list[Any] = []
    index: dict[str, int] = {}
    supports = []
    for support in raw:
        named = support.get("grounding_chunks")
        if not isinstance(named, list):
            continue
        indices = []
        for chunk in named:
            if not isinstance(chunk, Mapping):
                continue
            key = repr(sorted(chunk.items()))
            if key not in index:
                index[key] = len(chunks)
                chunks.append(dict(chunk))
            indices.append(index[key])
        segment = dict(support.get("segment") or {})
        segment.pop("part_index", None)
        supports.append(
            {
                **{k: v for k, v in support.items() if k != "grounding_chunks"},
                "segment": segment,
                "grounding_chunk_indices": indices,
            }
        )
    metadata = {"grounding_chunks": chunks, "grounding_supports": supports}
    return extract_content(text, "gemini", fields={"grounding_metadata": metadata})


def _source(source: Any) -> Source | None:
    """A pydantic-ai citation source (``WebCitationSource``, ``DocumentCitationSource``)."""
    kind = getattr(source, "kind", None)
    excerpts = getattr(source, "excerpts", None) or []
    excerpt = " … ".join(e for e in excerpts if isinstance(e, str)) or None
    title = getattr(source, "title", None)
    if kind == "web" and isinstance(getattr(source, "url", None), str):
        return Source(kind="web", url=source.url, title=title, snippet=excerpt)
    if kind == "document":
        return Source(
            kind="document",
            provider_id=getattr(source, "document_id", None),
            title=title,
            snippet=excerpt,
        )
    return None


def _normalised(text: str, citations: Sequence[Any], provider: str | None) -> CitedAnswer:
    """pydantic-ai's own citations that say which text they support."""
    sources: dict[str, Source] = {}
    cited: list[Citation] = []
    placeless = 0
    for citation in citations:
        ids = []
        for item in getattr(citation, "sources", None) or []:
            source = _source(item)
            if source is not None:
                sources.setdefault(source.id, source)
                ids.append(source.id)
        anchor: Any = getattr(citation, "anchor", None)
        if not ids:
            continue
        # A content anchor is the text the sources support; a marker anchor only the link or
        # marker the model wrote, which says nothing of the claim.
        start, end = getattr(anchor, "start", -1), getattr(anchor, "end", -1)
        if getattr(anchor, "kind", None) != "content" or not 0 <= start < end <= len(text):
            placeless += 1
            continue
        cited.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=list(dict.fromkeys(ids)),
            )
        )
    notes = []
    if placeless:
        notes.append(f"{placeless} native citation(s) name no place in the text; left uncited")
    return CitedAnswer(
        text=text,
        sources=list(sources.values()),
        citations=cited,
        provider=provider,
        diagnostics=notes,
    )


def _kind(part: TextPart, provider: str, raw: list[Any]) -> str | None:
    types = {item.get("type") for item in raw}
    if "url_citation" in types or "file_citation" in types:
        return "openai-chat" if any("url_citation" in item for item in raw) else "openai"
    if types & _ANTHROPIC_TYPES:
        return "anthropic"
    if any("grounding_chunks" in item for item in raw):
        return "gemini"
    return None


def _part_answer(part: TextPart, response: ModelResponse) -> CitedAnswer | None:
    raw = _raw(part)
    provider = part.provider_name or response.provider_name or ""
    kind = _kind(part, provider, raw) if raw else None
    if kind == "openai":
        return _openai_responses(part.content, raw)
    if kind == "openai-chat":
        return _openai_chat(part.content, raw, response.model_name)
    if kind == "anthropic":
        return _anthropic(part.content, raw)
    if kind == "gemini":
        answer = _gemini(part.content, raw)
        if answer.citations or not getattr(part, "citations", None):
            return answer
    normalised = getattr(part, "citations", None)
    if normalised:
        return _normalised(part.content, normalised, provider or None)
    return None


def _shift(citation: Citation, by: int) -> Citation:
    marker = citation.marker_span
    return citation.model_copy(
        update={
            "start": citation.start + by,
            "end": citation.end + by,
            "marker_span": None if marker is None else (marker[0] + by, marker[1] + by),
        }
    )


Piece = tuple[int, str, "CitedAnswer | None"]


def _joined(pieces: Sequence[Piece]) -> str:
    return "".join("\n\n" * (gap // 2) + content for gap, content, _ in pieces)


def _output_pieces(pieces: list[Piece], text: str) -> list[Piece] | None:
    """The text parts the output is made of: all of them, or those after the last tool call.

    ``ModelResponse.text`` joins every text part; a run's text output is the text after the
    response's last non-text part (a native tool call or its result) when there is one.
    """
    for start, (gap, _, _) in enumerate(pieces):
        if start and not gap:
            continue  # adjacent parts are one block: the output starts at a block
        tail = [
            (0, content, answer) if i == 0 else (g, content, answer)
            for i, (g, content, answer) in enumerate(pieces[start:])
        ]
        if _joined(tail) == text:
            return tail
    return None


def native_answer(response: ModelResponse, text: str, diagnostics: list[str]) -> CitedAnswer | None:
    """The response's text with its native citations, or None when it carries none.

    The text parts are joined as ``ModelResponse.text`` joins them; when that is not `text`
    (an output validator changed it, or the output is not the response's text) the native
    citations cannot be placed and a diagnostic says so.
    """
    pieces: list[tuple[int, str, CitedAnswer | None]] = []
    adjacent = False
    found = False
    for part in response.parts:
        if isinstance(part, TextPart):
            try:
                answer = _part_answer(part, response)
            except Exception as err:
                diagnostics.append(f"internal error reading a text part's citations: {err!r}")
                answer = None
            found = found or (answer is not None and bool(answer.citations or answer.sources))
            if answer is not None and answer.text != part.content:
                diagnostics.append("a text part's native citations do not fit its text; dropped")
                answer = None
            pieces.append((0 if adjacent or not pieces else 2, part.content, answer))
            adjacent = True
        else:
            adjacent = False
    if not found:
        return None
    output = _output_pieces(pieces, text)
    if output is None:
        diagnostics.append(
            "the output is not the response's text, so its native citations cannot be placed"
        )
        return None
    sources: dict[str, Source] = {}
    citations: list[Citation] = []
    notes: list[str] = []
    provider = model = None
    offset = 0
    for gap, content, answer in output:
        body = offset + gap
        if answer is not None:
            provider = provider or answer.provider
            model = model or answer.model
            notes.extend(answer.diagnostics)
            for source in answer.sources:
                sources.setdefault(source.id, source)
            citations.extend(_shift(c, body) for c in answer.citations)
        offset = body + len(content)
    return CitedAnswer(
        text=text,
        sources=list(sources.values()),
        citations=citations,
        provider=provider,
        model=model or response.model_name,
        diagnostics=notes,
    )
