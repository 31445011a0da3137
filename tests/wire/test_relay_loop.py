"""Where a relay runs its stream: on the event loop that starts it, or in a thread."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import AsyncIterator, Iterator

from _answers import marked

from unicite import wire
from unicite.wire import MemoryRelayStore, Relay

PIECES = ["Le viaduc de Millau ", "mesure **343 mètres**", "[1]. "]


def test_an_async_stream_runs_as_a_task_on_the_loop_that_starts_it() -> None:
    """An agent's events forwarded through an asyncio.Queue, read on the loop they belong to."""
    ran_on: set[int] = set()

    async def main() -> tuple[Relay, list[wire.Frame], int, int]:
        queue: asyncio.Queue[object] = asyncio.Queue()

        async def agent() -> None:
            for piece in PIECES:
                await asyncio.sleep(0.001)
                await queue.put(piece)
            await queue.put(marked())
            await queue.put(None)

        async def events() -> AsyncIterator[object]:
            ran_on.add(threading.get_ident())
            while (item := await queue.get()) is not None:
                yield item

        threads = threading.active_count()
        filling = asyncio.create_task(agent())
        relay = Relay(events(), message_id="m-q")
        frames = await asyncio.wait_for(_read(relay), 10)
        await filling
        return relay, frames, threads, threading.active_count()

    relay, frames, before, after = asyncio.run(main())
    assert ran_on == {threading.get_ident()}  # the loop's own thread
    assert before == after  # no thread was started for it
    assert relay.answer == marked()
    assert frames == list(wire.frames([*PIECES, marked()], message_id="m-q"))


async def _read(relay: Relay) -> list[wire.Frame]:
    return [frame async for frame in relay.asubscribe()]


def test_the_loop_keeps_no_task_once_the_relays_are_done() -> None:
    async def stream(n: int) -> AsyncIterator[object]:
        for piece in PIECES:
            await asyncio.sleep(0)
            yield f"{piece}{n}"
        yield marked()

    async def main() -> int:
        relays = [Relay(stream(n), message_id=f"m-{n}") for n in range(20)]
        for relay in relays:
            await asyncio.wait_for(_read(relay), 10)
        await asyncio.sleep(0)
        return len(asyncio.all_tasks())

    assert asyncio.run(main()) == 1  # only main() itself


def test_a_relay_nobody_holds_keeps_running_and_can_be_followed() -> None:
    store = MemoryRelayStore()

    async def stream() -> AsyncIterator[object]:
        for piece in PIECES:
            await asyncio.sleep(0.005)
            yield piece
        yield marked()

    async def main() -> list[wire.Frame]:
        Relay(stream(), message_id="m-gc", store=store)
        gc.collect()  # nothing the caller holds refers to the relay or its task
        follower = Relay.follow("m-gc", store=store)
        assert follower is not None
        return [frame async for frame in follower.asubscribe()]

    frames = asyncio.run(main())
    assert wire.decode(frames) == wire.decode(wire.encode(marked()))


def test_outside_a_loop_an_async_stream_gets_a_thread_and_a_loop_of_its_own() -> None:
    ran_on: set[int] = set()

    async def stream() -> AsyncIterator[object]:
        ran_on.add(threading.get_ident())
        for piece in PIECES:
            await asyncio.sleep(0)
            yield piece
        yield marked()

    relay = Relay(stream(), message_id="m-t")
    assert relay.wait(10)
    assert ran_on
    assert threading.get_ident() not in ran_on
    assert relay.answer == marked()


def test_a_sync_stream_is_read_in_a_thread_even_from_a_loop() -> None:
    ran_on: set[int] = set()

    def stream() -> Iterator[object]:
        ran_on.add(threading.get_ident())
        yield from PIECES
        yield marked()

    async def main() -> list[wire.Frame]:
        return await _read(Relay(stream(), message_id="m-s"))

    frames = asyncio.run(main())
    assert ran_on
    assert threading.get_ident() not in ran_on
    assert wire.decode(frames) == wire.decode(wire.encode(marked()))


def test_an_async_on_answer_is_awaited_before_the_completed_frame() -> None:
    seen: list[int] = []

    async def main() -> None:
        relay: Relay

        async def store(answer: object) -> None:
            await asyncio.sleep(0)
            seen.append(len(relay.frames))

        async def stream() -> AsyncIterator[object]:
            yield PIECES[0]
            yield marked()

        relay = Relay(stream(), on_answer=store)
        await _read(relay)

    asyncio.run(main())
    assert seen == [1]
