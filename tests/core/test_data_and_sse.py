from collections import OrderedDict

from unicite._data import Reader, to_data
from unicite.providers._sse import iter_sse, looks_like_sse


class _Dumpable:
    def model_dump(self, **kwargs: object) -> dict[str, object]:
        assert kwargs["mode"] == "json"
        return {"ok": True}


class _Broken:
    def model_dump(self, **kwargs: object) -> dict[str, object]:
        raise RuntimeError("boom")


def test_to_data_reads_every_input_kind() -> None:
    assert to_data({"a": 1}) == ({"a": 1}, None)
    assert to_data('{"a": 1}') == ({"a": 1}, None)
    assert to_data(b'{"a": 1}') == ({"a": 1}, None)
    assert to_data(_Dumpable()) == ({"ok": True}, None)
    assert to_data(OrderedDict(a=1))[1] is None


def test_to_data_reports_instead_of_raising() -> None:
    for bad in ("{not json", b"\xff\xfe", _Broken(), object(), 3.5):
        data, problem = to_data(bad)
        assert data is None
        assert problem


def test_reader_records_wrong_types_and_ignores_missing() -> None:
    diags: list[str] = []
    r = Reader(diags)
    data = {"s": 1, "n": "x", "l": {}, "o": [], "i": "12", "f": 2.0, "b": True}
    assert r.text(data, "s", "$") is None
    assert r.integer(data, "n", "$") is None
    assert r.items(data, "l", "$") == []
    assert r.obj(data, "o", "$") is None
    assert r.integer(data, "i", "$") == 12
    assert r.integer(data, "f", "$") == 2
    assert r.integer(data, "b", "$") is None
    assert r.number(data, "b", "$") is None
    assert r.text(data, "missing", "$") is None
    assert r.text("not a dict", "s", "$") is None
    assert len(diags) == 6
    assert diags[0] == "$.s: expected a string, got int"


def test_sse_parsing_handles_names_padding_comments_and_done() -> None:
    log = (
        ": keep-alive\n\n"
        "event: message_start\n"
        'data: {"type":"message_start","n":1}        \n\n'
        "event: ping\n"
        'data: {"x": 2}\n\n'
        "data: [DONE]\n\n"
        "data: {broken\n\n"
    )
    assert looks_like_sse(log)
    problems: list[str] = []
    events = list(iter_sse(log, problems))
    assert events == [{"type": "message_start", "n": 1}, {"type": "ping", "x": 2}]
    assert len(problems) == 1


def test_json_lines_logs_are_read_too() -> None:
    problems: list[str] = []
    assert list(iter_sse('{"a": 1}\n{"b": 2}\n', problems)) == [{"a": 1}, {"b": 2}]
    assert not looks_like_sse('{"a": 1}')
