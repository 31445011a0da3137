"""A message that keeps generating when its reader goes away, and that any reader can pick up.

A browser that reloads the page in the middle of an answer drops its SSE connection; if the
answer was generated inside that response, it is lost. `Relay` runs the cited stream in a
background thread instead, records every frame it encodes, and lets any number of readers
follow it: from the first frame (a reloaded page), or from the frame after a
``Last-Event-ID`` (a browser reconnecting on its own). The final answer is kept for the
history, set before the completed frame is recorded, so a reload never misses it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator

from unicite.model import CitedAnswer
from unicite.wire._encode import aframes, check_id, frames
from unicite.wire._frames import Frame
from unicite.wire._registry import WireProtocol, protocol_named

__all__ = ["Relay"]

_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


class Relay:
    """A cited stream run in the background, its frames recorded for every reader.

    ::

        relay = Relay(unicite.stream_cited(llm, question, sources), message_id="m-1")
        for frame in relay.subscribe():  # or: async for frame in relay.asubscribe(...)
            send(frame.encode())
        relay.answer  # the CitedAnswer, once it is known

    The stream starts at once (``start=False`` to start it later with `start`) in a daemon
    thread: a sync stream is read there, an async one runs on its own event loop there. The
    frames are those of `unicite.wire.frames` in the chosen protocol; a frame the protocol
    left without an id gets its position (1, 2, ...) as id, so every frame can be resumed
    after. When the stream raises, its last frame tells readers the message broke off and
    `error` holds the exception; the relay never raises it again.

    Args:
        stream: Deltas ending with the answer (sync or async), or an answer alone, as for
            `unicite.wire.encode`.
        protocol: The wire protocol of the frames.
        message_id: The message's id, carried by its frames.
        on_answer: Called (in the relay's thread) with the final answer before its frames
            are recorded: store it for the history there.
        start: Start the stream now.

    Raises:
        UsageError: Unknown protocol, or ``message_id`` is not a ``str``.
    """

    def __init__(
        self,
        stream: Iterable[object] | AsyncIterable[object] | CitedAnswer,
        protocol: WireProtocol = "unicite",
        *,
        message_id: str | None = None,
        on_answer: Callable[[CitedAnswer], object] | None = None,
        start: bool = True,
    ) -> None:
        protocol_named(protocol)  # an unknown one is refused here, not in the thread
        check_id(message_id)
        self.protocol: WireProtocol = protocol
        """The wire protocol the frames are written in."""
        self.message_id = message_id
        """The message's id, carried by its frames."""
        self._stream = stream
        self._on_answer = on_answer
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._frames: list[Frame] = []
        self._positions: dict[str, int] = {}
        self._waiters: set[_Waiter] = set()
        self._answer: CitedAnswer | None = None
        self._error: BaseException | None = None
        self._done = False
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    # --- the producer -----------------------------------------------------------------------

    def start(self) -> Relay:
        """Start reading the stream in a daemon thread (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return self
            name = f"unicite-relay-{self.message_id}" if self.message_id else "unicite-relay"
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            if isinstance(self._stream, AsyncIterable):
                asyncio.run(self._arun(self._stream))
            else:
                for frame in frames(
                    self._stream,
                    self.protocol,
                    message_id=self.message_id,
                    on_answer=self._keep,
                ):
                    self._record(frame)
        except BaseException as error:  # the error frame is recorded; readers end there
            with self._lock:
                self._error = error
        finally:
            with self._lock:
                self._done = True
                self._notify()

    async def _arun(self, stream: AsyncIterable[object]) -> None:
        async for frame in aframes(
            stream, self.protocol, message_id=self.message_id, on_answer=self._keep
        ):
            self._record(frame)

    def _keep(self, answer: CitedAnswer) -> None:
        with self._lock:
            self._answer = answer
        if self._on_answer is not None:
            self._on_answer(answer)

    def _record(self, frame: Frame) -> None:
        with self._lock:
            position = len(self._frames)
            if frame.id is None:
                frame = Frame(frame.data, event=frame.event, id=str(position + 1))
            self._frames.append(frame)
            self._positions.setdefault(frame.id or "", position)
            self._notify()

    def _notify(self) -> None:
        """Wake every reader (the lock is held)."""
        self._changed.notify_all()
        for waiter in list(self._waiters):
            loop, event = waiter
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the reader's event loop is closed
                self._waiters.discard(waiter)

    # --- the state --------------------------------------------------------------------------

    @property
    def frames(self) -> list[Frame]:
        """The frames recorded so far (a copy)."""
        with self._lock:
            return list(self._frames)

    @property
    def answer(self) -> CitedAnswer | None:
        """The final answer, once the stream gave it (before its frames are recorded)."""
        with self._lock:
            return self._answer

    @property
    def error(self) -> BaseException | None:
        """What the stream raised, if it broke off."""
        with self._lock:
            return self._error

    @property
    def done(self) -> bool:
        """Whether the stream ended (completed or broke off): no frame will follow."""
        with self._lock:
            return self._done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the stream ended; False when ``timeout`` seconds passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done, timeout)

    def position(self, last_event_id: str | None = None) -> int:
        """The index of the first frame to send a reader that last saw ``last_event_id``.

        None or an empty id reads from the start; an id no frame carries (a stale id, another
        message's) reads from the start too, since the reader cannot have seen any of them.
        """
        if not last_event_id:
            return 0
        with self._lock:
            seen = self._positions.get(last_event_id)
        return 0 if seen is None else seen + 1

    # --- the readers ------------------------------------------------------------------------

    def subscribe(
        self, last_event_id: str | None = None, *, timeout: float | None = None
    ) -> Iterator[Frame]:
        """The frames from the start (or after ``last_event_id``), then each as it comes.

        Blocks between frames; ends when the stream ended, or when no frame came for
        ``timeout`` seconds.
        """
        index = self.position(last_event_id)
        while True:
            with self._changed:
                ready = self._changed.wait_for(self._ready_after(index), timeout)
                batch = self._frames[index:]
                done = self._done
            yield from batch
            index += len(batch)
            if done or not ready:
                return

    def _ready_after(self, index: int) -> Callable[[], bool]:
        return lambda: self._done or len(self._frames) > index

    async def asubscribe(self, last_event_id: str | None = None) -> AsyncIterator[Frame]:
        """`subscribe` for an event loop: waiting never blocks the loop."""
        index = self.position(last_event_id)
        waiter: _Waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(waiter)
        try:
            while True:
                with self._lock:
                    waiter[1].clear()
                    batch = self._frames[index:]
                    done = self._done
                for frame in batch:
                    yield frame
                index += len(batch)
                if done:
                    return
                if not batch:
                    await waiter[1].wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)
