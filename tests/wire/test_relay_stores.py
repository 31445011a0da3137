"""Relays kept in a store: followed by message id, stopped from a follower, evicted when done."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator

import pytest
from _answers import marked

import unicite
from unicite import CitedAnswer, wire
from unicite.wire import MemoryRelayStore, Relay, RelayFollower, RelayStore

PIECES = ["Le viaduc de Millau ", "mesure **343 mètres**", "[1]. "]


def stream() -> Iterator[object]:
    yield from PIECES
    yield marked()


def test_the_memory_store_is_a_relay_store() -> None:
    assert isinstance(MemoryRelayStore(), RelayStore)


def test_a_relay_with_a_message_id_is_followed_from_the_default_store() -> None:
    relay = Relay(stream(), message_id="m-default")
    follower = Relay.follow("m-default")
    assert isinstance(follower, RelayFollower)
    frames = list(follower.subscribe(timeout=10))
    assert relay.wait(10)
    assert frames == relay.frames == follower.frames
    assert (follower.protocol, follower.message_id) == ("unicite", "m-default")
    assert (follower.done, follower.status, follower.error, follower.cancelled) == (
        True,
        "completed",
        None,
        False,
    )
    assert follower.answer == wire.decode(frames)
    assert list(follower.subscribe("2")) == frames[2:]
    assert follower.position("2") == relay.position("2") == 2
    assert Relay.follow("no-such-message") is None
    assert Relay.follow("m-default", store=MemoryRelayStore()) is None


def test_a_follower_follows_as_frames_come_and_its_cancel_stops_the_relay() -> None:
    store = MemoryRelayStore()
    speaking = threading.Event()
    kept: list[CitedAnswer] = []

    async def model() -> AsyncIterator[object]:
        yield PIECES[0]
        speaking.set()
        await asyncio.sleep(30)
        yield marked()

    async def main() -> tuple[Relay, list[wire.Frame]]:
        relay = Relay(model(), "vercel", message_id="m-stop", store=store, on_answer=kept.append)
        follower = Relay.follow("m-stop", store=store)
        assert follower is not None
        reading = asyncio.create_task(_read(follower))
        await asyncio.to_thread(speaking.wait, 10)
        assert not follower.done
        assert await asyncio.to_thread(follower.cancel)  # as a route in another thread would
        followed = await asyncio.wait_for(reading, 10)
        assert not follower.cancel()  # stopped already
        assert follower.cancelled
        assert follower.answer == wire.decode(followed, "vercel")
        return relay, followed

    relay, followed = asyncio.run(main())
    assert followed == relay.frames
    assert relay.cancelled
    assert kept == [relay.answer]
    assert wire.decode(followed, "vercel").extras == {"stopped": True}


async def _read(reader: Relay | RelayFollower) -> list[wire.Frame]:
    return [frame async for frame in reader.asubscribe()]


def test_finished_relays_are_evicted_after_their_ttl() -> None:
    store = MemoryRelayStore(ttl=0.05)
    done = Relay([marked()], message_id="m-old", store=store)
    assert done.wait(10)
    running_stream = _Blocked()
    running = Relay(running_stream, message_id="m-running", store=store)
    assert len(store) == 2
    time.sleep(0.1)
    assert len(store) == 1  # the finished one went; a running one never goes
    assert Relay.follow("m-old", store=store) is None
    assert Relay.follow("m-running", store=store) is not None
    # The relay itself still reads its frames after its message left the store.
    assert wire.decode(done.frames) == wire.decode(wire.encode(marked()))
    assert running.cancel()
    running_stream.released.set()  # its next item: the relay stops there
    assert running.wait(10)
    assert running.cancelled


class _Blocked:
    """A sync stream that gives nothing until it is closed."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def __iter__(self) -> Iterator[object]:
        self.released.wait(10)
        yield "fin"

    def close(self) -> None:
        self.released.set()


def test_above_the_count_the_oldest_finished_relays_go_first() -> None:
    store = MemoryRelayStore(max_relays=3)
    blocked = _Blocked()
    running = Relay(blocked, message_id="m-running", store=store)
    for n in range(5):
        assert Relay([marked()], message_id=f"m-{n}", store=store).wait(10)
    assert len(store) == 3
    kept = [m for m in ["m-running", *(f"m-{n}" for n in range(5))] if Relay.follow(m, store=store)]
    assert kept == ["m-running", "m-3", "m-4"]
    assert running.cancel()
    blocked.released.set()
    assert running.wait(10)


def test_memory_stays_flat_over_thousands_of_answers() -> None:
    store = MemoryRelayStore(max_relays=100)
    answer = unicite.cite("Le viaduc mesure 343 mètres [1].", [unicite.Source(title="Millau")])

    async def short(n: int) -> AsyncIterator[object]:
        yield f"Réponse {n} : "
        await asyncio.sleep(0)
        yield answer

    async def run(first: int, count: int) -> None:
        for n in range(first, first + count):
            relay = Relay(short(n), message_id=f"m-{n}", store=store)
            async for _ in relay.asubscribe():
                pass

    def objects() -> int:
        gc.collect()
        return len(gc.get_objects())

    asyncio.run(run(0, 1000))  # warm-up: the store fills to its bound
    warm = objects()
    asyncio.run(run(1000, 1700))
    assert objects() - warm < 500  # a relay left behind would leave dozens each
    tracemalloc.start()
    try:
        asyncio.run(run(2700, 150))
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        asyncio.run(run(2850, 150))
        gc.collect()
        last = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(store) == 100
    assert last - first < 30_000, f"grew {last - first} bytes over 150 answers"


def test_bad_stores_and_settings_are_refused() -> None:
    with pytest.raises(unicite.UsageError, match="store must be a RelayStore"):
        Relay(stream(), message_id="m", store=object())  # type: ignore[arg-type]
    with pytest.raises(unicite.UsageError, match="needs a message_id"):
        Relay(stream(), store=MemoryRelayStore())
    with pytest.raises(unicite.UsageError, match="ttl must be a number"):
        MemoryRelayStore(ttl=-1)
    with pytest.raises(unicite.UsageError, match="max_relays must be an int"):
        MemoryRelayStore(max_relays=2.5)  # type: ignore[arg-type]
    with pytest.raises(unicite.UsageError, match="message_id must be a str"):
        Relay.follow(7)  # type: ignore[arg-type]
