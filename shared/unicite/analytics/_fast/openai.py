"""Fast readers for OpenAI responses (see `unicite.analytics._fast`).

`OpenAIResponsesProvider` (Responses API: ``output`` items) and `OpenAIChatProvider` (Chat
Completions: ``choices[0].message``) read each annotation as their readers do
(`unicite.providers.openai._annotations`, ``_inline``) and count what those would keep: the
sources (deduplicated as `SourceLedger` does), the citations that survive (span in its text
part, a URL or a file, a ``[[n]]`` marker that agrees with its title) and the diagnostics they
would record. Claims are not located: they decide only where a citation sits and the order the
answer lists its sources in, and a row holds neither (`unicite.analytics._rows.canonical`).

They give up (None) on what they do not model exactly: private-use markers, placeholder
annotations in a text that may hold numbered markers or links, file ids that could name a web
source, odd field types, unknown output items whose diagnostics would carry more than a count,
and Perplexity's Agent API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from unicite._ids import content_hash, stable_source_id
from unicite.analytics._fast._sources import FastSources
from unicite.analytics._fast._types import FastReader
from unicite.analytics._rows import Row
from unicite.providers.shapes import OPENAI_QUIET_ITEMS, OPENAI_SEARCH_TOOLS

__all__ = ["READERS", "read_chat", "read_responses"]

# What this module mirrors of the readers' private rules. Private names may not cross into this
# package (DESIGN, "Layers"), so they are restated here; the agreement tests (recorded
# responses, generated ones) hold the two sides equal. The item and tool names are shared
# through `unicite.providers.shapes`.
NAME = "openai"
# unicite.providers.openai.responses: the search calls.
_TERMINAL_EVENTS = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.done"}
)
# unicite.providers.openai._annotations: a title that is only a marker number (xAI), the
# number an annotated ``[[n]]`` span opens with.
_NUMBER_TITLE_RE = re.compile(r"\s*\[{0,2}\s*(\d{1,4})\s*\]{0,2}\s*")
_SPAN_NUMBER_RE = re.compile(r"\[\[?(\d{1,4})\]")


def number_title(title: object) -> int | None:
    """The marker number a title holds when it is nothing else (``"1"``, ``"[2]"``)."""
    if not isinstance(title, str):
        return None
    match = _NUMBER_TITLE_RE.fullmatch(title)
    return int(match.group(1)) if match else None


class _GiveUp(Exception):
    """Raised deep inside a reading: the response holds something not modelled exactly."""


# --- sources ------------------------------------------------------------------------------


class _Sources(FastSources):
    """`FastSources` with the files of OpenAI responses.

    Files (``file_search``, ``file_citation``, ``container_file_citation``, ``file_path``) and
    tool results (``action.sources`` of type ``api``) are keyed by id (and, for a file with no
    id, by its text); a file id starting ``u-`` could collide with a web source's id and is
    given up on.
    """

    __slots__ = ()

    def file(self, provider_id: str | None, title: str | None, content: str | None = None) -> int:
        """Add a file or tool source as `Source` derives its id and `SourceLedger` its keys."""
        if provider_id:
            if provider_id.startswith("u-"):
                raise _GiveUp
            return self.keyed([("id", stable_source_id(provider_id=provider_id))])
        keys: list[object] = [("id", stable_source_id(title=title, content=content))]
        if content:
            keys.append(("text", content_hash(title, content)))
        return self.keyed(keys)


# --- annotations --------------------------------------------------------------------------


def _int(value: object) -> int | None:
    """An index field: an int, None when missing; anything else is given up on."""
    if value is None:
        return None
    if type(value) is int:
        return value
    raise _GiveUp


def _text(value: object) -> str | None:
    """A text field: a string, None when missing; anything else is given up on."""
    if value is None or isinstance(value, str):
        return value
    raise _GiveUp


def _is_object(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


class _Reading:
    """What reading one response gathers: its sources, citations and diagnostics."""

    __slots__ = ("citations", "cited", "diagnostics", "sources")

    def __init__(self) -> None:
        self.sources = _Sources()
        self.citations = 0
        self.diagnostics = 0
        self.cited = False
        """Whether a text part carries a url or file citation annotation."""

    def row(self, model: str | None, grounded: bool | None) -> Row:
        """The response's row: what was read, with its model and grounding."""
        return self.sources.row(
            provider=NAME,
            model=model,
            grounded=grounded,
            citations=self.citations,
            diagnostics=self.diagnostics,
        )

    def cite(self, position: int) -> None:
        """Count a citation of the source at ``position``."""
        self.citations += 1
        self.sources.cited[position] = True

    def part(self, text: str, annotations: list[Any]) -> None:
        """Read one text part and its annotations, as `read_part` does."""
        if "\ue200" in text or "\ue201" in text or "\ue202" in text:
            raise _GiveUp  # private-use markers: the reader removes them and moves offsets
        sources = self.sources
        placeholders = 0
        size = len(text)
        for ann in annotations:
            if not _is_object(ann):
                self.diagnostics += 1
                continue
            kind = ann.get("type")
            if kind == "url_citation":
                self.cited = True
                nested = ann.get("url_citation")
                if nested is None:
                    body = ann
                elif _is_object(nested):
                    body = nested
                else:
                    raise _GiveUp
                start = _int(body.get("start_index"))
                end = _int(body.get("end_index"))
                url = _text(body.get("url"))
                title = _text(body.get("title"))
                number = number_title(title)
                if start == 0 and end == 0:
                    # A gateway's placeholder: a source, not a span (see `_cite_numbered`).
                    placeholders += 1
                    if url:
                        sources.web(url, title if number is None else None)
                    else:
                        self.diagnostics += 1
                    continue
                span = self._span(start, end, size)
                if not url:
                    self.diagnostics += 1
                    continue
                position = sources.web(url, title if number is None else None)
                if span is None:
                    continue
                if number is not None:
                    found = _SPAN_NUMBER_RE.match(text[span[0] : span[1]].strip())
                    if found is not None and int(found.group(1)) != number:
                        self.diagnostics += 1
                        continue
                self.cite(position)
            elif kind == "file_citation":
                self.cited = True
                index = _int(ann.get("index"))
                file_id = _text(ann.get("file_id"))
                position = sources.file(file_id or None, _text(ann.get("filename")))
                if index is None:
                    continue
                if not 0 <= index <= size:
                    self.diagnostics += 1
                    continue
                self.cite(position)
            elif kind == "container_file_citation":
                span = self._span(_int(ann.get("start_index")), _int(ann.get("end_index")), size)
                _text(ann.get("container_id"))
                file_id = _text(ann.get("file_id"))
                position = sources.file(file_id or None, _text(ann.get("filename")))
                if span is not None:
                    self.cite(position)
            elif kind == "file_path":
                file_id = _text(ann.get("file_id"))
                _int(ann.get("index"))
                sources.file(file_id or None, file_id)
            else:
                # Unknown annotation type (one diagnostic; two when the type is not text).
                self.diagnostics += 1 if kind is None or isinstance(kind, str) else 2
        if placeholders:
            self.diagnostics += 1
            # Numbered markers and links in the text may cite the placeholders' sources.
            if "[" in text or "<" in text or "\u3010" in text:
                raise _GiveUp

    def _span(self, start: int | None, end: int | None, size: int) -> tuple[int, int] | None:
        """An annotation's span in its text part, or None (with its diagnostic)."""
        if start is None or end is None or not 0 <= start <= end or end > size:
            self.diagnostics += 1
            return None
        return start, end


# --- Responses API ------------------------------------------------------------------------


def _web_search(reading: _Reading, item: Mapping[str, Any]) -> None:
    action = item.get("action")
    if action is None:
        return
    if not _is_object(action):
        raise _GiveUp
    kind = action.get("type")
    if kind == "search":
        queries = action.get("queries")
        if queries is not None and not isinstance(queries, list):
            raise _GiveUp
        _text(action.get("query"))
        found = action.get("sources")
        if not isinstance(found, list):
            return
        sources = reading.sources
        for entry in found:
            if not _is_object(entry):
                raise _GiveUp
            entry_kind = entry.get("type")
            if entry_kind == "url":
                url = _text(entry.get("url"))
                title = _text(entry.get("title"))
                if url:
                    sources.web(url, title)
                else:
                    reading.diagnostics += 1
            elif entry_kind == "api":
                sources.file(None, _text(entry.get("name")))
            else:
                raise _GiveUp
    elif kind in ("open_page", "find_in_page", "find"):
        url = _text(action.get("url"))
        if url:
            reading.sources.web(url, None)
    else:
        raise _GiveUp


def _file_search(reading: _Reading, item: Mapping[str, Any]) -> None:
    queries = item.get("queries")
    results = item.get("results")
    if queries is not None and not isinstance(queries, list):
        raise _GiveUp
    if results is None:
        return
    if not isinstance(results, list):
        raise _GiveUp
    groups: dict[str | int, list[Mapping[str, Any]]] = {}
    for n, result in enumerate(results):
        if not _is_object(result):
            raise _GiveUp
        file_id = _text(result.get("file_id"))
        for key in ("filename", "text", "vector_store_id"):
            _text(result.get(key))
        score = result.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise _GiveUp
        attributes = result.get("attributes")
        if attributes is not None and not _is_object(attributes):
            raise _GiveUp
        groups.setdefault(file_id or n, []).append(result)
    for group, members in groups.items():
        first = members[0]
        texts = [r["text"] for r in members if isinstance(r.get("text"), str) and r["text"]]
        filename = first.get("filename")
        content = "\n\n".join(dict.fromkeys(texts)) or None
        reading.sources.file(
            group if isinstance(group, str) else None,
            filename if isinstance(filename, str) else None,
            content,
        )


def read_responses(data: Mapping[str, Any]) -> Row | None:
    """The row of a Responses API response (or a terminal stream event carrying one)."""
    response = data
    kind = data.get("type")
    if isinstance(kind, str) and kind in _TERMINAL_EVENTS:
        inner = data.get("response")
        if isinstance(inner, Mapping):
            response = inner
    try:
        return _read_response(response)
    except _GiveUp:
        return None


def _read_response(data: Mapping[str, Any]) -> Row:
    reading = _Reading()
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise _GiveUp
    _text(data.get("id"))
    status = _text(data.get("status"))
    if status == "failed" or status == "cancelled":
        reading.diagnostics += 1
    output = data.get("output")
    if output is None:
        if "output" not in data:
            reading.diagnostics += 1
        output = []
    elif not isinstance(output, list):
        raise _GiveUp
    searched = False  # a web or file search ran
    calls = False  # a web or file search was called
    for item in output:
        if not _is_object(item):
            raise _GiveUp
        kind = item.get("type")
        if not isinstance(kind, str):
            raise _GiveUp
        if kind == "message":
            content = item.get("content")
            if content is None:
                continue
            if not isinstance(content, list):
                raise _GiveUp
            for part in content:
                if not _is_object(part):
                    raise _GiveUp
                part_kind = part.get("type")
                if part_kind == "output_text":
                    text = _text(part.get("text"))
                    if text is None:
                        reading.diagnostics += 1
                        text = ""
                    annotations = part.get("annotations")
                    if annotations is None:
                        annotations = []
                    elif not isinstance(annotations, list):
                        raise _GiveUp
                    reading.part(text, annotations)
                elif part_kind == "refusal":
                    _text(part.get("refusal"))
                else:
                    raise _GiveUp
        elif kind == "web_search_call" or kind == "file_search_call":
            calls = True
            searched = searched or item.get("status") not in ("failed", "incomplete")
            if kind == "web_search_call":
                _web_search(reading, item)
            else:
                _file_search(reading, item)
        elif kind not in OPENAI_QUIET_ITEMS:
            raise _GiveUp
    citations = data.get("citations")
    if isinstance(citations, list):
        for url in citations:
            if isinstance(url, str) and url:
                reading.sources.web(url, None)
            else:
                reading.diagnostics += 1
    effective = searched or reading.cited or bool(citations)
    tools = data.get("tools")
    offered = isinstance(tools, list) and any(
        _is_object(tool) and str(tool.get("type")) in OPENAI_SEARCH_TOOLS for tool in tools
    )
    search_model = isinstance(model, str) and ("search" in model or "deep-research" in model)
    grounded: bool | None = None
    if effective or calls or offered or (search_model and not isinstance(tools, list)):
        grounded = effective
    return reading.row(model, grounded)


# --- Chat Completions ---------------------------------------------------------------------


def read_chat(data: Mapping[str, Any]) -> Row | None:
    """The row of a Chat Completions response (OpenAI's, or a gateway's in its shape)."""
    try:
        return _read_completion(data)
    except _GiveUp:
        return None


def _read_completion(data: Mapping[str, Any]) -> Row:
    model = _text(data.get("model"))
    _text(data.get("id"))
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise _GiveUp
    choice = next(
        (
            c
            for c in choices
            if _is_object(c) and not isinstance(c.get("index"), bool) and c.get("index") == 0
        ),
        None,
    )
    if choice is None:
        if not choices or not _is_object(choices[0]):
            raise _GiveUp
        choice = choices[0]
    _text(choice.get("finish_reason"))
    message = choice.get("message")
    if not _is_object(message):
        raise _GiveUp
    text = _text(message.get("content")) or ""
    _text(message.get("refusal"))
    annotations = message.get("annotations")
    if annotations is None:
        annotations = []
    elif not isinstance(annotations, list):
        raise _GiveUp
    reading = _Reading()
    reading.part(text, annotations)
    cited = any(_is_object(a) and a.get("type") == "url_citation" for a in annotations)
    name = model or ""
    grounded = cited if cited or "search" in name or name.endswith(":online") else None
    return reading.row(model, grounded)


# --- xAI ----------------------------------------------------------------------------------

_XAI_LINK_RE = re.compile(r"(?<![\[!])\[\[?\d{1,4}\]\]?\(https?://")
"""The start of a numbered inline link (``[[n]](url)``, ``[n](url)``) the reader cites."""


def _xai_plain(response: Mapping[str, Any]) -> bool:
    """Whether an xAI response holds only what `read_responses` counts as the reader does.

    The reader also cites numbered links no annotation spans, and reads annotations without
    offsets as sources without a diagnostic: a response with either is left to `extract()`.
    """
    output = response.get("output")
    for item in output if isinstance(output, list) else []:
        content = item.get("content") if _is_object(item) else None
        for part in content if isinstance(content, list) else []:
            if not _is_object(part):
                continue
            text = part.get("text")
            annotations = part.get("annotations")
            spans = []
            for annotation in annotations if isinstance(annotations, list) else []:
                if not _is_object(annotation) or annotation.get("type") != "url_citation":
                    continue
                start, end = annotation.get("start_index"), annotation.get("end_index")
                if start is None and end is None:
                    return False
                if type(start) is int and type(end) is int:
                    spans.append((start, end))
            if isinstance(text, str):
                for match in _XAI_LINK_RE.finditer(text):
                    if not any(a <= match.start() < b for a, b in spans):
                        return False
    return True


def read_xai_responses(data: Mapping[str, Any]) -> Row | None:
    """The row of an xAI Responses answer: as OpenAI's, under the name ``xai``."""
    response = data
    kind = data.get("type")
    if isinstance(kind, str) and kind in _TERMINAL_EVENTS:
        inner = data.get("response")
        if isinstance(inner, Mapping):
            response = inner
    if not _xai_plain(response):
        return None
    row = read_responses(data)
    if row is not None:
        row["provider"] = "xai"
    return row


READERS: dict[str, FastReader] = {
    "OpenAIResponsesProvider": read_responses,
    "OpenAIChatProvider": read_chat,
    "XAIResponsesProvider": read_xai_responses,
}
"""Fast readers by the class name of the provider reader they stand in for."""
