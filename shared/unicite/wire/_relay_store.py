"""Where relays keep their messages, so that a message one worker produces any worker can follow.

A `RelayStore` holds, for each message id, the frames a `unicite.wire.Relay` recorded, its end
state and the history document of its answer, and carries cancel requests back to the
producer. `MemoryRelayStore` keeps them in the process (the default: one per process);
`unicite.wire.redis.RedisRelayStore` keeps them in Redis, shared by every worker.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from unicite.exceptions import UsageError
from unicite.wire._frames import Frame

__all__ = [
    "MemoryRelayStore",
    "RelaySnapshot",
    "RelayState",
    "RelayStore",
    "RelayWriter",
    "check_number",
    "default_store",
]

RelayState = Literal["running", "completed", "cancelled", "failed"]
"""Where a relayed message is: generating, completed, stopped by a cancel, or broken off."""

_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


@dataclass(frozen=True)
class RelaySnapshot:
    """What a store knows of one message, besides its frames."""

    protocol: str
    """The wire protocol of its frames."""
    status: RelayState
    document: dict[str, Any] | None = None
    """`unicite.wire.history` of its answer, once the answer is known (completed or stopped)."""
    error: str | None = None
    """Why it broke off, as its error frame says it (failed messages)."""
    alive: bool = True
    """Whether its producer gave a sign of life lately (a running message whose producer is
    gone, a worker killed, is not alive)."""


@runtime_checkable
class RelayWriter(Protocol):
    """The producer's end of one message in a `RelayStore` (what `RelayStore.open` returns).

    Only the relay producing the message writes to it, one call at a time: the sync methods from
    a thread, the async ones from an event loop (one or the other for a given message).
    """

    def watch(self, on_cancel: Callable[[], object]) -> None:
        """Begin producing: keep the message alive, and tell it when a cancel is asked.

        ``on_cancel`` is called (from any thread, at most once) when a reader asks to cancel
        the message. Watching ends with `finish`.
        """

    def append(self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None) -> None:
        """Add frames, each with its id.

        ``document`` (the answer's history document) is kept first, so a reader that sees the
        frames finds it.
        """

    async def aappend(
        self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None
    ) -> None:
        """`append` for a producer on an event loop."""

    def finish(self, status: RelayState, *, error: str | None = None) -> None:
        """Record the end (after the last frame): no frame follows."""

    async def afinish(self, status: RelayState, *, error: str | None = None) -> None:
        """`finish` for a producer on an event loop."""


@runtime_checkable
class RelayStore(Protocol):
    """Where relays keep their messages: frames, end state, history document, cancel requests.

    A `unicite.wire.Relay` given a store (and a ``message_id``) writes there through the writer
    `open` gives; `unicite.wire.Relay.follow` reads there from any process that reaches the
    same store. Positions count a message's frames from 0, in the order they were appended.
    Implement it to keep relays elsewhere; `MemoryRelayStore` and
    `unicite.wire.redis.RedisRelayStore` are the two shipped.
    """

    def open(self, message_id: str, protocol: str) -> RelayWriter:
        """Record a new running message (replacing one with the same id) and return its writer."""

    def snapshot(self, message_id: str) -> RelaySnapshot | None:
        """The message's state, or None when the store holds no message with that id."""

    def position(self, message_id: str, last_event_id: str) -> int:
        """The position after the frame whose id is ``last_event_id``; 0 when no frame has it."""

    def read(
        self, message_id: str, start: int, *, timeout: float | None = None
    ) -> Iterator[list[Frame]]:
        """The frames from position ``start`` on, in batches as they come (blocking between).

        Ends once the message ended and every frame was given, when its producer is gone (not
        alive), or when no frame came for ``timeout`` seconds (None: no limit).
        """

    def aread(self, message_id: str, start: int) -> AsyncIterator[list[Frame]]:
        """`read` for an event loop: waiting never blocks the loop."""

    def cancel(self, message_id: str) -> bool:
        """Ask the message's producer to cancel it; False when it is not running."""


class _Log:
    """One message in memory: its frames and end, written by one producer, read from anywhere.

    Readers in threads wait on a condition; readers on event loops wait on an `asyncio.Event`
    of their own loop, set thread-safely.
    """

    def __init__(self, protocol: str, on_finish: Callable[[_Log], object] | None = None) -> None:
        self.protocol = protocol
        self._on_finish = on_finish
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._frames: list[Frame] = []
        self._waiters: set[_Waiter] = set()
        self._status: RelayState = "running"
        self._document: dict[str, Any] | None = None
        self._error: str | None = None
        self._on_cancel: Callable[[], object] | None = None
        self._cancel_asked = False
        self.finished_at: float | None = None
        """When it finished (`time.monotonic`), for eviction."""

    # --- the writer -------------------------------------------------------------------------

    def watch(self, on_cancel: Callable[[], object]) -> None:
        with self._lock:
            self._on_cancel = on_cancel
            asked = self._cancel_asked
        if asked:
            on_cancel()

    def append(self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None) -> None:
        with self._lock:
            if document is not None:
                self._document = document
            self._frames.extend(frames)
            self._notify()

    async def aappend(
        self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None
    ) -> None:
        self.append(frames, document=document)

    def finish(self, status: RelayState, *, error: str | None = None) -> None:
        with self._lock:
            if self._status != "running":
                return
            self._status = status
            self._error = error
            self._on_cancel = None
            self.finished_at = time.monotonic()
            self._notify()
        if self._on_finish is not None:
            self._on_finish(self)

    async def afinish(self, status: RelayState, *, error: str | None = None) -> None:
        self.finish(status, error=error)

    def _notify(self) -> None:
        """Wake every reader (the lock is held).

        A reader on the loop running here is woken directly; one on another loop through that
        loop (which costs a wake-up of its thread).
        """
        self._changed.notify_all()
        if not self._waiters:
            return
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        for waiter in list(self._waiters):
            loop, event = waiter
            if event.is_set():
                continue
            if loop is here:
                event.set()
                continue
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the reader's event loop is closed
                self._waiters.discard(waiter)

    # --- the readers ------------------------------------------------------------------------

    @property
    def frames(self) -> list[Frame]:
        with self._lock:
            return list(self._frames)

    @property
    def done(self) -> bool:
        with self._lock:
            return self._status != "running"

    def snapshot(self) -> RelaySnapshot:
        with self._lock:
            return RelaySnapshot(self.protocol, self._status, self._document, self._error)

    def cancel(self) -> bool:
        with self._lock:
            if self._status != "running" or self._cancel_asked:
                return False
            self._cancel_asked = True
            on_cancel = self._on_cancel
        return on_cancel is None or on_cancel() is not False

    def wait(self, timeout: float | None) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._status != "running", timeout)

    def position(self, last_event_id: str | None) -> int:
        if not last_event_id:
            return 0
        with self._lock:
            for index, frame in enumerate(self._frames):
                if frame.id == last_event_id:
                    return index + 1
        return 0

    def batches(self, start: int, timeout: float | None) -> Iterator[list[Frame]]:
        index = start
        while True:
            with self._changed:
                ready = self._changed.wait_for(self._ready_after(index), timeout)
                batch = self._frames[index:]
                done = self._status != "running"
            if batch:
                yield batch
            index += len(batch)
            if done or not ready:
                return

    def _ready_after(self, index: int) -> Callable[[], bool]:
        return lambda: self._status != "running" or len(self._frames) > index

    async def abatches(self, start: int) -> AsyncIterator[list[Frame]]:
        index = start
        waiter: _Waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(waiter)
        try:
            while True:
                with self._lock:
                    waiter[1].clear()
                    batch = self._frames[index:]
                    done = self._status != "running"
                if batch:
                    yield batch
                index += len(batch)
                if done:
                    return
                if not batch:
                    await waiter[1].wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)


def check_number(
    name: str, value: object, *, positive: bool = False, integer: bool = False
) -> None:
    """Refuse a setting that is not a number >= 0 (> 0 when ``positive``; an int if asked).

    Raises:
        UsageError: It is not.
    """
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    fits = isinstance(value, kinds) and not isinstance(value, bool)
    if not fits or value < 0 or (positive and value == 0):  # type: ignore[operator]
        kind = "an int" if integer else "a number"
        raise UsageError(f"{name} must be {kind} {'>' if positive else '>='} 0, got {value!r}")


class MemoryRelayStore:
    """Relays kept in this process: what `unicite.wire.Relay` uses unless given another store.

    Finished messages stay readable for ``ttl`` seconds after they finished, and at most
    ``max_relays`` messages are kept: above that, the oldest finished ones go first (a running
    message is never evicted). Eviction happens as messages start and finish, so memory stays
    flat however many answers pass through. A relay keeps its own frames readable through the
    relay object after its message left the store.

    Args:
        ttl: Seconds a finished message stays.
        max_relays: How many messages are kept at most (running ones above it stay).

    Raises:
        UsageError: ``ttl`` or ``max_relays`` is negative or not a number.
    """

    def __init__(self, *, ttl: float = 600.0, max_relays: int = 1000) -> None:
        check_number("ttl", ttl)
        check_number("max_relays", max_relays, integer=True)
        self.ttl = float(ttl)
        """Seconds a finished message stays."""
        self.max_relays = max_relays
        """How many messages are kept at most (running ones above it stay)."""
        self._lock = threading.Lock()
        self._logs: dict[str, _Log] = {}
        self._finished: OrderedDict[str, _Log] = OrderedDict()

    def __len__(self) -> int:
        """How many messages it holds (finished ones past their time evicted first)."""
        with self._lock:
            self._evict()
            return len(self._logs)

    def open(self, message_id: str, protocol: str) -> RelayWriter:
        """Record a new running message (replacing one with the same id) and return its writer."""
        log = _Log(protocol, on_finish=lambda log: self._ended(message_id, log))
        with self._lock:
            self._finished.pop(message_id, None)
            self._logs[message_id] = log
            self._evict()
        return log

    def _ended(self, message_id: str, log: _Log) -> None:
        with self._lock:
            if self._logs.get(message_id) is log:
                self._finished[message_id] = log
            self._evict()

    def _evict(self) -> None:
        """Drop finished messages past their time, then the oldest above the count (locked)."""
        now = time.monotonic()
        while self._finished:
            message_id, log = next(iter(self._finished.items()))
            expired = log.finished_at is not None and now - log.finished_at >= self.ttl
            if not expired and len(self._logs) <= self.max_relays:
                return
            del self._finished[message_id]
            del self._logs[message_id]

    def _log(self, message_id: str) -> _Log | None:
        with self._lock:
            return self._logs.get(message_id)

    def snapshot(self, message_id: str) -> RelaySnapshot | None:
        """The message's state, or None when no message has that id."""
        log = self._log(message_id)
        return None if log is None else log.snapshot()

    def position(self, message_id: str, last_event_id: str) -> int:
        """The position after the frame whose id is ``last_event_id``; 0 when no frame has it."""
        log = self._log(message_id)
        return 0 if log is None else log.position(last_event_id)

    def read(
        self, message_id: str, start: int, *, timeout: float | None = None
    ) -> Iterator[list[Frame]]:
        """The frames from position ``start`` on, in batches as they come (see `RelayStore`)."""
        log = self._log(message_id)
        if log is not None:
            yield from log.batches(start, timeout)

    async def aread(self, message_id: str, start: int) -> AsyncIterator[list[Frame]]:
        """`read` for an event loop."""
        log = self._log(message_id)
        if log is not None:
            async for batch in log.abatches(start):
                yield batch

    def cancel(self, message_id: str) -> bool:
        """Cancel the running message (its relay stops it); False when it is not running."""
        log = self._log(message_id)
        return log is not None and log.cancel()


_default: MemoryRelayStore | None = None
_default_lock = threading.Lock()


def default_store() -> MemoryRelayStore:
    """The process's `MemoryRelayStore`, for relays and followers given no store."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MemoryRelayStore()
        return _default
