"""Relays every worker can follow and stop, kept in Redis: `RedisRelayStore`.

Needs ``pip install 'unicite[redis]'`` (redis-py). ::

    from unicite.wire import Relay
    from unicite.wire.redis import RedisRelayStore

    store = RedisRelayStore("redis://cache.internal:6379/0")  # one per worker process

    relay = Relay(unicite.astream_cited(llm, question, sources), message_id=mid, store=store)
    ...  # any worker, the same or another:
    follower = Relay.follow(mid, store=store)  # None when no such message
    relay_response(follower, request)  # replays, then follows; follower.cancel() stops it

Each message is three keys under ``prefix`` (``unicite:relay:`` by default) and its id: a hash
``{prefix}{id}`` with its protocol, state, error, history document and cancel request; a Redis
Stream ``{prefix}{id}:frames`` with one entry per frame (the entry ids count the frames,
``0-1``, ``0-2``, …, apart from the frames' own SSE ids, which the entries carry with their
event and data); and a hash ``{prefix}{id}:ids`` from each SSE id to its position, for
``Last-Event-ID``. A fourth key, ``{prefix}{id}:alive``, is the producer's heartbeat: set with
a ``stale_after`` expiry, renewed every second or so while the message runs. Readers follow
the stream with blocking ``XREAD``; a reader that finds the message still running with no
heartbeat (its worker was killed) ends with the protocol's error frame. A cancel request sets
a field the producing worker polls (every ``poll`` seconds). Every key expires ``ttl`` seconds
after the message finished (renewed while it runs).

The producer writes with the async client (``redis.asyncio``) from the event loop a relay's
task runs on, and with the sync client from a relay's thread; followers read the same way.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from unicite.exceptions import UsageError
from unicite.wire._frames import Frame, dumps
from unicite.wire._relay_store import RelaySnapshot, RelayState, RelayWriter, check_number

try:
    import redis
    import redis.asyncio as aredis
except ImportError as error:  # pragma: no cover - exercised in the core-only environment
    raise ImportError("unicite.wire.redis needs redis-py: pip install 'unicite[redis]'") from error

__all__ = ["RedisRelayStore"]

_STATES = ("running", "completed", "cancelled", "failed")

# Sets the cancel request of a running message only, atomically: 1 when it was running.
_CANCEL = """
if redis.call('HGET', KEYS[1], 'status') == 'running' then
  redis.call('HSET', KEYS[1], 'cancel', '1')
  return 1
end
return 0
"""

# The heartbeat of a running message only (a beat sent as it finishes must not revive it):
# KEYS meta, frames, ids, alive; ARGV the heartbeat's expiry (ms) and the keys' ttl (s).
_BEAT = """
if redis.call('HGET', KEYS[1], 'status') == 'running' then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[1])
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
end
return 0
"""


@dataclass(frozen=True)
class _Keys:
    meta: str
    frames: str
    ids: str
    alive: str

    @property
    def lasting(self) -> tuple[str, str, str]:
        """The keys that outlive the producer (for ``ttl`` seconds)."""
        return (self.meta, self.frames, self.ids)


@dataclass
class _Watch:
    on_cancel: Callable[[], object] | None
    keys: _Keys = field(repr=False)


def _frame(fields: dict[str, str]) -> Frame:
    return Frame(fields.get("data", ""), event=fields.get("event"), id=fields.get("id"))


def _entries(entries: Any) -> tuple[list[Frame], int]:
    """The frames of stream entries, and the position after the last one."""
    frames = [_frame(values) for _, values in entries]
    last = int(str(entries[-1][0]).partition("-")[2])
    return frames, last


class RedisRelayStore:
    """A `unicite.wire.RelayStore` in Redis, shared by every worker (see the module docstring).

    Give one to every relay and follower of a worker process (it pools its connections), and
    `close` it when the process ends.

    Args:
        url: The Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``).
        ttl: Seconds every key of a message lasts after the message finished.
        prefix: What every key starts with.
        stale_after: Seconds without a heartbeat after which a running message counts as
            broken off (its worker is gone): its readers end with an error frame.
        poll: Seconds between the producer's looks for a cancel request.

    Raises:
        UsageError: A duration is not a positive number, or ``url`` / ``prefix`` not a str.
    """

    def __init__(
        self,
        url: str = "redis://localhost:6379/0",
        *,
        ttl: float = 600.0,
        prefix: str = "unicite:relay:",
        stale_after: float = 10.0,
        poll: float = 0.2,
    ) -> None:
        if not isinstance(url, str) or not isinstance(prefix, str):
            raise UsageError("RedisRelayStore: url and prefix must be str")
        for name, value in (("ttl", ttl), ("stale_after", stale_after), ("poll", poll)):
            check_number(name, value, positive=True)
        self.url = url
        self.ttl = float(ttl)
        """Seconds every key of a message lasts after the message finished."""
        self.prefix = prefix
        """What every key starts with."""
        self.stale_after = float(stale_after)
        """Seconds without a heartbeat after which a running message counts as broken off."""
        self.poll = float(poll)
        """Seconds between the producer's looks for a cancel request."""
        self._client: redis.Redis = redis.Redis.from_url(url, decode_responses=True)
        self._beat_script = self._client.register_script(_BEAT)
        self._lock = threading.Lock()
        self._watched: dict[str, _Watch] = {}
        self._poller: threading.Thread | None = None
        self._closed = threading.Event()

    @property
    def _beat(self) -> float:
        """Seconds between heartbeats: several within ``stale_after``."""
        return min(1.0, self.stale_after / 4)

    @property
    def _block(self) -> float:
        """Longest blocking read, in seconds, between two looks at the heartbeat."""
        return min(1.0, self.stale_after / 4)

    def _keys(self, message_id: str) -> _Keys:
        base = f"{self.prefix}{message_id}"
        return _Keys(base, f"{base}:frames", f"{base}:ids", f"{base}:alive")

    def close(self) -> None:
        """Stop watching running messages and close the connections (at the process's end)."""
        self._closed.set()
        poller = self._poller
        if poller is not None and poller is not threading.current_thread():
            poller.join(timeout=5)
        self._client.close()

    # --- the producer -----------------------------------------------------------------------

    def open(self, message_id: str, protocol: str) -> RelayWriter:
        """Record a new running message (replacing one with the same id) and return its writer."""
        keys = self._keys(message_id)
        pipe = self._client.pipeline(transaction=True)
        pipe.delete(keys.meta, keys.frames, keys.ids)
        pipe.hset(keys.meta, mapping={"protocol": protocol, "status": "running"})
        pipe.set(keys.alive, "1", px=int(self.stale_after * 1000))
        for key in keys.lasting:
            pipe.expire(key, int(self.ttl))
        pipe.execute()
        return _Writer(self, message_id, keys)

    def _watch(self, message_id: str, keys: _Keys, on_cancel: Callable[[], object]) -> None:
        with self._lock:
            self._watched[message_id] = _Watch(on_cancel, keys)
            if self._poller is None:
                self._poller = threading.Thread(
                    target=self._watching, name="unicite-relay-redis", daemon=True
                )
                self._poller.start()

    def _unwatch(self, message_id: str) -> None:
        with self._lock:
            self._watched.pop(message_id, None)

    def _watching(self) -> None:
        """The producers' thread: heartbeats, and cancel requests handed to their relays."""
        last_beat = 0.0
        while not self._closed.is_set():
            with self._lock:
                watched = dict(self._watched)
                if not watched:
                    self._poller = None
                    return
            beat = time.monotonic() - last_beat >= self._beat
            pipe = self._client.pipeline(transaction=False)
            asked: list[tuple[int, _Watch]] = []
            for watch in watched.values():
                asked.append((len(pipe), watch))
                pipe.hget(watch.keys.meta, "cancel")
                if beat:
                    keys = [*watch.keys.lasting, watch.keys.alive]
                    args = [int(self.stale_after * 1000), int(self.ttl)]
                    self._beat_script(keys=keys, args=args, client=pipe)
            try:
                replies = pipe.execute()
            except redis.RedisError:  # Redis unreachable a moment: the next round retries
                replies = None
            if replies is not None:
                if beat:
                    last_beat = time.monotonic()
                for index, watch in asked:
                    if replies[index] == "1" and watch.on_cancel is not None:
                        on_cancel, watch.on_cancel = watch.on_cancel, None
                        on_cancel()
            self._closed.wait(self.poll)
        with self._lock:
            self._poller = None

    # --- the readers ------------------------------------------------------------------------

    def snapshot(self, message_id: str) -> RelaySnapshot | None:
        """The message's state, or None when the store holds no message with that id."""
        keys = self._keys(message_id)
        pipe = self._client.pipeline(transaction=False)
        pipe.hgetall(keys.meta)
        pipe.exists(keys.alive)
        meta, alive = pipe.execute()
        if not meta or "protocol" not in meta:
            return None
        status = meta.get("status")
        document = meta.get("document")
        return RelaySnapshot(
            protocol=meta["protocol"],
            status=cast(RelayState, status if status in _STATES else "failed"),
            document=None if document is None else json.loads(document),
            error=meta.get("error"),
            alive=bool(alive),
        )

    def position(self, message_id: str, last_event_id: str) -> int:
        """The position after the frame whose id is ``last_event_id``; 0 when no frame has it."""
        found = self._client.hget(self._keys(message_id).ids, last_event_id)
        return 0 if found is None else int(cast(str, found)) + 1

    def cancel(self, message_id: str) -> bool:
        """Ask the producing worker to cancel the message; False when it is not running."""
        return bool(self._client.eval(_CANCEL, 1, self._keys(message_id).meta))

    def read(
        self, message_id: str, start: int, *, timeout: float | None = None
    ) -> Iterator[list[Frame]]:
        """The frames from position ``start`` on, in batches as they come (see `RelayStore`)."""
        keys = self._keys(message_id)
        after = start
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            # The state before the frames: every frame is written before the final state.
            pipe = self._client.pipeline(transaction=False)
            pipe.hget(keys.meta, "status")
            pipe.exists(keys.alive)
            pipe.xrange(keys.frames, min=f"0-{after + 1}", max="+")
            status, alive, entries = pipe.execute()
            if entries:
                batch, after = _entries(entries)
                yield batch
                deadline = None if timeout is None else time.monotonic() + timeout
            if status != "running" or not alive:
                return
            wait = (
                self._block if deadline is None else min(self._block, deadline - time.monotonic())
            )
            if wait <= 0:
                return
            got = self._client.xread({keys.frames: f"0-{after}"}, block=max(1, int(wait * 1000)))
            if got:
                batch, after = _entries(cast(Any, got)[0][1])
                yield batch
                deadline = None if timeout is None else time.monotonic() + timeout

    async def aread(self, message_id: str, start: int) -> AsyncIterator[list[Frame]]:
        """`read` for an event loop, on a connection of its own (blocking reads hold one)."""
        keys = self._keys(message_id)
        after = start
        client: aredis.Redis = aredis.Redis.from_url(self.url, decode_responses=True)
        try:
            while True:
                async with client.pipeline(transaction=False) as pipe:
                    pipe.hget(keys.meta, "status")
                    pipe.exists(keys.alive)
                    pipe.xrange(keys.frames, min=f"0-{after + 1}", max="+")
                    status, alive, entries = await pipe.execute()
                if entries:
                    batch, after = _entries(entries)
                    yield batch
                if status != "running" or not alive:
                    return
                got = await client.xread(
                    {keys.frames: f"0-{after}"}, block=max(1, int(self._block * 1000))
                )
                if got:
                    batch, after = _entries(cast(Any, got)[0][1])
                    yield batch
        finally:
            await asyncio.shield(client.aclose())


class _Writer:
    """A producer's end of one message in Redis."""

    def __init__(self, store: RedisRelayStore, message_id: str, keys: _Keys) -> None:
        self._store = store
        self._message_id = message_id
        self._keys = keys
        self._count = 0
        self._aclient: aredis.Redis | None = None

    def watch(self, on_cancel: Callable[[], object]) -> None:
        self._store._watch(self._message_id, self._keys, on_cancel)

    def _queue(self, pipe: Any, frames: Sequence[Frame], document: dict[str, Any] | None) -> None:
        if document is not None:
            pipe.hset(self._keys.meta, "document", dumps(document))
        ids: dict[str, int] = {}
        for frame in frames:
            fields = {"data": frame.data}
            if frame.event is not None:
                fields["event"] = frame.event
            if frame.id is not None:
                fields["id"] = frame.id
                ids.setdefault(frame.id, self._count)
            self._count += 1
            pipe.xadd(self._keys.frames, fields, id=f"0-{self._count}")
        if ids:
            pipe.hset(self._keys.ids, mapping=ids)
        for key in self._keys.lasting:
            pipe.expire(key, int(self._store.ttl))

    def _ending(self, pipe: Any, status: RelayState, error: str | None) -> None:
        fields: dict[str, str] = {"status": status}
        if error is not None:
            fields["error"] = error
        pipe.hset(self._keys.meta, mapping=fields)
        pipe.delete(self._keys.alive)
        for key in self._keys.lasting:
            pipe.expire(key, int(self._store.ttl))

    def append(self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None) -> None:
        pipe = self._store._client.pipeline(transaction=True)
        self._queue(pipe, frames, document)
        pipe.execute()

    async def aappend(
        self, frames: Sequence[Frame], *, document: dict[str, Any] | None = None
    ) -> None:
        if self._aclient is None:
            self._aclient = aredis.Redis.from_url(self._store.url, decode_responses=True)
        async with self._aclient.pipeline(transaction=True) as pipe:
            self._queue(pipe, frames, document)
            await pipe.execute()

    def finish(self, status: RelayState, *, error: str | None = None) -> None:
        self._store._unwatch(self._message_id)
        pipe = self._store._client.pipeline(transaction=True)
        self._ending(pipe, status, error)
        pipe.execute()

    async def afinish(self, status: RelayState, *, error: str | None = None) -> None:
        self._store._unwatch(self._message_id)
        client = self._aclient or aredis.Redis.from_url(self._store.url, decode_responses=True)
        self._aclient = None
        try:
            async with client.pipeline(transaction=True) as pipe:
                self._ending(pipe, status, error)
                await pipe.execute()
        finally:
            await asyncio.shield(client.aclose())
