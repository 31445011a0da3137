"""The ``openai`` protocol: OpenAI-compatible Chat Completions streaming, with URL citations.

Every frame is ``data: {json}`` with no event name, and the stream ends with ``data: [DONE]``,
as the Chat Completions API streams (https://platform.openai.com/docs/api-reference/chat-
streaming). Every chunk is a ``chat.completion.chunk`` (`openai.types.chat.ChatCompletionChunk`
reads each one): ``{"id", "object": "chat.completion.chunk", "created": 0, "model",
"choices": [{"index": 0, "delta": {...}, "finish_reason"}]}``.

- ``id`` is the message id, else ``chatcmpl-unicite``; ``created`` is always 0 and nothing in
  a chunk is random, so the same stream gives the same bytes; ``model`` is the answer's model
  (else ``unicite``) when the answer comes alone, and ``unicite`` when text is streamed before
  the answer (the model is not known yet, and every chunk of a stream names the same one);
- the first chunk's delta is ``{"role": "assistant", "content": ""}``, then each text delta is
  ``{"content": text}``; the text ends as the answer's text with its ``[n]`` markers;
- after the text, one chunk's delta holds ``annotations``: ``{"type": "url_citation",
  "url_citation": {"start_index", "end_index", "url", "title"}}`` as search models send them
  (``message.annotations`` of https://platform.openai.com/docs/guides/tools-web-search?api-mode=
  chat; streamed in a delta, as gpt-4o-search-preview does), one per citation and cited source
  whose URL is safe to link (sent in its sanitized form, `unicite._urls.safe_href`). The offsets
  are Python ``str`` indices (code points) of the whole content the chunks add up to, which is
  what unicite's own Chat Completions reader (`unicite.providers.openai`) expects; the span is
  the claim the citation covers (not its marker, which a reader would widen to the sentence
  before it). Annotations come in source order (the order of ``answer.sources``, then of the
  text), so a client that lists the URLs in the order it receives them numbers them as the
  text's markers do when every source has a URL. ``title`` is the source's title, else its
  domain, else the URL;
  Open WebUI turns every annotation into a source of its own (``delta.get("annotations")``
  in its ``backend/open_webui/utils/middleware.py``), so there it lists only the cited URL
  sources: the ``openwebui`` protocol sends them all;
- the last chunk has an empty delta and ``finish_reason: "stop"``; when the message was stopped
  (`unicite.wire.Relay.cancel`) the same chunks end it, for the stopped answer (the text
  generated so far, cited as far as it went), and the last one also carries
  ``{"unicite": {"stopped": true}}``;
- a generation retry is a chunk with ``choices: []`` and ``{"unicite": {"reset": {"round",
  "reason"}}}``: the Chat Completions format cannot take text back, so a plain client shows
  the rounds one after the other while `OpenAIProtocol.decode` keeps the text after the last
  reset (annotation offsets still count the whole content, as a plain client sees it). A final
  text that does not continue what was streamed is sent the same way: a reset, then the text;
- a stream that broke off ends with a chunk with ``choices: []`` and ``{"error": {"message",
  "type": "server_error"}}`` (the OpenAI SDK raises ``APIError`` on such a chunk).

What the format cannot carry is lost: sources without an http(s) URL (documents, files, tool
results, and URLs unsafe to link), sources no citation cites, marker spans, quotes, locations,
confidences, source snippets and ids (a decoded source's id is derived from its URL), the
answer's provider and diagnostics. `OpenAIProtocol.decode` reads the chunks with
`unicite.collect_stream`, the same reader that reads OpenAI's own streams: the text comes back
exactly (except ChatGPT's private-use markers, U+E200 to U+E202, which that reader removes),
with one citation per (citation, URL source) pair over the same span, and the cited URL
sources in first-cited order; a stopped message's answer is marked stopped
(``extras["stopped"]``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Any

from unicite._text import sanitize_display
from unicite._urls import safe_href
from unicite.exceptions import WireError
from unicite.model import Citation, CitedAnswer, Source
from unicite.providers import collect_stream
from unicite.wire._frames import Frame, dumps
from unicite.wire._history import shown
from unicite.wire._input import Final, Item
from unicite.wire._protocol import Encoder, Protocol, mark_stopped

__all__ = [
    "CHUNK",
    "CREATED",
    "DEFAULT_ID",
    "DEFAULT_MODEL",
    "DONE",
    "EXTENSION",
    "ChunkEncoder",
    "ChunkReader",
    "OpenAIProtocol",
    "after",
    "url_annotations",
]

CHUNK = "chat.completion.chunk"
DEFAULT_ID = "chatcmpl-unicite"
"""The chunks' ``id`` when no message id is given."""
DEFAULT_MODEL = "unicite"
"""The chunks' ``model`` when the answer names none, or comes after streamed text."""
CREATED = 0
"""The chunks' ``created``: fixed, so the same stream always gives the same bytes."""
DONE = "[DONE]"
"""The last frame's data."""
EXTENSION = "unicite"
"""The top-level chunk key of unicite's own fields, which other clients ignore."""

_FINAL_REASON = "the final text does not continue the text streamed"


def url_annotations(answer: CitedAnswer, base: int = 0) -> list[dict[str, Any]]:
    """The ``url_citation`` annotations of a shown answer whose text starts at ``base``.

    One per citation and cited source with a URL safe to link, over the citation's span; a
    citation with an empty span is annotated over its marker instead (a reader takes the
    sentence before the marker), or not at all without one. In source order, then text order.
    """
    numbers = {source.id: n for n, source in enumerate(answer.sources)}
    found: list[tuple[int, int, int, dict[str, Any]]] = []
    for citation in answer.citations:
        span = _span(citation)
        if span is None:
            continue
        start, end = span
        for sid in dict.fromkeys(citation.source_ids):
            source = answer.source(sid)
            href = None if source is None else safe_href(source.url)
            if source is None or href is None:
                continue
            body = {
                "start_index": base + start,
                "end_index": base + end,
                "url": href,
                "title": _title(source, href),
            }
            found.append((numbers[sid], start, end, {"type": "url_citation", "url_citation": body}))
    found.sort(key=lambda item: item[:3])
    return [annotation for *_, annotation in found]


def _span(citation: Citation) -> tuple[int, int] | None:
    if citation.start < citation.end:
        return citation.start, citation.end
    marker = citation.marker_span
    if marker is not None and marker[0] < marker[1]:
        return marker
    return None


def _title(source: Source, href: str) -> str:
    for value in (source.title, source.domain):
        shown_value = sanitize_display(value).strip()
        if shown_value:
            return shown_value
    return href


class ChunkEncoder(Encoder):
    """Chat Completions chunks for a cited stream; subclasses write the message's last chunks.

    `message` gives the chunks completing the text and carrying the citations; the last chunk
    and ``[DONE]`` follow, for a completed message and for a stopped one alike.
    """

    def __init__(self, message_id: str | None) -> None:
        super().__init__(message_id)
        self.chunk_id = message_id if message_id is not None else DEFAULT_ID
        self.model = DEFAULT_MODEL
        self.round = 0
        self.streamed: list[str] = []
        self.length = 0
        """Code points of all the content sent (the whole content a plain client shows)."""
        self.base = 0
        """Where the current round's text starts in the whole content."""

    def feed(self, item: Item) -> list[Frame]:
        """The frames for one item; an answer that comes first names the chunks' model."""
        if not self.started and isinstance(item, Final) and item.answer.model:
            self.model = item.answer.model
        return super().feed(item)

    def chunk(
        self,
        delta: dict[str, Any] | None = None,
        finish_reason: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Frame:
        """One chunk: with a choice holding ``delta`` when given, else with no choice.

        ``extra`` holds top-level keys beside the standard ones (``unicite``, ``error``, …).
        """
        body: dict[str, Any] = {
            "id": self.chunk_id,
            "object": CHUNK,
            "created": CREATED,
            "model": self.model,
        }
        if delta is None:
            body["choices"] = []
        else:
            body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        body.update(extra or {})
        return Frame(dumps(body))

    def start(self) -> list[Frame]:
        """The assistant role, as the first chunk of a Chat Completions stream carries it."""
        return [self.chunk({"role": "assistant", "content": ""})]

    def delta(self, text: str) -> list[Frame]:
        """A chunk appending ``text``."""
        self.streamed.append(text)
        self.length += len(text)
        return [self.chunk({"content": text})]

    def reset(self, round: int, reason: str) -> list[Frame]:
        """A chunk with no choice telling unicite's readers the text so far is discarded."""
        self.round = round
        self.streamed.clear()
        self.base = self.length
        return [self.chunk(extra={EXTENSION: {"reset": {"round": round, "reason": reason}}})]

    def text(self, answer: CitedAnswer) -> tuple[CitedAnswer, list[Frame]]:
        """The shown answer, and the chunks completing the streamed text to its text."""
        view = shown(answer)
        streamed = "".join(self.streamed)
        frames: list[Frame] = []
        if not view.text.startswith(streamed):
            frames.extend(self.reset(self.round, _FINAL_REASON))
            streamed = ""
        rest = view.text[len(streamed) :]
        if rest:
            frames.extend(self.delta(rest))
        return view, frames

    @abstractmethod
    def message(self, answer: CitedAnswer) -> list[Frame]:
        """The chunks completing the streamed text to the answer's, with its citations."""

    def final(self, answer: CitedAnswer) -> list[Frame]:
        """The answer's chunks, the last chunk and ``[DONE]``."""
        return [*self.message(answer), *self.stop()]

    def cancelled(self, answer: CitedAnswer) -> list[Frame]:
        """`final`, its last chunk saying the message was stopped."""
        return [*self.message(answer), *self.stop(stopped=True)]

    def stop(self, *, stopped: bool = False) -> list[Frame]:
        """The last chunk (``{"unicite": {"stopped": true}}`` when stopped) and ``[DONE]``."""
        extra = {EXTENSION: {"stopped": True}} if stopped else None
        return [self.chunk({}, "stop", extra=extra), Frame(DONE)]

    def error(self, message: str) -> list[Frame]:
        """A chunk with no choice and an OpenAI error object."""
        return [self.chunk(extra={"error": {"message": message, "type": "server_error"}})]


class _Encoder(ChunkEncoder):
    def message(self, answer: CitedAnswer) -> list[Frame]:
        view, frames = self.text(answer)
        annotations = url_annotations(view, self.base)
        if annotations:
            frames.append(self.chunk({"annotations": annotations}))
        return frames


class ChunkReader:
    """Chat Completions chunks read back: where the last reset cut the content, errors, stops."""

    def __init__(self) -> None:
        self.chunks: list[dict[str, Any]] = []
        self.content: list[str] = []
        self.length = 0
        self.cut = 0
        self.resets = 0
        self.broken: str | None = None
        self.stopped = False

    def take(self, frame: Frame) -> dict[str, Any] | None:
        """Read one frame: its chunk, or None for ``[DONE]``, a reset or an error."""
        if frame.data == DONE:
            return None
        chunk = frame.json()
        if not isinstance(chunk, dict):
            raise WireError("a chat.completion.chunk is a JSON object")
        extension = chunk.get(EXTENSION)
        if isinstance(extension, dict) and "reset" in extension:
            self.cut = self.length
            self.resets += 1
            return None
        if isinstance(extension, dict) and extension.get("stopped") is True:
            self.stopped = True
        error = chunk.get("error")
        if error is not None and not chunk.get("choices"):
            message = error.get("message") if isinstance(error, dict) else error
            self.broken = str(message)
            return None
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str):
                self.content.append(content)
                self.length += len(content)
        self.chunks.append(chunk)
        return chunk

    @property
    def text(self) -> str:
        """The content after the last reset."""
        return "".join(self.content)[self.cut :]

    def broke_off(self) -> str | None:
        """The diagnostic of a stream that broke off, or None."""
        return None if self.broken is None else f"the message broke off: {self.broken}"

    def ended(self, answer: CitedAnswer) -> CitedAnswer:
        """The answer read, marked stopped when the message was."""
        return mark_stopped(answer) if self.stopped else answer


def after(answer: CitedAnswer, cut: int) -> CitedAnswer:
    """The answer without its first ``cut`` characters (the text a reset discarded)."""
    if cut <= 0:
        return answer
    kept: list[Citation] = []
    dropped = 0
    for citation in answer.citations:
        if citation.start < cut:
            dropped += 1
            continue
        marker = citation.marker_span
        kept.append(
            citation.model_copy(
                update={
                    "start": citation.start - cut,
                    "end": citation.end - cut,
                    "marker_span": None if marker is None else (marker[0] - cut, marker[1] - cut),
                }
            )
        )
    diagnostics = list(answer.diagnostics)
    if dropped:
        diagnostics.append(f"{dropped} citation(s) of text a reset discarded were dropped")
    return answer.replace(text=answer.text[cut:], citations=kept, diagnostics=diagnostics)


class OpenAIProtocol(Protocol):
    """OpenAI-compatible ``chat.completion.chunk`` frames (see the module docstring)."""

    name = "openai"

    def encoder(self, message_id: str | None) -> Encoder:
        """A new encoder for one message."""
        return _Encoder(message_id)

    def decode(self, frames: Iterable[Frame]) -> CitedAnswer:
        """The answer `unicite.collect_stream` reads from the chunks, after the last reset.

        Raises:
            WireError: A frame is not JSON, or not a JSON object.
        """
        reader = ChunkReader()
        for frame in frames:
            reader.take(frame)
            if reader.broken is not None:
                break
        answer = after(collect_stream(reader.chunks, "openai"), reader.cut)
        note = reader.broke_off()
        if note is not None:
            answer = answer.replace(diagnostics=[*answer.diagnostics, note])
        return reader.ended(answer)
