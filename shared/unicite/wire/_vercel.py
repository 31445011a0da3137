"""The ``vercel`` protocol: the Vercel AI SDK UI message stream (``ai`` 5 and 6, ``useChat``).

Every frame is ``data: {json}`` with no event name, and the stream ends with ``data: [DONE]``;
the response carries the header ``x-vercel-ai-ui-message-stream: v1``. The chunks follow the
``uiMessageChunkSchema`` of the ``ai`` package (``packages/ai/src/ui-message-stream/
ui-message-chunks.ts`` in github.com/vercel/ai; strict objects in the first 5.x releases,
loose ones since: unicite sends only the keys the strict schema allows), as described at
https://ai-sdk.dev/docs/ai-sdk-ui/stream-protocol, and are applied to the message as
``processUIMessageStream`` (``packages/ai/src/ui/process-ui-message-stream.ts``) does:

- ``{"type": "start", "messageId"?}`` opens the message (``messageId`` when one is given);
- ``{"type": "text-start", "id"}``, ``{"type": "text-delta", "id", "delta"}``,
  ``{"type": "text-end", "id"}``: the text, in one text part per round (ids ``text-1``,
  ``text-2``, …);
- ``{"type": "source-url", "sourceId", "url", "title"?}`` for every source whose URL is safe to
  link (http or https, sent in its sanitized form, `unicite._urls.safe_href`);
- ``{"type": "source-document", "sourceId", "mediaType", "title", "filename"?}`` for every other
  source (documents, files, and sources whose URL must not become a link: that URL is not sent
  in these parts). ``mediaType`` comes from the file name's extension (``application/pdf`` for
  ``.pdf``), ``text/plain`` otherwise; ``filename`` is the source's ``extras["filename"]``, else
  its title or the last segment of its URL when they end with a document extension;
- ``{"type": "data-unicite", "data": history}``: a custom data part holding the history
  document (`unicite.wire.history`), so a custom renderer has the content with its ``[n]``
  markers, every source and every span in str, UTF-16 and byte offsets;
- ``{"type": "data-unicite-reset", "data": {"round", "reason"}}``: the text shown so far is
  discarded (a generation retry, or a final text that does not continue what was streamed);
- ``{"type": "error", "errorText"}`` when the stream broke off; ``{"type": "finish"}`` at the
  end (no ``finishReason``: the strict schema of the first 5.x releases refuses it);
- ``{"type": "abort"}`` instead of ``finish`` when the message was stopped
  (`unicite.wire.Relay.cancel`), as ``streamText`` ends an aborted stream: after the text, the
  source parts and the ``data-unicite`` part of the stopped answer (the text generated so far,
  cited as far as it went), and no ``finish`` after it (no ``reason`` either, which the first
  5.x releases refuse).

Source parts come in ``answer.sources`` order, so the n-th source part is what marker ``[n]``
opens. The AI SDK cannot remove a text part it has shown: on a reset the current text part is
ended, a ``data-unicite-reset`` part follows and a new text part starts. The rule for a client
is positional: **show only the text parts that come after the last ``data-unicite-reset``
part in ``message.parts``**, and once the ``data-unicite`` part is there, render its content
instead of the text parts. A client that knows nothing of unicite (a plain ``useChat``) shows
every round's text one after the other; its text after the last reset is the answer's.

``tests/wire/js`` reads these frames with the ``ai`` package itself (``parseJsonEventStream``
with ``uiMessageChunkSchema``, then ``readUIMessageStream``, as ``useChat`` does).

`VercelProtocol.decode` follows the same rule: the ``data-unicite`` part gives the answer
exactly (what the ``unicite`` protocol decodes); without one, the text after the last reset
and the source parts give an answer whose sources are listed uncited, with a diagnostic. After
an ``abort`` chunk the answer is marked stopped (``extras["stopped"]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

from unicite._text import sanitize_display
from unicite._urls import safe_href
from unicite.exceptions import WireError
from unicite.model import CitedAnswer, Source
from unicite.wire._frames import Frame, dumps
from unicite.wire._history import from_document, shown
from unicite.wire._protocol import Encoder, Protocol, mark_stopped
from unicite.wire._unicite import completed_view_data

__all__ = ["ABORT", "DATA", "DONE", "HEADERS", "RESET", "VercelProtocol"]

DATA = "data-unicite"
"""The custom data part carrying the history document."""
RESET = "data-unicite-reset"
"""The custom data part saying the text parts before it are discarded."""
DONE = "[DONE]"
"""The last frame's data."""
ABORT = "abort"
"""The chunk type ending a stopped message, in place of ``finish``."""
HEADERS = {"x-vercel-ai-ui-message-stream": "v1"}
"""The response header the AI SDK's transport recognises (``UI_MESSAGE_STREAM_HEADERS``)."""

_FINAL_REASON = "the final text does not continue the text streamed"
_NO_DATA = f"no {DATA} part: the sources are listed uncited"

_MEDIA_TYPES = {
    "pdf": "application/pdf",
    "txt": "text/plain",
    "md": "text/markdown",
    "markdown": "text/markdown",
    "html": "text/html",
    "htm": "text/html",
    "csv": "text/csv",
    "json": "application/json",
    "xml": "application/xml",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
_EXTENSION_RE = re.compile(r"\.([A-Za-z0-9]{1,8})\s*$")


def _extension(name: str | None) -> str | None:
    if not name:
        return None
    match = _EXTENSION_RE.search(name)
    if match is None:
        return None
    extension = match.group(1).lower()
    return extension if extension in _MEDIA_TYPES else None


def _url_name(url: str | None) -> str | None:
    """The last segment of a URL's path, when there is one."""
    if not url:
        return None
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    name = unquote(path.rstrip("/").rpartition("/")[2])
    return name or None


def _filename(source: Source) -> str | None:
    """The source's file name, when it is known (see the module docstring)."""
    given = source.extras.get("filename")
    if isinstance(given, str) and given.strip():
        return sanitize_display(given).strip() or None
    for candidate in (source.title, _url_name(source.url)):
        if _extension(candidate) is not None:
            return sanitize_display(candidate).strip() or None
    return None


def _source_part(source: Source) -> dict[str, Any]:
    """The ``source-url`` or ``source-document`` chunk of one source."""
    title = sanitize_display(source.title).strip() or None
    href = safe_href(source.url)
    if href is not None:
        part: dict[str, Any] = {"type": "source-url", "sourceId": source.id, "url": href}
        if title is not None:
            part["title"] = title
        return part
    filename = _filename(source)
    extension = _extension(filename) or _extension(source.title)
    part = {
        "type": "source-document",
        "sourceId": source.id,
        "mediaType": _MEDIA_TYPES[extension] if extension else "text/plain",
        "title": title or filename or source.domain or sanitize_display(source.id) or source.id,
    }
    if filename is not None:
        part["filename"] = filename
    return part


class _Encoder(Encoder):
    def __init__(self, message_id: str | None) -> None:
        super().__init__(message_id)
        self.parts = 0
        self.open: str | None = None
        self.round = 0
        self.streamed: list[str] = []

    @staticmethod
    def _frame(chunk: dict[str, Any]) -> Frame:
        return Frame(dumps(chunk))

    def _open(self) -> list[Frame]:
        self.parts += 1
        self.open = f"text-{self.parts}"
        return [self._frame({"type": "text-start", "id": self.open})]

    def _close(self) -> list[Frame]:
        if self.open is None:
            return []
        frame = self._frame({"type": "text-end", "id": self.open})
        self.open = None
        return [frame]

    def _text(self, text: str) -> list[Frame]:
        frames = [] if self.open is not None else self._open()
        chunk = {"type": "text-delta", "id": self.open, "delta": text}
        frames.append(self._frame(chunk))
        self.streamed.append(text)
        return frames

    def start(self) -> list[Frame]:
        chunk: dict[str, Any] = {"type": "start"}
        if self.message_id is not None:
            chunk["messageId"] = self.message_id
        return [self._frame(chunk)]

    def delta(self, text: str) -> list[Frame]:
        return self._text(text)

    def reset(self, round: int, reason: str) -> list[Frame]:
        self.round = round
        self.streamed.clear()
        frames = self._close()
        data = {"round": round, "reason": reason}
        frames.append(self._frame({"type": RESET, "data": data}))
        frames.extend(self._open())
        return frames

    def final(self, answer: CitedAnswer) -> list[Frame]:
        return [*self._message(answer), self._frame({"type": "finish"}), Frame(DONE)]

    def cancelled(self, answer: CitedAnswer) -> list[Frame]:
        return [*self._message(answer), self._frame({"type": ABORT}), Frame(DONE)]

    def _message(self, answer: CitedAnswer) -> list[Frame]:
        """The text completed to the answer's, its source parts and its ``data-unicite`` part."""
        view = shown(answer)
        text = view.text
        streamed = "".join(self.streamed)
        frames: list[Frame] = []
        if not text.startswith(streamed):
            frames.extend(self.reset(self.round, _FINAL_REASON))
            streamed = ""
        rest = text[len(streamed) :]
        if rest or self.open is None:
            frames.extend(self._text(rest) if rest else self._open())
        frames.extend(self._close())
        frames.extend(self._frame(_source_part(source)) for source in answer.sources)
        self.document = completed_view_data(view, self.message_id)
        frames.append(self._frame({"type": DATA, "data": self.document}))
        return frames

    def error(self, message: str) -> list[Frame]:
        frames = self._close()
        frames.append(self._frame({"type": "error", "errorText": message}))
        return frames


def _text_field(chunk: dict[str, Any], name: str) -> str:
    value = chunk.get(name)
    if not isinstance(value, str):
        raise WireError(f"a {chunk.get('type')!r} chunk has no string {name!r}")
    return value


def _read_source(chunk: dict[str, Any]) -> Source:
    """The source a ``source-url`` or ``source-document`` chunk names."""
    sid = _text_field(chunk, "sourceId")
    title = chunk.get("title")
    title = title if isinstance(title, str) and title else None
    if chunk["type"] == "source-url":
        return Source(id=sid, kind="web", url=_text_field(chunk, "url"), title=title)
    filename = chunk.get("filename")
    extras = {"filename": filename} if isinstance(filename, str) and filename else {}
    return Source(id=sid, kind="document", title=title, extras=extras)


class _Reader:
    """The text parts, sources and unicite parts of one message, as they arrive."""

    def __init__(self) -> None:
        self.parts: dict[str, list[str]] = {}
        self.order: list[str] = []
        self.sources: dict[str, Source] = {}
        self.document: Any = None
        self.broken: str | None = None
        self.aborted = False

    @property
    def text(self) -> str:
        return "".join("".join(self.parts[pid]) for pid in self.order)

    def take(self, chunk: dict[str, Any]) -> None:
        kind = chunk.get("type")
        if kind == "text-start":
            pid = _text_field(chunk, "id")
            if pid not in self.parts:
                self.order.append(pid)
            self.parts[pid] = []
        elif kind == "text-delta":
            pid = _text_field(chunk, "id")
            if pid not in self.parts:
                raise WireError(f"text-delta for text part {pid!r}, which no text-start opened")
            self.parts[pid].append(_text_field(chunk, "delta"))
        elif kind == RESET:
            self.parts.clear()
            self.order.clear()
        elif kind in ("source-url", "source-document"):
            source = _read_source(chunk)
            self.sources.setdefault(source.id, source)
        elif kind == DATA:
            self.document = chunk.get("data")
        elif kind == "error":
            self.broken = str(chunk.get("errorText"))
        elif kind == ABORT:
            self.aborted = True


class VercelProtocol(Protocol):
    """The Vercel AI SDK UI message stream (see the module docstring)."""

    name = "vercel"
    headers = HEADERS

    def encoder(self, message_id: str | None) -> Encoder:
        """A new encoder for one message."""
        return _Encoder(message_id)

    def decode(self, frames: Iterable[Frame]) -> CitedAnswer:
        """The ``data-unicite`` part's answer; without it, the text after the last reset.

        After an ``abort`` chunk, the answer is marked stopped.

        Raises:
            WireError: A frame is not JSON, a chunk lacks a field, a text delta names no open
                text part, or the ``data-unicite`` part is not a history document.
        """
        reader = _Reader()
        for frame in frames:
            if frame.data == DONE:
                continue
            chunk = frame.json()
            if not isinstance(chunk, dict):
                raise WireError("a UI message stream chunk is a JSON object")
            reader.take(chunk)
            if reader.broken is not None:
                break
        if reader.broken is None and reader.document is not None:
            answer = from_document(reader.document)
            if answer.text != reader.text:
                note = f"the text parts differ from the {DATA} content; the content is kept"
                answer = answer.replace(diagnostics=[*answer.diagnostics, note])
        else:
            note = (
                f"the message broke off: {reader.broken}" if reader.broken is not None else _NO_DATA
            )
            answer = CitedAnswer(
                text=reader.text, sources=list(reader.sources.values()), diagnostics=[note]
            )
        return mark_stopped(answer) if reader.aborted else answer
