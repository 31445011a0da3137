"""The ``openai`` wire protocol: Chat Completions chunks with ``url_citation`` annotations.

Round trips go through `unicite.collect_stream`, the reader of OpenAI's own streams; every chunk
is checked with the OpenAI SDK's ``ChatCompletionChunk`` where the SDK is installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _answers import (
    EIFFEL_HREF,
    FIRST_ROUND,
    RICH,
    TOKYO_HREF,
    UNCITED,
    streams,
)
from _answers import content_of as _content

import unicite
from unicite import CitedAnswer, wire

MESSAGE_ID = "chatcmpl-42"


STREAMS: dict[str, Callable[[], object]] = streams()
FINAL: dict[str, CitedAnswer | None] = {"no-answer": None, "uncited": UNCITED}
# The claims each URL source supports in RICH's shown text: (claim, url).
RICH_CLAIMS = {
    ("La tour Eiffel mesure 330 mètres 🗼.", EIFFEL_HREF),
    ("東京タワーは333メートルです。", TOKYO_HREF),
    ("Les deux sont des tours 📡 célèbres.", EIFFEL_HREF),
    ("Les deux sont des tours 📡 célèbres.", TOKYO_HREF),
}


def _final(name: str) -> CitedAnswer | None:
    return FINAL.get(name, RICH)


def _body(stream: object, message_id: str | None = MESSAGE_ID) -> str:
    return "".join(wire.encode(stream, "openai", message_id=message_id))  # type: ignore[arg-type]


def _chunks(body: str) -> list[dict[str, Any]]:
    """The chunks of a body whose frames are each one ``data:`` line, ending with ``[DONE]``."""
    assert body.endswith("\n\n")
    datas = []
    for block in body[:-2].split("\n\n"):
        assert block.startswith("data: ")
        assert "\n" not in block
        datas.append(block.removeprefix("data: "))
    assert datas[-1] == "[DONE]"
    return [json.loads(data) for data in datas[:-1]]


def _annotations(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        annotation
        for chunk in chunks
        for choice in chunk["choices"]
        for annotation in choice["delta"].get("annotations", ())
    ]


def _whole(chunks: list[dict[str, Any]]) -> str:
    """The content a plain client shows: every delta, appended."""
    return "".join(
        choice["delta"].get("content", "") for chunk in chunks for choice in chunk["choices"]
    )


def _claims(answer: CitedAnswer) -> set[tuple[str, str | None]]:
    pairs = set()
    for citation in answer.citations:
        for sid in citation.source_ids:
            source = answer.source(sid)
            assert source is not None
            pairs.add((citation.text, source.url))
    return pairs


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_chunk_is_a_chat_completion_chunk(name: str) -> None:
    types = pytest.importorskip("openai.types.chat")
    from openai.types.chat.chat_completion_message import Annotation

    chunks = _chunks(_body(STREAMS[name]()))
    for chunk in chunks:
        parsed = types.ChatCompletionChunk.model_validate(chunk)
        assert parsed.object == "chat.completion.chunk"
        assert parsed.id == MESSAGE_ID
        assert parsed.created == 0
    for annotation in _annotations(chunks):
        assert Annotation.model_validate(annotation).type == "url_citation"
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]


@pytest.mark.parametrize("name", list(STREAMS))
def test_decoding_reads_the_text_and_the_url_citations(name: str) -> None:
    decoded = wire.decode(_body(STREAMS[name]()), "openai")
    final = _final(name)
    if final is None:
        assert decoded.text == "Du texte sans réponse 🙂"
        assert decoded.citations == []
        return
    assert decoded.text == _content(final)
    expected = RICH_CLAIMS if final is RICH else set()
    assert _claims(decoded) == expected
    assert {s.url for s in decoded.sources} == {url for _, url in expected}
    assert decoded.provider == "openai"
    assert "finish_reason" in decoded.extras


def test_annotations_index_code_points_of_the_whole_content() -> None:
    chunks = _chunks(_body(STREAMS["deltas-then-answer"]()))
    content = _whole(chunks)
    assert content == _content(RICH)
    found = set()
    for annotation in _annotations(chunks):
        body = annotation["url_citation"]
        found.add((content[body["start_index"] : body["end_index"]], body["url"]))
    assert found == RICH_CLAIMS
    # In source order: every Eiffel annotation comes before every Tokyo one.
    urls = [a["url_citation"]["url"] for a in _annotations(chunks)]
    assert urls == [EIFFEL_HREF, EIFFEL_HREF, TOKYO_HREF, TOKYO_HREF]
    titles = {a["url_citation"]["url"]: a["url_citation"]["title"] for a in _annotations(chunks)}
    assert titles == {EIFFEL_HREF: "Tour Eiffel — Wikipédia", TOKYO_HREF: "東京タワー"}


def test_sources_without_a_safe_url_are_not_annotated() -> None:
    body = _body(RICH)
    assert "javascript" not in body
    assert "Rapport annuel" not in body
    assert "Cliquez" not in body
    decoded = wire.decode(body, "openai")
    assert all(s.url is not None and s.url.startswith("https://") for s in decoded.sources)


def test_a_retry_keeps_the_last_round_and_plain_clients_see_both() -> None:
    body = _body(STREAMS["retry"]())
    chunks = _chunks(body)
    resets = [c for c in chunks if "unicite" in c]
    assert [c["unicite"] for c in resets] == [
        {"reset": {"round": 2, "reason": "marker [7] names no source"}}
    ]
    assert resets[0]["choices"] == []
    whole = _whole(chunks)
    assert whole == FIRST_ROUND + _content(RICH)
    for annotation in _annotations(chunks):
        body_ = annotation["url_citation"]
        assert body_["start_index"] >= len(FIRST_ROUND)
    # A plain client (here unicite's own reader, fed everything) shows both rounds, and the
    # annotations still cite the right claims of the whole content.
    plain = unicite.extract(body)
    assert plain.text == whole
    assert _claims(plain) == RICH_CLAIMS
    # The decoder honours the reset.
    decoded = wire.decode(body, "openai")
    assert decoded.text == _content(RICH)
    assert _claims(decoded) == RICH_CLAIMS


def test_a_final_text_that_does_not_continue_the_stream_resets_it() -> None:
    chunks = _chunks(_body(STREAMS["diverging"]()))
    resets = [c["unicite"]["reset"] for c in chunks if "unicite" in c]
    assert resets == [{"round": 0, "reason": "the final text does not continue the text streamed"}]


def test_extract_reads_the_body_like_the_decoder() -> None:
    body = _body(STREAMS["deltas-then-answer"]())
    assert unicite.extract(body) == wire.decode(body, "openai")


def test_model_and_id() -> None:
    alone = _chunks("".join(wire.encode(RICH, "openai")))
    assert {c["model"] for c in alone} == {"gpt-4o-search-preview"}
    assert {c["id"] for c in alone} == {"chatcmpl-unicite"}
    streamed = _chunks(_body(STREAMS["deltas-then-answer"]()))
    assert {c["model"] for c in streamed} == {"unicite"}
    no_model = _chunks(_body(UNCITED))
    assert {c["model"] for c in no_model} == {"unicite"}


def test_encoding_is_deterministic_and_async_gives_the_same_bytes() -> None:
    stream = STREAMS["retry"]
    assert _body(stream()) == _body(stream())

    async def agen() -> AsyncIterator[object]:
        for item in stream():  # type: ignore[attr-defined]
            yield item

    async def collect() -> str:
        frames = wire.encode(agen(), "openai", message_id=MESSAGE_ID)
        return "".join([frame async for frame in frames])

    assert asyncio.run(collect()) == _body(stream())


def test_a_stream_that_breaks_off_ends_with_an_error_chunk() -> None:
    def broken() -> Iterator[object]:
        yield "Début de réponse "
        raise RuntimeError("secret server detail")

    frames: list[wire.Frame] = []
    with pytest.raises(RuntimeError):
        frames.extend(wire.frames(broken(), "openai"))
    last = json.loads(frames[-1].data)
    assert last["choices"] == []
    assert last["error"] == {
        "message": "the answer broke off (RuntimeError)",
        "type": "server_error",
    }
    assert "secret" not in "".join(frame.data for frame in frames)
    decoded = wire.decode(frames, "openai")
    assert decoded.text == "Début de réponse "
    assert decoded.diagnostics[-1] == "the message broke off: the answer broke off (RuntimeError)"


def test_the_openai_sdk_raises_on_the_error_chunk() -> None:
    pytest.importorskip("openai")
    import httpx
    import openai
    from openai.types.chat import ChatCompletionChunk

    def broken() -> Iterator[object]:
        yield "Début "
        raise RuntimeError("boom")

    frames: list[wire.Frame] = []
    with pytest.raises(RuntimeError):
        frames.extend(wire.frames(broken(), "openai"))
    body = "".join(frame.encode() for frame in frames).encode("utf-8")
    response = httpx.Response(
        200,
        content=body,
        headers={"content-type": "text/event-stream"},
        request=httpx.Request("POST", "http://test/v1/chat/completions"),
    )
    client = openai.OpenAI(api_key="test", base_url="http://test/v1")
    stream = openai.Stream(cast_to=ChatCompletionChunk, response=response, client=client)
    seen = []
    with pytest.raises(openai.APIError, match="broke off"):
        seen.extend(chunk.choices[0].delta.content for chunk in stream)
    assert seen == ["", "Début "]
