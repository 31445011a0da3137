"""What a cited stream holds, whoever produced it: text deltas, restarts, the final answer."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass

from unicite.exceptions import UsageError
from unicite.model import CitedAnswer

__all__ = ["Delta", "Final", "Item", "Reset", "aitems", "items"]


@dataclass(frozen=True)
class Delta:
    """Text to append to what is shown."""

    text: str


@dataclass(frozen=True)
class Reset:
    """The text shown so far is discarded: the answer starts again (a generation retry)."""

    round: int
    reason: str


@dataclass(frozen=True)
class Final:
    """The cited answer: the text as it stays, with its sources and citations."""

    answer: CitedAnswer


Item = Delta | Reset | Final

_NO_FINAL = "the stream ended without a cited answer: its text is sent uncited"


def classify(item: object) -> Item | None:
    """One stream item read as a delta, a restart or the final answer (None: nothing to send).

    Read: ``str`` deltas; a `CitedAnswer`; anything holding one in ``answer`` (a
    `unicite.CitedGeneration`, an adapter's result); a `unicite.generation.Retry` (anything
    with ``round`` and ``reason``); LangChain's ``{"answer": str}`` and
    ``{"citations": CitedAnswer}`` chunks.

    Raises:
        UsageError: The item is none of these.
    """
    if isinstance(item, str):
        return Delta(item) if item else None
    if isinstance(item, CitedAnswer):
        return Final(item)
    if isinstance(item, Mapping):
        cited = item.get("citations")
        if isinstance(cited, CitedAnswer):
            return Final(cited)
        text = item.get("answer")
        if isinstance(text, str):
            return Delta(text) if text else None
    else:
        held = getattr(item, "answer", None)
        if isinstance(held, CitedAnswer):
            return Final(held)
        round_, reason = getattr(item, "round", None), getattr(item, "reason", None)
        if isinstance(round_, int) and isinstance(reason, str):
            return Reset(round_, reason)
    raise UsageError(
        "a cited stream holds str deltas, Retry notices and a final CitedAnswer (or "
        f"CitedGeneration); got {type(item).__name__}"
    )


class _Order:
    """Checks the stream's shape: nothing after the final answer; a final answer at the end."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.done = False

    def take(self, item: object) -> Item | None:
        read = classify(item)
        if read is None:
            return None
        if self.done:
            raise UsageError(
                f"a cited stream ends with its answer; got {type(item).__name__} after it"
            )
        if isinstance(read, Delta):
            self.text.append(read.text)
        elif isinstance(read, Reset):
            self.text.clear()
        else:
            self.done = True
        return read

    def end(self) -> Final | None:
        if self.done:
            return None
        return Final(CitedAnswer(text="".join(self.text), diagnostics=[_NO_FINAL]))


def items(stream: Iterable[object] | CitedAnswer) -> Iterator[Item]:
    """The stream's items, always ending with exactly one `Final`."""
    if isinstance(stream, CitedAnswer):
        yield Final(stream)
        return
    if isinstance(stream, (str, bytes, Mapping)) or not isinstance(stream, Iterable):
        raise UsageError(
            "stream must be an iterable of deltas ending with a CitedAnswer, or a CitedAnswer; "
            f"got {type(stream).__name__}"
        )
    order = _Order()
    for item in stream:
        read = order.take(item)
        if read is not None:
            yield read
    last = order.end()
    if last is not None:
        yield last


async def aitems(stream: AsyncIterable[object]) -> AsyncIterator[Item]:
    """`items` for an async iterable."""
    order = _Order()
    async for item in stream:
        read = order.take(item)
        if read is not None:
            yield read
    last = order.end()
    if last is not None:
        yield last
