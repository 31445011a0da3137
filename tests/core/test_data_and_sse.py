import datetime
import enum
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from unicite.providers import (
    AnswerBuilder,
    Provider,
    StreamReader,
    extract,
    iter_sse,
    looks_like_sse,
    register,
    unregister,
)
from unicite.providers import to_data as to_plain_data


class _Dumpable:
    def model_dump(self, **kwargs: object) -> dict[str, object]:
        # Python mode keeps bytes as bytes: they are encoded in one alphabet afterwards.
        assert kwargs["mode"] == "python"
        return {"ok": True, "blob": b"\xfb\xff\xfe"}


class _Legacy:
    def model_dump(self) -> dict[str, object]:
        return {"old": "sdk"}


class _Kind(enum.Enum):
    WEB = "web"


class _Delta(BaseModel):
    type: str
    text: str
    signature: bytes | None = None


class _Broken:
    def model_dump(self, **kwargs: object) -> dict[str, object]:
        raise RuntimeError("boom")


class _Probe(Provider):
    """A reader that keeps the data `extract` hands it."""

    name = "probe"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def detect(self, data: Mapping[str, Any]) -> bool:
        return False

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        return False

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        self.seen.append(data)

    def stream(self, **options: Any) -> StreamReader:
        raise NotImplementedError


@pytest.fixture
def probe() -> Iterator[_Probe]:
    reader = _Probe()
    register(reader)
    yield reader
    unregister(reader)


@pytest.mark.parametrize(
    ("response", "data"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": 1}', {"a": 1}),
        (b'{"a": 1}', {"a": 1}),
        (_Dumpable(), {"ok": True, "blob": "+//+"}),
        (_Legacy(), {"old": "sdk"}),
        (OrderedDict(a=1), {"a": 1}),
    ],
)
def test_readers_get_plain_data_from_every_input_kind(
    probe: _Probe, response: object, data: dict[str, Any]
) -> None:
    extract(response, provider="probe")
    assert probe.seen == [data]
    assert type(probe.seen[0]) is dict


def test_plain_data_walks_what_frameworks_keep() -> None:
    # LlamaIndex keeps `dict(event)`: a dict whose values are still SDK objects.
    event = {
        "type": "content_block_delta",
        "index": 0,
        "delta": _Delta(type="text_delta", text="Été"),
    }
    assert to_plain_data(event) == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Été", "signature": None},
    }
    moment = datetime.datetime(2025, 7, 14, 9, 30, tzinfo=datetime.timezone.utc)
    assert to_plain_data(
        {1: (_Kind.WEB, moment, datetime.date(2025, 7, 14)), "opaque": object(), "set": {3}}
    ) == {"1": ["web", "2025-07-14T09:30:00Z", "2025-07-14"], "opaque": None, "set": [3]}


def test_bytes_are_standard_base64_as_the_providers_json_carries_them() -> None:
    # pydantic's JSON mode (google-genai's ser_json_bytes="base64") writes "-__-" here: the
    # URL-safe alphabet. The Gemini REST API and base64 file data everywhere use the standard one.
    assert to_plain_data({"thoughtSignature": b"\xfb\xff\xfe"}) == {"thoughtSignature": "+//+"}
    assert to_plain_data(_Delta(type="t", text="", signature=b"\xfb\xef")) == {
        "type": "t",
        "text": "",
        "signature": "++8=",
    }


def test_plain_data_is_not_copied_and_deep_nesting_is_cut() -> None:
    data: dict[str, Any] = {"a": [{"b": "c"}], "n": 1.5}
    assert to_plain_data(data) is data
    deep: Any = "fond"
    for _ in range(1_000):
        deep = [deep]
    node = to_plain_data({"deep": deep})["deep"]
    depth = 0
    while isinstance(node, list):
        node, depth = node[0], depth + 1
    assert node is None
    assert depth < 300


@pytest.mark.parametrize("bad", ["{not json", b"\xff\xfe", _Broken(), object(), 3.5])
def test_unreadable_input_is_reported_instead_of_raising(probe: _Probe, bad: object) -> None:
    answer = extract(bad, provider="probe")
    assert probe.seen == []
    assert answer.diagnostics


def test_reader_records_wrong_types_and_ignores_missing() -> None:
    builder = AnswerBuilder(None)
    diags, r = builder.diagnostics, builder.read
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
