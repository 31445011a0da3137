"""The ``unicite`` wire protocol: deltas, the completed event, the history, and decoding."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from _answers import SOURCES, marked, native, uncited

import unicite
from unicite import CitedAnswer, UsageError, WireError, wire
from unicite.generation import Retry


def _events(frames: list[str]) -> list[tuple[str, dict[str, object]]]:
    out = []
    for frame in frames:
        lines = dict(line.split(": ", 1) for line in frame.strip("\n").split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def _wire_view(answer: CitedAnswer) -> CitedAnswer:
    """What the wire carries of an answer: all but content, extras and raw."""
    view = wire.decode(wire.encode(answer))
    sources = [
        s.model_copy(update={"content": None, "extras": {}, "raw": None}) for s in answer.sources
    ]
    citations = [c.model_copy(update={"extras": {}, "raw": None}) for c in answer.citations]
    assert view.sources == sources
    return view.replace(citations=citations) if view.text == answer.text else view


def test_deltas_carry_text_only_and_the_completed_event_the_history() -> None:
    answer = marked()
    frames = list(wire.encode(["Le viaduc ", "de Millau", answer], message_id="msg-1"))
    events = _events(frames)
    assert [name for name, _ in events] == [
        "thread.message.delta",
        "thread.message.delta",
        "thread.message.completed",
    ]
    assert events[0][1] == {
        "type": "thread.message.delta",
        "message_id": "msg-1",
        "delta": "Le viaduc ",
    }
    assert events[2][1] == wire.history(answer, message_id="msg-1")
    assert [frame.split("\n", 1)[0] for frame in frames] == ["id: 1", "id: 2", "id: 3"]


def test_marker_n_opens_citations_n_minus_one() -> None:
    answer = marked()
    document = wire.history(answer)
    content = document["content"]
    entries = document["metadata"]["citations"]
    assert [entry["number"] for entry in entries] == list(range(1, len(answer.sources) + 1))
    for entry in entries:
        assert entry["id"] == answer.sources[entry["number"] - 1].id
        for span in entry["spans"]:
            marker = span["marker"]
            written = content[marker["start"] : marker["end"]]
            # The marker the text shows names this very source.
            assert f"[{entry['number']}]" in written
            assert content[span["start"] : span["end"]] == span["text"]


def test_spans_in_utf16_and_bytes_index_the_content_as_javascript_and_utf8_do() -> None:
    document = wire.history(native())
    content = document["content"]
    units = content.encode("utf-16-le")
    data = content.encode("utf-8")
    spans = [span for entry in document["metadata"]["citations"] for span in entry["spans"]]
    assert spans
    for span in spans:
        s16, e16 = span["utf16"]
        assert units[2 * s16 : 2 * e16].decode("utf-16-le") == span["text"]
        sb, eb = span["bytes"]
        assert data[sb:eb].decode("utf-8") == span["text"]
        ms, me = span["marker"]["utf16"]
        assert units[2 * ms : 2 * me].decode("utf-16-le").startswith("[")


def test_native_citations_get_markers_on_the_wire() -> None:
    answer = native()
    assert not answer.has_inline_markers
    document = wire.history(answer)
    assert document["metadata"]["has_markers"] is True
    assert document["content"] == (
        "東京タワーの高さは333メートルです。[3]Le viaduc a été inauguré en 2004.[1][2]"
    )
    decoded = wire.decode(wire.encode(answer))
    note = (
        "metadata without markers: 2 citation(s) had no marker in the text; "
        "[n] markers were added at the end of their spans"
    )
    assert decoded == unicite.inject_markers(answer).replace(
        sources=[s.model_copy(update={"content": None}) for s in answer.sources],
        diagnostics=[note],
    )
    assert wire.history(decoded)["metadata"]["diagnostics"] == [note]  # said once


def test_decode_gives_back_the_answer_the_wire_carries() -> None:
    answer = marked()
    decoded = wire.decode("".join(wire.encode(answer)))
    assert decoded.text == answer.text
    assert decoded.citations == answer.citations
    assert [s.id for s in decoded.sources] == [s.id for s in answer.sources]
    assert decoded.sources[1].content is None  # full contents stay on the server
    assert decoded.diagnostics == answer.diagnostics
    # The history of the decoded answer is the same document: a fixed point.
    assert wire.history(decoded) == wire.history(answer)


def test_hostile_url_is_carried_but_never_offered_as_a_link() -> None:
    entries = wire.history(marked())["metadata"]["citations"]
    hostile = next(entry for entry in entries if entry["title"].startswith("<img"))
    assert hostile["url"] == "javascript:alert(1)"
    assert hostile["href"] is None
    assert entries[0]["href"] == "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"


def test_sources_without_citations_are_listed_uncited() -> None:
    document = wire.history(uncited())
    assert document["metadata"]["has_markers"] is False
    assert [entry["cited"] for entry in document["metadata"]["citations"]] == [False, False]
    assert document["content"] == "Zürich liegt auf 408 m ü. M."
    assert document["metadata"]["diagnostics"] == [
        "metadata without markers: 2 source(s) and no citation; they are listed after the text"
    ]


def test_a_retry_resets_the_text_and_decoding_follows_it() -> None:
    answer = marked()
    stream = ["Mauvaise réponse", Retry(round=2, reason="no citation"), "Le viaduc", answer]
    frames = list(wire.encode(stream))
    names = [name for name, _ in _events(frames)]
    assert names[1] == "thread.message.reset"
    assert wire.decode(frames[:3]).text == "Le viaduc"
    assert wire.decode(frames) == wire.decode(wire.encode(answer))


def test_a_stream_without_its_answer_is_completed_uncited_and_says_so() -> None:
    frames = list(wire.encode(iter(["Zürich ", "zählt 448 000 Einwohner [1]."])))
    answer = wire.decode(frames)
    assert answer.text == "Zürich zählt 448 000 Einwohner [1]."
    assert answer.citations == []
    assert any("without a cited answer" in note for note in answer.diagnostics)


def test_a_cut_stream_decodes_to_its_text_with_a_diagnostic() -> None:
    frames = list(wire.encode(["Le viaduc ", "de Millau", marked()]))
    answer = wire.decode(frames[:2])
    assert answer.text == "Le viaduc de Millau"
    assert any("ended before thread.message.completed" in note for note in answer.diagnostics)


def test_a_failing_stream_sends_an_error_frame_without_the_message_then_raises() -> None:
    def broken() -> object:
        yield "Le viaduc "
        raise RuntimeError("secret database password in the message")

    sent: list[str] = []
    with pytest.raises(RuntimeError):
        sent.extend(wire.encode(broken()))
    name, data = _events(sent)[-1]
    assert name == "thread.message.error"
    assert "secret" not in json.dumps(data)
    assert "RuntimeError" in data["error"]
    decoded = wire.decode(sent)
    assert decoded.text == "Le viaduc "
    assert any("broke off" in note for note in decoded.diagnostics)


def test_generation_results_and_langchain_chunks_are_read() -> None:
    answer = marked()

    class Generation:  # what CitedGeneration and adapter results hold
        def __init__(self, answer: CitedAnswer) -> None:
            self.answer = answer

    for last in (Generation(answer), {"citations": answer}):
        frames = list(wire.encode([{"answer": "Le viaduc"}, last]))
        assert wire.decode(frames) == wire.decode(wire.encode(answer))


def test_bad_streams_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="protocol"):
        list(wire.encode(marked(), protocol="carrier-pigeon"))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="got int"):
        list(wire.encode(["texte", 42]))
    with pytest.raises(UsageError, match="after it"):
        list(wire.encode([marked(), "encore"]))
    with pytest.raises(UsageError):
        list(wire.encode("just a string"))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="message_id"):
        wire.history(marked(), message_id=7)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body",
    [
        'event: thread.message.completed\ndata: {"content": 3}\n\n',
        'event: thread.message.completed\ndata: {"content": "x", "metadata": {}}\n\n',
        "event: thread.message.completed\ndata: not json\n\n",
        'event: thread.message.delta\ndata: {"nodelta": 1}\n\n',
        'event: thread.message.completed\ndata: {"content": "abc", "metadata": {"citations": '
        '[{"number": 1, "id": "a", "spans": [{"start": 0, "end": 2, "text": "zz", '
        '"sources": [1]}]}]}}\n\n',
        'event: thread.message.completed\ndata: {"content": "abc", "metadata": {"citations": '
        '[{"number": 2, "id": "a"}]}}\n\n',
        'event: thread.message.completed\ndata: {"content": "abc", "metadata": {"citations": '
        '[{"number": 1, "id": "a", "spans": [{"start": 0, "end": 2, "text": "ab", '
        '"sources": [5]}]}]}}\n\n',
    ],
)
def test_malformed_frames_are_wire_errors(body: str) -> None:
    with pytest.raises(WireError):
        wire.decode(body)


def test_async_streams_encode_to_the_same_frames() -> None:
    answer = marked()

    async def stream() -> AsyncIterator[object]:
        for item in ["Le viaduc ", Retry(round=2, reason="r"), "de Millau", answer]:
            await asyncio.sleep(0)
            yield item

    async def collect() -> list[str]:
        return [frame async for frame in wire.encode(stream(), message_id="m")]

    sync = list(
        wire.encode(["Le viaduc ", Retry(round=2, reason="r"), "de Millau", answer], message_id="m")
    )
    assert asyncio.run(collect()) == sync


def test_same_answer_same_bytes() -> None:
    assert list(wire.encode(marked(), message_id="m")) == list(
        wire.encode(marked(), message_id="m")
    )


def test_lone_surrogates_travel_as_escapes() -> None:
    answer = unicite.cite("Texte cassé \ud800 ici [1].", SOURCES[:1])
    body = "".join(wire.encode(answer)).encode("utf-8")  # would fail with a raw surrogate
    assert wire.decode(body).text == answer.text


def test_decode_reads_bytes_cut_inside_characters_and_crlf() -> None:
    body = "".join(wire.encode(["東京", marked()])).replace("\n", "\r\n").encode("utf-8")
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]  # cuts UTF-8 sequences and CRLF
    assert wire.decode(chunks) == wire.decode(wire.encode(marked()))
