"""Every citation carries an id, wherever it is made (seed 001's ``ref-0``, ``ref-1``, ...).

`extract`, `parse_markers`, `attribute`, `MarkerStream` and the stream collectors give the
same ids `cite` gives for the same input: the id comes from the citation's place in its answer,
a given id is kept, and ids are unique within an answer.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _fuzz import json_payloads, sse_payloads

import unicite
from unicite import Citation, CitedAnswer, MarkerStream, Source, StreamCollector
from unicite.markers import parse_markers, renumber

SOURCES = [
    Source(
        id="bern", url="https://www.bern.ch/", title="Bern", content="Bern ist die Bundesstadt."
    ),
    Source(id="zurich", url="https://www.zuerich.ch/", title="Zürich", content="Zürich ist gross."),
    Source(id="geneve", url="https://www.geneve.ch/", title="Genève", content="Genève, ONU."),
]
TEXT = "Genf beherbergt die UNO [3]. Zürich ist gross [2, 3]. Bern [1]."

# Anthropic cites a whole text block; the [3] of the first block names a given source.
ANTHROPIC = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "text", "text": "Genf beherbergt die UNO [3]. "},
        {
            "type": "text",
            "text": "Zürich zählt rund 440 000 Einwohner.",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "Zürich ist gross.",
                    "document_index": 0,
                    "document_title": "Stadt Zürich",
                    "start_char_index": 0,
                    "end_char_index": 17,
                }
            ],
        },
    ],
    "stop_reason": "end_turn",
}


def ids(answer: CitedAnswer) -> list[str | None]:
    return [c.id for c in answer.citations]


def check_ids(answer: CitedAnswer) -> None:
    found = ids(answer)
    assert None not in found, found
    assert len(set(found)) == len(found), found


def test_parse_markers_gives_the_ids_cite_gives() -> None:
    parsed = parse_markers(TEXT, SOURCES)
    assert ids(parsed) == ["ref-0", "ref-1", "ref-2"]
    assert ids(renumber(parsed)) == ids(parsed)
    cited = unicite.cite(TEXT, SOURCES)
    assert cited == renumber(parsed)
    assert ids(unicite.cite(TEXT, SOURCES, renumber=False)) == ids(parsed)


@pytest.mark.parametrize("payload", json_payloads(), ids=lambda p: p.name)
def test_extract_gives_the_ids_cite_keeps(payload: Any) -> None:
    answer = unicite.extract(payload.data)
    check_ids(answer)
    assert ids(answer) == [f"ref-{k}" for k in range(len(answer.citations))]
    assert unicite.extract(copy.deepcopy(payload.data)) == answer
    assert ids(unicite.cite(answer)) == ids(answer)
    assert ids(unicite.cite(payload.data)) == ids(answer)
    assert CitedAnswer.from_json(answer.to_json()) == answer


def test_cite_keeps_native_ids_and_gives_added_marker_citations_new_ones() -> None:
    read = unicite.extract(ANTHROPIC)
    assert [(c.origin, c.id) for c in read.citations] == [("native", "ref-0")]
    answer = unicite.cite(ANTHROPIC, SOURCES)
    # The [3] before the native citation is added by cite: it takes the next free id.
    assert [(c.origin, c.id) for c in answer.citations] == [
        ("marker", "ref-1"),
        ("native", "ref-0"),
    ]


def test_attribute_gives_ids() -> None:
    answer = unicite.attribute("Bern ist die Bundesstadt. Zürich ist gross.", SOURCES)
    assert answer.citations
    check_ids(answer)
    assert ids(unicite.cite(answer)) == ids(answer)


def test_marker_stream_answer_has_the_ids_of_cite() -> None:
    for renumbered in (True, False):
        stream = MarkerStream(SOURCES, renumber=renumbered)
        shown = "".join(stream.feed(TEXT[n : n + 5]) for n in range(0, len(TEXT), 5))
        shown += stream.close()
        expected = unicite.cite(TEXT, SOURCES, renumber=renumbered)
        assert shown == stream.answer.text == expected.text
        assert stream.answer.citations == expected.citations
        assert ids(stream.answer) == ["ref-0", "ref-1", "ref-2"]


@pytest.mark.parametrize("payload", sse_payloads(), ids=lambda p: p.name)
def test_streamed_citations_carry_their_final_ids(payload: Any) -> None:
    collector = StreamCollector()
    announced: list[Citation] = []
    for event in payload.data:
        announced.extend(item.citation for item in collector.feed(event))
    answer = collector.result()
    check_ids(answer)
    assert answer == unicite.collect_stream(payload.raw)
    # What was announced live is the final citation, id and all.
    for citation in announced:
        assert citation.id is not None
        assert citation in answer.citations, citation


def test_a_repeated_id_is_replaced_and_a_given_one_kept() -> None:
    text = "Bern. Zürich. Genf."
    cited = [
        Citation(start=0, end=5, text="Bern.", source_ids=["bern"], id="x"),
        Citation(start=6, end=13, text="Zürich.", source_ids=["zurich"], id="x"),
        Citation(start=14, end=19, text="Genf.", source_ids=["geneve"]),
    ]
    answer = CitedAnswer(text=text, sources=SOURCES, citations=cited)
    assert ids(answer) == ["x", "ref-1", "ref-2"]
    assert answer.replace() == answer
    assert CitedAnswer.from_json(answer.to_json()) == answer
