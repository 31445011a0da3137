"""Cohere v2 chat: citations with character offsets into the answer, and document / tool sources."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from unicite._text import int_of
from unicite.model import PageLocation
from unicite.providers._base import CitationEvent, Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder

__all__ = ["COHERE", "CohereProvider"]

_DOCUMENT_FIELDS = {"id", "text", "title", "url"}


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _whole(value: object) -> int | None:
    """An int given as an int or as digits (``12``, ``"12"``), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = value.strip() if isinstance(value, str) else ""
    return int_of(text) if len(text) <= 9 else None


def _page_number(document: Mapping[str, Any]) -> int | None:
    """The 1-based page a document (a chunk of a paged file) is on, when its fields say so.

    A document's fields are the caller's: ``page_number`` is read as 1-based; ``page`` beside
    ``page_label`` as the 0-based page index of LangChain's PDF loaders, whose metadata this
    pair is; a lone ``page`` may count from 0 or from 1 and is not guessed (it stays in
    ``extras["page"]``).
    """
    page = _whole(document.get("page_number"))
    if page is None and "page_label" in document:
        index = _whole(document.get("page"))
        page = index + 1 if index is not None else None
    return page if page is not None and page >= 1 else None


class _CohereReader:
    """Reads a Cohere v2 chat response; citations are kept per input citation for streams."""

    def __init__(self, builder: AnswerBuilder) -> None:
        self.builder = builder
        self.read = builder.read
        self.starts: dict[int, int] = {}
        self.unknown: list[dict[str, Any]] = []
        self.plan_citations: list[Any] = []
        self.thinking_citations: list[Any] = []

    def _unknown(self, message: str, path: str, data: object) -> None:
        self.builder.note(f"{message}; kept in extras['unknown']")
        self.unknown.append({"path": path, "data": data})

    def content(self, items: list[Any], path: str) -> None:
        for n, item in enumerate(items):
            ipath = f"{path}[{n}]"
            kind = item.get("type") if isinstance(item, Mapping) else None
            if not isinstance(item, Mapping):
                self.builder.note(f"{ipath}: expected a content object, got {type(item).__name__}")
            elif kind == "text":
                text = self.read.text(item, "text", ipath)
                self.starts[n] = self.builder.append_text(text or "")
            elif kind != "thinking":
                self._unknown(f"{ipath}: unknown content type {kind!r}", ipath, item)

    def citation(self, item: object, path: str) -> int | None:
        """Declare one citation; return its number among those declared (`AnswerBuilder.made`)."""
        if not isinstance(item, Mapping):
            self.builder.note(f"{path}: expected a citation object, got {type(item).__name__}")
            return None
        kind = item.get("type", "TEXT_CONTENT")
        if kind == "PLAN":
            self.plan_citations.append(item)
            return None
        if kind == "THINKING_CONTENT":
            self.thinking_citations.append(item)
            return None
        if kind not in (None, "TEXT_CONTENT"):
            self._unknown(f"{path}: unknown citation type {kind!r}", path, item)
            return None
        read = self.read
        start = read.integer(item, "start", path)
        end = read.integer(item, "end", path)
        cited = read.text(item, "text", path)
        if start is None or end is None:
            self.builder.note(f"{path}: citation without start and end")
            return None
        content_index = read.integer(item, "content_index", path)
        base = self.starts.get(content_index if content_index is not None else 0, 0)
        start, end = base + start, base + end
        text = self.builder.text
        if cited is not None and text[start:end] != cited and 0 <= start <= end:
            moved = _nearest(text, cited, start)
            where = f"{path}: text {cited!r} does not match text[{start}:{end}]"
            if moved is None:
                self.builder.note(f"{where} and is not in the answer; dropped")
                return None
            self.builder.note(f"{where}; moved to {moved}..{moved + len(cited)}")
            start, end = moved, moved + len(cited)
        ids = []
        for n, source in enumerate(read.items(item, "sources", path)):
            sid = self.source(source, f"{path}.sources[{n}]")
            if sid is not None:
                ids.append(sid)
        source_ids = [sid for sid in dict.fromkeys(ids) if sid in self.builder.ledger]
        location = self.page(source_ids[0]) if source_ids else None
        if not self.builder.cite(start, end, ids, location=location, raw=item, where=path):
            return None
        return self.builder.declared - 1

    def page(self, source_id: str) -> PageLocation | None:
        """The page a citation of this source points at: a document that is a page of a file."""
        source = self.builder.ledger.get(source_id)
        if source is None or source.kind != "document":
            return None
        return source.page_location()

    def source(self, item: object, path: str) -> str | None:
        if not isinstance(item, Mapping):
            self.builder.note(f"{path}: expected a source object, got {type(item).__name__}")
            return None
        read = self.read
        kind = item.get("type")
        source_id = read.text(item, "id", path)
        if kind == "document":
            body = read.obj(item, "document", path) or {}
            bpath = f"{path}.document"
            url = read.text(body, "url", bpath)
            text = read.text(body, "text", bpath)
            extras = {k: v for k, v in body.items() if k not in _DOCUMENT_FIELDS}
            page = _page_number(body)
            if page is not None:
                extras["page_number"] = page  # 1-based, as the extractors keep it
            fields = {
                "kind": "document",
                "provider_id": source_id or read.text(body, "id", bpath),
                "title": read.text(body, "title", bpath),
                "url": url if url and _is_http(url) else None,
                "content": text or None,
                "extras": extras,
                "raw": item,
            }
        elif kind == "tool":
            output = read.obj(item, "tool_output", path) or {}
            url = read.get(output, "url")
            title = read.get(output, "title")
            text = read.get(output, "text")
            fields = {
                "kind": "tool",
                "provider_id": source_id,
                "title": title if isinstance(title, str) else None,
                "url": url if isinstance(url, str) and _is_http(url) else None,
                "content": text if isinstance(text, str) and text else None,
                "extras": {"tool_output": dict(output)} if output else {},
                "raw": item,
            }
        else:
            self._unknown(f"{path}: unknown source type {kind!r}", path, item)
            return None
        if not fields["provider_id"] and not fields["url"] and not fields["content"]:
            fields["content"] = json.dumps(fields["extras"], sort_keys=True, ensure_ascii=False)
        return self.builder.add_source(fields)

    def close(self) -> None:
        for key, value in (
            ("plan_citations", self.plan_citations),
            ("thinking_citations", self.thinking_citations),
            ("unknown", self.unknown),
        ):
            if value:
                self.builder.extras[key] = value


def _nearest(text: str, needle: str, near: int) -> int | None:
    """Start of the occurrence of `needle` in `text` nearest to `near`, or None."""
    if not needle:
        return None
    best: int | None = None
    position = text.find(needle)
    while position >= 0:
        if best is None or abs(position - near) < abs(best - near):
            best = position
        position = text.find(needle, position + 1)
    return best


def _read_cohere(data: Mapping[str, Any], builder: AnswerBuilder) -> list[int | None]:
    """Fill `builder` from a chat response.

    Returns, for each of the response's citations, its number among those the builder was
    given (see `AnswerBuilder.made`), or None when it was dropped.
    """
    read = builder.read
    builder.model = read.text(data, "model", "response")
    response_id = read.text(data, "id", "response")
    finish_reason = read.text(data, "finish_reason", "response")
    message = read.obj(data, "message", "response")
    reader = _CohereReader(builder)
    reader.content(read.items(message, "content", "response.message"), "response.message.content")
    citations = read.items(message, "citations", "response.message")
    builder.grounded = bool(citations)
    made = [
        reader.citation(item, f"response.message.citations[{n}]")
        for n, item in enumerate(citations)
    ]
    reader.close()
    if response_id:
        builder.extras["response_id"] = response_id
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason
    return made


_COHERE_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "citation-start",
        "citation-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "message-end",
        "debug",
    }
)


_CITATION_WEIGHT = 64
"""Characters a citation counts for in the size of a streamed Cohere response."""


class _CohereStream(RebuildingStream):
    """Rebuilds the v2 chat response from ``chat_stream`` events."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._top: dict[str, Any] = {}
        self._role: Any = "assistant"
        self._content: dict[int, dict[str, Any]] = {}
        self._citations: list[Any] = []
        self._pending: list[int] = []
        self._ended = False
        # Text pieces per (content index, key), joined only when the response is read.
        self._pieces: dict[tuple[int, str], list[str]] = {}
        self._length = 0  # characters of text received, across content parts
        # Size of the response (text plus citations) at the last reading: announcing reads the
        # whole response, so it reads again only once that has grown by an eighth, which keeps
        # a long stream linear; the last citations wait at most for that growth or the end.
        self._read_at = -1

    @staticmethod
    def _message(event: Mapping[str, Any]) -> Mapping[str, Any]:
        delta = event.get("delta")
        message = delta.get("message") if isinstance(delta, Mapping) else None
        return message if isinstance(message, Mapping) else {}

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when text, a citation or the end arrived."""
        kind = event.get("type")
        message = self._message(event)
        index = event.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else 0
        if kind == "message-start":
            if isinstance(event.get("id"), str):
                self._top["id"] = event["id"]
            self._role = message.get("role", self._role)
        elif kind in ("content-start", "content-delta"):
            content = message.get("content")
            if not isinstance(content, Mapping):
                self.diagnostics.append(f"{kind} {index}: no content object")
                return False
            self._content.setdefault(index, {"type": content.get("type") or "text"})
            for key in ("text", "thinking"):
                value = content.get(key)
                if isinstance(value, str):
                    self._pieces.setdefault((index, key), []).append(value)
                    if key == "text":
                        self._length += len(value)
            return bool(kind == "content-delta")
        elif kind == "citation-start":
            citation = message.get("citations")
            self._citations.append(citation)
            self._pending.append(len(self._citations) - 1)
            return True
        elif kind == "message-end":
            delta = event.get("delta")
            delta = delta if isinstance(delta, Mapping) else {}
            for key in ("finish_reason", "usage"):
                if delta.get(key) is not None:
                    self._top[key] = delta[key]
            if delta.get("error"):
                self.diagnostics.append(f"stream error: {delta['error']}")
            self._ended = True
            return True
        elif not isinstance(kind, str) or kind not in _COHERE_EVENTS:
            self.diagnostics.append(f"unknown stream event type {kind!r}")
        return False

    def response(self) -> dict[str, Any]:
        """The chat response the events so far add up to."""
        for (index, key), pieces in self._pieces.items():
            if len(pieces) > 1:
                pieces[:] = ["".join(pieces)]
            self._content[index][key] = pieces[0]
        content = [self._content[n] for n in sorted(self._content)]
        message = {"role": self._role, "content": content, "citations": list(self._citations)}
        return {**self._top, "message": message}

    def announce(self) -> list[CitationEvent]:
        """The citations whose text has fully arrived (all of them at the end)."""
        final = self._ended
        if not self._pending:
            return []
        size = self._length + _CITATION_WEIGHT * len(self._citations)
        if not final:
            if 8 * (size - self._read_at) < self._read_at:
                return []
            arrived = any(
                isinstance(item, Mapping)
                and isinstance(item.get("end"), int)
                and item["end"] <= self._length
                for item in (self._citations[n] for n in self._pending)
            )
            if not arrived:
                return []
        self._read_at = size
        builder = AnswerBuilder(self.provider.name)
        made = _read_cohere(self.response(), builder)
        length = builder.length
        ready = []
        for n in self._pending:
            item = self._citations[n]
            end = item.get("end") if isinstance(item, Mapping) else None
            text_arrived = isinstance(end, int) and end <= length
            # A citation whose text did not match is moved by a search over the whole text,
            # so it is final only when the text is.
            if final or (text_arrived and made[n] is not None and not builder.diagnostics):
                ready.append(n)
        self._pending = [n for n in self._pending if n not in ready]
        events = []
        for n in ready:
            declared = made[n]
            if declared is not None:
                citation = builder.made(declared)
                sources = [s for s in map(builder.ledger.get, citation.source_ids) if s is not None]
                events.append(CitationEvent(citation=citation, sources=sources))
        return events

    def problems(self) -> list[str]:
        """What a stream without its ``message-end`` lacks."""
        return [] if self._ended else ["stream ended before message-end"]


class CohereProvider(Provider):
    """Cohere v2 chat responses: ``message.citations`` with offsets and document/tool sources."""

    name = "cohere"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A v2 chat response: a top-level ``message`` object with content or citations.

        A typed envelope (Anthropic's ``{"type": "message_start", "message": {...}}`` stream
        event) is not one: Cohere's response has no ``type`` of its own.
        """
        message = data.get("message")
        if not isinstance(message, Mapping) or "choices" in data or "candidates" in data:
            return False
        if isinstance(data.get("type"), str) or message.get("type") == "message":
            return False
        return isinstance(message.get("content"), list) or isinstance(
            message.get("citations"), list
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A v2 ``chat_stream`` event (``message-start``, ``content-delta``, ...)."""
        kind = event.get("type")
        return isinstance(kind, str) and kind in _COHERE_EVENTS

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final chat response."""
        _read_cohere(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one ``chat_stream``."""
        return _CohereStream(self, **options)


COHERE = CohereProvider()
"""The Cohere v2 chat reader registered with the dispatcher."""
