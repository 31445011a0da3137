"""The ``vercel`` wire protocol: the AI SDK UI message stream, checked by round trip and by ``ai``.

The strongest check runs the frames through the ``ai`` package's own reader in Node
(``tests/wire/js/read_vercel.mjs``); it needs ``node`` and ``npm ci --prefix tests/wire/js``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _answers import (
    RICH,
    UNCITED,
    streams,
)
from _answers import content_of as _content
from _answers import pieces as _pieces

from unicite import CitedAnswer, wire
from unicite.generation import Retry

JS = Path(__file__).parent / "js"

MESSAGE_ID = "msg-1"


STREAMS: dict[str, Callable[[], object]] = {
    **streams(),
    "retry": lambda: [
        "Première version [7] ✗",
        Retry(round=2, reason="marker [7] names no source"),
        *_pieces(_content(RICH)),
        RICH,
    ],
}
FINAL = {"no-answer": None, "uncited": UNCITED}


def _final(name: str) -> CitedAnswer | None:
    return FINAL.get(name, RICH)


def _body(stream: object, protocol: str = "vercel") -> str:
    return "".join(wire.encode(stream, protocol, message_id=MESSAGE_ID))  # type: ignore[arg-type]


def _datas(body: str) -> list[str]:
    """Every frame's data; each frame is exactly one ``data:`` line and a blank line."""
    assert body.endswith("\n\n")
    blocks = body[:-2].split("\n\n")
    datas = []
    for block in blocks:
        assert block.startswith("data: ")
        assert "\n" not in block
        datas.append(block.removeprefix("data: "))
    return datas


def _chunks(body: str) -> list[dict[str, Any]]:
    datas = _datas(body)
    assert datas[-1] == "[DONE]"
    return [json.loads(data) for data in datas[:-1]]


def _sent(value: object) -> object:
    return json.loads(json.dumps(value))


# uiMessageChunkSchema as the first ai 5 releases had it (strict objects, no finishReason):
# required and allowed keys of the chunks unicite sends.
SCHEMA: dict[str, tuple[set[str], set[str]]] = {
    "start": ({"type"}, {"type", "messageId", "messageMetadata"}),
    "text-start": ({"type", "id"}, {"type", "id", "providerMetadata"}),
    "text-delta": ({"type", "id", "delta"}, {"type", "id", "delta", "providerMetadata"}),
    "text-end": ({"type", "id"}, {"type", "id", "providerMetadata"}),
    "source-url": ({"type", "sourceId", "url"}, {"type", "sourceId", "url", "title"}),
    "source-document": (
        {"type", "sourceId", "mediaType", "title"},
        {"type", "sourceId", "mediaType", "title", "filename"},
    ),
    "error": ({"type", "errorText"}, {"type", "errorText"}),
    "finish": ({"type"}, {"type", "messageMetadata"}),
    "data-": ({"type", "data"}, {"type", "id", "data", "transient"}),
}


def _check_schema(chunk: dict[str, Any]) -> None:
    kind = chunk["type"]
    required, allowed = SCHEMA["data-" if kind.startswith("data-") else kind]
    assert required <= set(chunk) <= allowed, chunk
    for key, value in chunk.items():
        if key not in ("data", "messageMetadata"):
            assert isinstance(value, str), (key, chunk)


@pytest.mark.parametrize("name", list(STREAMS))
def test_decoding_gives_what_the_unicite_protocol_gives(name: str) -> None:
    decoded = wire.decode(_body(STREAMS[name]()), "vercel")
    assert decoded == wire.decode(_body(STREAMS[name](), "unicite"), "unicite")
    final = _final(name)
    if final is not None:
        assert _sent(wire.history(decoded)) == _sent(wire.history(final))


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_chunk_fits_the_ai_sdk_schema(name: str) -> None:
    chunks = _chunks(_body(STREAMS[name]()))
    for chunk in chunks:
        _check_schema(chunk)
    assert chunks[0] == {"type": "start", "messageId": MESSAGE_ID}
    assert chunks[-1] == {"type": "finish"}
    assert chunks[-2]["type"] == "data-unicite"
    # Every text part is opened before its deltas and closed before the sources.
    open_ids: set[str] = set()
    for chunk in chunks:
        if chunk["type"] == "text-start":
            open_ids.add(chunk["id"])
        elif chunk["type"] in ("text-delta", "text-end"):
            assert chunk["id"] in open_ids
            if chunk["type"] == "text-end":
                open_ids.remove(chunk["id"])
        elif chunk["type"].startswith("source-"):
            assert not open_ids


@pytest.mark.parametrize("name", list(STREAMS))
def test_text_after_the_last_reset_is_the_content(name: str) -> None:
    chunks = _chunks(_body(STREAMS[name]()))
    data = chunks[-2]["data"]
    reference = wire.decode(_body(STREAMS[name](), "unicite"), "unicite")
    assert data == _sent(wire.history(reference, message_id=MESSAGE_ID))
    text: list[str] = []
    for chunk in chunks:
        if chunk["type"] == "data-unicite-reset":
            text.clear()
        elif chunk["type"] == "text-delta":
            text.append(chunk["delta"])
    assert "".join(text) == data["content"]


def test_sources_come_in_answer_order_and_only_safe_urls_become_url_sources() -> None:
    chunks = _chunks(_body(RICH))
    sources = [c for c in chunks if c["type"].startswith("source-")]
    assert [c["sourceId"] for c in sources] == ["eiffel", "report", "hostile", "tokyo"]
    assert sources[0] == {
        "type": "source-url",
        "sourceId": "eiffel",
        "url": "https://fr.wikipedia.org/wiki/Tour_Eiffel",
        "title": "Tour Eiffel — Wikipédia",
    }
    assert sources[1] == {
        "type": "source-document",
        "sourceId": "report",
        "mediaType": "application/pdf",
        "title": "Rapport annuel 2024.pdf",
        "filename": "Rapport annuel 2024.pdf",
    }
    assert sources[2] == {
        "type": "source-document",
        "sourceId": "hostile",
        "mediaType": "text/plain",
        "title": "Cliquez ici",
    }
    assert (
        sources[3]["url"]
        == "https://ja.wikipedia.org/wiki/%E6%9D%B1%E4%BA%AC%E3%82%BF%E3%83%AF%E3%83%BC"
    )
    for chunk in chunks:
        if chunk["type"] != "data-unicite":
            assert "javascript" not in json.dumps(chunk)
    entries = chunks[-2]["data"]["metadata"]["citations"]
    assert entries[2]["href"] is None  # the history keeps the URL, never as a link


def test_a_reset_ends_the_text_part_and_starts_another() -> None:
    chunks = _chunks(_body(STREAMS["retry"]()))
    kinds = [c["type"] for c in chunks]
    at = kinds.index("data-unicite-reset")
    assert chunks[at - 1] == {"type": "text-end", "id": "text-1"}
    assert chunks[at] == {
        "type": "data-unicite-reset",
        "data": {"round": 2, "reason": "marker [7] names no source"},
    }
    assert chunks[at + 1] == {"type": "text-start", "id": "text-2"}
    assert kinds.count("text-start") == 2


def test_a_final_text_that_does_not_continue_the_stream_resets_it() -> None:
    chunks = _chunks(_body(STREAMS["diverging"]()))
    resets = [c for c in chunks if c["type"] == "data-unicite-reset"]
    assert len(resets) == 1
    assert resets[0]["data"]["reason"] == "the final text does not continue the text streamed"


@pytest.mark.parametrize("name", ["answer-alone", "retry", "uncited"])
def test_without_the_data_part_the_text_and_sources_come_back_uncited(name: str) -> None:
    body = _body(STREAMS[name]())
    kept = [d for d in _datas(body) if not d.startswith('{"type":"data-unicite"')]
    decoded = wire.decode("".join(f"data: {d}\n\n" for d in kept), "vercel")
    final = _final(name)
    assert final is not None
    assert decoded.text == _content(final)
    assert decoded.citations == []
    assert decoded.diagnostics == ["no data-unicite part: the sources are listed uncited"]
    expected = [
        (s["id"], s["href"], s["title"]) for s in wire.history(final)["metadata"]["citations"]
    ]
    assert [(s.id, s.url, s.title) for s in decoded.sources] == expected
    kinds = {s.id: s.kind for s in decoded.sources}
    assert kinds.get("report", "document") == "document"


def test_encoding_is_deterministic_and_async_gives_the_same_bytes() -> None:
    stream = STREAMS["retry"]
    assert _body(stream()) == _body(stream())

    async def agen() -> AsyncIterator[object]:
        for item in stream():  # type: ignore[attr-defined]
            yield item

    async def collect() -> str:
        return "".join(
            [frame async for frame in wire.encode(agen(), "vercel", message_id=MESSAGE_ID)]
        )

    assert asyncio.run(collect()) == _body(stream())


def test_without_message_id_start_has_none() -> None:
    body = "".join(wire.encode(UNCITED, "vercel"))
    chunks = _chunks(body)
    assert chunks[0] == {"type": "start"}
    assert "message_id" not in chunks[-2]["data"]


def test_a_stream_that_breaks_off_ends_with_an_error_chunk() -> None:
    def broken() -> Iterator[object]:
        yield "Début de réponse "
        raise RuntimeError("secret server detail")

    frames: list[wire.Frame] = []
    with pytest.raises(RuntimeError):
        frames.extend(wire.frames(broken(), "vercel"))
    chunks = [json.loads(f.data) for f in frames]
    assert chunks[-2] == {"type": "text-end", "id": "text-1"}
    assert chunks[-1] == {"type": "error", "errorText": "the answer broke off (RuntimeError)"}
    decoded = wire.decode(frames, "vercel")
    assert decoded.text == "Début de réponse "
    assert decoded.diagnostics == ["the message broke off: the answer broke off (RuntimeError)"]


def test_bad_chunks_are_wire_errors() -> None:
    with pytest.raises(wire.WireError):
        wire.decode('data: {"type":"text-delta","id":"nope","delta":"x"}\n\n', "vercel")
    with pytest.raises(wire.WireError):
        wire.decode("data: [1]\n\n", "vercel")
    with pytest.raises(wire.WireError):
        wire.decode('data: {"type":"data-unicite","data":{"content":3}}\n\n', "vercel")


def test_the_response_carries_the_ui_message_stream_header() -> None:
    pytest.importorskip("sse_starlette")
    from unicite.wire.starlette import sse_response

    response = sse_response(RICH, "vercel")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")


# --- the ai package's own reader -------------------------------------------------------------


def _read_with_ai(body: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    if not (JS / "node_modules" / "ai").is_dir():
        pytest.skip("the ai package is not installed: run `npm ci --prefix tests/wire/js`")
    run = subprocess.run(
        [node, str(JS / "read_vercel.mjs")],
        input=body.encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr.decode("utf-8", "replace")
    result: dict[str, Any] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize(
    "name", ["answer-alone", "deltas-then-answer", "retry", "uncited", "diverging"]
)
def test_the_ai_package_reads_the_message(name: str) -> None:
    final = _final(name)
    assert final is not None
    result = _read_with_ai(_body(STREAMS[name]()))
    message = result["message"]
    assert result["errors"] == []
    assert message["id"] == MESSAGE_ID
    assert message["role"] == "assistant"
    parts = message["parts"]
    resets = [k for k, part in enumerate(parts) if part["type"] == "data-unicite-reset"]
    shown = parts[resets[-1] + 1 :] if resets else parts
    text = "".join(part["text"] for part in shown if part["type"] == "text")
    assert text == _content(final)
    assert all(part["state"] == "done" for part in parts if part["type"] == "text")
    entries = wire.history(final)["metadata"]["citations"]
    urls = [p for p in parts if p["type"] == "source-url"]
    assert [(p["sourceId"], p["url"], p.get("title")) for p in urls] == [
        (e["id"], e["href"], e["title"]) for e in entries if e["href"] is not None
    ]
    documents = [p for p in parts if p["type"] == "source-document"]
    assert [p["sourceId"] for p in documents] == [e["id"] for e in entries if e["href"] is None]
    assert all(not p["url"].startswith("javascript") for p in urls)
    data = [p for p in parts if p["type"] == "data-unicite"]
    assert len(data) == 1
    assert data[0]["data"] == _sent(wire.history(final, message_id=MESSAGE_ID))


def test_the_ai_package_reports_a_broken_stream() -> None:
    def broken() -> Iterator[object]:
        yield "Début "
        raise RuntimeError("boom")

    frames: list[wire.Frame] = []
    with pytest.raises(RuntimeError):
        frames.extend(wire.frames(broken(), "vercel", message_id=MESSAGE_ID))
    result = _read_with_ai("".join(frame.encode() for frame in frames))
    assert result["errors"] == ["the answer broke off (RuntimeError)"]
    assert result["message"]["parts"] == [{"type": "text", "text": "Début ", "state": "done"}]


def test_the_ai_package_reads_a_stopped_message() -> None:
    speaking = asyncio.Event()

    async def model() -> AsyncIterator[object]:
        for piece in _pieces(_content(RICH)[:40]):
            yield piece
        speaking.set()
        await asyncio.sleep(30)  # stopped here
        yield RICH

    async def stopped() -> tuple[wire.Relay, list[wire.Frame]]:
        relay = wire.Relay(model(), "vercel", message_id=MESSAGE_ID, sources=RICH.sources)
        await asyncio.wait_for(speaking.wait(), 10)
        assert relay.cancel()
        return relay, [frame async for frame in relay.asubscribe()]

    relay, frames = asyncio.run(stopped())
    answer = relay.answer
    assert answer is not None
    result = _read_with_ai("".join(frame.encode() for frame in frames))
    assert result["errors"] == []
    assert [chunk["type"] for chunk in result["chunks"]][-2:] == ["data-unicite", "abort"]
    parts = result["message"]["parts"]
    text = "".join(part["text"] for part in parts if part["type"] == "text")
    assert text == _content(answer) == _content(RICH)[:40]
    assert all(part["state"] == "done" for part in parts if part["type"] == "text")
    data = [p for p in parts if p["type"] == "data-unicite"]
    assert data[0]["data"] == _sent(wire.history(answer, message_id=MESSAGE_ID))
    assert data[0]["data"]["metadata"]["diagnostics"][-1] == (
        "the answer was stopped before it finished"
    )
