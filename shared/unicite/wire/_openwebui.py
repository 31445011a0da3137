"""The ``openwebui`` protocol: what Open WebUI shows from an OpenAI-compatible backend.

Open WebUI reads a model connection's stream line by line in ``stream_body_handler``
(``backend/open_webui/utils/middleware.py`` in github.com/open-webui/open-webui): a
``data: {json}`` chunk holding an ``event`` object is handed to its event emitter as it is
(``await event_emitter(data.get("event", {}))``; not for a "direct" connection, which the
browser calls itself), a chunk's ``choices[0].delta.content`` is
appended to the message, and a chunk without choices is otherwise skipped. The emitter sends
the event to the browser and, for ``{"type": "source" | "citation", "data": {...}}`` events
whose data has no ``type``, appends the data to the message's ``sources`` in the database
(``get_event_emitter`` in ``backend/open_webui/socket/main.py``); the browser appends it to
``message.sources`` too (``chatEventHandler`` in ``src/lib/components/chat/Chat.svelte``). A
source object is Open WebUI's own shape, ``{"source": {...}, "document": [...], "metadata":
[...]}``, as its tools emit it (``get_citation_source_from_tool_result`` in the middleware).

The frames, all ``chat.completion.chunk`` objects as in the ``openai`` protocol
(`unicite.wire._openai`), ending with ``data: [DONE]``:

- the text: a role chunk, then ``{"content": text}`` deltas, ending as the answer's text with
  its ``[n]`` markers;
- one chunk per source of ``answer.sources``, in that order, with ``choices: []`` and
  ``{"event": {"type": "source", "data": {"source": {"id", "name", "url"?}, "document":
  [snippet], "metadata": [{"source", "name", "url"?}]}}}``. ``url`` is only there for a URL
  safe to link (http or https, sanitized by `unicite._urls.safe_href`); ``metadata.source`` is
  that URL, else the source's id (never one starting with ``http``); ``name`` is the title,
  else the domain, URL or id; ``document`` holds the snippet, else the name;
- one chunk with ``choices: []`` and ``{"unicite": {"history": ...}}``: the history document
  (`unicite.wire.history`), which Open WebUI ignores and `OpenWebUIProtocol.decode` reads;
- the last chunk, ``finish_reason: "stop"``. A message that was stopped
  (`unicite.wire.Relay.cancel`) ends the same way, with the stopped answer (the text generated
  so far, cited as far as it went), and its last chunk also carries ``{"unicite": {"stopped":
  true}}``.

Open WebUI numbers the sources of a message in the order they arrive: the inline ``[n]``
token shows entry ``n - 1`` of the list of ``metadata.name`` values without repeats
(``getSourceIds`` in ``ContentRenderer.svelte``, ``SourceToken.svelte``) and opens entry
``n - 1`` of the list grouped by ``metadata.source`` (``Citations.svelte``). Both keys are
therefore made unique (a repeated name gets `` (n)`` after it, with ``n`` its number), so
marker ``[n]`` opens ``answer.sources[n - 1]``. Sources Open WebUI adds to the same message
itself (its own web search or knowledge retrieval on the model) come first and shift the
numbers: turn them off for a unicite model. No ``url_citation`` annotation is sent: Open WebUI
turns each one into a source event of its own (``delta.get("annotations")`` in the middleware),
which would list the sources twice.

A generation retry is a chunk with ``choices: []`` and ``{"unicite": {"reset": {"round",
"reason"}}}``. Open WebUI cannot take back the text a model connection streamed (it keeps
every delta, and a ``replace`` event is overwritten by the next delta), so it shows the rounds
one after the other; `OpenWebUIProtocol.decode` keeps the text after the last reset. A stream
that broke off ends with a chunk carrying ``{"error": {"message", "type"}}``, which Open WebUI
shows as the message's error.

`OpenWebUIProtocol.decode` gives the history document's answer exactly (what the ``unicite``
protocol decodes). Without that chunk, it reads the text after the last reset, the sources
from the source events (id, URL, name as the title, document as the snippet) and the
citations from the text's ``[n]`` markers (`unicite.parse_markers`), with a diagnostic. A
stopped message's answer is marked stopped (``extras["stopped"]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from unicite._text import sanitize_display
from unicite._urls import safe_href
from unicite.exceptions import WireError
from unicite.markers import parse_markers
from unicite.model import CitedAnswer, Source
from unicite.wire._frames import Frame
from unicite.wire._history import from_document
from unicite.wire._openai import EXTENSION, ChunkEncoder, ChunkReader
from unicite.wire._protocol import Encoder, Protocol
from unicite.wire._unicite import completed_view_data

__all__ = ["HISTORY", "OpenWebUIProtocol", "source_events"]

HISTORY = "history"
"""The key, under the chunk's ``unicite`` object, of the history document."""

_URL_PREFIXES = ("http://", "https://")
_NO_HISTORY = "no unicite history chunk: the citations are read from the [n] markers"


def _unique(candidate: str, number: int, used: set[str]) -> str:
    value = candidate
    k = 1
    while value in used:
        value = f"{candidate} ({number})" if k == 1 else f"{candidate} ({number}.{k})"
        k += 1
    used.add(value)
    return value


def _label(source: Source, href: str | None) -> str:
    for value in (source.title, source.domain, href):
        shown = sanitize_display(value).strip()
        if shown:
            return shown
    return sanitize_display(source.id).strip() or source.id


def source_events(answer: CitedAnswer) -> list[dict[str, Any]]:
    """Open WebUI ``source`` events for the answer's sources, in order, numbered as ``[n]``."""
    names: set[str] = set()
    keys: set[str] = set()
    events = []
    for number, source in enumerate(answer.sources, 1):
        href = safe_href(source.url)
        name = _unique(_label(source, href), number, names)
        own = source.id if not source.id.startswith(_URL_PREFIXES) else f"unicite:{source.id}"
        key = href if href is not None and href not in keys else own
        key = _unique(key, number, keys)
        origin: dict[str, Any] = {"id": source.id, "name": name}
        metadata: dict[str, Any] = {"source": key, "name": name}
        if href is not None:
            origin["url"] = href
            metadata["url"] = href
        document = sanitize_display(source.snippet, allow_newlines=True).strip() or name
        data = {"source": origin, "document": [document], "metadata": [metadata]}
        events.append({"type": "source", "data": data})
    return events


class _Encoder(ChunkEncoder):
    def message(self, answer: CitedAnswer) -> list[Frame]:
        view, frames = self.text(answer)
        frames.extend(self.chunk(extra={"event": event}) for event in source_events(view))
        history = self.document = completed_view_data(view, self.message_id)
        frames.append(self.chunk(extra={EXTENSION: {HISTORY: history}}))
        return frames


def _first(values: object) -> Any:
    return values[0] if isinstance(values, list) and values else None


def _read_source(data: dict[str, Any]) -> Source:
    """The source an Open WebUI source object names (its first document)."""
    given = data.get("source")
    origin: dict[str, Any] = given if isinstance(given, dict) else {}
    first = _first(data.get("metadata"))
    metadata: dict[str, Any] = first if isinstance(first, dict) else {}
    key = metadata.get("source")
    sid = origin.get("id") if isinstance(origin.get("id"), str) else key
    url = origin.get("url") or metadata.get("url")
    if not url and isinstance(key, str) and key.startswith(_URL_PREFIXES):
        url = key
    title = metadata.get("name") or origin.get("name")
    document = _first(data.get("document"))
    fields: dict[str, Any] = {
        "url": url if isinstance(url, str) and url else None,
        "title": title if isinstance(title, str) and title else None,
        "snippet": document if isinstance(document, str) and document != title else None,
    }
    if isinstance(sid, str) and sid:
        fields["id"] = sid
    if fields["url"] is None:
        fields["kind"] = "document"
    return Source(**{name: value for name, value in fields.items() if value is not None})


class _Reader(ChunkReader):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[dict[str, Any]] = []
        self.history: Any = None

    def read(self, frame: Frame) -> None:
        resets = self.resets
        chunk = self.take(frame)
        if self.resets != resets:
            self.events.clear()
        if chunk is None:
            return
        event = chunk.get("event")
        if isinstance(event, dict) and event.get("type") in ("source", "citation"):
            data = event.get("data")
            if not isinstance(data, dict):
                raise WireError("a source event's data is not an object")
            if data.get("type") is None:
                self.events.append(data)
        extension = chunk.get(EXTENSION)
        if isinstance(extension, dict) and HISTORY in extension:
            self.history = extension[HISTORY]


class OpenWebUIProtocol(Protocol):
    """Chat Completions chunks with Open WebUI source events (see the module docstring)."""

    name = "openwebui"

    def encoder(self, message_id: str | None) -> Encoder:
        """A new encoder for one message."""
        return _Encoder(message_id)

    def decode(self, frames: Iterable[Frame]) -> CitedAnswer:
        """The history chunk's answer; without it, the text, sources and ``[n]`` markers.

        Raises:
            WireError: A frame is not JSON, a source event is not an object, or the history
                chunk is not a history document.
        """
        reader = _Reader()
        for frame in frames:
            reader.read(frame)
            if reader.broken is not None:
                break
        note = reader.broke_off()
        if note is None and reader.history is not None:
            answer = from_document(reader.history)
            if answer.text != reader.text:
                note = "the streamed text differs from the history content; the content is kept"
                answer = answer.replace(diagnostics=[*answer.diagnostics, note])
            return reader.ended(answer)
        sources: dict[str, Source] = {}
        for data in reader.events:
            source = _read_source(data)
            sources.setdefault(source.id, source)
        answer = parse_markers(
            reader.text, list(sources.values()), style="brackets", on_invalid="keep"
        )
        return reader.ended(answer.replace(diagnostics=[*answer.diagnostics, note or _NO_HISTORY]))
