"""Server-Sent Events read as the HTML standard reads them, and written so they read back."""

from __future__ import annotations

import pytest

from unicite import WireError
from unicite.wire import Frame, parse_frames


def test_data_lines_join_with_newlines_and_comments_are_skipped() -> None:
    body = ": keep-alive\nevent: note\ndata: première\ndata:seconde\nretry: 10\nfoo: bar\n\n"
    assert list(parse_frames(body)) == [Frame("première\nseconde", event="note")]


def test_cr_crlf_and_lf_line_ends_and_a_byte_order_mark() -> None:
    body = "\ufeffdata: a\r\rdata: b\r\n\r\ndata: c\n\n"
    assert [frame.data for frame in parse_frames(body)] == ["a", "b", "c"]


def test_crlf_cut_between_chunks_is_one_line_end() -> None:
    chunks = ["data: a\r", "\ndata: b\r", "\n\r", "\n"]
    assert [frame.data for frame in parse_frames(chunks)] == ["a\nb"]


def test_an_event_without_data_is_skipped_and_ids_persist() -> None:
    body = "id: 7\nevent: ping\n\ndata: x\n\n"
    assert list(parse_frames(body)) == [Frame("x", id="7")]


def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    assert list(parse_frames("event: e\ndata: fin")) == [Frame("fin", event="e")]


def test_frames_written_read_back_even_with_newlines_in_data() -> None:
    frames = [Frame("ligne 1\nligne 2", event="e", id="1"), Frame("東京", id="2")]
    body = "".join(frame.encode() for frame in frames)
    assert list(parse_frames(body)) == frames
    assert list(parse_frames(frames)) == frames


@pytest.mark.parametrize("bad", [[3], [b"\xff\xfe data"]])
def test_bad_chunks_are_wire_errors(bad: list[object]) -> None:
    with pytest.raises(WireError):
        list(parse_frames(bad))  # type: ignore[arg-type]


def test_frame_json_errors_name_the_event() -> None:
    with pytest.raises(WireError, match="'completed'"):
        Frame("{", event="completed").json()
