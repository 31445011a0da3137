"""OpenAI Responses API: output items, their annotations and tool calls, and the event stream.

Reads plain JSON (SDK objects arrive already dumped), never the SDK's own types.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers.openai._agents import (
    AGENT_EVENTS,
    RUN_OBJECT,
    is_run,
    run_response,
    settles_run,
)
from unicite.providers.openai._annotations import (
    NAME,
    ClaimsKeptStream,
    add_unique,
    annotation,
    announce_built,
    citation_key,
    is_placeholder,
    keep_unknown,
    kind_name,
)
from unicite.providers.openai._content import (
    has_citation_shapes,
    is_chat_content,
    responses_payload,
)
from unicite.providers.openai._inline import PRIVATE_CHARS, PendingCite, read_part
from unicite.providers.openai._xai import (
    XAI,
    XAI_QUIET_ITEMS,
    all_citations,
    call_query,
    is_xai_response,
)
from unicite.providers.perplexity import AGENT_ITEMS, PERPLEXITY, agent_response
from unicite.providers.shapes import OPENAI_QUIET_ITEMS, OPENAI_SEARCH_TOOLS
from unicite.sources import SourceLedger

__all__ = ["OPENAI_RESPONSES", "OpenAIResponsesProvider"]


_TERMINAL_EVENTS = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.done"}
)
_SNAPSHOT_EVENTS = frozenset({"response.created", "response.in_progress", "response.queued"})
# Event families that change nothing the reader keeps: tool progress, reasoning, audio, arguments.
_IGNORED_EVENT_PREFIXES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    # xAI's server-side tools.
    "response.x_search_call.",
    "response.code_execution_call.",
    "response.view_image_call.",
    "response.view_x_video_call.",
    "response.mcp_call.",
    "response.image_generation_call.",
    "response.mcp_",
    "response.reasoning_",
    "response.function_call_arguments.",
    "response.custom_tool_call_input.",
    "response.shell_call_",
    "response.audio.",
    "response.compaction.",
    "response.steer",
    # Perplexity's Agent API (same events otherwise): its search results come again as output
    # items of the terminal response.
    "response.reasoning.",
)
_SEARCH_CALLS = frozenset({"web_search_call", "file_search_call", "x_search_call"})
_SEARCH_RESULT_RE = re.compile(r"turn(\d{1,4})search(\d{1,5})")


@dataclass(frozen=True)
class _Call:
    """A tool call item of the output (anything but a message or reasoning)."""

    kind: str | None
    action: str | None = None
    """A web search's ``action.type``."""
    found: list[str | None] | None = None
    """The source ids of a web search's ``action.sources``, in order (None when not given)."""
    ran: bool = True
    """False when its status says it failed or stopped."""


@dataclass
class _Reading:
    """What reading one response gathers beyond the builder: tool calls and pending cites."""

    xai: bool = False
    """The response is xAI's (see `unicite.providers.openai._xai`)."""
    calls: list[_Call] = field(default_factory=list)
    pending: list[PendingCite] = field(default_factory=list)
    cited: bool = False
    """Whether a message part carries a url or file citation (a span or a placeholder)."""


def _message_parts(item: Mapping[str, Any]) -> list[Any]:
    content = item.get("content")
    return content if isinstance(content, list) else []


def _part_text(part: object) -> str | None:
    """The answer text of a content part, as the SDK's ``Response.output_text`` takes it."""
    if isinstance(part, Mapping) and part.get("type") == "output_text":
        text = part.get("text")
        return text if isinstance(text, str) else None
    return None


def _web_search(
    builder: AnswerBuilder, item: Mapping[str, Any], path: str
) -> tuple[str | None, list[str | None] | None]:
    """Read a web search call: its action type, and the ids of its ``action.sources``."""
    read = builder.read
    builder.grounded = True
    action = read.obj(item, "action", path)
    if action is None:
        # xAI's calls hold their query in JSON `arguments`, and no action.
        add_unique(builder, "web_search_queries", call_query(item))
        return None, None
    apath = f"{path}.action"
    kind = read.text(action, "type", apath)
    found: list[str | None] | None = None
    if kind == "search":
        queries = [q for q in read.items(action, "queries", apath) if isinstance(q, str) and q]
        query = read.text(action, "query", apath)
        add_unique(builder, "web_search_queries", [*queries, *([query] if query else [])])
        if isinstance(action.get("sources"), list):
            found = [
                _search_source(builder, entry, rank, f"{apath}.sources[{rank}]")
                for rank, entry in enumerate(read.items(action, "sources", apath))
            ]
    elif kind in ("open_page", "find_in_page", "find"):
        url = read.text(action, "url", apath)
        if url:
            builder.add_source({"kind": "web", "url": url, "raw": action})
    else:
        keep_unknown(builder, apath, action, "web search action")
    return kind, found


def _search_source(builder: AnswerBuilder, entry: object, rank: int, path: str) -> str | None:
    read = builder.read
    if not isinstance(entry, Mapping):
        builder.note(f"{path}: expected an object, got {kind_name(entry)}")
        return None
    kind = read.text(entry, "type", path)
    if kind == "url":
        url = read.text(entry, "url", path)
        if not url:
            builder.note(f"{path}: url source without a url; dropped")
            return None
        title = read.text(entry, "title", path)
        return builder.add_source(
            {"kind": "web", "url": url, "title": title, "rank": rank, "raw": entry}
        )
    if kind == "api":
        # Search answered by an internal API (weather, finance...): a tool, with no URL.
        name = read.text(entry, "name", path)
        extras = {k: v for k, v in entry.items() if k not in ("type", "name")}
        return builder.add_source(
            {"kind": "tool", "title": name, "rank": rank, "extras": extras, "raw": entry}
        )
    keep_unknown(builder, path, entry, "web search source type")
    return None


def _file_search(builder: AnswerBuilder, item: Mapping[str, Any], path: str) -> None:
    read = builder.read
    builder.grounded = True
    queries = [q for q in read.items(item, "queries", path) if isinstance(q, str) and q]
    add_unique(builder, "file_search_queries", queries)
    # Results come chunk by chunk; one source per file keeps every chunk of it.
    groups: dict[str | int, list[tuple[int, Mapping[str, Any]]]] = {}
    for n, result in enumerate(read.items(item, "results", path)):
        rpath = f"{path}.results[{n}]"
        if not isinstance(result, Mapping):
            builder.note(f"{rpath}: expected an object, got {kind_name(result)}")
            continue
        file_id = read.text(result, "file_id", rpath)
        for key in ("filename", "text", "vector_store_id"):
            read.text(result, key, rpath)
        read.number(result, "score", rpath)
        read.obj(result, "attributes", rpath)
        groups.setdefault(file_id or n, []).append((n, result))
    for group, results in groups.items():
        rank, first = results[0]
        texts = [r["text"] for _, r in results if isinstance(r.get("text"), str) and r["text"]]
        extras: dict[str, Any] = {}
        for key in ("score", "vector_store_id", "attributes"):
            value = first.get(key)
            if value is not None and value != {}:
                extras[key] = value
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
    builder: AnswerBuilder,
    item: Mapping[str, Any],
    kind: str | None,
    path: str,
    reading: _Reading | None = None,
) -> None:
    """Read an output item that is not a message."""
    action: str | None = None
    found: list[str | None] | None = None
    if kind == "web_search_call":
        action, found = _web_search(builder, item, path)
    elif kind == "file_search_call":
        _file_search(builder, item, path)
    elif kind == "x_search_call":
        # xAI's X search: its posts come back only as URLs (citations, annotations, links).
        builder.grounded = True
        add_unique(builder, "x_search_queries", call_query(item))
    elif kind not in OPENAI_QUIET_ITEMS and kind not in XAI_QUIET_ITEMS:
        keep_unknown(builder, path, item, "output item type")
    if reading is not None and kind != "reasoning":
        ran = item.get("status") not in ("failed", "incomplete")
        reading.calls.append(_Call(kind, action, found, ran))


def _read_message(
    builder: AnswerBuilder, item: Mapping[str, Any], path: str, reading: _Reading
) -> None:
    read = builder.read
    for j, part in enumerate(read.items(item, "content", path)):
        ppath = f"{path}.content[{j}]"
        if not isinstance(part, Mapping):
            builder.note(f"{ppath}: expected an object, got {kind_name(part)}")
            continue
        kind = read.text(part, "type", ppath)
        if kind == "output_text":
            text = read.text(part, "text", ppath)
            if text is None:
                builder.note(f"{ppath}: output_text without text")
                text = ""
            annotations = read.items(part, "annotations", ppath)
            reading.cited = reading.cited or any(
                isinstance(a, Mapping) and a.get("type") in ("url_citation", "file_citation")
                for a in annotations
            )
            reading.pending.extend(read_part(builder, text, annotations, ppath, links=reading.xai))
        elif kind == "refusal":
            # A refusal is not answer text; it is kept for the application to show.
            refusal = read.text(part, "refusal", ppath)
            if refusal:
                builder.extras["refusal"] = builder.extras.get("refusal", "") + refusal
        else:
            keep_unknown(builder, ppath, part, "content part type")


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
    reading = _Reading(xai=is_xai_response(data))
    if reading.xai:
        builder.provider = XAI
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
            builder.note(f"{path}: expected an object, got {kind_name(item)}")
            continue
        kind = read.text(item, "type", path)
        if kind == "message":
            _read_message(builder, item, path, reading)
        else:
            _tool_item(builder, item, kind, path, reading)
    all_citations(builder, data, "response")
    _resolve_private(builder, data, reading)
    _grounding(builder, data, reading)


def _resolve_private(builder: AnswerBuilder, data: Mapping[str, Any], reading: _Reading) -> None:
    """Cite the search results private-use ``cite`` markers name, where that is unambiguous.

    The rule: ``turnNsearchK`` is the K-th entry (from 0) of the ``action.sources`` of the N-th
    tool call of the response (from 0), read only when the response continues no earlier one
    (no ``previous_response_id``) and every tool call in it is a web search of type ``search``,
    so that counting calls or counting searches gives the same N. Any other id (``turn0news3``,
    ``turn0file1``, ``turn0view0``...) or a missing entry leaves the marker uncited, and said.
    """
    if not reading.pending:
        return
    previous = data.get("previous_response_id")
    searches_only = all(
        call.kind == "web_search_call" and call.action == "search" for call in reading.calls
    )
    for cite in reading.pending:
        marker = cite.marker
        ids: list[str] = []
        missing: list[str] = []
        for part in marker.parts:
            match = _SEARCH_RESULT_RE.fullmatch(part)
            sid = None
            if match and searches_only and not isinstance(previous, str):
                turn, result = int(match.group(1)), int(match.group(2))
                if turn < len(reading.calls):
                    found = reading.calls[turn].found
                    sid = found[result] if found is not None and result < len(found) else None
            if sid is not None:
                if sid not in ids:
                    ids.append(sid)
            elif re.fullmatch(r"turn\d+[a-z_]+\d+", part):
                missing.append(part)
        if missing:
            why = (
                "the response continues an earlier one"
                if isinstance(previous, str)
                else "not every tool call is a web search"
                if not searches_only
                else "no search result of this response"
            )
            builder.note(f"{cite.path}: {', '.join(missing)} names {why}; left uncited")
        if ids:
            builder.cite(
                cite.start,
                cite.end,
                ids,
                extras={"private_marker": marker.label},
                raw=marker.raw,
                where=cite.path,
            )
        elif not missing:
            builder.note(f"{cite.path}: names no search result; removed from the text")


def _grounding(builder: AnswerBuilder, data: Mapping[str, Any], reading: _Reading) -> None:
    """``extras["grounded_effective"]`` and ``extras["tool_calls"]``.

    ``tool_calls`` counts the ``web_search_call``, ``file_search_call`` and xAI's
    ``x_search_call`` items. Grounding took effect (True) when one of them ran (its status is
    not ``failed`` / ``incomplete``), when a message carries url or file citations
    (placeholders included) or when xAI's top-level ``citations`` lists sources. It did not
    (False) when a search tool was offered (the response echoes the request's ``tools``) or,
    with no ``tools`` echoed, the model is a search model (``*search*``, ``*deep-research*``),
    and nothing ran. Otherwise neither key is set: no search was asked for.
    """
    calls = [call for call in reading.calls if call.kind in _SEARCH_CALLS]
    effective = any(call.ran for call in calls) or reading.cited or bool(data.get("citations"))
    tools = data.get("tools")
    offered = isinstance(tools, list) and any(
        isinstance(t, Mapping) and str(t.get("type")) in OPENAI_SEARCH_TOOLS for t in tools
    )
    model = data.get("model")
    search_model = isinstance(model, str) and ("search" in model or "deep-research" in model)
    if effective or calls or offered or (search_model and not isinstance(tools, list)):
        builder.extras["grounded_effective"] = effective
        builder.extras["tool_calls"] = len(calls)


def _read_run(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    """Read an Agents SDK run result as the Responses response it adds up to."""
    response, extras, notes = run_response(data)
    for note in notes:
        builder.note(note)
    _read_response(response, builder)
    builder.extras.update(extras)


class OpenAIResponsesProvider(Provider):
    """The Responses API: ``{"object": "response", "output": [...]}`` and its SSE events.

    A terminal stream event (``response.completed``, ``.incomplete``, ``.failed``) reads as the
    response it carries: frameworks keep the last event of a streamed call as its response.

    Also read here, in the same shape: xAI's answers (``answer.provider`` says ``"xai"``; see
    `unicite.providers.openai._xai`), and OpenAI Agents SDK run results and their stream
    events, translated into the Responses response the run adds up to (see
    `unicite.providers.openai._agents`).
    """

    name = NAME
    api = "responses"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` is a Responses API response, or a terminal event carrying one.

        Perplexity's Agent API answers in this shape with its own output items: those are left
        to the Perplexity reader.
        """
        if agent_response(data) is not None:
            return False
        if is_run(data):
            return True
        if data.get("object") == "response" or _terminal_response(data) is not None:
            return True
        return (
            isinstance(data.get("output"), list) and "choices" not in data and "created_at" in data
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Whether `event` is a Responses stream event (or an Agents SDK run's stream event)."""
        kind = event.get("type")
        return isinstance(kind, str) and (kind.startswith("response.") or kind in AGENT_EVENTS)

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final Responses API response (or its terminal event).

        A Perplexity Agent API response (its stream has the same events, so it arrives here)
        is read by the Perplexity reader, and the answer says ``provider="perplexity"``.
        """
        if is_run(data):
            _read_run(data, builder)
            return
        response = _terminal_response(data) or data
        if agent_response(response) is not None:
            builder.provider = PERPLEXITY.name
            PERPLEXITY.read(response, builder, **options)
            return
        _read_response(response, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one Responses event stream."""
        return _ResponsesStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The response a framework's flat list of output blocks came from.

        Text blocks become ``output_text`` parts of the message item their ``id`` names, other
        typed blocks output items; LangChain's renamed ``file_index`` and standard (v1) blocks
        are put back in the API's shape. Plain text with completion fields is left to the Chat
        Completions reader. ``fields``: ``id``, ``model``, ``status``, ``incomplete_details``,
        ``error``.
        """
        if isinstance(content, str) or is_chat_content(content, fields):
            return None
        return responses_payload(content, fields)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Blocks holding OpenAI annotations or a web or file search call."""
        return not isinstance(content, str) and has_citation_shapes(content)


def _odd_part(part: object) -> bool:
    """Whether a text part holds private-use markers or placeholder annotations."""
    if not isinstance(part, Mapping):
        return False
    text = part.get("text")
    if isinstance(text, str) and any(char in text for char in PRIVATE_CHARS):
        return True
    annotations = part.get("annotations")
    return isinstance(annotations, list) and any(is_placeholder(a) for a in annotations)


def _odd_item(item: object) -> bool:
    if not isinstance(item, Mapping):
        return False
    if str(item.get("type")) in AGENT_ITEMS:
        return True
    content = item.get("content")
    return isinstance(content, list) and any(_odd_part(part) for part in content)


def _needs_whole(event: Mapping[str, Any]) -> bool:
    """Whether a stream event shows what only the whole answer can be read for."""
    kind = event.get("type")
    if kind == "response.output_text.delta":
        delta = event.get("delta")
        return isinstance(delta, str) and any(char in delta for char in PRIVATE_CHARS)
    if kind == "response.output_text.done":
        return _odd_part(event)
    if kind == "response.output_text.annotation.added":
        return is_placeholder(event.get("annotation"))
    if kind in ("response.content_part.added", "response.content_part.done"):
        return _odd_part(event.get("part"))
    if kind in ("response.output_item.added", "response.output_item.done"):
        return _odd_item(event.get("item"))
    response = event.get("response")
    if isinstance(response, Mapping):
        output = response.get("output")
        # xAI's inline links cite what no annotation may name: read from the whole text.
        return (
            agent_response(response) is not None
            or is_xai_response(response)
            or (isinstance(output, list) and any(_odd_item(item) for item in output))
        )
    return isinstance(kind, str) and kind.startswith("response.reasoning.")


def _terminal_response(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The response a terminal stream event carries, when `data` is one."""
    response = data.get("response")
    kind = data.get("type")
    if isinstance(kind, str) and kind in _TERMINAL_EVENTS and isinstance(response, Mapping):
        return response
    return None


class _ResponsesStream(ClaimsKeptStream):
    """Rebuilds the response from its events (the terminal event's own when it has one).

    Citations are announced as soon as their annotation and the text their claim needs have
    arrived, with the offsets the final answer gives them.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._response: dict[str, Any] = {}
        self._output: dict[int, dict[str, Any]] = {}
        self._final: dict[str, Any] | None = None
        self._done: set[tuple[int, int]] = set()
        self._settled: set[tuple[int, int, int]] = set()
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
        self._cited = 0  # citations announced
        # Private-use markers move the offsets after them, placeholder annotations and
        # Perplexity's `[n]` markers are read from the whole text: such a stream announces its
        # citations when it ends.
        self._whole = False
        # An Agents SDK run's events: one Responses stream per model call, read as the run.
        self._run = False
        self._agent: str | None = None
        self._model: str | None = None
        self._turns: list[dict[str, Any]] = []
        self._turn: _ResponsesStream | None = None

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

    def response(self) -> dict[str, Any]:
        """The response as the events so far describe it (an Agents SDK run's: the run)."""
        if self._run:
            turns = list(self._turns)
            if self._turn is not None:
                turns.append(_turn_of(self._turn.response()))
            return {
                "object": RUN_OBJECT,
                "agent": self._agent,
                "model": self._model,
                "responses": turns,
            }
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

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when it may have settled citations."""
        kind = event.get("type")
        if isinstance(kind, str) and kind in AGENT_EVENTS:
            return self._take_run(event)
        self._whole = self._whole or _needs_whole(event)
        return self._take(event)

    def _take_run(self, event: Mapping[str, Any]) -> bool:
        """Merge one Agents SDK stream event; True when a model call ended the run.

        Each model call's raw events rebuild its response; a completed call whose output has
        a message and nothing the SDK runs afterwards is the run's last (see `settles_run`),
        and its citations are announced then.
        """
        self._run = True
        kind = event.get("type")
        if kind == "agent_updated_stream_event":
            agent = event.get("new_agent")
            name = agent.get("name") if isinstance(agent, Mapping) else None
            model = agent.get("model") if isinstance(agent, Mapping) else None
            self._agent = name if isinstance(name, str) else None
            self._model = model if isinstance(model, str) else None
            return False
        if kind != "raw_response_event":
            return False  # run items repeat what the raw events carry
        data = event.get("data")
        if not isinstance(data, Mapping):
            self.diagnostics.append("raw_response_event: no event data")
            return False
        inner = data.get("type")
        if inner == "response.created" and self._turn is not None:
            self._turns.append(_turn_of(self._turn.response()))
            self._turn = None
        if self._turn is None:
            self._turn = _ResponsesStream(self.provider, **self.options)
        self._turn.take(data)
        self.diagnostics.extend(n for n in self._turn.diagnostics if n not in self.diagnostics)
        if isinstance(inner, str) and inner in _TERMINAL_EVENTS:
            turn = self._turn.response()
            self._turns.append(_turn_of(turn))
            self._turn = None
            return settles_run(turn)
        return False

    def _take(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("type")
        if kind is not None and not isinstance(kind, str):
            self.diagnostics.append(f"Responses stream event type is a {type(kind).__name__}")
            return False
        if kind != "response.output_text.delta":
            self._join_deltas()
        if kind in _SNAPSHOT_EVENTS or kind in _TERMINAL_EVENTS:
            response = event.get("response")
            if not isinstance(response, Mapping):
                self.diagnostics.append(f"{kind}: no response object")
                return False
            if kind in _TERMINAL_EVENTS:
                self._final = copy.deepcopy(dict(response))
                return True
            self._response = copy.deepcopy(dict(response))
            return False
        if self._final is not None:
            return False
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            item = event.get("item")
            index = event.get("output_index")
            if isinstance(item, Mapping) and isinstance(index, int) and not isinstance(index, bool):
                self._output[index] = copy.deepcopy(dict(item))
                if kind == "response.output_item.done":
                    parts = _message_parts(self._output[index])
                    self._done.update((index, j) for j in range(len(parts)))
                    return True
            elif item is not None or kind == "response.output_item.done":
                # An added event without an item is tolerated (the SDK skips it too).
                self.diagnostics.append(f"{kind}: no item or output_index")
            return False
        if kind == "response.content_part.added" or kind == "response.content_part.done":
            part = self._part(event)
            new = event.get("part")
            if part is not None and isinstance(new, Mapping):
                part.clear()
                part.update(copy.deepcopy(dict(new)))
                if kind == "response.content_part.done":
                    self._done.add((event["output_index"], event["content_index"]))
                    return True
            elif part is not None:
                self.diagnostics.append(f"{kind}: no part object")
            return False
        if kind == "response.output_text.delta":
            part = self._part(event)
            delta = event.get("delta")
            if part is not None and isinstance(delta, str):
                self._deltas.setdefault(id(part), (part, []))[1].append(delta)
            elif part is not None:
                self.diagnostics.append(f"{kind}: delta is not a string")
            return False
        if kind == "response.output_text.done":
            part = self._part(event)
            text = event.get("text")
            if part is not None and isinstance(text, str):
                part["text"] = text
                self._done.add((event["output_index"], event["content_index"]))
                return True
            return False
        if kind == "response.output_text.annotation.added":
            part = self._part(event)
            annotation = event.get("annotation")
            index = event.get("annotation_index")
            if part is None:
                return False
            annotations = part.get("annotations")
            if not isinstance(annotations, list):
                annotations = part["annotations"] = []
            if isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= 10_000:
                while len(annotations) <= index:
                    annotations.append(None)
                annotations[index] = copy.deepcopy(annotation)
            else:
                annotations.append(copy.deepcopy(annotation))
            return True
        if kind == "response.refusal.delta" or kind == "response.refusal.done":
            part = self._part(event)
            if part is not None:
                part["type"] = "refusal"
                value = event.get("delta" if kind == "response.refusal.delta" else "refusal")
                if isinstance(value, str):
                    previous = part.get("refusal") if kind == "response.refusal.delta" else ""
                    part["refusal"] = (previous if isinstance(previous, str) else "") + value
            return False
        if kind == "error":
            message = event.get("message")
            self.diagnostics.append(f"stream error event: {message or event.get('code')}")
            return False
        if isinstance(kind, str) and kind.startswith(_IGNORED_EVENT_PREFIXES):
            return False
        self.diagnostics.append(f"unknown Responses stream event {kind!r}")
        return False

    def _flush(self, *, final: bool = False) -> list[CitationEvent]:
        """Announce every annotation whose claim the text so far already decides.

        Each tool item is read once (again only when an event replaces it), and each part's
        annotations from the first one not announced yet, so a long stream stays linear.
        """
        snapshot = self.response()
        scratch = AnswerBuilder(NAME)
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
                        if key in self._settled or ann is None:
                            continue
                        if annotation(scratch, ann, text, base, "stream", complete=complete):
                            self._settled.add(key)
                    while (i, j, first) in self._settled:
                        first += 1
                    self._open[(i, j)] = first
                # Later parts are placed after this one: they wait until its length is final.
                settled = settled and complete
        return announce_built(scratch, self._cited)

    def announce(self) -> list[CitationEvent]:
        """The citations the events so far settled (all of them once the stream is over)."""
        if self._run:
            return super().announce()  # `take` said a model call ended the run
        if self._whole:
            return super().announce() if self._final is not None else []
        events = self._flush(final=self._final is not None)
        self._cited += len(events)
        for item in events:
            self._told[citation_key(item.citation)] += 1
        return events

    def problems(self) -> list[str]:
        """What a stream without its terminal event lacks."""
        if self._run:
            return [] if self._turn is None else ["stream ended before response.completed"]
        return [] if self._final is not None else ["stream ended before response.completed"]


def _turn_of(response: Mapping[str, Any]) -> dict[str, Any]:
    """One model call of an Agents SDK run as its run result holds it: its id and output."""
    response_id = response.get("id")
    output = response.get("output")
    return {
        "id": response_id if isinstance(response_id, str) else None,
        "output": output if isinstance(output, list) else [],
    }


OPENAI_RESPONSES = OpenAIResponsesProvider()
"""Reader of OpenAI Responses API responses and their event streams."""
