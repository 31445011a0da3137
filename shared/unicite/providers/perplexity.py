"""Perplexity Sonar chat completions: ``[n]`` markers into ``citations`` or ``search_results``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite._marker_syntax import read_token
from unicite._segment import claim_spans, find_markers
from unicite.providers._base import Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder

__all__ = ["PERPLEXITY", "PerplexityProvider"]

_RESULT_FIELDS = {"url", "title", "snippet"}


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


class _PerplexityStream(RebuildingStream):
    """Accumulates ``chat.completion.chunk`` objects into the final completion.

    A marker's claim depends on the text around it (a marker leading a sentence claims the
    text after it), so claims are final only when the text is: every citation is announced at
    the chunk with the finish reason.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._top: dict[str, Any] = {}
        self._parts: list[str] = []
        self._finish: Any = None

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one chunk; True at the first one with a finish reason."""
        for key in ("id", "model", "created", "citations", "search_results"):
            if event.get(key) is not None:
                self._top[key] = event[key]
        choices = event.get("choices")
        if choices is not None and not isinstance(choices, list):
            self.diagnostics.append(f"chunk choices: expected a list, got {type(choices).__name__}")
            return False
        finished = self._finish is not None
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
        return not finished and self._finish is not None

    def response(self) -> dict[str, Any]:
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

    def problems(self) -> list[str]:
        """What a stream without its last chunk lacks."""
        if self._finish is None:
            return ["stream ended before a chunk with a finish_reason"]
        return []


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
        return _PerplexityStream(self, **options)


PERPLEXITY = PerplexityProvider()
"""The Perplexity reader registered with the dispatcher."""
