"""A message that keeps generating when its reader goes away, and that any reader can pick up.

A browser that reloads the page in the middle of an answer drops its SSE connection; if the
answer was generated inside that response, it is lost. `Relay` runs the cited stream in the
background instead — an async stream as a task on the event loop of whoever starts it (the
server's), a sync one in a thread — records every frame it encodes, and lets any number of
readers follow it: from the first frame (a reloaded page), or from the frame after a
``Last-Event-ID`` (a browser reconnecting on its own). The final answer is kept for the
history, set before the completed frame is recorded, so a reload never misses it.

With a `RelayStore` the frames are kept where other workers read them too:
`Relay.follow` gives a `RelayFollower`, with the same reader API, for a message produced in
another worker or process; its ``cancel`` reaches the producer.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any, cast

from unicite._cite import SourcesInput, cite
from unicite.exceptions import UsageError
from unicite.model import CitedAnswer
from unicite.wire._encode import check_id
from unicite.wire._frames import Frame
from unicite.wire._history import from_document
from unicite.wire._input import Delta, Final, Item, Reset, aitems, items
from unicite.wire._protocol import Encoder, mark_stopped
from unicite.wire._registry import WireProtocol, protocol_named
from unicite.wire._relay_store import (
    RelayState,
    RelayStore,
    RelayWriter,
    _Log,
    default_store,
)
from unicite.wire._unicite import completed_data

__all__ = ["BROKE_OFF", "Relay", "RelayFollower"]

BROKE_OFF = "the answer broke off (the worker producing it stopped)"
"""The error a follower ends with when the producing worker is gone (killed mid-answer)."""

_TASKS: set[asyncio.Task[None]] = set()
"""The relays' running tasks: an event loop keeps only weak references to its tasks."""


class _Reader(ABC):
    """The reader API a relay and a follower share."""

    protocol: WireProtocol
    message_id: str | None

    @abstractmethod
    def position(self, last_event_id: str | None = None) -> int:
        """The index of the first frame to send a reader that last saw ``last_event_id``."""

    @abstractmethod
    def _batches(self, start: int, timeout: float | None) -> Iterator[list[Frame]]: ...

    @abstractmethod
    def _abatches(self, start: int) -> AsyncIterator[list[Frame]]: ...

    async def _aposition(self, last_event_id: str | None) -> int:
        return self.position(last_event_id)

    def subscribe(
        self, last_event_id: str | None = None, *, timeout: float | None = None
    ) -> Iterator[Frame]:
        """The frames from the start (or after ``last_event_id``), then each as it comes.

        Blocks between frames; ends when the message ended, or when no frame came for
        ``timeout`` seconds.
        """
        for batch in self._batches(self.position(last_event_id), timeout):
            yield from batch

    async def asubscribe(self, last_event_id: str | None = None) -> AsyncIterator[Frame]:
        """`subscribe` for an event loop: waiting never blocks the loop."""
        start = await self._aposition(last_event_id)
        async for batch in self._abatches(start):
            for frame in batch:
                yield frame


class Relay(_Reader):
    """A cited stream run in the background, its frames recorded for every reader.

    ::

        relay = Relay(unicite.astream_cited(llm, question, sources), message_id="m-1")
        return relay_response(relay, request)  # or: async for frame in relay.asubscribe()
        relay.cancel()  # a stop button: the answer keeps what it generated, cited
        relay.answer  # the CitedAnswer, once it is known

    The stream starts at once (``start=False`` to start it later with `start`). An async
    stream runs as a task on the running event loop of whoever starts the relay — start it
    in an ``async`` route and it runs on the server's loop, beside the queues, workflow
    handlers and pooled clients it reads — and a sync stream is read in a thread, so the
    loop never waits on the model. An async stream started where no loop runs gets a thread
    with a loop of its own. The frames are those of `unicite.wire.frames` in the chosen
    protocol; a frame the protocol left without an id gets its position (1, 2, ...) as id,
    so every frame can be resumed after. When the stream raises, its last frame tells readers
    the message broke off and `error` holds the exception; the relay never raises it again.

    With a ``message_id`` the message is also kept in a `RelayStore` — this process's
    `MemoryRelayStore` unless ``store`` names another, such as
    `unicite.wire.redis.RedisRelayStore` — where `Relay.follow` finds it from any worker.

    Args:
        stream: Deltas ending with the answer (sync or async), or an answer alone, as for
            `unicite.wire.encode`.
        protocol: The wire protocol of the frames.
        message_id: The message's id, carried by its frames.
        on_answer: Called with the final answer — or the stopped one, see `cancel` — before
            its frames are recorded: store it for the history there. It runs where the stream
            runs (on the event loop for an async stream: keep it quick, or return an awaitable,
            which is awaited there).
        sources: For `cancel` to cite the text shown so far (`unicite.cite`) when the stream
            cannot say what it generated itself (no ``partial_answer()``): the sources the
            streamed text's ``[n]`` name, in that order — a model's own text. Not for text
            whose markers were already renumbered (an adapter's stream): there ``[1]`` is the
            first source cited, not the first given, so leave ``sources`` out and the stopped
            text stays uncited rather than cite the wrong source.
        store: Where the message is kept for other workers (it then needs a ``message_id``).
        start: Start the stream now.

    Raises:
        UsageError: Unknown protocol, ``message_id`` is not a ``str``, ``store`` is not a
            `RelayStore`, or a store is given without a ``message_id``.
    """

    def __init__(
        self,
        stream: Iterable[object] | AsyncIterable[object] | CitedAnswer,
        protocol: WireProtocol = "unicite",
        *,
        message_id: str | None = None,
        on_answer: Callable[[CitedAnswer], object] | None = None,
        sources: SourcesInput | None = None,
        store: RelayStore | None = None,
        start: bool = True,
    ) -> None:
        protocol_named(protocol)  # an unknown one is refused here, not in the producer
        check_id(message_id)
        if store is not None and not isinstance(store, RelayStore):
            raise UsageError(f"store must be a RelayStore, got {type(store).__name__}")
        if store is not None and message_id is None:
            raise UsageError("a relay kept in a store needs a message_id, to be found by it")
        self.protocol: WireProtocol = protocol
        """The wire protocol the frames are written in."""
        self.message_id = message_id
        """The message's id, carried by its frames."""
        if store is None and message_id is not None:
            store = default_store()
        self.store = store
        """Where the message is kept for `follow` (None without a ``message_id``)."""
        self._stream = stream
        self._on_answer = on_answer
        self._sources = sources
        self._writer: RelayWriter | None = None
        if store is not None and message_id is not None:
            self._writer = store.open(message_id, protocol)
        # The in-memory store's writer is readable: it is the relay's own log then.
        self._log = self._writer if isinstance(self._writer, _Log) else _Log(protocol)
        self._lock = threading.Lock()
        self._answer: CitedAnswer | None = None
        self._error: BaseException | None = None
        self._status: RelayState = "running"
        self._started = False
        self._running = False
        self._cancel_asked = False
        self._final = False
        self._shown: list[str] = []
        self._count = 0
        self._pending: object = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    # --- following a message produced elsewhere ---------------------------------------------

    @classmethod
    def follow(cls, message_id: str, *, store: RelayStore | None = None) -> RelayFollower | None:
        """A read-only handle on a message a relay produces, in this process or another.

        It replays the frames recorded so far, then follows the new ones as they come, from
        any worker that reaches the same store (a `unicite.wire.redis.RedisRelayStore` shared
        by every worker, or this process's `MemoryRelayStore` by default).

        Returns:
            The follower, or None when the store holds no message with that id (never
            started, or expired).

        Raises:
            UsageError: ``message_id`` is not a ``str``, or ``store`` not a `RelayStore`.
        """
        if not isinstance(message_id, str):
            raise UsageError(f"message_id must be a str, got {type(message_id).__name__}")
        if store is not None and not isinstance(store, RelayStore):
            raise UsageError(f"store must be a RelayStore, got {type(store).__name__}")
        chosen = store if store is not None else default_store()
        snapshot = chosen.snapshot(message_id)
        if snapshot is None:
            return None
        return RelayFollower(message_id, chosen, snapshot.protocol)

    # --- the producer -----------------------------------------------------------------------

    def start(self) -> Relay:
        """Start the stream (once; later calls do nothing).

        An async stream becomes a task of the running event loop (or, where none runs, of a
        loop in a thread of its own); a sync stream is read in a daemon thread.
        """
        with self._lock:
            if self._started:
                return self
            self._started = True
        if self._writer is not None:
            self._writer.watch(self.cancel)
        stream = self._stream
        target: Callable[[], object]
        if isinstance(stream, AsyncIterable):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                task = loop.create_task(self._aproduce(stream), name=self._name)
                with self._lock:
                    self._task, self._loop = task, loop
                _TASKS.add(task)
                task.add_done_callback(self._task_done)
                return self
            target = _in_own_loop(self._aproduce(stream))
        else:
            target = _bind(self._produce, stream)
        thread = threading.Thread(target=target, name=self._name, daemon=True)
        self._thread = thread
        thread.start()
        return self

    @property
    def _name(self) -> str:
        return f"unicite-relay-{self.message_id}" if self.message_id else "unicite-relay"

    def cancel(self) -> bool:
        """Stop the message: the model call is cancelled and the answer keeps what it made.

        An async stream's task is cancelled (the model call awaiting inside it sees
        `asyncio.CancelledError`); a sync stream is closed (``close()``) at its next item. The
        stopped answer is the text generated so far, cited as far as it went: the stream's own
        ``partial_answer()`` when it has one (`unicite.stream_cited`'s streams do), else
        `unicite.cite` of the text shown so far against the relay's ``sources``, else that text
        uncited; it is marked stopped (``extras["stopped"]`` and a diagnostic), given to
        ``on_answer``, and sent as the protocol's last frames (``thread.message.cancelled``,
        the AI SDK's ``abort`` chunk, a last chunk saying ``stopped``). Safe from any thread.

        Returns:
            Whether anything was cancelled: False once the message ended or its answer came.
        """
        with self._lock:
            if self._cancel_asked or self._final or self._status != "running":
                return False
            self._cancel_asked = True
            task = self._task if self._running else None
            loop = self._loop
        if task is not None and loop is not None:
            if _running_loop() is loop:
                self._cancel_task(task)
            else:
                with contextlib.suppress(RuntimeError):  # its loop closed: the task went with it
                    loop.call_soon_threadsafe(self._cancel_task, task)
        return True

    def _cancel_task(self, task: asyncio.Task[None]) -> None:
        """Cancel the task, on its loop, unless its answer came meanwhile (it completes)."""
        with self._lock:
            final = self._final
        if not final and not task.done():
            task.cancel()

    def _produce(self, stream: Iterable[object] | CitedAnswer) -> None:
        """Read a sync stream (in the relay's thread) and record its frames."""
        with self._lock:
            self._running = True
        encoder = protocol_named(self.protocol).encoder(self.message_id)
        source = items(stream)
        status: RelayState = "completed"
        failure: BaseException | None = None
        try:
            while not self._cancel_asked:
                try:
                    item = next(source)
                except StopIteration:
                    break
                if self._cancel_asked:
                    break
                self._record(*self._take(encoder, item))
            if self._cancel_asked and not self._final:
                status = "cancelled"
                _close(source)
                _close(stream)
                self._record(*self._stopping(encoder))
        except Exception as error:  # the error frame is recorded; readers end there
            status, failure = "failed", error
            self._record_failure(encoder, error)
        finally:
            self._finish(status, failure)

    async def _aproduce(self, stream: AsyncIterable[object]) -> None:
        """Run an async stream (as a task) and record its frames."""
        with self._lock:
            self._task = asyncio.current_task()
            self._loop = asyncio.get_running_loop()
            self._running = True
            early = self._cancel_asked
        encoder = protocol_named(self.protocol).encoder(self.message_id)
        source = aitems(stream)
        status: RelayState = "completed"
        failure: BaseException | None = None
        try:
            try:
                if not early:
                    async for item in source:
                        frames, document = await self._atake(encoder, item)
                        await self._arecord(frames, document)
                else:
                    status = "cancelled"
                    await _aclose(source, stream)
                    await self._arecord(*await self._astopping(encoder))
            except asyncio.CancelledError:
                if self._final:  # cancelled from outside (a shutdown) while completing
                    raise
                status = "cancelled"
                await _aclose(source, stream)
                await self._arecord(*await self._astopping(encoder))
                if not self._cancel_asked:
                    raise  # not ours: the canceller expects the task to end cancelled
                task = asyncio.current_task()
                uncancel = getattr(task, "uncancel", None)  # Python 3.11+
                if uncancel is not None:
                    uncancel()
            except Exception as error:  # the error frame is recorded; readers end there
                status, failure = "failed", error
                await self._arecord_failure(encoder, error)
        finally:
            await self._afinish(status, failure)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        _TASKS.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the relay recorded it already
        if not self._log.done:  # cancelled before it ever ran
            with self._lock:
                self._status = "cancelled"
            self._log.finish("cancelled")

    # --- what the stream gives, and what is recorded ----------------------------------------

    def _take(self, encoder: Encoder, item: Item) -> tuple[list[Frame], dict[str, Any] | None]:
        """The frames of one item (and the history document of a final answer, kept first)."""
        if isinstance(item, Delta):
            self._shown.append(item.text)
        elif isinstance(item, Reset):
            self._shown.clear()
        elif isinstance(item, Final):
            with self._lock:
                self._final = True
            self._keep(item.answer)
            frames = encoder.feed(item)
            return frames, encoder.document or completed_data(item.answer, self.message_id)
        return encoder.feed(item), None

    async def _atake(
        self, encoder: Encoder, item: Item
    ) -> tuple[list[Frame], dict[str, Any] | None]:
        frames, document = self._take(encoder, item)
        if self._pending is not None:
            await self._awaited()
        return frames, document

    def _keep(self, answer: CitedAnswer) -> None:
        with self._lock:
            self._answer = answer
        if self._on_answer is not None:
            self._pending = self._on_answer(answer)

    async def _awaited(self) -> None:
        """Await what ``on_answer`` returned, when it is awaitable (async producers only)."""
        pending, self._pending = self._pending, None
        if inspect.isawaitable(pending):
            await pending

    def _stopped_answer(self) -> CitedAnswer:
        """The answer as far as it went (see `cancel`), marked stopped."""
        text = "".join(self._shown)
        answer: CitedAnswer | None = None
        notes: list[str] = []
        partial = getattr(self._stream, "partial_answer", None)
        if callable(partial):
            try:
                given = partial()
            except Exception as error:
                notes.append(f"partial_answer() failed ({type(error).__name__})")
            else:
                if isinstance(given, CitedAnswer):
                    answer = given
                else:
                    notes.append(f"partial_answer() gave a {type(given).__name__}")
        if answer is None and self._sources is not None:
            try:
                answer = cite(text, self._sources)
            except Exception as error:
                notes.append(f"the text shown could not be cited ({type(error).__name__})")
        if answer is None:
            answer = CitedAnswer(text=text)
        if notes:
            answer = answer.replace(diagnostics=[*answer.diagnostics, *notes])
        return mark_stopped(answer)

    def _stopping(self, encoder: Encoder) -> tuple[list[Frame], dict[str, Any]]:
        """The stopped answer's frames and history document (``on_answer`` told first)."""
        answer = self._stopped_answer()
        self._keep(answer)
        frames = encoder.cancel(answer)
        return frames, encoder.document or completed_data(answer, self.message_id)

    async def _astopping(self, encoder: Encoder) -> tuple[list[Frame], dict[str, Any]]:
        frames, document = self._stopping(encoder)
        await self._awaited()
        return frames, document

    def _numbered(self, frames: list[Frame]) -> list[Frame]:
        """The frames, each without an id given its position (1, 2, ...) as id."""
        out = []
        for frame in frames:
            self._count += 1
            if frame.id is None:
                frame = Frame(frame.data, event=frame.event, id=str(self._count))
            out.append(frame)
        return out

    def _record(self, frames: list[Frame], document: dict[str, Any] | None = None) -> None:
        numbered = self._numbered(frames)
        self._log.append(numbered, document=document)
        if self._writer is not None and self._writer is not self._log:
            self._writer.append(numbered, document=document)

    async def _arecord(self, frames: list[Frame], document: dict[str, Any] | None = None) -> None:
        numbered = self._numbered(frames)
        self._log.append(numbered, document=document)
        if self._writer is not None and self._writer is not self._log:
            await self._writer.aappend(numbered, document=document)

    def _record_failure(self, encoder: Encoder, error: BaseException) -> None:
        numbered = self._numbered(encoder.fail(error))
        self._log.append(numbered)
        if self._writer is not None and self._writer is not self._log:
            try:
                self._writer.append(numbered)
            except Exception:  # the store failed: its readers end when they see no producer
                return

    async def _arecord_failure(self, encoder: Encoder, error: BaseException) -> None:
        numbered = self._numbered(encoder.fail(error))
        self._log.append(numbered)
        if self._writer is not None and self._writer is not self._log:
            try:
                await self._writer.aappend(numbered)
            except Exception:  # the store failed: its readers end when they see no producer
                return

    def _ended(self, status: RelayState, failure: BaseException | None) -> str | None:
        with self._lock:
            self._status = status
            if failure is not None and self._error is None:
                self._error = failure
        return None if failure is None else f"the answer broke off ({type(failure).__name__})"

    def _finish(self, status: RelayState, failure: BaseException | None) -> None:
        error = self._ended(status, failure)
        try:
            if self._writer is not None and self._writer is not self._log:
                self._writer.finish(status, error=error)
        finally:
            self._log.finish(status, error=error)

    async def _afinish(self, status: RelayState, failure: BaseException | None) -> None:
        error = self._ended(status, failure)
        try:
            if self._writer is not None and self._writer is not self._log:
                await self._writer.afinish(status, error=error)
        finally:
            self._log.finish(status, error=error)

    # --- the state --------------------------------------------------------------------------

    @property
    def frames(self) -> list[Frame]:
        """The frames recorded so far (a copy)."""
        return self._log.frames

    @property
    def answer(self) -> CitedAnswer | None:
        """The final answer (or the stopped one), once known (before its frames are recorded)."""
        with self._lock:
            return self._answer

    @property
    def error(self) -> BaseException | None:
        """What the stream raised, if it broke off."""
        with self._lock:
            return self._error

    @property
    def status(self) -> RelayState:
        """``"running"``, ``"completed"``, ``"cancelled"`` or ``"failed"``."""
        with self._lock:
            return self._status

    @property
    def done(self) -> bool:
        """Whether the message ended (completed, stopped or broke off): no frame will follow."""
        return self._log.done

    @property
    def cancelled(self) -> bool:
        """Whether the message was stopped by `cancel` (its answer is the stopped one)."""
        return self.status == "cancelled"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the message ended; False when ``timeout`` seconds passed first.

        Never call it on the loop the relay's task runs on: wait with `asubscribe` there.
        """
        return self._log.wait(timeout)

    def position(self, last_event_id: str | None = None) -> int:
        """The index of the first frame to send a reader that last saw ``last_event_id``.

        None or an empty id reads from the start; an id no frame carries (a stale id, another
        message's) reads from the start too, since the reader cannot have seen any of them.
        """
        return self._log.position(last_event_id)

    def _batches(self, start: int, timeout: float | None) -> Iterator[list[Frame]]:
        return self._log.batches(start, timeout)

    def _abatches(self, start: int) -> AsyncIterator[list[Frame]]:
        return self._log.abatches(start)


class RelayFollower(_Reader):
    """A read-only handle on a message a `Relay` produces elsewhere (`Relay.follow` gives it).

    It has a relay's reader API — `frames`, `answer`, `done`, `status`, `subscribe`,
    `asubscribe`, `position` — over the relay's store, and `cancel` asks the producing relay,
    wherever it runs, to stop. When the producer is gone while the message is still running
    (its worker was killed), the follower ends with the protocol's error frame, saying the
    answer broke off, instead of waiting for ever.
    """

    def __init__(self, message_id: str, store: RelayStore, protocol: str) -> None:
        self.message_id: str = message_id
        """The message's id."""
        self.store = store
        """The store the message is read from."""
        protocol_named(protocol)  # a store naming an unknown protocol is refused here
        self.protocol = cast(WireProtocol, protocol)
        """The wire protocol of the frames."""

    @property
    def frames(self) -> list[Frame]:
        """The frames recorded so far."""
        return list(self.subscribe(timeout=0))

    @property
    def status(self) -> RelayState:
        """The message's state; ``"failed"`` when its producer is gone while it was running."""
        snapshot = self.store.snapshot(self.message_id)
        if snapshot is None or (snapshot.status == "running" and not snapshot.alive):
            return "failed"
        return snapshot.status

    @property
    def done(self) -> bool:
        """Whether the message ended (or its producer is gone): no frame will follow."""
        return self.status != "running"

    @property
    def cancelled(self) -> bool:
        """Whether the message was stopped by a cancel."""
        return self.status == "cancelled"

    @property
    def error(self) -> str | None:
        """Why the message broke off, as its error frame says it (None unless it failed)."""
        snapshot = self.store.snapshot(self.message_id)
        if snapshot is None or (snapshot.status == "running" and not snapshot.alive):
            return BROKE_OFF
        return snapshot.error

    @property
    def answer(self) -> CitedAnswer | None:
        """The answer its history document describes (marked stopped when it was), once known."""
        snapshot = self.store.snapshot(self.message_id)
        if snapshot is None or snapshot.document is None:
            return None
        answer = from_document(snapshot.document)
        return mark_stopped(answer) if snapshot.status == "cancelled" else answer

    def cancel(self) -> bool:
        """Ask the producing relay to stop the message (see `Relay.cancel`).

        Returns:
            Whether the request reached a running message; its stopped answer follows as the
            message's last frames.
        """
        return self.store.cancel(self.message_id)

    def position(self, last_event_id: str | None = None) -> int:
        """The index of the first frame to send a reader that last saw ``last_event_id``."""
        if not last_event_id:
            return 0
        return self.store.position(self.message_id, last_event_id)

    async def _aposition(self, last_event_id: str | None) -> int:
        if not last_event_id:
            return 0
        return await asyncio.to_thread(self.position, last_event_id)

    def _broke_off(self, count: int) -> list[Frame]:
        """The error frames of a message whose producer is gone, numbered after ``count``."""
        encoder = protocol_named(self.protocol).encoder(self.message_id)
        encoder.started = True
        return [
            Frame(frame.data, event=frame.event, id=str(count + k))
            for k, frame in enumerate(encoder.error(BROKE_OFF), 1)
        ]

    def _gone(self) -> bool:
        snapshot = self.store.snapshot(self.message_id)
        return snapshot is None or (snapshot.status == "running" and not snapshot.alive)

    def _batches(self, start: int, timeout: float | None) -> Iterator[list[Frame]]:
        count = start
        for batch in self.store.read(self.message_id, start, timeout=timeout):
            count += len(batch)
            yield batch
        if self._gone():
            yield self._broke_off(count)

    async def _abatches(self, start: int) -> AsyncIterator[list[Frame]]:
        count = start
        async for batch in self.store.aread(self.message_id, start):
            count += len(batch)
            yield batch
        if await asyncio.to_thread(self._gone):
            yield self._broke_off(count)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _bind(
    produce: Callable[[Iterable[object] | CitedAnswer], None],
    stream: Iterable[object] | CitedAnswer,
) -> Callable[[], None]:
    return lambda: produce(stream)


def _in_own_loop(coroutine: Awaitable[None]) -> Callable[[], None]:
    """Run ``coroutine`` on a new event loop in the calling thread (for a relay's thread)."""

    async def main() -> None:
        await coroutine

    return lambda: asyncio.run(main())


def _close(stream: object) -> None:
    """Close a sync stream that can be closed (a generator: its ``finally`` blocks run).

    A stream that fails to close (a generator ignoring ``GeneratorExit``) is left to the
    garbage collector: the answer was stopped either way.
    """
    close = getattr(stream, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


async def _aclose(*streams: object) -> None:
    """Close async streams that can be closed, in order (see `_close`)."""
    for stream in streams:
        aclose = getattr(stream, "aclose", None)
        if callable(aclose):
            with contextlib.suppress(Exception):
                await aclose()
