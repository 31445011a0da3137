"""Stopping a relayed answer: the model call is cancelled and the answer keeps what it made."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from _answers import SOURCES

import unicite
from unicite import CitedAnswer, wire
from unicite.generation import astream_cited, stream_cited
from unicite.wire import Relay

STOPPED = "the answer was stopped before it finished"
SAID = "Le viaduc de Millau mesure 343 mètres [1]. "
PROTOCOLS = ["unicite", "vercel", "openwebui", "openai"]


class Model:
    """An async model call: one sentence, then a wait the cancel interrupts."""

    def __init__(self, said: str = SAID) -> None:
        self.said = said
        self.speaking = asyncio.Event()
        self.cancelled = False
        self.closed = False

    async def stream(self) -> AsyncIterator[object]:
        try:
            yield self.said
            self.speaking.set()
            try:
                await asyncio.sleep(30)  # the model call still running when it is stopped
            except asyncio.CancelledError:
                self.cancelled = True
                raise
            yield "Jamais envoyé."
        finally:
            self.closed = True


async def _stopped(
    protocol: str = "unicite", **options: Any
) -> tuple[Relay, Model, list[wire.Frame]]:
    model = Model()
    relay = Relay(model.stream(), protocol, message_id="m-1", **options)  # type: ignore[arg-type]
    await asyncio.wait_for(model.speaking.wait(), 10)
    assert relay.cancel()
    frames = await asyncio.wait_for(_read(relay), 10)
    return relay, model, frames


async def _read(relay: Relay) -> list[wire.Frame]:
    return [frame async for frame in relay.asubscribe()]


def test_the_model_call_sees_the_cancel_and_the_answer_is_cited_as_far_as_it_went() -> None:
    kept: list[CitedAnswer] = []
    relay, model, frames = asyncio.run(_stopped(sources=SOURCES, on_answer=kept.append))
    assert model.cancelled
    assert model.closed
    assert (relay.done, relay.cancelled, relay.status, relay.error) == (
        True,
        True,
        "cancelled",
        None,
    )
    answer = relay.answer
    assert answer is not None
    assert kept == [answer]
    assert answer.extras["stopped"] is True
    assert answer.diagnostics[-1] == STOPPED
    # Cited through unicite.cite: the [1] the model wrote opens the first source.
    cited = unicite.cite(SAID, SOURCES)
    assert answer.text == cited.text
    assert answer.citations == cited.citations
    assert [s.id for s in answer.sources] == [SOURCES[0].id]
    assert frames[-1].event == "thread.message.cancelled"
    data = json.loads(frames[-1].data)
    assert data["type"] == "thread.message.cancelled"
    assert data["message_id"] == "m-1"
    assert {**data, "type": "thread.message.completed"} == wire.history(answer, message_id="m-1")
    assert not relay.cancel()  # once stopped, nothing is left to cancel


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_ends_a_stopped_message_and_decodes_it_back(protocol: str) -> None:
    relay, _, frames = asyncio.run(_stopped(protocol, sources=SOURCES))
    answer = relay.answer
    assert answer is not None
    decoded = wire.decode(frames, protocol)  # type: ignore[arg-type]
    assert decoded.extras["stopped"] is True
    assert STOPPED in decoded.diagnostics
    assert decoded.text == answer.text
    if protocol != "openai":  # the others carry the whole history document
        assert wire.history(decoded) == wire.history(answer)
    else:
        assert [c.text for c in decoded.citations] == [c.text for c in answer.citations]
        assert [s.url for s in decoded.sources] == [SOURCES[0].url]
    if protocol == "unicite":
        assert [f.event for f in frames] == ["thread.message.delta", "thread.message.cancelled"]
        return
    datas = [frame.data for frame in frames]
    assert datas[-1] == "[DONE]"
    last = json.loads(datas[-2])
    if protocol == "vercel":
        # streamText's aborted stream: the abort chunk, and no finish after it.
        assert last == {"type": "abort"}
        kinds = [json.loads(data)["type"] for data in datas[:-1]]
        assert "finish" not in kinds
        assert kinds[-2] == "data-unicite"
    else:
        assert last["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
        assert last["unicite"] == {"stopped": True}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_completed_message_is_not_marked_stopped(protocol: str) -> None:
    answer = unicite.cite(SAID, SOURCES)
    relay = Relay([SAID, answer], protocol)  # type: ignore[arg-type]
    assert relay.wait(10)
    decoded = wire.decode(relay.frames, protocol)  # type: ignore[arg-type]
    assert "stopped" not in decoded.extras
    assert STOPPED not in decoded.diagnostics
    assert not relay.cancelled
    assert not relay.cancel()  # the answer came: nothing to cancel


def test_without_sources_the_text_shown_is_kept_uncited() -> None:
    relay, _, frames = asyncio.run(_stopped())
    answer = relay.answer
    assert answer is not None
    assert (answer.text, answer.citations, answer.sources) == (SAID, [], [])
    assert answer.diagnostics == [STOPPED]
    assert wire.decode(frames).text == SAID


def test_a_stopped_astream_cited_keeps_its_partial_answer() -> None:
    async def streamed(prompt: str) -> AsyncIterator[str]:
        yield "Le viaduc culmine à 343 mètres [[S:1]]. "
        await asyncio.sleep(30)
        yield "Jamais vu [[S:3]]."

    async def run() -> tuple[Relay, list[wire.Frame], CitedAnswer]:
        stream = astream_cited(streamed, "Le viaduc ?", SOURCES)
        relay = Relay(stream, "vercel", message_id="m-2")
        while not relay.frames:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        assert relay.cancel()
        frames = await asyncio.wait_for(_read(relay), 10)
        return relay, frames, stream.partial_answer()

    relay, frames, partial = asyncio.run(run())
    answer = relay.answer
    assert answer is not None
    # The stream's own partial answer (its [[S:n]] markers read against the sources).
    assert answer.text == partial.text
    assert answer.citations == partial.citations
    assert [c.source_ids for c in answer.citations] == [[SOURCES[0].id]]
    assert answer.extras["stopped"] is True
    assert wire.history(wire.decode(frames, "vercel")) == wire.history(answer)


def test_a_sync_stream_is_closed_at_its_next_item() -> None:
    allowed = threading.Semaphore(0)
    closed = threading.Event()
    given: list[str] = []

    def stream() -> Iterator[object]:
        try:
            for piece in [SAID, "Il a été inauguré ", "en 2004 [2]."]:
                assert allowed.acquire(timeout=10)
                given.append(piece)
                yield piece
            yield unicite.cite(SAID, SOURCES)
        finally:
            closed.set()

    kept: list[CitedAnswer] = []
    relay = Relay(stream(), message_id="m-3", sources=SOURCES, on_answer=kept.append)
    allowed.release()
    first = next(relay.subscribe(timeout=10))
    assert json.loads(first.data)["delta"] == SAID
    assert relay.cancel()
    assert not relay.done  # the stream is stopped at its next item
    allowed.release()
    assert relay.wait(10)
    assert closed.wait(10)
    assert given == [SAID, "Il a été inauguré "]  # the item after the cancel is not shown
    assert [f.event for f in relay.frames] == ["thread.message.delta", "thread.message.cancelled"]
    assert relay.cancelled
    assert kept == [relay.answer]
    assert relay.answer is not None
    assert relay.answer.text == unicite.cite(SAID, SOURCES).text
    assert not [t for t in threading.enumerate() if t.name == "unicite-relay-m-3"]


def test_a_stopped_stream_cited_keeps_its_partial_answer() -> None:
    allowed = threading.Semaphore(0)

    def model(prompt: str) -> Iterator[str]:
        for piece in ["Le viaduc culmine ", "à 343 mètres [[S:1]]. ", "Puis [[S:2]]."]:
            assert allowed.acquire(timeout=10)
            yield piece

    stream = stream_cited(model, "Le viaduc ?", SOURCES)
    relay = Relay(stream, "openwebui", message_id="m-4")
    allowed.release(2)
    reader = relay.subscribe(timeout=10)
    text = ""
    while "343" not in text:
        chunk = json.loads(next(reader).data)
        for choice in chunk["choices"]:
            text += choice["delta"].get("content", "")
    assert relay.cancel()
    allowed.release()
    assert relay.wait(10)
    answer = relay.answer
    assert answer is not None
    # What the model generated until the stream was closed, cited by the stream itself; it
    # begins with what was shown.
    partial = stream.partial_answer()
    assert (answer.text, answer.citations) == (partial.text, partial.citations)
    assert answer.text.startswith(text)
    assert answer.citations[0].source_ids == [SOURCES[0].id]
    decoded = wire.decode(relay.frames, "openwebui")
    assert wire.history(decoded) == wire.history(answer)
    assert decoded.extras == {"stopped": True}


def test_a_relay_cancelled_before_it_starts_stops_at_once() -> None:
    async def run() -> Relay:
        model = Model()
        relay = Relay(model.stream(), message_id="m-5", start=False)
        assert relay.cancel()
        relay.start()
        await asyncio.wait_for(_read(relay), 10)
        assert not model.speaking.is_set()
        return relay

    relay = asyncio.run(run())
    assert relay.cancelled
    assert relay.answer is not None
    assert relay.answer.text == ""
    assert [f.event for f in relay.frames] == ["thread.message.cancelled"]


def test_a_cancel_from_another_thread_reaches_the_task() -> None:
    async def run() -> tuple[Relay, Model]:
        model = Model()
        relay = Relay(model.stream(), message_id="m-6")
        await model.speaking.wait()
        cancelled = await asyncio.to_thread(relay.cancel)
        assert cancelled
        await asyncio.wait_for(_read(relay), 10)
        return relay, model

    relay, model = asyncio.run(run())
    assert model.cancelled
    assert relay.cancelled
