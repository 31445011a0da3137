"""Perplexity (``[n]`` markers into a URL list) and Cohere v2 chat (character offsets)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from unicite._segment import claim_spans, find_markers
from unicite.markers._tokens import read_token
from unicite.model import Citation
from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder

__all__ = ["COHERE", "PERPLEXITY", "CohereProvider", "PerplexityProvider"]

_RESULT_FIELDS = {"url", "title", "snippet"}


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _text_of(content: object, path: str, builder: AnswerBuilder) -> str:
    """A Chat Completions message content: a string, or a list of text parts joined."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for n, part in enumerate(content):
            text = part.get("text") if isinstance(part, Mapping) else None
            if isinstance(text, str):
                parts.append(text)
            else:
                builder.note(f"{path}[{n}]: content part without text")
        return "".join(parts)
    builder.note(f"{path}: expected a string, got {type(content).__name__}")
    return ""


# --- Perplexity -------------------------------------------------------------------------------


def _perplexity_result(item: object, rank: int, path: str, builder: AnswerBuilder) -> str | None:
    if not isinstance(item, Mapping):
        builder.note(f"{path}: expected a search result object, got {type(item).__name__}")
        return None
    read = builder.read
    url = read.text(item, "url", path)
    if not url:
        builder.note(f"{path}: search result without a url")
        return None
    extras = {k: v for k, v in item.items() if k not in _RESULT_FIELDS and v is not None}
    return builder.add_source(
        {
            "kind": "web",
            "url": url,
            "title": read.text(item, "title", path),
            "snippet": read.text(item, "snippet", path) or None,
            "rank": rank,
            "extras": extras,
            "raw": item,
        }
    )


_MAX_RANGE = 100
"""Numbers one marker may expand to (``[1-100]``); longer ranges are read as a mistake."""


def _marker_groups(
    text: str, builder: AnswerBuilder
) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Runs of adjacent numeric markers: ``(start, end, [(number, marker start), ...])``.

    Lists and ranges (``[1, 3]``, ``[2-4]``) expand to every number they name.
    """
    groups: list[tuple[int, int, list[tuple[int, int]]]] = []
    for start, end in find_markers(text):
        token = read_token(text, start, end)
        if token is None or token.kind != "brackets" or token.prefix is not None:
            continue
        for problem in token.problems:
            builder.note(f"marker {text[start:end]} at {start}: {problem}")
        numbers: list[tuple[int, int]] = []
        for first, last in token.ranges:
            if last - first >= _MAX_RANGE:
                builder.note(
                    f"marker {text[start:end]} at {start}: range {first}-{last} is too long"
                )
                continue
            numbers.extend((n, start) for n in range(first, last + 1))
        if not numbers:
            continue
        if groups and groups[-1][1] == start:
            groups[-1] = (groups[-1][0], end, [*groups[-1][2], *numbers])
        else:
            groups.append((start, end, numbers))
    return groups


def _read_perplexity(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "response")
    response_id = read.text(data, "id", "response")
    urls = read.items(data, "citations", "response")
    results = read.items(data, "search_results", "response")
    builder.grounded = "citations" in data or "search_results" in data

    # Markers count 1-based into `citations` when it is there, else into `search_results`;
    # a citation URL merges into the search result with the same URL.
    found = [
        _perplexity_result(item, n, f"response.search_results[{n}]", builder)
        for n, item in enumerate(results)
    ]
    numbered: list[str | None] = [] if urls else found
    for n, url in enumerate(urls):
        if isinstance(url, str) and url:
            numbered.append(builder.add_source({"kind": "web", "url": url, "rank": n, "raw": url}))
        else:
            builder.note(f"response.citations[{n}]: expected a URL string, got {url!r}")
            numbered.append(None)

    choices = read.items(data, "choices", "response")
    choice = choices[0] if choices else None
    if choices and not isinstance(choice, Mapping):
        builder.note(f"response.choices[0]: expected an object, got {type(choice).__name__}")
    message = read.obj(choice, "message", "response.choices[0]")
    text = _text_of(read.get(message, "content"), "response.choices[0].message.content", builder)
    finish_reason = read.text(choice, "finish_reason", "response.choices[0]")
    builder.append_text(text)

    groups = _marker_groups(text, builder)
    claims = claim_spans(text, [(start, end) for start, end, _ in groups])
    for (start, end, markers), (claim_start, claim_end) in zip(groups, claims, strict=True):
        ids: list[str] = []
        for number, at in markers:
            sid = numbered[number - 1] if 1 <= number <= len(numbered) else None
            if sid is not None:
                ids.append(sid)
            else:
                builder.note(f"marker [{number}] at {at} names no source ({len(numbered)} given)")
        if ids:
            builder.cite(
                claim_start,
                claim_end,
                ids,
                marker_span=(start, end),
                raw=text[start:end],
                where=f"marker {text[start:end]} at {start}",
            )
    if response_id:
        builder.extras["response_id"] = response_id
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason


class _PerplexityStream(StreamReader):
    """Accumulates ``chat.completion.chunk`` objects into the final completion."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._top: dict[str, Any] = {}
        self._parts: list[str] = []
        self._finish: Any = None
        self._announced = False

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one chunk; at the last one, return every citation.

        A marker's claim depends on the text around it (a marker leading a sentence claims
        the text after it), so claims are final only when the text is.
        """
        for key in ("id", "model", "created", "citations", "search_results"):
            if event.get(key) is not None:
                self._top[key] = event[key]
        choices = event.get("choices")
        if choices is not None and not isinstance(choices, list):
            self.diagnostics.append(f"chunk choices: expected a list, got {type(choices).__name__}")
            return []
        for choice in choices or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, Mapping) else None
            if isinstance(content, str):
                self._parts.append(content)
            elif content is not None:
                self.diagnostics.append(
                    f"chunk delta content: expected a string, got {type(content).__name__}"
                )
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
        if self._finish is None or self._announced:
            return []
        self._announced = True
        builder = AnswerBuilder(PERPLEXITY.name)
        _read_perplexity(self.completion(), builder)
        answer = builder.build()
        return [
            CitationEvent(
                citation=c,
                sources=[s for sid in c.source_ids if (s := answer.source(sid)) is not None],
            )
            for c in answer.citations
        ]

    def completion(self) -> dict[str, Any]:
        """The ``chat.completion`` the chunks so far add up to."""
        return {
            **self._top,
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(self._parts)},
                    "finish_reason": self._finish,
                }
            ],
        }

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt completion as a final response is read."""
        _read_perplexity(self.completion(), builder)
        if self._finish is None:
            builder.note("stream ended before a chunk with a finish_reason")


class PerplexityProvider(Provider):
    """Perplexity Sonar chat completions: ``citations`` / ``search_results`` and ``[n]`` markers."""

    name = "perplexity"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Chat Completions ``choices`` alongside a URL list or search results."""
        if not isinstance(data.get("choices"), list):
            return False
        urls = data.get("citations")
        if isinstance(urls, list) and all(isinstance(url, str) for url in urls):
            return True
        return isinstance(data.get("search_results"), list)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A completion chunk that carries ``citations`` or ``search_results``."""
        if event.get("object") != "chat.completion.chunk" and "choices" not in event:
            return False
        return isinstance(event.get("citations"), list) or isinstance(
            event.get("search_results"), list
        )

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final chat completion."""
        _read_perplexity(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one chunk stream."""
        return _PerplexityStream(**options)


PERPLEXITY = PerplexityProvider()


# --- Cohere -----------------------------------------------------------------------------------

_DOCUMENT_FIELDS = {"id", "text", "title", "url"}


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

    def citation(self, item: object, path: str) -> Citation | None:
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
        if not self.builder.cite(start, end, ids, raw=item, where=path):
            return None
        return Citation.model_construct(
            start=start,
            end=end,
            text=self.builder.text[start:end],
            source_ids=[sid for sid in dict.fromkeys(ids) if sid in self.builder.ledger],
            quote=None,
            location=None,
            origin="native",
            confidence=None,
            marker_span=None,
            extras={},
            raw=item,
        )

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
            fields = {
                "kind": "document",
                "provider_id": source_id or read.text(body, "id", bpath),
                "title": read.text(body, "title", bpath),
                "url": url if url and _is_http(url) else None,
                "content": text or None,
                "extras": {k: v for k, v in body.items() if k not in _DOCUMENT_FIELDS},
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


def _read_cohere(data: Mapping[str, Any], builder: AnswerBuilder) -> list[Citation | None]:
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


class _CohereStream(StreamReader):
    """Rebuilds the v2 chat response from ``chat_stream`` events."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
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

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one event; return the citations whose text has fully arrived."""
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
                return []
            self._content.setdefault(index, {"type": content.get("type") or "text"})
            for key in ("text", "thinking"):
                value = content.get(key)
                if isinstance(value, str):
                    self._pieces.setdefault((index, key), []).append(value)
                    if key == "text":
                        self._length += len(value)
            if kind == "content-delta":
                return self._announce(final=False)
        elif kind == "citation-start":
            citation = message.get("citations")
            self._citations.append(citation)
            self._pending.append(len(self._citations) - 1)
            return self._announce(final=False)
        elif kind == "message-end":
            delta = event.get("delta")
            delta = delta if isinstance(delta, Mapping) else {}
            for key in ("finish_reason", "usage"):
                if delta.get(key) is not None:
                    self._top[key] = delta[key]
            if delta.get("error"):
                self.diagnostics.append(f"stream error: {delta['error']}")
            self._ended = True
            return self._announce(final=True)
        elif not isinstance(kind, str) or kind not in _COHERE_EVENTS:
            self.diagnostics.append(f"unknown stream event type {kind!r}")
        return []

    def response(self) -> dict[str, Any]:
        """The chat response the events so far add up to."""
        for (index, key), pieces in self._pieces.items():
            if len(pieces) > 1:
                pieces[:] = ["".join(pieces)]
            self._content[index][key] = pieces[0]
        content = [self._content[n] for n in sorted(self._content)]
        message = {"role": self._role, "content": content, "citations": list(self._citations)}
        return {**self._top, "message": message}

    def _announce(self, *, final: bool) -> list[CitationEvent]:
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
        builder = AnswerBuilder(COHERE.name)
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
            citation = made[n]
            if citation is not None:
                sources = [s for s in map(builder.ledger.get, citation.source_ids) if s is not None]
                events.append(CitationEvent(citation=citation, sources=sources))
        return events

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt response as a final response is read."""
        _read_cohere(self.response(), builder)
        if not self._ended:
            builder.note("stream ended before message-end")


class CohereProvider(Provider):
    """Cohere v2 chat responses: ``message.citations`` with offsets and document/tool sources."""

    name = "cohere"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A v2 chat response: a top-level ``message`` object with content or citations."""
        message = data.get("message")
        if not isinstance(message, Mapping) or "choices" in data or "candidates" in data:
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
        return _CohereStream(**options)


COHERE = CohereProvider()
