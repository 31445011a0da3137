"""The ``openwebui`` wire protocol: Chat Completions chunks carrying Open WebUI source events.

Besides round trips, the frames go through a Python transcription of what Open WebUI does with
a model connection's stream (``stream_body_handler`` in ``backend/open_webui/utils/
middleware.py``) and of how its front end numbers a message's sources (``getSourceIds`` in
``ContentRenderer.svelte``, the grouping in ``Citations.svelte``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _answers import (
    FIRST_ROUND,
    RICH,
    TOKYO_HREF,
    UNCITED,
    streams,
)
from _answers import cite_span as _cite
from _answers import content_of as _content

import unicite
from unicite import CitedAnswer, Source, wire

MESSAGE_ID = "msg-7"


SAME_TEXT = "Paris est la capitale. Lyon est plus au sud. Marseille est un port."
SAME_NAMES = CitedAnswer(
    text=SAME_TEXT,
    sources=[
        Source(id="a", url="https://fr.wikipedia.org/wiki/Paris", title="Wikipédia"),
        Source(id="b", url="https://fr.wikipedia.org/wiki/Lyon", title="Wikipédia"),
        Source(id="c", url="https://fr.wikipedia.org/wiki/Paris#Histoire", title="Paris"),
        Source(id="https://example.com/not-a-link", kind="document", title="Wikipédia"),
        Source(id="e", url="https://fr.wikipedia.org/wiki/Marseille"),
    ],
    citations=[
        _cite(SAME_TEXT, "Paris est la capitale.", ["a", "c"]),
        _cite(SAME_TEXT, "Lyon est plus au sud.", ["b", "https://example.com/not-a-link"]),
        _cite(SAME_TEXT, "Marseille est un port.", ["e"]),
    ],
)


STREAMS: dict[str, Callable[[], object]] = {**streams(), "same-names": lambda: SAME_NAMES}
FINAL: dict[str, CitedAnswer | None] = {
    "no-answer": None,
    "uncited": UNCITED,
    "same-names": SAME_NAMES,
}


def _final(name: str) -> CitedAnswer | None:
    return FINAL.get(name, RICH)


def _body(stream: object, protocol: str = "openwebui") -> str:
    return "".join(wire.encode(stream, protocol, message_id=MESSAGE_ID))  # type: ignore[arg-type]


def _datas(body: str) -> list[str]:
    assert body.endswith("\n\n")
    datas = []
    for block in body[:-2].split("\n\n"):
        assert block.startswith("data: ")
        assert "\n" not in block
        datas.append(block.removeprefix("data: "))
    assert datas[-1] == "[DONE]"
    return datas


def _chunks(body: str) -> list[dict[str, Any]]:
    return [json.loads(data) for data in _datas(body)[:-1]]


def _sent(value: object) -> object:
    return json.loads(json.dumps(value))


def _without_history(body: str) -> str:
    kept = [d for d in _datas(body) if '"unicite":{"history"' not in d]
    return "".join(f"data: {d}\n\n" for d in kept)


# --- Open WebUI, transcribed ------------------------------------------------------------------


def _open_webui(body: str) -> tuple[str, list[dict[str, Any]], list[Any]]:
    """What Open WebUI keeps of a model connection's stream: content, sources, errors.

    ``stream_body_handler``: a line's JSON with an ``event`` goes to the event emitter; a chunk
    without choices is skipped (its ``error`` shown); ``choices[0].delta.content`` is appended.
    The emitter appends the data of ``source``/``citation`` events without a ``type`` to the
    message's sources; ``delta.annotations`` become source events too.
    """
    content = ""
    sources: list[dict[str, Any]] = []
    errors: list[Any] = []
    for line in body.splitlines():
        if not line.strip() or not line.startswith("data:"):
            continue
        try:
            data = json.loads(line[len("data:") :].strip())
        except ValueError:
            continue
        if "event" in data:
            event = data["event"]
            if event.get("type") in ("source", "citation") and event["data"].get("type") is None:
                sources.append(event["data"])
        choices = data.get("choices", [])
        if not choices:
            if data.get("error"):
                errors.append(data["error"])
            continue
        delta = choices[0].get("delta", {})
        for annotation in delta.get("annotations") or ():
            if annotation.get("type") == "url_citation" and "url_citation" in annotation:
                url = annotation["url_citation"].get("url", "")
                title = annotation["url_citation"].get("title", url)
                sources.append(
                    {
                        "source": {"name": title, "url": url},
                        "document": [title],
                        "metadata": [{"source": url, "name": title}],
                    }
                )
        value = delta.get("content")
        if value:
            content += value
    return content.strip(), sources, errors


def _source_ids(sources: list[dict[str, Any]]) -> list[str]:
    """``getSourceIds`` of ``ContentRenderer.svelte``: what ``[n]`` shows is entry ``n - 1``."""
    result: list[str] = []
    for source in sources:
        for index in range(len(source.get("document") or [])):
            metadata = (source.get("metadata") or [None] * (index + 1))[index] or {}
            key = metadata.get("source", "N/A")
            if metadata.get("name"):
                result.append(metadata["name"])
            elif isinstance(key, str) and key.startswith(("http://", "https://")):
                result.append(key)
            else:
                result.append((source.get("source") or {}).get("name", key))
    return list(dict.fromkeys(result))


def _citations(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The grouping of ``Citations.svelte``: ``[n]`` opens entry ``n - 1``."""
    grouped: list[dict[str, Any]] = []
    for source in sources:
        for index, document in enumerate(source.get("document") or []):
            metadata = (source.get("metadata") or [None] * (index + 1))[index] or {}
            key = metadata.get("source") or (source.get("source") or {}).get("id") or "N/A"
            shown = dict(source.get("source") or {})
            if metadata.get("name"):
                shown["name"] = metadata["name"]
            if key.startswith(("http://", "https://")):
                shown.update(name=key, url=key)
            existing = next((item for item in grouped if item["id"] == key), None)
            if existing is not None:
                existing["document"].append(document)
            else:
                grouped.append({"id": key, "source": shown, "document": [document]})
    return grouped


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(STREAMS))
def test_decoding_gives_what_the_unicite_protocol_gives(name: str) -> None:
    decoded = wire.decode(_body(STREAMS[name]()), "openwebui")
    assert decoded == wire.decode(_body(STREAMS[name](), "unicite"), "unicite")
    final = _final(name)
    if final is not None:
        assert _sent(wire.history(decoded)) == _sent(wire.history(final))


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_chunk_is_a_chat_completion_chunk(name: str) -> None:
    types = pytest.importorskip("openai.types.chat")
    chunks = _chunks(_body(STREAMS[name]()))
    for chunk in chunks:
        parsed = types.ChatCompletionChunk.model_validate(chunk)
        assert parsed.id == MESSAGE_ID
        assert parsed.created == 0
    assert chunks[-1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert all("annotations" not in json.dumps(chunk) for chunk in chunks[:-2])


@pytest.mark.parametrize("name", ["answer-alone", "deltas-then-answer", "uncited", "same-names"])
def test_open_webui_shows_the_text_and_numbers_the_sources_as_the_markers(name: str) -> None:
    final = _final(name)
    assert final is not None
    content, sources, errors = _open_webui(_body(STREAMS[name]()))
    assert errors == []
    assert content == _content(final).strip()
    entries = wire.history(final)["metadata"]["citations"]
    assert [source["source"]["id"] for source in sources] == [e["id"] for e in entries]
    labels = _source_ids(sources)
    opened = _citations(sources)
    assert len(labels) == len(opened) == len(entries)
    for n, entry in enumerate(entries, 1):
        # [n] shows the n-th source's name and opens the n-th source.
        assert labels[n - 1] == sources[n - 1]["metadata"][0]["name"]
        assert opened[n - 1]["source"]["id"] == entry["id"]
        url = opened[n - 1]["source"].get("url")
        assert url == entry["href"]


def test_the_source_events() -> None:
    chunks = _chunks(_body(RICH))
    events = [chunk["event"] for chunk in chunks if "event" in chunk]
    assert all(chunk["choices"] == [] for chunk in chunks if "event" in chunk)
    assert events[0] == {
        "type": "source",
        "data": {
            "source": {
                "id": "eiffel",
                "name": "Tour Eiffel — Wikipédia",
                "url": "https://fr.wikipedia.org/wiki/Tour_Eiffel",
            },
            "document": ["La tour Eiffel est une tour de fer puddlé."],
            "metadata": [
                {
                    "source": "https://fr.wikipedia.org/wiki/Tour_Eiffel",
                    "name": "Tour Eiffel — Wikipédia",
                    "url": "https://fr.wikipedia.org/wiki/Tour_Eiffel",
                }
            ],
        },
    }
    assert events[1]["data"] == {
        "source": {"id": "report", "name": "Rapport annuel 2024.pdf"},
        "document": ["330 m."],
        "metadata": [{"source": "report", "name": "Rapport annuel 2024.pdf"}],
    }
    assert events[2]["data"] == {
        "source": {"id": "hostile", "name": "Cliquez ici"},
        "document": ["Cliquez ici"],
        "metadata": [{"source": "hostile", "name": "Cliquez ici"}],
    }
    assert events[3]["data"]["metadata"][0]["source"] == TOKYO_HREF
    for chunk in chunks:
        if "unicite" not in chunk:
            assert "javascript" not in json.dumps(chunk)


def test_repeated_names_and_urls_are_made_unique() -> None:
    chunks = _chunks(_body(SAME_NAMES))
    metadata = [chunk["event"]["data"]["metadata"][0] for chunk in chunks if "event" in chunk]
    assert [m["name"] for m in metadata] == [
        "Wikipédia",
        "Wikipédia (2)",
        "Paris",
        "Wikipédia (4)",
        "wikipedia.org",
    ]
    assert [m["source"] for m in metadata] == [
        "https://fr.wikipedia.org/wiki/Paris",
        "https://fr.wikipedia.org/wiki/Lyon",
        "https://fr.wikipedia.org/wiki/Paris#Histoire",
        "unicite:https://example.com/not-a-link",
        "https://fr.wikipedia.org/wiki/Marseille",
    ]


@pytest.mark.parametrize("name", ["answer-alone", "retry", "uncited", "same-names"])
def test_without_the_history_the_markers_give_the_same_citations(name: str) -> None:
    final = _final(name)
    assert final is not None
    decoded = wire.decode(_without_history(_body(STREAMS[name]())), "openwebui")
    reference = wire.decode(_body(STREAMS[name]()), "openwebui")
    assert decoded.text == reference.text == _content(final)
    assert [s.id for s in decoded.sources] == [s.id for s in reference.sources]
    entries = wire.history(final)["metadata"]["citations"]
    assert [s.url for s in decoded.sources] == [e["href"] for e in entries]
    assert [(c.start, c.end, c.source_ids, c.marker_span) for c in decoded.citations] == [
        (c.start, c.end, c.source_ids, c.marker_span) for c in reference.citations
    ]
    assert decoded.diagnostics[-1] == (
        "no unicite history chunk: the citations are read from the [n] markers"
    )


def test_a_retry_keeps_the_last_round_and_open_webui_shows_both() -> None:
    body = _body(STREAMS["retry"]())
    resets = [c["unicite"] for c in _chunks(body) if "reset" in c.get("unicite", {})]
    assert resets == [{"reset": {"round": 2, "reason": "marker [7] names no source"}}]
    content, sources, _ = _open_webui(body)
    assert content == (FIRST_ROUND + _content(RICH)).strip()
    assert len(sources) == len(RICH.sources)
    assert wire.decode(body, "openwebui").text == _content(RICH)


def test_encoding_is_deterministic_and_async_gives_the_same_bytes() -> None:
    stream = STREAMS["retry"]
    assert _body(stream()) == _body(stream())

    async def agen() -> AsyncIterator[object]:
        for item in stream():  # type: ignore[attr-defined]
            yield item

    async def collect() -> str:
        frames = wire.encode(agen(), "openwebui", message_id=MESSAGE_ID)
        return "".join([frame async for frame in frames])

    assert asyncio.run(collect()) == _body(stream())


def test_a_stream_that_breaks_off_shows_an_error() -> None:
    def broken() -> Iterator[object]:
        yield "Début de réponse "
        raise RuntimeError("secret server detail")

    frames: list[wire.Frame] = []
    with pytest.raises(RuntimeError):
        frames.extend(wire.frames(broken(), "openwebui"))
    body = "".join(frame.encode() for frame in frames)
    content, _, errors = _open_webui(body)
    assert content == "Début de réponse"
    assert errors == [{"message": "the answer broke off (RuntimeError)", "type": "server_error"}]
    decoded = wire.decode(frames, "openwebui")
    assert decoded.text == "Début de réponse "
    assert decoded.diagnostics[-1] == "the message broke off: the answer broke off (RuntimeError)"


def test_the_openai_protocol_lists_only_cited_url_sources_in_open_webui() -> None:
    # For comparison: Open WebUI reads the openai protocol's annotations as sources, one per
    # annotation, so documents and uncited sources are missing there.
    _, sources, _ = _open_webui(_body(RICH, "openai"))
    assert [m["source"] for s in sources for m in s["metadata"]] == [
        "https://fr.wikipedia.org/wiki/Tour_Eiffel",
        "https://fr.wikipedia.org/wiki/Tour_Eiffel",
        TOKYO_HREF,
        TOKYO_HREF,
    ]


def test_bad_source_events_are_wire_errors() -> None:
    chunk = {"choices": [], "event": {"type": "source", "data": "nope"}}
    with pytest.raises(wire.WireError):
        wire.decode(f"data: {json.dumps(chunk)}\n\n", "openwebui")
    with pytest.raises(wire.WireError):
        wire.decode('data: {"choices":[],"unicite":{"history":{"content":1}}}\n\n', "openwebui")


def test_parse_markers_is_the_public_reader_of_the_fallback() -> None:
    # The fallback is unicite.parse_markers over the decoded sources: the same as calling it.
    decoded = wire.decode(_without_history(_body(RICH)), "openwebui")
    again = unicite.parse_markers(decoded.text, decoded.sources, style="brackets")
    assert again.citations == decoded.citations
