"""The Gemini Interactions API (``POST /v1beta/interactions``): an interaction and its events.

An ``Interaction`` (REST JSON, snake_case; SDK objects dump the same) lists its ``steps``:
``user_input``, ``thought`` (``summary``, ``signature``), ``model_output`` (``content``: text,
image... blocks), and tool steps: ``google_search_call`` (``arguments.queries``),
``google_search_result`` (``result[].search_suggestions``), ``file_search_call`` / ``_result``,
``google_maps_call`` / ``_result``, ``url_context_call`` / ``_result``, ``function_call`` /
``_result``, ``code_execution_call`` / ``_result``, ``mcp_server_tool_call`` / ``_result``.
The first beta had a flat ``outputs`` list of the same blocks instead: both are read.

A text block's ``annotations`` cite it. Their ``start_index`` / ``end_index`` are UTF-8 byte
offsets into the block's own text (``start_index`` omitted = 0), and each names one source:
``url_citation`` (``url``, ``title``), ``file_citation`` (``document_uri``, ``file_name``,
``source``, ``page_number``...), ``place_citation`` (``place_id``, ``name``, ``url``...), or,
in the first beta, an untyped ``{source, start_index, end_index}``. Annotations of one span
become one citation of all their sources; every span is widened to whole words.

Streams (``stream: true``) send ``interaction.created``, ``step.start`` (``index``, ``step``),
``step.delta`` (``index``, ``delta``: ``text``, ``text_annotation_delta``, ``thought_summary``,
``thought_signature``, ``arguments_delta``, or a block or tool delta), ``step.stop`` and
``interaction.completed``, whose interaction comes with its steps left out; the first beta sent
``interaction.start``, ``content.start`` / ``content.delta`` / ``content.stop`` and
``interaction.complete``. `InteractionStream` rebuilds the interaction from them and reads it as
a final one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite._urls import domain_hint, is_redirect_url
from unicite.model import Location, PageLocation
from unicite.providers._base import Provider
from unicite.providers._builder import AnswerBuilder
from unicite.providers.gemini._response import (
    TextPart,
    add_source,
    claim_span,
    set_grounding_extras,
)
from unicite.providers.gemini._shape import _is_empty, _type_name, renamed
from unicite.providers.gemini._stream import SettlingStream
from unicite.providers.shapes import interaction_key

__all__ = ["InteractionReader", "InteractionStream", "looks_like_event"]

# Values of these fields are the caller's own data or request echo: their keys are kept as sent.
_OPAQUE = frozenset(
    {"arguments", "custom_metadata", "input", "response_format", "partial_arguments"}
)
# Request fields an interaction echoes back: not part of the answer.
_REQUEST_FIELDS = frozenset(
    {
        "input",
        "tools",
        "system_instruction",
        "generation_config",
        "agent_config",
        "response_format",
        "response_mime_type",
        "response_modalities",
        "webhook_config",
        "model_armor_config",
        "stream",
        "store",
        "background",
        "steps",
        "outputs",
        "model",
        "agent",
    }
)
_BAD_STATUSES = frozenset({"failed", "cancelled", "incomplete", "budget_exceeded"})
_GROUNDING_CALLS = frozenset(
    {"google_search_call", "file_search_call", "google_maps_call", "url_context_call"}
)
_MEDIA = ("image", "audio", "document", "video")
_STARTED = ("interaction.created", "interaction.start")
_COMPLETED = ("interaction.completed", "interaction.complete")


def _plain(value: Any) -> Any:
    """A snake_case copy of `value` with nulls dropped (SDK dumps write one per unset field)."""
    return renamed(value, interaction_key, _OPAQUE)


def looks_like_event(event: Mapping[str, Any]) -> bool:
    """An Interactions stream event: ``interaction.*``, ``step.*`` or ``content.*``."""
    kind = event.get("event_type", event.get("eventType"))
    return isinstance(kind, str) and kind.partition(".")[0] in ("interaction", "step", "content")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _is_link(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://", "gs://"))


class _Block(TextPart):
    """A text block of the answer: where it starts, its text, and its annotations."""

    __slots__ = ("annotations", "where")

    def __init__(self, offset: int, text: str, annotations: list[Any], where: str) -> None:
        super().__init__(offset, text)
        self.annotations = annotations
        self.where = where


class InteractionReader:
    """Reads one normalised interaction into a builder (``settling``: see `claim_span`)."""

    def __init__(self, builder: AnswerBuilder, *, settling: bool = False) -> None:
        self.builder = builder
        self.read = builder.read
        self.settling = settling
        self.tool_calls = 0
        self.blocks: list[_Block] = []
        self.thoughts: list[str] = []
        self.others: list[dict[str, Any]] = []
        self.queries: list[str] = []
        self.suggestions: list[str] = []

    def note(self, message: str) -> None:
        self.builder.note(message)

    def interaction(self, data: Mapping[str, Any]) -> None:
        builder = self.builder
        builder.model = _text(data.get("model")) or _text(data.get("agent"))
        for key, value in data.items():
            if key not in _REQUEST_FIELDS and not _is_empty(value):
                builder.extras["interaction_id" if key == "id" else key] = value
        status = data.get("status")
        if isinstance(status, str) and status in _BAD_STATUSES:
            self.note(f"interaction status is {status}: the answer may be incomplete")
        listed: str | None = None
        if isinstance(data.get("steps"), list):
            listed = "steps"
        elif isinstance(data.get("outputs"), list):
            listed = "outputs"
        else:
            if status not in ("in_progress", "requires_action"):
                self.note("interaction has no steps")
        for n, step in enumerate(self.read.items(data, listed, "interaction") if listed else []):
            where = f"{listed}[{n}]"
            if not isinstance(step, Mapping):
                self.note(f"{where}: expected an object, got {_type_name(step)}")
                continue
            self.step(step, where)
        if self.thoughts:
            builder.extras["thoughts"] = self.thoughts
        if self.others:
            builder.extras["non_text_content"] = self.others
        if self.queries:
            builder.extras["web_search_queries"] = self.queries
        if self.suggestions:
            # Google requires showing these Search Suggestions wherever the answer is shown.
            builder.extras["search_entry_point"] = "".join(self.suggestions)
        for block in self.blocks:
            self.annotations(block)
        set_grounding_extras(builder, self.tool_calls)

    # -- steps --

    def step(self, step: Mapping[str, Any], where: str) -> None:
        kind = step.get("type")
        if kind == "model_output":
            content = step.get("content", [])
            if not isinstance(content, list):
                self.note(f"{where}.content: expected a list, got {_type_name(content)}")
                return
            for k, block in enumerate(content):
                self.content(block, f"{where}.content[{k}]")
        elif kind in ("text", *_MEDIA):
            self.content(step, where)  # an output of the first beta
        elif kind == "thought":
            self.thought(step, where)
        elif kind == "user_input":
            return
        elif isinstance(kind, str) and kind.endswith("_call"):
            self.call(kind, step, where)
        elif isinstance(kind, str) and kind.endswith("_result"):
            self.result(kind, step, where)
        else:
            self.note(f"{where}: unknown step type {kind!r}; kept in extras")
            self.others.append({"at": where, **step})

    def content(self, block: Any, where: str) -> None:
        if not isinstance(block, Mapping):
            self.note(f"{where}: expected an object, got {_type_name(block)}")
            return
        if block.get("type") != "text":
            if block.get("type") == "thought":
                self.thought(block, where)
            else:
                self.others.append({"at": where, **block})
            return
        text = block.get("text", "")
        if not isinstance(text, str):
            self.note(f"{where}.text: expected a string, got {_type_name(text)}")
            return
        annotations = self.read.items(block, "annotations", where)
        offset = self.builder.append_text(text)
        self.blocks.append(_Block(offset, text, annotations, where))

    def thought(self, step: Mapping[str, Any], where: str) -> None:
        summary = step.get("summary", [])
        for item in summary if isinstance(summary, list) else []:
            if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                self.thoughts.append(item["text"])

    def call(self, kind: str, step: Mapping[str, Any], where: str) -> None:
        self.tool_calls += 1
        if kind in _GROUNDING_CALLS:
            self.builder.grounded = True
        arguments = step.get("arguments")
        queries = arguments.get("queries") if isinstance(arguments, Mapping) else None
        if kind == "google_search_call" and isinstance(queries, list):
            for n, query in enumerate(queries):
                if isinstance(query, str):
                    self.queries.append(query)
                else:
                    self.note(f"{where}.arguments.queries[{n}]: expected a string")
        if kind not in _GROUNDING_CALLS:
            self.others.append({"at": where, **step})

    def result(self, kind: str, step: Mapping[str, Any], where: str) -> None:
        results = step.get("result")
        if kind not in (
            "google_search_result",
            "file_search_result",
            "google_maps_result",
            "url_context_result",
        ):
            self.others.append({"at": where, **step})
            return
        self.builder.grounded = True
        items = results if isinstance(results, list) else []
        for n, item in enumerate(items):
            at = f"{where}.result[{n}]"
            if not isinstance(item, Mapping):
                continue
            if kind == "google_search_result":
                suggestion = _text(item.get("search_suggestions")) or _text(
                    item.get("rendered_content")
                )
                if suggestion:
                    self.suggestions.append(suggestion)
                if _is_link(item.get("url")):
                    self.web(item["url"], _text(item.get("title")), n, at, item)
            elif kind == "url_context_result":
                if _is_link(item.get("url")):
                    extras = {"status": item["status"]} if item.get("status") else {}
                    self.web(item["url"], None, n, at, item, extras)
            elif kind == "file_search_result":
                text, title = _text(item.get("text")), _text(item.get("title"))
                if text or title:
                    store = item.get("file_search_store")
                    source = {
                        "kind": "document",
                        "title": title,
                        "content": text,
                        "rank": n,
                        "extras": {"file_search_store": store} if store else {},
                        "raw": dict(item),
                    }
                    add_source(self.builder, source, at)
            else:
                places = item.get("places", [])
                for k, place in enumerate(places if isinstance(places, list) else []):
                    if isinstance(place, Mapping):
                        self.place(place, k, f"{at}.places[{k}]")

    def web(
        self,
        url: str,
        title: str | None,
        rank: int,
        where: str,
        raw: Mapping[str, Any],
        extras: dict[str, Any] | None = None,
    ) -> str | None:
        source: dict[str, Any] = {
            "kind": "web",
            "url": url,
            "title": title,
            "rank": rank,
            "extras": extras or {},
            "raw": dict(raw),
        }
        return self.add(source, where)

    def place(self, place: Mapping[str, Any], rank: int | None, where: str) -> str | None:
        place_id, name, url = (
            _text(place.get("place_id")),
            _text(place.get("name")),
            _text(place.get("url")),
        )
        if not (place_id or name or url):
            self.note(f"{where}: place has no place_id, name or url to cite")
            return None
        known = ("type", "place_id", "name", "url", "start_index", "end_index")
        source = {
            "kind": "place",
            "url": url,
            "title": name,
            "provider_id": place_id,
            "rank": rank,
            "extras": {k: v for k, v in place.items() if k not in known},
            "raw": dict(place),
        }
        return self.add(source, where)

    def add(self, source: dict[str, Any], where: str) -> str | None:
        """Add a source; behind a redirect URL, a title that is a domain gives the domain."""
        source = {k: v for k, v in source.items() if v is not None}
        url = source.get("url")
        if isinstance(url, str) and is_redirect_url(url):
            hint = domain_hint(source.get("title"))
            if hint is not None:
                source["domain"] = hint
        return add_source(self.builder, source, where)

    # -- annotations --

    def annotations(self, block: _Block) -> None:
        """Cite a text block: annotations of one span become one citation."""
        spans: dict[tuple[int, int], dict[str, Any]] = {}
        for n, annotation in enumerate(block.annotations):
            where = f"{block.where}.annotations[{n}]"
            if not isinstance(annotation, Mapping):
                self.note(f"{where}: expected an object, got {_type_name(annotation)}")
                continue
            span = self.span(annotation, block, where)
            if span is None:
                continue
            source_id, location = self.annotation_source(annotation, where)
            if source_id is None:
                continue
            entry = spans.setdefault(
                (span.start, span.end),
                {"ids": [], "raw": [], "location": location, "provider": span.provider},
            )
            entry["ids"].append(source_id)
            entry["raw"].append(dict(annotation))
        for (start, end), entry in spans.items():
            extras = {"provider_span": list(entry["provider"])} if entry["provider"] else {}
            self.builder.cite(
                start,
                end,
                entry["ids"],
                location=entry["location"],
                extras=extras,
                raw=entry["raw"],
                where=f"{block.where}.annotations",
            )

    def span(self, annotation: Mapping[str, Any], block: _Block, where: str) -> Any:
        start = self.read.integer(annotation, "start_index", where)
        end = self.read.integer(annotation, "end_index", where)
        start = 0 if start is None else start
        size = block.index.byte_length
        if end is None:
            self.note(f"{where}: no end_index; left uncited")
            return None
        if not 0 <= start < end <= size:
            self.note(
                f"{where}: byte offsets {start}..{end} do not fit the text block ({size} bytes)"
            )
            return None
        if not (
            block.index.is_char_boundary_bytes(start) and block.index.is_char_boundary_bytes(end)
        ):
            self.note(f"{where}: byte offsets {start}..{end} fall inside a character")
            return None
        first = block.offset + block.index.from_bytes(start)
        last = block.offset + block.index.from_bytes(end)
        return claim_span(
            self.builder,
            first,
            last,
            where,
            settling=self.settling,
            low=block.offset,
            high=block.offset + len(block.text),
        )

    def annotation_source(
        self, annotation: Mapping[str, Any], where: str
    ) -> tuple[str | None, Location | None]:
        kind = annotation.get("type")
        if kind == "url_citation" or (kind is None and _is_link(annotation.get("url"))):
            url = _text(annotation.get("url"))
            if url is None:
                self.note(f"{where}: url_citation without a url; left uncited")
                return None, None
            return self.web_annotation(url, _text(annotation.get("title")), annotation, where), None
        if kind == "file_citation":
            return self.file_annotation(annotation, where)
        if kind == "place_citation":
            return self.place(annotation, None, where), None
        if kind is None:
            source = _text(annotation.get("source"))
            if source is None:
                self.note(f"{where}: annotation names no source; left uncited")
                return None, None
            if _is_link(source):
                return self.web_annotation(source, None, annotation, where), None
            document = {"kind": "document", "title": source, "raw": dict(annotation)}
            return add_source(self.builder, document, where), None
        self.note(f"{where}: unknown annotation type {kind!r}; left uncited")
        return None, None

    def web_annotation(
        self, url: str, title: str | None, annotation: Mapping[str, Any], where: str
    ) -> str | None:
        source: dict[str, Any] = {
            "kind": "web",
            "url": url,
            "title": title,
            "raw": dict(annotation),
        }
        return self.add(source, where)

    def file_annotation(
        self, annotation: Mapping[str, Any], where: str
    ) -> tuple[str | None, Location | None]:
        uri = _text(annotation.get("document_uri"))
        name = _text(annotation.get("file_name"))
        origin = _text(annotation.get("source"))
        if not (uri or name or origin):
            self.note(f"{where}: file_citation names no document; left uncited")
            return None, None
        known = ("type", "document_uri", "file_name", "start_index", "end_index")
        source = {
            "kind": "document",
            "url": uri if _is_link(uri) else None,
            "provider_id": uri if uri and not _is_link(uri) else None,
            "title": name or origin,
            "extras": {k: v for k, v in annotation.items() if k not in known},
            "raw": dict(annotation),
        }
        page = annotation.get("page_number")
        location = None
        if isinstance(page, int) and not isinstance(page, bool):
            if page >= 1:
                location = PageLocation(start_page=page, end_page=page + 1)
            else:
                self.note(f"{where}: page_number {page} is not a 1-based page; dropped")
        return self.add(source, where), location


class _TextBlock:
    """A streamed text block: its pieces, joined only when read, and its annotations."""

    __slots__ = ("annotations", "fields", "pieces")

    def __init__(self, block: Mapping[str, Any]) -> None:
        self.fields = {k: v for k, v in block.items() if k not in ("text", "annotations")}
        text = block.get("text")
        self.pieces = [text] if isinstance(text, str) else []
        annotations = block.get("annotations")
        self.annotations = list(annotations) if isinstance(annotations, list) else []

    def add(self, delta: Mapping[str, Any]) -> None:
        text = delta.get("text")
        if isinstance(text, str):
            self.pieces.append(text)
        annotations = delta.get("annotations")
        if isinstance(annotations, list):
            self.annotations.extend(annotations)

    def value(self) -> dict[str, Any]:
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        out = {**self.fields, "type": "text", "text": self.pieces[0] if self.pieces else ""}
        if self.annotations:
            out["annotations"] = list(self.annotations)
        return out


def _open(item: Mapping[str, Any]) -> dict[str, Any] | _TextBlock:
    """What a stream keeps of a started step or output block."""
    if item.get("type") == "text":
        return _TextBlock(item)
    kept = dict(item)
    content = kept.get("content")
    if isinstance(content, list):
        kept["content"] = [
            _TextBlock(c) if isinstance(c, Mapping) and c.get("type") == "text" else c
            for c in content
        ]
    return kept


def _close(item: dict[str, Any] | _TextBlock) -> dict[str, Any]:
    if isinstance(item, _TextBlock):
        return item.value()
    content = item.get("content")
    if isinstance(content, list) and any(isinstance(c, _TextBlock) for c in content):
        return {**item, "content": [c.value() if isinstance(c, _TextBlock) else c for c in content]}
    return item


class InteractionStream(SettlingStream):
    """Rebuilds an interaction from its stream events and reads it as a final one."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._top: dict[str, Any] = {}
        self._items: dict[str, dict[int, dict[str, Any] | _TextBlock]] = {
            "steps": {},
            "outputs": {},
        }
        self._completed = False
        self._unknown: set[str] = set()

    def response(self) -> dict[str, Any]:
        """The interaction the events so far add up to."""
        data = dict(self._top)
        for key, items in self._items.items():
            if items:
                data[key] = [_close(items[n]) for n in sorted(items)]
        if "steps" not in data and "outputs" not in data:
            data["steps"] = []
        return data

    def _growing(self) -> bool:
        return not self._completed

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when it brings annotations or ends a step or the interaction."""
        data = _plain(event)
        if not isinstance(data, Mapping):
            self.diagnostics.append(f"stream event is a {_type_name(data)}, not an object")
            return False
        kind = data.get("event_type")
        if not isinstance(kind, str):
            self.diagnostics.append("stream event without an event_type string; skipped")
            return False
        if kind in _STARTED or kind in _COMPLETED:
            self.interaction(data.get("interaction"), kind)
            if kind in _COMPLETED:
                self._completed = True
                return True
            return False
        if kind == "interaction.status_update":
            status = data.get("status")
            if isinstance(status, str):
                self._top["status"] = status
            return False
        if kind == "error":
            error = data.get("error")
            message = error.get("message") if isinstance(error, Mapping) else None
            code = error.get("code") if isinstance(error, Mapping) else None
            shown = ": ".join(str(v) for v in (code, message) if v is not None) or "no details"
            self.diagnostics.append(f"the interaction stream reported an error: {shown}")
            return False
        family, _, phase = kind.partition(".")
        if family not in ("step", "content") or phase not in ("start", "delta", "stop"):
            if kind not in self._unknown:
                self._unknown.add(kind)
                self.diagnostics.append(f"unknown interaction stream event {kind!r}; skipped")
            return False
        items = self._items["steps" if family == "step" else "outputs"]
        index = data.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            self.diagnostics.append(f"{kind} event without an integer index; skipped")
            return False
        if phase == "start":
            started = data.get("step" if family == "step" else "content")
            if isinstance(started, Mapping):
                items[index] = _open(started)
            return False
        if phase == "stop":
            return True
        delta = data.get("delta")
        if not isinstance(delta, Mapping):
            self.diagnostics.append(f"{kind} event without a delta object; skipped")
            return False
        return self.delta(items, index, delta, family == "step")

    def interaction(self, value: Any, kind: str) -> None:
        if not isinstance(value, Mapping):
            self.diagnostics.append(f"{kind} event without an interaction object")
            return
        for key, item in value.items():
            if key in ("steps", "outputs"):
                # interaction.completed leaves its steps out; when it does carry them (or the
                # stream sent no step events), they are the whole answer.
                streamed = self._items[key]
                if isinstance(item, list) and item and not streamed:
                    for n, entry in enumerate(item):
                        if isinstance(entry, Mapping):
                            streamed[n] = _open(entry)
            else:
                self._top[key] = item

    def delta(
        self,
        items: dict[int, dict[str, Any] | _TextBlock],
        index: int,
        delta: Mapping[str, Any],
        step: bool,
    ) -> bool:
        kind = delta.get("type")
        current = items.get(index)
        if not step:
            # The first beta: the block at `index` is the output itself.
            if kind in ("text", "text_annotation_delta"):
                if not isinstance(current, _TextBlock):
                    current = items[index] = _TextBlock({"type": "text"})
                current.add(delta)
                return bool(delta.get("annotations"))
            if current is None or isinstance(current, _TextBlock):
                current = items[index] = {"type": kind}
            self.merge(current, delta)
            return False
        if current is None or isinstance(current, _TextBlock):
            current = items[index] = {"type": "model_output", "content": []}
        if kind in ("text", "text_annotation_delta"):
            content = current.setdefault("content", [])
            if not isinstance(content, list):
                content = current["content"] = []
            last = content[-1] if content else None
            if not isinstance(last, _TextBlock):
                last = _TextBlock({"type": "text"})
                content.append(last)
            last.add(delta)
            return bool(kind == "text_annotation_delta")
        if kind in _MEDIA and current.get("type") == "model_output":
            current.setdefault("content", []).append(dict(delta))
            return False
        self.merge(current, delta)
        return False

    @staticmethod
    def merge(item: dict[str, Any], delta: Mapping[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "thought_summary":
            summary = item.setdefault("summary", [])
            if isinstance(summary, list) and isinstance(delta.get("content"), Mapping):
                summary.append(delta["content"])
        elif kind == "thought_signature":
            item["signature"] = delta.get("signature")
        elif kind == "arguments_delta":
            piece = delta.get("partial_arguments")
            if isinstance(piece, str):
                item["partial_arguments"] = str(item.get("partial_arguments", "")) + piece
        else:
            for key, value in delta.items():
                if key == "type" and "type" in item:
                    continue
                previous = item.get(key)
                if isinstance(previous, list) and isinstance(value, list):
                    item[key] = previous + value
                else:
                    item[key] = value

    def problems(self) -> list[str]:
        if self._completed:
            return []
        return ["stream ended before interaction.completed: the answer may be cut short"]


def read_interaction(data: Mapping[str, Any], builder: AnswerBuilder, *, settling: bool) -> None:
    """Fill `builder` from an interaction (REST JSON or an SDK dump)."""
    interaction = _plain(data)
    if not isinstance(interaction, Mapping):
        builder.note(f"expected an interaction object, got {_type_name(interaction)}")
        return
    InteractionReader(builder, settling=settling).interaction(interaction)
