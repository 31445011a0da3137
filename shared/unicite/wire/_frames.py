"""Server-Sent Events: frames written as the WHATWG HTML standard reads them, and read back.

A frame is one event: an optional ``event`` name, an optional ``id``, and its ``data``. Every
protocol of `unicite.wire` writes JSON data on one line; the reader follows the standard's
event stream interpretation (``data`` lines joined with newlines, comments and unknown fields
ignored, CRLF, CR and LF line ends, a leading byte order mark skipped).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from unicite.exceptions import WireError

__all__ = ["Frame", "dumps", "parse_frames"]

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_LINE_RE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Frame:
    """One Server-Sent Event."""

    data: str
    """The event's data (JSON on one line for every unicite protocol)."""
    event: str | None = None
    """The event name; None for the default ``message`` event."""
    id: str | None = None
    """The event id, which a reconnecting browser sends back as ``Last-Event-ID``."""

    def encode(self) -> str:
        """The frame as it goes on the wire, ending with its blank line."""
        lines = []
        if self.id is not None:
            lines.append(f"id: {self.id}")
        if self.event is not None:
            lines.append(f"event: {self.event}")
        lines.extend(f"data: {line}" for line in _LINE_RE.split(self.data))
        return "\n".join(lines) + "\n\n"

    def json(self) -> Any:
        """The data read as JSON.

        Raises:
            WireError: The data is not JSON.
        """
        try:
            return json.loads(self.data)
        except ValueError as err:
            raise WireError(f"event {self.event or 'message'!r} data is not JSON: {err}") from None


def dumps(value: Any) -> str:
    """Compact JSON on one line, UTF-8 friendly.

    Non-ASCII text is written as itself (a third of the size of escapes for CJK text); text
    holding lone surrogates, which UTF-8 cannot carry, is written with ASCII escapes instead.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if _SURROGATE_RE.search(text):
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text


def parse_frames(stream: str | bytes | Iterable[str | bytes | Frame]) -> Iterator[Frame]:
    """Read Server-Sent Events from a whole body, or from chunks cut anywhere.

    Args:
        stream: The body (``str`` or UTF-8 ``bytes``), or an iterable of body chunks, of
            already-encoded frames, or of `Frame` objects.

    Yields:
        Each event with data, in order (an event without any ``data`` line is skipped, as a
        browser skips it).

    Raises:
        WireError: A chunk is neither text, bytes nor a `Frame`, or bytes are not UTF-8.
    """
    chunks: Iterable[str | bytes | Frame] = (
        [stream] if isinstance(stream, (str, bytes, bytearray)) else stream
    )
    reader = _Reader()
    for chunk in chunks:
        if isinstance(chunk, Frame):
            yield from reader.flush()
            yield chunk
            continue
        if isinstance(chunk, (bytes, bytearray)):
            text = reader.decode(bytes(chunk))
        elif isinstance(chunk, str):
            text = chunk
        else:
            raise WireError(f"SSE chunks must be str, bytes or Frame, got {type(chunk).__name__}")
        yield from reader.feed(text)
    yield from reader.feed(reader.decode(b"", final=True))
    yield from reader.flush()


class _Reader:
    """The standard's line-by-line event stream interpretation, fed text as it arrives."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buffer = ""
        self._started = False
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None

    def decode(self, chunk: bytes, *, final: bool = False) -> str:
        try:
            return self._decoder.decode(chunk, final)
        except UnicodeDecodeError as err:
            raise WireError(f"SSE bytes are not UTF-8: {err}") from None

    def feed(self, text: str) -> Iterator[Frame]:
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        data = self._buffer + text
        # A "\r" at the end may be the first half of "\r\n": hold it until more comes.
        held = data.endswith("\r")
        lines = _LINE_RE.split(data[:-1] if held else data)
        self._buffer = lines.pop() + ("\r" if held else "")
        for line in lines:
            frame = self._line(line)
            if frame is not None:
                yield frame

    def flush(self) -> Iterator[Frame]:
        rest, self._buffer = self._buffer, ""
        if rest:
            for line in _LINE_RE.split(rest.removesuffix("\r")):
                frame = self._line(line)
                if frame is not None:
                    yield frame
        frame = self._line("")
        if frame is not None:
            yield frame

    def _line(self, line: str) -> Frame | None:
        if not line:
            if not self._data:
                self._event = None
                return None
            frame = Frame(data="\n".join(self._data), event=self._event, id=self._id)
            self._data = []
            self._event = None
            return frame
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value or None
        elif name == "id" and "\0" not in value:
            self._id = value
        return None
