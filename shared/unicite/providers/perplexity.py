"""Perplexity: ``[n]`` markers into the sources its answers list.

Two shapes:

- **Sonar chat completions**: ``[n]`` counts (from 1) into the top-level ``citations`` when it is
  there, else into ``search_results``.
- **The Agent API** (``/v1/agent``, alias ``/v1/responses``: OpenAI's Responses shape): the
  sources are in ``search_results`` output items (``{"type": "search_results", "queries",
  "results": [{"id", "url", "title", "snippet", "date", "last_updated", "source"}]}``), next to
  ``fetch_url_results`` items and the ``message``. ``[n]`` names the result whose ``id`` is
  ``n``, as Perplexity's own cookbook maps them; a number no result (or two results with
  different URLs) has is left uncited. ``url_citation`` annotations on the text are read as
  sources. Its stream is read by the OpenAI Responses reader, which hands the final response
  here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.providers._base import Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._marker_cites import cite_markers

__all__ = ["AGENT_ITEMS", "PERPLEXITY", "PerplexityProvider", "agent_response"]

AGENT_ITEMS = frozenset({"search_results", "fetch_url_results"})
"""Output items only Perplexity's Agent API has."""
# Agent API output items with nothing to read.
_AGENT_QUIET = frozenset({"function_call", "mcp_list_tools", "mcp_call", "reasoning"})
_AGENT_RESULT_FIELDS = {"url", "title", "snippet", "id"}


def agent_response(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Agent API response `data` is (or a terminal stream event carries), else None.

    It is one when its output holds Perplexity's own items (``search_results``,
    ``fetch_url_results``) or its usage a ``cost`` object with a ``currency``.
    """
    response = data.get("response")
    if isinstance(response, Mapping) and data.get("type") in (
        "response.completed",
        "response.incomplete",
        "response.failed",
    ):
        data = response
    output = data.get("output")
    if not isinstance(output, list) or "choices" in data:
        return None
    if any(isinstance(item, Mapping) and str(item.get("type")) in AGENT_ITEMS for item in output):
        return data
    usage = data.get("usage")
    cost = usage.get("cost") if isinstance(usage, Mapping) else None
    return data if isinstance(cost, Mapping) and "currency" in cost else None


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


def _perplexity_result(
    item: object,
    rank: int,
    path: str,
    builder: AnswerBuilder,
    known: frozenset[str] | set[str] = _RESULT_FIELDS,
) -> str | None:
    """One search result as a source (fields other than `known` kept in extras), or None."""
    if not isinstance(item, Mapping):
        builder.note(f"{path}: expected a search result object, got {type(item).__name__}")
        return None
    read = builder.read
    url = read.text(item, "url", path)
    if not url:
        builder.note(f"{path}: search result without a url")
        return None
    extras = {k: v for k, v in item.items() if k not in known and v is not None}
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

    cite_markers(
        builder,
        text,
        lambda n: numbered[n - 1] if 1 <= n <= len(numbered) else None,
        f"{len(numbered)} given",
    )
    if response_id:
        builder.extras["response_id"] = response_id
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason
    # Sonar models always search; the response shows it by the results it returns.
    builder.extras["grounded_effective"] = any(sid is not None for sid in [*numbered, *found])


def _agent_result(
    builder: AnswerBuilder, item: object, rank: int, path: str, by_id: dict[int, str | None]
) -> None:
    """One ``search_results`` result: a source, and the marker number its ``id`` gives."""
    sid = _perplexity_result(item, rank, path, builder, _AGENT_RESULT_FIELDS)
    if sid is None or not isinstance(item, Mapping):
        return
    read = builder.read
    number = read.integer(item, "id", path)
    if number is None:
        builder.note(f"{path}: search result without an id: no marker can name it")
    elif number in by_id and by_id[number] != sid:
        builder.note(f"{path}: id {number} is already another result's: [{number}] is ambiguous")
        by_id[number] = None
    else:
        by_id[number] = sid


def _agent_message(
    builder: AnswerBuilder, item: Mapping[str, Any], path: str, texts: list[str]
) -> None:
    read = builder.read
    for j, part in enumerate(read.items(item, "content", path)):
        ppath = f"{path}.content[{j}]"
        text = read.text(part, "text", ppath) if isinstance(part, Mapping) else None
        if text is None:
            builder.note(f"{ppath}: content part without text")
            continue
        texts.append(text)
        for k, ann in enumerate(read.items(part, "annotations", ppath)):
            apath = f"{ppath}.annotations[{k}]"
            url = read.text(ann, "url", apath) if isinstance(ann, Mapping) else None
            if url:
                title = read.text(ann, "title", apath)
                builder.add_source({"kind": "web", "url": url, "title": title, "raw": ann})
            else:
                builder.note(f"{apath}: annotation without a url; dropped")


def _read_agent(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    """Fill `builder` from an Agent API response (see the module doc)."""
    read = builder.read
    builder.model = read.text(data, "model", "response")
    response_id = read.text(data, "id", "response")
    status = read.text(data, "status", "response")
    if status in ("failed", "cancelled"):
        builder.note(f"response {status}: the answer may be missing or cut short")
    if data.get("error") is not None:
        builder.extras["error"] = data["error"]
    by_id: dict[int, str | None] = {}
    texts: list[str] = []
    searches = 0
    rank = 0
    for i, item in enumerate(read.items(data, "output", "response")):
        path = f"response.output[{i}]"
        kind = read.text(item, "type", path) if isinstance(item, Mapping) else None
        if not isinstance(item, Mapping):
            builder.note(f"{path}: expected an object, got {type(item).__name__}")
        elif kind == "message":
            _agent_message(builder, item, path, texts)
        elif kind == "search_results":
            searches += 1
            builder.grounded = True
            queries = [q for q in read.items(item, "queries", path) if isinstance(q, str) and q]
            kept: list[str] = builder.extras.setdefault("search_queries", [])
            kept.extend(q for q in queries if q not in kept)
            for n, result in enumerate(read.items(item, "results", path)):
                _agent_result(builder, result, rank, f"{path}.results[{n}]", by_id)
                rank += 1
        elif kind == "fetch_url_results":
            builder.grounded = True
            for n, page in enumerate(read.items(item, "contents", path)):
                cpath = f"{path}.contents[{n}]"
                url = read.text(page, "url", cpath) if isinstance(page, Mapping) else None
                if not url:
                    builder.note(f"{cpath}: fetched page without a url")
                    continue
                builder.add_source(
                    {
                        "kind": "web",
                        "url": url,
                        "title": read.text(page, "title", cpath),
                        "snippet": read.text(page, "snippet", cpath) or None,
                        "raw": page,
                    }
                )
        elif kind not in _AGENT_QUIET:
            builder.note(f"{path}: unknown output item type {kind!r}")
    if not builder.extras.get("search_queries"):
        builder.extras.pop("search_queries", None)
    text = "".join(texts)
    builder.append_text(text)
    cite_markers(builder, text, lambda n: by_id.get(n), f"{len(by_id)} search result ids")
    if response_id:
        builder.extras["response_id"] = response_id
    if status:
        builder.extras["status"] = status
    if searches or builder.grounded:
        builder.extras["grounded_effective"] = searches > 0
        builder.extras["tool_calls"] = searches


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
        """Chat Completions ``choices`` alongside a URL list or search results; Agent API output."""
        if agent_response(data) is not None:
            return True
        if not isinstance(data.get("choices"), list):
            return False
        urls = data.get("citations")
        # One entry that is no URL leaves the list Perplexity's: the reader names that entry,
        # where another reader would drop every URL without a word. A list without any string
        # (``[1, 2]``) is no URL list.
        if isinstance(urls, list) and (not urls or any(isinstance(url, str) for url in urls)):
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
        """Fill `builder` from a final chat completion or Agent API response."""
        response = agent_response(data)
        if response is not None or ("output" in data and "choices" not in data):
            _read_agent(response or data, builder)
        else:
            _read_perplexity(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one chunk stream."""
        return _PerplexityStream(self, **options)


PERPLEXITY = PerplexityProvider()
"""The Perplexity reader registered with the dispatcher."""
