"""Encoding a cited stream into the frames of a wire protocol."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import overload

from unicite.exceptions import UsageError
from unicite.model import CitedAnswer
from unicite.wire._frames import Frame
from unicite.wire._input import Final, Item, aitems, items
from unicite.wire._registry import WireProtocol, protocol_named

__all__ = ["CitedStream", "aframes", "check_id", "encode", "frames"]

CitedStream = Iterable[object] | AsyncIterable[object] | CitedAnswer
"""What `encode` sends: deltas ending with the answer (sync or async), or an answer alone."""


def check_id(message_id: object) -> str | None:
    if message_id is not None and not isinstance(message_id, str):
        raise UsageError(f"message_id must be a str or None, got {type(message_id).__name__}")
    return message_id


def frames(
    stream: Iterable[object] | CitedAnswer,
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
    on_answer: Callable[[CitedAnswer], object] | None = None,
) -> Iterator[Frame]:
    """`encode`'s events as `Frame` objects (for servers that write frames themselves).

    When the stream raises, a last frame tells the client the message broke off (naming the
    error's type only) and the error is raised again.

    Args:
        stream: As for `encode`.
        protocol: As for `encode`.
        message_id: As for `encode`.
        on_answer: Called with the final answer before its frames are yielded: store it
            there, and a client that reloads as soon as the stream completes finds it in the
            history.
    """
    encoder = protocol_named(protocol).encoder(check_id(message_id))
    source = _tapped(items(stream), on_answer)
    while True:
        try:
            item = next(source)
        except StopIteration:
            return
        except UsageError:
            raise
        except Exception as error:
            yield from encoder.fail(error)
            raise
        yield from encoder.feed(item)


async def aframes(
    stream: AsyncIterable[object] | Iterable[object] | CitedAnswer,
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
    on_answer: Callable[[CitedAnswer], object] | None = None,
) -> AsyncIterator[Frame]:
    """`frames` for an async stream (a sync one is accepted too)."""
    if not isinstance(stream, AsyncIterable):
        for frame in frames(stream, protocol, message_id=message_id, on_answer=on_answer):
            yield frame
        return
    encoder = protocol_named(protocol).encoder(check_id(message_id))
    source = _atapped(aitems(stream), on_answer)
    while True:
        try:
            item = await anext(source)
        except StopAsyncIteration:
            return
        except UsageError:
            raise
        except Exception as error:
            for frame in encoder.fail(error):
                yield frame
            raise
        for frame in encoder.feed(item):
            yield frame


def _tapped(
    source: Iterator[Item], on_answer: Callable[[CitedAnswer], object] | None
) -> Iterator[Item]:
    for item in source:
        if on_answer is not None and isinstance(item, Final):
            on_answer(item.answer)
        yield item


async def _atapped(
    source: AsyncIterator[Item], on_answer: Callable[[CitedAnswer], object] | None
) -> AsyncIterator[Item]:
    async for item in source:
        if on_answer is not None and isinstance(item, Final):
            on_answer(item.answer)
        yield item


@overload
def encode(
    stream: AsyncIterable[object],
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
) -> AsyncIterator[str]: ...
@overload
def encode(
    stream: Iterable[object] | CitedAnswer,
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
) -> Iterator[str]: ...
def encode(
    stream: CitedStream,
    protocol: WireProtocol = "unicite",
    *,
    message_id: str | None = None,
) -> Iterator[str] | AsyncIterator[str]:
    """Server-Sent Event frames (``str``, each ending with its blank line) for a cited stream.

    Args:
        stream: An iterable or async iterable of ``str`` text deltas (``Retry`` notices
            between rounds) ending with the final `CitedAnswer` or `CitedGeneration`, or a
            `CitedAnswer` alone. A stream that ends without an answer is completed with its
            text, uncited, and a diagnostic.
        protocol: ``"unicite"``, ``"vercel"``, ``"openwebui"`` or ``"openai"``.
        message_id: An id the frames carry, so a client can tell messages apart (and
            `history` can be asked for the same).

    Returns:
        An iterator of frames; an async iterator when ``stream`` is async.

    Raises:
        UsageError: Unknown protocol, or the stream holds something that is not a delta, a
            retry notice or an answer.
    """
    protocol_named(protocol)
    if isinstance(stream, AsyncIterable):
        return _aencode(stream, protocol, message_id)
    return (frame.encode() for frame in frames(stream, protocol, message_id=message_id))


async def _aencode(
    stream: AsyncIterable[object], protocol: WireProtocol, message_id: str | None
) -> AsyncIterator[str]:
    async for frame in aframes(stream, protocol, message_id=message_id):
        yield frame.encode()
