"""The ``unicite`` protocol: seed 002's events, text deltas first and the cited message last.

``thread.message.delta`` carries text only (``{"delta": ...}``); ``thread.message.reset`` says
the text shown so far is discarded (a generation retry); ``thread.message.completed`` carries
the history document (`unicite.wire.history`): the content with its ``[n]`` markers and
``metadata.citations``; ``thread.message.cancelled`` ends a message that was stopped, with the
history document of what it kept (the text generated so far, cited as far as it went);
``thread.message.error`` says the message broke off. Every event has an increasing ``id``;
every data object names its ``type`` and, when given, the ``message_id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from unicite.exceptions import WireError
from unicite.model import CitedAnswer
from unicite.wire._frames import Frame, dumps
from unicite.wire._history import from_document, shown, view_document
from unicite.wire._protocol import Encoder, Protocol, mark_stopped

__all__ = [
    "CANCELLED",
    "COMPLETED",
    "DELTA",
    "ERROR",
    "RESET",
    "UniciteProtocol",
    "completed_data",
]

DELTA = "thread.message.delta"
RESET = "thread.message.reset"
COMPLETED = "thread.message.completed"
CANCELLED = "thread.message.cancelled"
ERROR = "thread.message.error"


def completed_data(answer: CitedAnswer, message_id: str | None) -> dict[str, Any]:
    """The completed event's data: the history document, with its type first."""
    return completed_view_data(shown(answer), message_id)


def completed_view_data(view: CitedAnswer, message_id: str | None) -> dict[str, Any]:
    """`completed_data` of an answer already `shown` (for encoders that showed it themselves)."""
    return {"type": COMPLETED, **view_document(view, message_id=message_id)}


class _Encoder(Encoder):
    def __init__(self, message_id: str | None) -> None:
        super().__init__(message_id)
        self.sequence = 0

    def _frame(self, event: str, data: dict[str, Any]) -> list[Frame]:
        self.sequence += 1
        head: dict[str, Any] = {"type": event}
        if self.message_id is not None:
            head["message_id"] = self.message_id
        return [Frame(dumps({**head, **data}), event=event, id=str(self.sequence))]

    def delta(self, text: str) -> list[Frame]:
        return self._frame(DELTA, {"delta": text})

    def reset(self, round: int, reason: str) -> list[Frame]:
        return self._frame(RESET, {"round": round, "reason": reason})

    def final(self, answer: CitedAnswer) -> list[Frame]:
        self.sequence += 1
        data = self.document = completed_data(answer, self.message_id)
        return [Frame(dumps(data), event=COMPLETED, id=str(self.sequence))]

    def cancelled(self, answer: CitedAnswer) -> list[Frame]:
        self.sequence += 1
        self.document = completed_data(answer, self.message_id)
        data = {**self.document, "type": CANCELLED}
        return [Frame(dumps(data), event=CANCELLED, id=str(self.sequence))]

    def error(self, message: str) -> list[Frame]:
        return self._frame(ERROR, {"error": message})


class UniciteProtocol(Protocol):
    """Seed 002's ``thread.message.*`` events (see the module docstring)."""

    name = "unicite"

    def encoder(self, message_id: str | None) -> Encoder:
        """A new encoder for one message."""
        return _Encoder(message_id)

    def decode(self, frames: Iterable[Frame]) -> CitedAnswer:
        """The completed (or cancelled) event's answer; without one, the deltas' text, uncited.

        A cancelled message's answer is marked stopped (``extras["stopped"]``).
        """
        text: list[str] = []
        for frame in frames:
            kind = frame.event
            if kind not in (DELTA, RESET, COMPLETED, CANCELLED, ERROR):
                continue
            data = frame.json()
            if not isinstance(data, dict):
                raise WireError(f"{kind} data is not a JSON object")
            if kind == DELTA:
                delta = data.get("delta")
                if not isinstance(delta, str):
                    raise WireError(f"{DELTA} has no text 'delta'")
                text.append(delta)
            elif kind == RESET:
                text.clear()
            elif kind == COMPLETED:
                return from_document(data)
            elif kind == CANCELLED:
                return mark_stopped(from_document(data))
            else:
                note = f"the message broke off: {data.get('error')}"
                return CitedAnswer(text="".join(text), diagnostics=[note])
        note = f"the stream ended before {COMPLETED}: its text is uncited"
        return CitedAnswer(text="".join(text), diagnostics=[note])
