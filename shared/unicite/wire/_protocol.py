"""What every wire protocol provides: an encoder fed a cited stream, and a decoder."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from unicite.model import CitedAnswer
from unicite.wire._frames import Frame
from unicite.wire._input import Delta, Item, Reset

__all__ = ["STOPPED", "Encoder", "Protocol", "mark_stopped"]

STOPPED = "the answer was stopped before it finished"
"""The diagnostic of an answer stopped while it was generated (`unicite.wire.Relay.cancel`)."""


def mark_stopped(answer: CitedAnswer) -> CitedAnswer:
    """The answer marked stopped: ``extras["stopped"]`` and the `STOPPED` diagnostic (once)."""
    diagnostics = list(answer.diagnostics)
    if STOPPED not in diagnostics:
        diagnostics.append(STOPPED)
    return answer.replace(extras={**answer.extras, "stopped": True}, diagnostics=diagnostics)


class Encoder(ABC):
    """Turns the items of one cited stream into frames, in order.

    `feed` is called with every item, the last always a `Final`; `fail` instead of the rest
    when the stream raised, `cancel` when it was stopped.
    """

    def __init__(self, message_id: str | None) -> None:
        self.message_id = message_id
        self.started = False
        self.document: dict[str, Any] | None = None
        """The history document (`unicite.wire.history`, as the completed event carries it)
        an encoder computed for the final or stopped answer, for a relay to keep as is."""

    def feed(self, item: Item) -> list[Frame]:
        """The frames for one item (the protocol's opening frames before the first)."""
        frames = [] if self.started else self.start()
        self.started = True
        if isinstance(item, Delta):
            frames.extend(self.delta(item.text))
        elif isinstance(item, Reset):
            frames.extend(self.reset(item.round, item.reason))
        else:
            frames.extend(self.final(item.answer))
        return frames

    def fail(self, error: BaseException) -> list[Frame]:
        """The frames telling the client the stream broke off (the error is then re-raised).

        Only the error's type is sent: its message may hold server details a browser must not
        see (the server logs the error itself).
        """
        frames = [] if self.started else self.start()
        self.started = True
        frames.extend(self.error(f"the answer broke off ({type(error).__name__})"))
        return frames

    def cancel(self, answer: CitedAnswer) -> list[Frame]:
        """The frames telling the client the message was stopped, with what it kept.

        ``answer`` is the stopped answer (`mark_stopped`): the text generated so far, cited as
        far as it went. No frame follows these.
        """
        frames = [] if self.started else self.start()
        self.started = True
        frames.extend(self.cancelled(answer))
        return frames

    def start(self) -> list[Frame]:
        """Frames opening the message."""
        return []

    @abstractmethod
    def delta(self, text: str) -> list[Frame]:
        """Frames appending ``text`` to the message."""

    @abstractmethod
    def reset(self, round: int, reason: str) -> list[Frame]:
        """Frames telling the client to discard the text shown so far."""

    @abstractmethod
    def final(self, answer: CitedAnswer) -> list[Frame]:
        """Frames completing the message with its cited answer."""

    @abstractmethod
    def cancelled(self, answer: CitedAnswer) -> list[Frame]:
        """Frames ending the message as stopped, carrying the stopped ``answer``."""

    @abstractmethod
    def error(self, message: str) -> list[Frame]:
        """Frames telling the client the message broke off with ``message``."""


class Protocol(ABC):
    """A wire protocol: its name, an encoder per message, a decoder of its frames."""

    name: str
    media_type: str = "text/event-stream"
    headers: dict[str, str] = {}  # noqa: RUF012 - read-only class data

    @abstractmethod
    def encoder(self, message_id: str | None) -> Encoder:
        """A new encoder for one message."""

    @abstractmethod
    def decode(self, frames: Iterable[Frame]) -> CitedAnswer:
        """The cited answer the frames of one message carry."""
