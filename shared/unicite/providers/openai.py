"""OpenAI readers: the Responses API (output items, annotations, tool calls) and Chat Completions.

Both read plain JSON (SDK objects arrive already dumped), never the SDK's own types.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Literal

from unicite._segment import MARKER_RE, claim_span
from unicite.model import UrlLocation
from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.sources._ledger import SourceLedger

__all__ = ["OPENAI_CHAT", "OPENAI_RESPONSES"]

_NAME = "openai"

# A bare Markdown link; parenthesised links ``([site](url))`` are matched by MARKER_RE.
_BARE_LINK_RE = re.compile(r"\[[^\[\]\n]{1,200}\]\([^\s]{1,2048}\)")
_TERMINATORS = frozenset(".!?\u2026\u3002\uff01\uff1f")

# Output items that carry no answer text and no citation data.
_QUIET_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "computer_call",
        "computer_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
        "compaction",
        "program",
        "program_output",
        "additional_tools",
    }
)

_TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_SNAPSHOT_EVENTS = frozenset({"response.created", "response.in_progress", "response.queued"})
# Event families that change nothing the reader keeps: tool progress, reasoning, audio, arguments.
_IGNORED_EVENT_PREFIXES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_",
    "response.reasoning_",
    "response.function_call_arguments.",
    "response.custom_tool_call_input.",
    "response.shell_call_",
    "response.audio.",
    "response.compaction.",
    "response.steer",
)


def _kind(value: object) -> str:
    return type(value).__name__


def _keep_unknown(builder: AnswerBuilder, path: str, value: Any, what: str) -> None:
    """Record an unknown item/part/annotation: one diagnostic, and its data in the extras."""
    label = value.get("type") if isinstance(value, Mapping) else None
    builder.note(f"{path}: unknown {what} {label!r}; kept in extras['unknown']")
    builder.extras.setdefault("unknown", []).append({"path": path, "value": value})


def _add_unique(builder: AnswerBuilder, key: str, values: list[str]) -> None:
    if not values:
        return
    kept: list[str] = builder.extras.setdefault(key, [])
    kept.extend(value for value in values if value not in kept)


def _is_marker(span: str) -> bool:
    """Whether an annotated span is a citation marker (an inline link) rather than claim text."""
    stripped = span.strip()
    return bool(MARKER_RE.fullmatch(stripped) or _BARE_LINK_RE.fullmatch(stripped))


def _horizon(start: int, end: int) -> int:
    """How many characters of a text part decide an annotation's claim (see `_claim`)."""
    return start + 1 if start == end else end


_CLAIM_WINDOW = 4_096
"""How many characters before an annotation its claim is looked for in, at most."""


def _paragraph_start(text: str, pos: int) -> int:
    """Start of the paragraph holding ``pos``: a claim never crosses a blank line.

    Reading claims paragraph by paragraph keeps long answers with hundreds of citations linear.
    A claim is one sentence, so the search also stops `_CLAIM_WINDOW` characters before
    ``pos``: an answer written as one long paragraph (a long list with no blank line, say)
    stays linear too.
    """
    floor = max(0, pos - _CLAIM_WINDOW)
    cut = pos
    while True:
        newline = text.rfind("\n", floor, cut)
        if newline < 0:
            return floor
        # The line before this break is blank when only spaces separate it from the one before.
        k = newline
        while k > floor and text[k - 1] in " \t\r":
            k -= 1
        if k == 0 or text[k - 1] == "\n":
            return newline + 1
        cut = newline


def _claim_before(text: str, start: int, end: int) -> tuple[int, int]:
    """`claim_span` of a marker at ``text[start:end]``, reading only its paragraph up to ``end``."""
    origin = _paragraph_start(text, start)
    claim_start, claim_end = claim_span(text[origin:end], start - origin, end - origin)
    return origin + claim_start, origin + claim_end


def _claim(
    text: str, start: int, end: int, *, complete: bool
) -> tuple[tuple[int, int], tuple[int, int] | None] | None:
    """Claim span and marker span of an annotation over ``text[start:end]`` of one text part.

    Only ``text[:_horizon(start, end)]`` is read unless the marker leads its sentence, so a
    stream can place a citation as soon as that much text has arrived. Returns None when the
    claim needs text after the annotation and ``complete`` is False.
    """
    if start == end:
        # An insertion point (file_citation `index`, zero-width spans): the claim is the
        # sentence ending there, including the terminator the index often points at.
        stop = start + 1 if start < len(text) and text[start] in _TERMINATORS else start
        span = _claim_before(text, stop, stop)
        if span[0] == span[1]:
            if not complete:
                return None
            span = claim_span(text, stop, stop)
            if span[0] == span[1]:
                span = (start, start)
        return span, None
    if not _is_marker(text[start:end]):
        return (start, end), None
    span = _claim_before(text, start, end)
    if span[0] == span[1]:
        if not complete:
            return None
        span = claim_span(text, start, end)
        if span[0] == span[1]:
            # Nothing to claim around the link: cite the link itself.
            span = (start, end)
    return span, (start, end)


# --- annotations --------------------------------------------------------------------------


def _range(
    builder: AnswerBuilder, ann: Mapping[str, Any], text: str, path: str, *, complete: bool
) -> tuple[int, int] | Literal[False] | None:
    """The ``(start, end)`` of an annotation in its text part.

    None (with a diagnostic) when it has no usable span; False when the span reaches past the
    text so far and ``complete`` is False (a stream must wait for more text).
    """
    read = builder.read
    start = read.integer(ann, "start_index", path)
    end = read.integer(ann, "end_index", path)
    if start is None or end is None:
        builder.note(f"{path}: no start_index/end_index; source kept without a span")
        return None
    if not 0 <= start <= end:
        builder.note(f"{path}: span {start}..{end} is not a range; source kept without a span")
        return None
    if not complete and len(text) < _horizon(start, end):
        return False
    if end > len(text):
        builder.note(
            f"{path}: span {start}..{end} is outside its text part (0..{len(text)}); "
            "source kept without a span"
        )
        return None
    return start, end


def _extras(ann: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in ann.items() if key not in known}


_URL_KEYS = frozenset({"type", "url", "title", "start_index", "end_index"})
_FILE_KEYS = frozenset({"type", "file_id", "filename", "index"})
_CONTAINER_KEYS = frozenset(
    {"type", "file_id", "filename", "container_id", "start_index", "end_index"}
)


def _cite_span(
    builder: AnswerBuilder,
    span: tuple[int, int],
    text: str,
    base: int,
    source_id: str,
    *,
    complete: bool,
    path: str,
    **fields: Any,
) -> bool:
    """Cite a span of one text part placed at ``base``; False when it must wait for more text."""
    found = _claim(text, span[0], span[1], complete=complete)
    if found is None:
        return False
    (claim_start, claim_end), marker = found
    builder.cite(
        base + claim_start,
        base + claim_end,
        [source_id],
        marker_span=None if marker is None else (base + marker[0], base + marker[1]),
        where=path,
        **fields,
    )
    return True


def _url_citation(
    builder: AnswerBuilder, ann: Mapping[str, Any], text: str, base: int, path: str, complete: bool
) -> bool:
    read = builder.read
    # Chat Completions nest the fields under the type's key; the Responses API is flat.
    nested = read.obj(ann, "url_citation", path)
    body: Mapping[str, Any] = nested if nested is not None else ann
    body_path = f"{path}.url_citation" if nested is not None else path
    span = _range(builder, body, text, body_path, complete=complete)
    if span is False:
        return False
    url = read.text(body, "url", body_path)
    if not url:
        builder.note(f"{body_path}: url_citation without a url; dropped")
        return True
    extras = _extras(body, _URL_KEYS)
    if nested is not None:
        extras.update(_extras(ann, frozenset({"type", "url_citation"})))
    title = read.text(body, "title", body_path)
    sid = builder.add_source({"kind": "web", "url": url, "title": title, "raw": ann})
    if span is None:
        return True
    return _cite_span(
        builder,
        span,
        text,
        base,
        sid,
        complete=complete,
        path=path,
        location=UrlLocation(url=url),
        extras=extras,
        raw=ann,
    )


def _file_citation(
    builder: AnswerBuilder, ann: Mapping[str, Any], text: str, base: int, path: str, complete: bool
) -> bool:
    read = builder.read
    index = read.integer(ann, "index", path)
    if index is not None and not complete and len(text) < _horizon(index, index):
        return False
    if index is not None and not 0 <= index <= len(text):
        builder.note(f"{path}: index {index} is outside its text part (0..{len(text)})")
        index = None
    file_id = read.text(ann, "file_id", path)
    sid = builder.add_source(
        {
            "kind": "file",
            "provider_id": file_id or None,
            "title": read.text(ann, "filename", path),
            "raw": ann,
        }
    )
    if index is None:
        return True
    return _cite_span(
        builder,
        (index, index),
        text,
        base,
        sid,
        complete=complete,
        path=path,
        extras={"index": index, **_extras(ann, _FILE_KEYS)},
        raw=ann,
    )


def _container_file_citation(
    builder: AnswerBuilder, ann: Mapping[str, Any], text: str, base: int, path: str, complete: bool
) -> bool:
    read = builder.read
    span = _range(builder, ann, text, path, complete=complete)
    if span is False:
        return False
    container_id = read.text(ann, "container_id", path)
    sid = builder.add_source(
        {
            "kind": "file",
            "provider_id": read.text(ann, "file_id", path) or None,
            "title": read.text(ann, "filename", path),
            "extras": {"container_id": container_id} if container_id else {},
            "raw": ann,
        }
    )
    if span is None:
        return True
    extras = _extras(ann, _CONTAINER_KEYS)
    return _cite_span(
        builder, span, text, base, sid, complete=complete, path=path, extras=extras, raw=ann
    )


def _file_path(builder: AnswerBuilder, ann: Mapping[str, Any], path: str) -> None:
    # A file the answer produced; its `index` numbers files, not text: a source, no span.
    read = builder.read
    file_id = read.text(ann, "file_id", path)
    index = read.integer(ann, "index", path)
    builder.add_source(
        {
            "kind": "file",
            "provider_id": file_id or None,
            "title": file_id,
            "extras": {"file_path_index": index} if index is not None else {},
            "raw": ann,
        }
    )


def _annotation(
    builder: AnswerBuilder,
    ann: object,
    text: str,
    base: int,
    path: str,
    *,
    complete: bool = True,
) -> bool:
    """Read one annotation of a text part that starts at ``base`` in the answer.

    With ``complete`` False (a stream whose part is still growing) it returns False, adding
    nothing, when the claim needs text that has not arrived yet.
    """
    if not isinstance(ann, Mapping):
        builder.note(f"{path}: expected an object, got {_kind(ann)}")
        return True
    kind = builder.read.text(ann, "type", path)
    if kind == "url_citation":
        return _url_citation(builder, ann, text, base, path, complete)
    if kind == "file_citation":
        return _file_citation(builder, ann, text, base, path, complete)
    if kind == "container_file_citation":
        return _container_file_citation(builder, ann, text, base, path, complete)
    if kind == "file_path":
        _file_path(builder, ann, path)
        return True
    _keep_unknown(builder, path, ann, "annotation type")
    return True


# --- Responses API ------------------------------------------------------------------------


def _message_parts(item: Mapping[str, Any]) -> list[Any]:
    content = item.get("content")
    return content if isinstance(content, list) else []


def _part_text(part: object) -> str | None:
    """The answer text of a content part, as the SDK's ``Response.output_text`` takes it."""
    if isinstance(part, Mapping) and part.get("type") == "output_text":
        text = part.get("text")
        return text if isinstance(text, str) else None
    return None


def _web_search(builder: AnswerBuilder, item: Mapping[str, Any], path: str) -> None:
    read = builder.read
    builder.grounded = True
    action = read.obj(item, "action", path)
    if action is None:
        return
    apath = f"{path}.action"
    kind = read.text(action, "type", apath)
    if kind == "search":
        queries = [q for q in read.items(action, "queries", apath) if isinstance(q, str) and q]
        query = read.text(action, "query", apath)
        _add_unique(builder, "web_search_queries", [*queries, *([query] if query else [])])
        for rank, entry in enumerate(read.items(action, "sources", apath)):
            _search_source(builder, entry, rank, f"{apath}.sources[{rank}]")
    elif kind in ("open_page", "find_in_page", "find"):
        url = read.text(action, "url", apath)
        if url:
            builder.add_source({"kind": "web", "url": url, "raw": action})
    else:
        _keep_unknown(builder, apath, action, "web search action")


def _search_source(builder: AnswerBuilder, entry: object, rank: int, path: str) -> None:
    read = builder.read
    if not isinstance(entry, Mapping):
        builder.note(f"{path}: expected an object, got {_kind(entry)}")
        return
    kind = read.text(entry, "type", path)
    if kind == "url":
        url = read.text(entry, "url", path)
        if not url:
            builder.note(f"{path}: url source without a url; dropped")
            return
        title = read.text(entry, "title", path)
        builder.add_source({"kind": "web", "url": url, "title": title, "rank": rank, "raw": entry})
    elif kind == "api":
        # Search answered by an internal API (weather, finance...): a tool, with no URL.
        name = read.text(entry, "name", path)
        extras = {k: v for k, v in entry.items() if k not in ("type", "name")}
        builder.add_source(
            {"kind": "tool", "title": name, "rank": rank, "extras": extras, "raw": entry}
        )
    else:
        _keep_unknown(builder, path, entry, "web search source type")


def _file_search(builder: AnswerBuilder, item: Mapping[str, Any], path: str) -> None:
    read = builder.read
    builder.grounded = True
    queries = [q for q in read.items(item, "queries", path) if isinstance(q, str) and q]
    _add_unique(builder, "file_search_queries", queries)
    # Results come chunk by chunk; one source per file keeps every chunk of it.
    groups: dict[str | int, list[tuple[int, Mapping[str, Any]]]] = {}
    for n, result in enumerate(read.items(item, "results", path)):
        rpath = f"{path}.results[{n}]"
        if not isinstance(result, Mapping):
            builder.note(f"{rpath}: expected an object, got {_kind(result)}")
            continue
        file_id = read.text(result, "file_id", rpath)
        for field in ("filename", "text", "vector_store_id"):
            read.text(result, field, rpath)
        read.number(result, "score", rpath)
        read.obj(result, "attributes", rpath)
        groups.setdefault(file_id or n, []).append((n, result))
    for group, results in groups.items():
        rank, first = results[0]
        texts = [r["text"] for _, r in results if isinstance(r.get("text"), str) and r["text"]]
        extras: dict[str, Any] = {}
        for field in ("score", "vector_store_id", "attributes"):
            value = first.get(field)
            if value is not None and value != {}:
                extras[field] = value
        if len(results) > 1:
            extras["chunks"] = [
                {"text": r.get("text"), "score": r.get("score")} for _, r in results
            ]
        builder.add_source(
            {
                "kind": "file",
                "provider_id": group if isinstance(group, str) else None,
                "title": first.get("filename") if isinstance(first.get("filename"), str) else None,
                "snippet": texts[0] if texts else None,
                "content": "\n\n".join(dict.fromkeys(texts)) or None,
                "rank": rank,
                "extras": extras,
                "raw": first if len(results) == 1 else [r for _, r in results],
            }
        )


def _tool_item(
    builder: AnswerBuilder, item: Mapping[str, Any], kind: str | None, path: str
) -> None:
    """Read an output item that is not a message."""
    if kind == "web_search_call":
        _web_search(builder, item, path)
    elif kind == "file_search_call":
        _file_search(builder, item, path)
    elif kind not in _QUIET_ITEMS:
        _keep_unknown(builder, path, item, "output item type")


def _read_message(builder: AnswerBuilder, item: Mapping[str, Any], path: str) -> None:
    read = builder.read
    for j, part in enumerate(read.items(item, "content", path)):
        ppath = f"{path}.content[{j}]"
        if not isinstance(part, Mapping):
            builder.note(f"{ppath}: expected an object, got {_kind(part)}")
            continue
        kind = read.text(part, "type", ppath)
        if kind == "output_text":
            text = read.text(part, "text", ppath)
            if text is None:
                builder.note(f"{ppath}: output_text without text")
                text = ""
            base = builder.append_text(text)
            for k, ann in enumerate(read.items(part, "annotations", ppath)):
                _annotation(builder, ann, text, base, f"{ppath}.annotations[{k}]")
        elif kind == "refusal":
            # A refusal is not answer text; it is kept for the application to show.
            refusal = read.text(part, "refusal", ppath)
            if refusal:
                builder.extras["refusal"] = builder.extras.get("refusal", "") + refusal
        else:
            _keep_unknown(builder, ppath, part, "content part type")


def _why(data: Mapping[str, Any]) -> str:
    """`` (code: message)`` from a Responses ``error`` or ``incomplete_details``, when given."""
    for key, fields in (("error", ("code", "message")), ("incomplete_details", ("reason",))):
        detail = data.get(key)
        if isinstance(detail, Mapping):
            parts = [str(detail[f]) for f in fields if isinstance(detail.get(f), (str, int))]
            if parts:
                return f" ({': '.join(parts)})"
    return ""


def _read_response(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "response")
    response_id = read.text(data, "id", "response")
    if response_id:
        builder.extras["response_id"] = response_id
    status = read.text(data, "status", "response")
    if status:
        builder.extras["status"] = status
    for key in ("error", "incomplete_details"):
        if data.get(key) is not None:
            builder.extras[key] = data[key]
    # An incomplete response (max_output_tokens, content filter) is an answer that stopped
    # early, as Anthropic's max_tokens is: its status and reason stay in extras. A failed or
    # cancelled one is an error body.
    if status in ("failed", "cancelled"):
        builder.note(f"response {status}{_why(data)}: the answer may be missing or cut short")
    if "output" not in data:
        builder.note("response.output is missing")
    for i, item in enumerate(read.items(data, "output", "response")):
        path = f"response.output[{i}]"
        if not isinstance(item, Mapping):
            builder.note(f"{path}: expected an object, got {_kind(item)}")
            continue
        kind = read.text(item, "type", path)
        if kind == "message":
            _read_message(builder, item, path)
        else:
            _tool_item(builder, item, kind, path)


class _ResponsesProvider(Provider):
    """The Responses API: ``{"object": "response", "output": [...]}`` and its SSE events."""

    name = _NAME

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` is a Responses API response."""
        if data.get("object") == "response":
            return True
        return (
            isinstance(data.get("output"), list) and "choices" not in data and "created_at" in data
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Whether `event` is a Responses stream event."""
        kind = event.get("type")
        return isinstance(kind, str) and kind.startswith("response.")

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final Responses API response."""
        _read_response(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one Responses event stream."""
        return _ResponsesStream(**options)


def _announce(builder: AnswerBuilder) -> list[CitationEvent]:
    """The citations a scratch builder holds, as events carrying their sources."""
    ledger = builder.ledger
    return [
        CitationEvent(
            citation=citation,
            sources=[s for sid in citation.source_ids if (s := ledger.get(sid)) is not None],
        )
        for citation in builder.citations()
    ]


class _ResponsesStream(StreamReader):
    """Rebuilds the response from its events; `finish` reads it like a final response.

    Citations are announced as soon as their annotation and the text their claim needs have
    arrived, with the offsets the final answer gives them.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._response: dict[str, Any] = {}
        self._output: dict[int, dict[str, Any]] = {}
        self._final: dict[str, Any] | None = None
        self._done: set[tuple[int, int]] = set()
        self._announced: set[tuple[int, int, int]] = set()
        # Text deltas not yet joined into their part, by part: joining them when another event
        # needs the text, not at every delta, keeps a long streamed text linear.
        self._deltas: dict[int, tuple[dict[str, Any], list[str]]] = {}
        # What `_flush` keeps between calls, so each call does only the new work: the sources
        # of the tool items read so far (and of the citations announced), the tool item last
        # read at each output index, and per text part the number of leading annotations
        # already announced.
        self._ledger = SourceLedger()
        self._tools_read: dict[int, Any] = {}
        self._open: dict[tuple[int, int], int] = {}

    # --- snapshot ------------------------------------------------------------------------

    def _item(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        index = event.get("output_index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            self.diagnostics.append(f"{event.get('type')}: no usable output_index")
            return None
        return self._output.setdefault(index, {"type": "message", "content": []})

    def _part(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        item = self._item(event)
        index = event.get("content_index")
        if item is None:
            return None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 1000:
            self.diagnostics.append(f"{event.get('type')}: no usable content_index")
            return None
        content = item.get("content")
        if not isinstance(content, list):
            content = item["content"] = []
        while len(content) <= index:
            content.append({"type": "output_text", "text": "", "annotations": []})
        if not isinstance(content[index], dict):
            content[index] = {"type": "output_text", "text": "", "annotations": []}
        part: dict[str, Any] = content[index]
        return part

    def _join_deltas(self) -> None:
        for part, pieces in self._deltas.values():
            text = part.get("text")
            part["text"] = (text if isinstance(text, str) else "") + "".join(pieces)
        self._deltas.clear()

    def _snapshot(self) -> dict[str, Any]:
        """The response as the events so far describe it."""
        self._join_deltas()
        if self._final is not None:
            # As the SDK does: a terminal response without output takes the streamed items.
            if self._final.get("output") is not None:
                return self._final
            return {**self._final, "output": self._rebuilt_output()}
        return {**self._response, "output": self._rebuilt_output()}

    def _rebuilt_output(self) -> list[dict[str, Any]]:
        return [self._output[i] for i in sorted(self._output)]

    # --- events ---------------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one event; return the citations it made final."""
        kind = event.get("type")
        if kind is not None and not isinstance(kind, str):
            self.diagnostics.append(f"Responses stream event type is a {type(kind).__name__}")
            return []
        if kind != "response.output_text.delta":
            self._join_deltas()
        if kind in _SNAPSHOT_EVENTS or kind in _TERMINAL_EVENTS:
            response = event.get("response")
            if not isinstance(response, Mapping):
                self.diagnostics.append(f"{kind}: no response object")
                return []
            if kind in _TERMINAL_EVENTS:
                self._final = copy.deepcopy(dict(response))
                return self._flush(final=True)
            self._response = copy.deepcopy(dict(response))
            return []
        if self._final is not None:
            return []
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            item = event.get("item")
            index = event.get("output_index")
            if isinstance(item, Mapping) and isinstance(index, int) and not isinstance(index, bool):
                self._output[index] = copy.deepcopy(dict(item))
                if kind == "response.output_item.done":
                    parts = _message_parts(self._output[index])
                    self._done.update((index, j) for j in range(len(parts)))
                    return self._flush()
            elif item is not None or kind == "response.output_item.done":
                # An added event without an item is tolerated (the SDK skips it too).
                self.diagnostics.append(f"{kind}: no item or output_index")
            return []
        if kind == "response.content_part.added" or kind == "response.content_part.done":
            part = self._part(event)
            new = event.get("part")
            if part is not None and isinstance(new, Mapping):
                part.clear()
                part.update(copy.deepcopy(dict(new)))
                if kind == "response.content_part.done":
                    self._done.add((event["output_index"], event["content_index"]))
                    return self._flush()
            elif part is not None:
                self.diagnostics.append(f"{kind}: no part object")
            return []
        if kind == "response.output_text.delta":
            part = self._part(event)
            delta = event.get("delta")
            if part is not None and isinstance(delta, str):
                self._deltas.setdefault(id(part), (part, []))[1].append(delta)
            elif part is not None:
                self.diagnostics.append(f"{kind}: delta is not a string")
            return []
        if kind == "response.output_text.done":
            part = self._part(event)
            text = event.get("text")
            if part is not None and isinstance(text, str):
                part["text"] = text
                self._done.add((event["output_index"], event["content_index"]))
                return self._flush()
            return []
        if kind == "response.output_text.annotation.added":
            part = self._part(event)
            annotation = event.get("annotation")
            index = event.get("annotation_index")
            if part is None:
                return []
            annotations = part.get("annotations")
            if not isinstance(annotations, list):
                annotations = part["annotations"] = []
            if isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= 10_000:
                while len(annotations) <= index:
                    annotations.append(None)
                annotations[index] = copy.deepcopy(annotation)
            else:
                annotations.append(copy.deepcopy(annotation))
            return self._flush()
        if kind == "response.refusal.delta" or kind == "response.refusal.done":
            part = self._part(event)
            if part is not None:
                part["type"] = "refusal"
                value = event.get("delta" if kind == "response.refusal.delta" else "refusal")
                if isinstance(value, str):
                    previous = part.get("refusal") if kind == "response.refusal.delta" else ""
                    part["refusal"] = (previous if isinstance(previous, str) else "") + value
            return []
        if kind == "error":
            message = event.get("message")
            self.diagnostics.append(f"stream error event: {message or event.get('code')}")
            return []
        if isinstance(kind, str) and kind.startswith(_IGNORED_EVENT_PREFIXES):
            return []
        self.diagnostics.append(f"unknown Responses stream event {kind!r}")
        return []

    def _flush(self, *, final: bool = False) -> list[CitationEvent]:
        """Announce every annotation whose claim the text so far already decides.

        Each tool item is read once (again only when an event replaces it), and each part's
        annotations from the first one not announced yet, so a long stream stays linear.
        """
        snapshot = self._snapshot()
        scratch = AnswerBuilder(_NAME)
        scratch.ledger = self._ledger
        output = snapshot.get("output")
        items = output if isinstance(output, list) else []
        settled = True
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type")
            if kind != "message":
                if self._tools_read.get(i) is not item:
                    self._tools_read[i] = item
                    kind = kind if isinstance(kind, str) else None
                    _tool_item(scratch, item, kind, f"response.output[{i}]")
                continue
            for j, part in enumerate(_message_parts(item)):
                text = _part_text(part)
                if text is None:
                    continue
                complete = final or (i, j) in self._done
                base = scratch.append_text(text)
                if settled:
                    annotations = part.get("annotations")
                    listed = annotations if isinstance(annotations, list) else []
                    first = self._open.get((i, j), 0)
                    for k in range(first, len(listed)):
                        key = (i, j, k)
                        ann = listed[k]
                        if key in self._announced or ann is None:
                            continue
                        if _annotation(scratch, ann, text, base, "stream", complete=complete):
                            self._announced.add(key)
                    while (i, j, first) in self._announced:
                        first += 1
                    self._open[(i, j)] = first
                # Later parts are placed after this one: they wait until its length is final.
                settled = settled and complete
        return _announce(scratch)

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the final (or rebuilt) response into `builder`."""
        if self._final is None:
            builder.note("stream ended before response.completed")
        _read_response(self._snapshot(), builder)


# --- Chat Completions -----------------------------------------------------------------------


def _choice(
    builder: AnswerBuilder, data: Mapping[str, Any], candidate: int
) -> tuple[Mapping[str, Any] | None, str]:
    choices = builder.read.items(data, "choices", "completion")
    for n, choice in enumerate(choices):
        if isinstance(choice, Mapping) and choice.get("index") == candidate:
            return choice, f"completion.choices[{n}]"
    if 0 <= candidate < len(choices) and isinstance(choices[candidate], Mapping):
        return choices[candidate], f"completion.choices[{candidate}]"
    builder.note(f"completion.choices: no choice {candidate}")
    return None, "completion.choices"


def _read_completion(data: Mapping[str, Any], builder: AnswerBuilder, candidate: int) -> None:
    read = builder.read
    builder.model = read.text(data, "model", "completion")
    completion_id = read.text(data, "id", "completion")
    if completion_id:
        builder.extras["response_id"] = completion_id
    if builder.model and "search" in builder.model:
        builder.grounded = True  # search models always search before answering
    choice, path = _choice(builder, data, candidate)
    if choice is None:
        return
    finish_reason = read.text(choice, "finish_reason", path)
    if finish_reason:
        builder.extras["finish_reason"] = finish_reason
    message = read.obj(choice, "message", path)
    if message is None:
        builder.note(f"{path}.message is missing")
        return
    mpath = f"{path}.message"
    text = read.text(message, "content", mpath) or ""
    builder.append_text(text)
    refusal = read.text(message, "refusal", mpath)
    if refusal:
        builder.extras["refusal"] = refusal
    annotations = read.items(message, "annotations", mpath)
    if annotations:
        builder.grounded = True
    for k, ann in enumerate(annotations):
        _annotation(builder, ann, text, 0, f"{mpath}.annotations[{k}]")


class _ChatProvider(Provider):
    """Chat Completions, with the ``url_citation`` annotations of search models."""

    name = _NAME

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` is a Chat Completions response."""
        if data.get("object") == "chat.completion":
            return True
        choices = data.get("choices")
        return (
            isinstance(choices, list)
            and bool(choices)
            and isinstance(choices[0], Mapping)
            and "message" in choices[0]
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Whether `event` is a Chat Completions chunk (or the SDK helper's ``chunk`` event)."""
        if event.get("object") == "chat.completion.chunk":
            return True
        chunk = event.get("chunk")
        return (
            event.get("type") == "chunk"
            and isinstance(chunk, Mapping)
            and chunk.get("object") == "chat.completion.chunk"
        )

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final Chat Completions response."""
        candidate = options.get("candidate", 0)
        _read_completion(data, builder, candidate if isinstance(candidate, int) else 0)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one Chat Completions chunk stream."""
        return _ChatStream(**options)


class _ChatStream(StreamReader):
    """Accumulates chunks into the completion they add up to."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        candidate = options.get("candidate", 0)
        self._candidate = candidate if isinstance(candidate, int) else 0
        self._head: dict[str, Any] = {}
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._annotations: list[Any] = []
        self._finish_reason: Any = None
        self._announced = 0

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one chunk; return the citations it made final."""
        if event.get("object") != "chat.completion.chunk":
            chunk = event.get("chunk") if event.get("type") == "chunk" else None
            if not isinstance(chunk, Mapping):
                # The SDK's ChatCompletionStream helper events (content.delta, ...) repeat
                # what its `chunk` events already carry.
                return []
            event = chunk
        for key in ("id", "model", "created"):
            if key in event and key not in self._head:
                self._head[key] = event[key]
        choices = event.get("choices")
        if not isinstance(choices, list):
            self.diagnostics.append("chat.completion.chunk: choices is not a list")
            return []
        for n, choice in enumerate(choices):
            if not isinstance(choice, Mapping):
                self.diagnostics.append(f"chat.completion.chunk.choices[{n}]: not an object")
                continue
            index = choice.get("index", 0)
            if index != self._candidate:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                for key, target in (("content", self._content), ("refusal", self._refusal)):
                    value = delta.get(key)
                    if isinstance(value, str):
                        target.append(value)
                    elif value is not None:
                        self.diagnostics.append(f"chunk delta.{key} is not a string")
                annotations = delta.get("annotations")
                if isinstance(annotations, list):
                    self._annotations.extend(copy.deepcopy(annotations))
                elif annotations is not None:
                    self.diagnostics.append("chunk delta.annotations is not a list")
            if choice.get("finish_reason") is not None:
                self._finish_reason = choice["finish_reason"]
        return self._flush()

    def _completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._content),
            "refusal": "".join(self._refusal) or None,
            "annotations": self._annotations,
        }
        return {
            **self._head,
            "object": "chat.completion",
            "choices": [
                {"index": self._candidate, "message": message, "finish_reason": self._finish_reason}
            ],
        }

    def _flush(self) -> list[CitationEvent]:
        if self._announced >= len(self._annotations):
            return []
        text = "".join(self._content)
        complete = self._finish_reason is not None
        scratch = AnswerBuilder(_NAME)
        scratch.append_text(text)
        while self._announced < len(self._annotations):
            ann = self._annotations[self._announced]
            if not _annotation(scratch, ann, text, 0, "stream", complete=complete):
                break
            self._announced += 1
        return _announce(scratch)

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the completion the chunks add up to into `builder`."""
        if self._finish_reason is None:
            builder.note("stream ended before a finish_reason")
        _read_completion(self._completion(), builder, self._candidate)


OPENAI_RESPONSES: Provider = _ResponsesProvider()
"""Reader of OpenAI Responses API responses and their event streams."""

OPENAI_CHAT: Provider = _ChatProvider()
"""Reader of OpenAI Chat Completions responses and their chunk streams."""
