"""The unicite wire protocol on hostile answers: encoding never fails and decoding is exact."""

from __future__ import annotations

import json

from _fuzz import cited_answers, fuzz_settings, json_fidelity
from hypothesis import assume, given

from unicite import CitedAnswer, inject_markers, wire


@fuzz_settings(0.5)
@given(cited_answers())
def test_history_is_a_fixed_point_of_decoding(answer: CitedAnswer) -> None:
    # A high surrogate followed by a low one travels as one astral character in any JSON
    # (data read from JSON never holds such a pair): its offsets cannot round-trip.
    assume(json_fidelity(answer) != "ambiguous")
    body = "".join(wire.encode(answer, message_id="m"))
    body.encode("utf-8")  # frames always encode: lone surrogates travel escaped
    decoded = wire.decode(body)
    document = wire.history(answer, message_id="m")

    def sent(value: object) -> object:  # as a client reads it (escaped surrogate pairs join)
        return json.loads(json.dumps(value))

    assert sent(wire.history(decoded, message_id="m")) == sent(document)
    shown = inject_markers(answer) if answer.citations else answer
    assert decoded.text == shown.text == document["content"]
    assert [c.source_ids for c in decoded.citations] == [c.source_ids for c in shown.citations]


@fuzz_settings(0.5)
@given(cited_answers())
def test_every_marker_on_the_wire_names_the_source_it_opens(answer: CitedAnswer) -> None:
    document = wire.history(answer)
    content = document["content"]
    for entry in document["metadata"]["citations"]:
        for span in entry["spans"]:
            assert span["marker"] is not None
            written = content[span["marker"]["start"] : span["marker"]["end"]]
            assert f"[{entry['number']}]" in written
            assert entry["number"] in span["sources"]
