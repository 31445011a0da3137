"""Relays in Redis: followed and stopped from another process, ended when their worker dies.

Runs against a real ``redis-server`` (Debian's ``redis-server`` package), started for the
session on a free loopback port with no persistence; the tests skip where it is not installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _answers import SOURCES, marked
from _servers import REDIS_SERVER, redis_server

from unicite import wire
from unicite.wire import Frame, Relay, RelayStore

redis = pytest.importorskip("redis", reason="unicite[redis] is not installed")
from unicite.wire.redis import RedisRelayStore  # noqa: E402

WORKER = Path(__file__).with_name("_relay_worker.py")
PIECES = ["Le viaduc de Millau ", "mesure **343 mètres**", "[1]. ", "Il a été inauguré"]
BROKE_OFF = "the answer broke off (the worker producing it stopped)"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of its own for the session, on loopback, keeping nothing on disk."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def prefix() -> str:
    return f"test:{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def store(redis_url: str, prefix: str) -> Iterator[RedisRelayStore]:
    opened = RedisRelayStore(redis_url, prefix=prefix, stale_after=1.0)
    yield opened
    opened.close()


class Gate:
    """A sync stream that gives one item each time the test lets it."""

    def __init__(self, items: list[object]) -> None:
        self.items = items
        self.allowed = threading.Semaphore(0)

    def step(self, count: int = 1) -> None:
        self.allowed.release(count)

    def __iter__(self) -> Iterator[object]:
        for item in self.items:
            assert self.allowed.acquire(timeout=20), "the test never let the stream on"
            yield item


def _worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def _line(worker: subprocess.Popen[str]) -> dict[str, Any]:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    assert line, f"the worker ended early (status {worker.wait(10)})"
    value: dict[str, Any] = json.loads(line)
    return value


def _frame(value: dict[str, Any]) -> Frame:
    return Frame(value["data"], event=value["event"], id=value["id"])


def test_the_store_is_a_relay_store_and_every_key_expires(
    store: RedisRelayStore, redis_url: str, prefix: str
) -> None:
    assert isinstance(store, RelayStore)
    relay = Relay([*PIECES, marked()], message_id="m-1", store=store)
    assert relay.wait(10)
    follower = Relay.follow("m-1", store=store)
    assert follower is not None
    assert follower.frames == relay.frames
    assert (follower.status, follower.done, follower.error) == ("completed", True, None)
    assert follower.answer == wire.decode(relay.frames)
    assert follower.position("3") == 3
    assert follower.frames[3:] == list(follower.subscribe("3", timeout=0))
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = sorted(client.keys(f"{prefix}*"))
        assert keys == [f"{prefix}m-1", f"{prefix}m-1:frames", f"{prefix}m-1:ids"]
        assert all(0 < client.ttl(key) <= 600 for key in keys)
        # The frames' SSE ids are kept apart from the stream's own entry ids.
        entries = client.xrange(f"{prefix}m-1:frames")
        assert [entry_id for entry_id, _ in entries][:2] == ["0-1", "0-2"]
        assert entries[0][1]["id"] == relay.frames[0].id
    finally:
        client.close()
    assert Relay.follow("no-such-message", store=store) is None


def test_an_async_producer_and_follower_on_one_loop(store: RedisRelayStore) -> None:
    async def model() -> AsyncIterator[object]:
        for piece in PIECES:
            await asyncio.sleep(0.01)
            yield piece
        yield marked()

    async def main() -> tuple[Relay, list[Frame], list[Frame]]:
        relay = Relay(model(), "openai", message_id="m-async", store=store)
        follower = Relay.follow("m-async", store=store)
        assert follower is not None
        followed = [frame async for frame in follower.asubscribe()]
        resumed = [frame async for frame in follower.asubscribe("2")]
        return relay, followed, resumed

    relay, followed, resumed = asyncio.run(main())
    assert followed == relay.frames
    assert resumed == relay.frames[2:]
    assert wire.decode(followed, "openai").text == wire.decode(relay.frames, "openai").text


def test_another_process_replays_and_follows_honouring_last_event_id(
    store: RedisRelayStore, redis_url: str, prefix: str
) -> None:
    gate = Gate([*PIECES, marked()])
    relay = Relay(gate, message_id="m-2", store=store)
    gate.step(2)
    with _worker("follow", redis_url, prefix, "m-2", "3") as worker:
        try:
            # It replays what was recorded before it came, then follows the rest as it comes.
            seen = [_frame(_line(worker)["frame"]) for _ in range(2)]
            assert seen == relay.frames[:2]
            gate.step(len(PIECES) - 1)
            while len(seen) < len(PIECES) + 1:
                seen.append(_frame(_line(worker)["frame"]))
            end = _line(worker)
            assert worker.wait(20) == 0
        finally:
            worker.kill()
    assert relay.wait(10)
    assert seen == relay.frames
    assert [_frame(value) for value in end["replay"]] == relay.frames[3:]
    assert end["status"] == "completed"


def test_another_process_cancels_the_answer(
    store: RedisRelayStore, redis_url: str, prefix: str
) -> None:
    cancelled = threading.Event()

    async def model() -> AsyncIterator[object]:
        yield "Le viaduc de Millau mesure 343 mètres [1]. "
        try:
            await asyncio.sleep(30)  # the model call the other process stops
        except asyncio.CancelledError:
            cancelled.set()
            raise
        yield marked()

    async def main() -> tuple[Relay, list[Frame], list[dict[str, Any]]]:
        relay = Relay(model(), message_id="m-3", store=store, sources=SOURCES)
        worker = await asyncio.create_subprocess_exec(
            sys.executable, str(WORKER), "cancel", redis_url, prefix, "m-3",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        frames = await asyncio.wait_for(_read(relay), 20)
        out, _ = await asyncio.wait_for(worker.communicate(), 20)
        assert worker.returncode == 0
        return relay, frames, [json.loads(line) for line in out.decode().splitlines()]

    relay, frames, lines = asyncio.run(main())
    assert cancelled.is_set()
    assert relay.cancelled
    assert [frame.event for frame in frames] == [
        "thread.message.delta",
        "thread.message.cancelled",
    ]
    assert lines[1] == {"cancelled": True}
    assert [_frame(line["frame"]) for line in lines if "frame" in line] == frames
    assert lines[-1] == {"status": "cancelled", "stopped": {"stopped": True}}
    assert relay.answer is not None
    assert [c.source_ids for c in relay.answer.citations] == [[SOURCES[0].id]]


async def _read(relay: Relay) -> list[Frame]:
    return [frame async for frame in relay.asubscribe()]


def test_a_killed_producer_ends_its_followers_with_an_error_frame(
    store: RedisRelayStore, redis_url: str, prefix: str
) -> None:
    with _worker("produce", redis_url, prefix, "m-4") as worker:
        try:
            assert _line(worker) == {"ready": True}
            follower = Relay.follow("m-4", store=store)
            assert follower is not None
            assert follower.status == "running"
            reader = follower.subscribe()
            first = next(reader)
            os.kill(worker.pid, signal.SIGKILL)
            killed = time.monotonic()
            rest = list(reader)  # never hangs: no heartbeat for stale_after seconds ends it
            waited = time.monotonic() - killed
        finally:
            worker.kill()
    assert waited < 1.0 + 1.0 + 1.5, f"the follower waited {waited:.1f} s"
    last = rest[-1]
    assert last.event == "thread.message.error"
    assert json.loads(last.data)["error"] == BROKE_OFF
    assert last.id == str(len([first, *rest]))
    assert (follower.status, follower.done, follower.error) == ("failed", True, BROKE_OFF)
    # A follower coming later, on an event loop, ends the same way at once.
    later = Relay.follow("m-4", store=store)
    assert later is not None

    async def read_later() -> list[Frame]:
        return [frame async for frame in later.asubscribe()]

    assert asyncio.run(asyncio.wait_for(read_later(), 10)) == [first, *rest]
    assert "broke off" in wire.decode([first, *rest]).diagnostics[0]


def test_bad_settings_are_refused(redis_url: str) -> None:
    import unicite

    with pytest.raises(unicite.UsageError, match="stale_after must be a number"):
        RedisRelayStore(redis_url, stale_after=0)
    with pytest.raises(unicite.UsageError, match="ttl must be a number"):
        RedisRelayStore(redis_url, ttl=-5)
