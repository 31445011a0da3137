"""unicite.testing: the cassette format, replaying, and live-or-replay by API key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import unicite.testing as testing

KEY = "UNICITE_TEST_HELPER_KEY"
URL = "https://api.example.com/v1/answers"


def cassette_text(*answers: tuple[str, dict[str, Any]]) -> str:
    """A cassette answering POSTs to `URL`, one interaction per (question, response body)."""
    interactions = []
    for question, body in answers:
        interactions.append(
            {
                "request": {
                    "method": "POST",
                    "uri": URL,
                    "body": json.dumps({"question": question}),
                    "headers": {
                        "Content-Type": ["application/json"],
                        "Authorization": ["Bearer sk-secret"],
                    },
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {
                        "Content-Type": ["application/json"],
                        "Set-Cookie": ["session=secret"],
                        "openai-organization": ["org-secret"],
                    },
                    "body": {"string": json.dumps(body, ensure_ascii=False).encode()},
                },
            }
        )
    return testing.serialize({"interactions": interactions, "version": 1})


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    pytest.importorskip("yaml")
    path = tmp_path / "answers.yaml"
    path.write_text(
        cassette_text(
            ("Wie hoch ist der Säntis?", {"text": "2502 m ü. M.", "sources": ["säntis.ch"]}),
            ("東京タワーの高さは?", {"text": "333メートル"}),
        ),
        encoding="utf-8",
    )
    return path


def ask(question: str) -> dict[str, Any]:
    httpx = pytest.importorskip("httpx")
    response = httpx.post(URL, json={"question": question})
    data: dict[str, Any] = response.json()
    return data


def same_question(recorded: Any, made: Any) -> bool:
    return bool(json.loads(recorded.body)["question"] == json.loads(made.body)["question"])


# --- the format ---------------------------------------------------------------------------------


def test_the_format_keeps_json_as_data_and_drops_secrets(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    assert "secret" not in text
    assert "parsed_body:" in text
    assert "text: 2502 m ü. M." in text  # readable, not escaped
    assert "東京タワー" in text
    data = testing.deserialize(text)
    first = data["interactions"][0]
    assert json.loads(first["request"]["body"]) == {"question": "Wie hoch ist der Säntis?"}
    assert json.loads(first["response"]["body"]["string"])["sources"] == ["säntis.ch"]
    assert first["response"]["headers"] == {"Content-Type": ["application/json"]}


def test_the_format_round_trips(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    assert testing.serialize(testing.deserialize(text)) == text


def test_multiline_text_bodies_are_literal_blocks() -> None:
    pytest.importorskip("yaml")
    stream = "event: delta\ndata: Grüezi\n\nevent: done\ndata: {}\n"
    text = testing.serialize(
        {
            "interactions": [
                {
                    "request": {"method": "GET", "uri": URL, "body": None, "headers": {}},
                    "response": {
                        "status": {"code": 200, "message": "OK"},
                        "headers": {"content-type": ["text/event-stream"]},
                        "body": {"string": stream.encode()},
                    },
                }
            ]
        }
    )
    assert "body: |\n" in text
    assert "data: Grüezi" in text
    assert testing.deserialize(text)["interactions"][0]["response"]["body"]["string"] == stream


def _eventstream_cassette(body: bytes) -> dict[str, Any]:
    return {
        "interactions": [
            {
                "request": {"method": "POST", "uri": URL, "body": None, "headers": {}},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/vnd.amazon.eventstream"]},
                    "body": {"string": body},
                },
            }
        ]
    }


def test_aws_event_streams_are_kept_as_their_messages() -> None:
    pytest.importorskip("yaml")
    eventstream = pytest.importorskip("botocore.eventstream")
    text = """\
interactions:
- request:
    method: POST
    uri: https://bedrock-runtime.eu-west-3.amazonaws.com/model/m/converse-stream
  response:
    headers:
      content-type: application/vnd.amazon.eventstream
    events:
    - event: contentBlockDelta
      payload: {contentBlockIndex: 0, delta: {text: "Grüezi 東京 ☕"}}
    - event: messageStop
      headers: {x-amzn-trace: "7"}
      payload: {stopReason: end_turn}
    - exception: throttlingException
      payload: {message: "Trop de requêtes"}
version: 1
"""
    body = testing.deserialize(text)["interactions"][0]["response"]["body"]["string"]
    # botocore's own decoder checks the prelude and message checksums and reads the headers.
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(body)
    messages = [(m.headers, json.loads(m.payload)) for m in buffer]
    assert messages == [
        (
            {
                ":event-type": "contentBlockDelta",
                ":content-type": "application/json",
                ":message-type": "event",
            },
            {"contentBlockIndex": 0, "delta": {"text": "Grüezi 東京 ☕"}},
        ),
        (
            {
                ":event-type": "messageStop",
                ":content-type": "application/json",
                ":message-type": "event",
                "x-amzn-trace": "7",
            },
            {"stopReason": "end_turn"},
        ),
        (
            {
                ":exception-type": "throttlingException",
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            {"message": "Trop de requêtes"},
        ),
    ]
    # Saved again, the body is the same messages, and reads back to the same bytes.
    saved = testing.serialize(_eventstream_cassette(body))
    assert "payload_text" not in saved
    assert "Grüezi 東京 ☕" in saved
    again = testing.deserialize(saved)["interactions"][0]["response"]["body"]["string"]
    assert again == body


def test_an_event_stream_payload_that_is_not_json_is_kept_as_text() -> None:
    pytest.importorskip("yaml")
    text = """\
interactions:
- request: {method: POST, uri: https://example.org/}
  response:
    headers: {content-type: application/vnd.amazon.eventstream}
    events:
    - event: chunk
      payload_text: "not json: ☕"
version: 1
"""
    body = testing.deserialize(text)["interactions"][0]["response"]["body"]["string"]
    saved = testing.serialize(_eventstream_cassette(body))
    assert "payload_text: 'not json: ☕'" in saved


def test_tests_register_the_same_format() -> None:
    sys.path.insert(0, str(Path(__file__).parents[1]))
    try:
        import _cassettes
    finally:
        sys.path.pop(0)
    assert _cassettes.serialize is testing.serialize
    assert _cassettes.deserialize is testing.deserialize


# --- replaying ----------------------------------------------------------------------------------


def test_replay_answers_from_the_cassette(cassette: Path) -> None:
    pytest.importorskip("vcr")
    with testing.replay(cassette, match_on=["method", "host", "path", same_question]) as played:
        assert ask("東京タワーの高さは?") == {"text": "333メートル"}
        assert ask("Wie hoch ist der Säntis?")["text"] == "2502 m ü. M."
        assert ask("Wie hoch ist der Säntis?")["text"] == "2502 m ü. M."  # repeats allowed
    assert played.all_played


def test_replay_never_reaches_the_network(cassette: Path) -> None:
    vcr_errors = pytest.importorskip("vcr.errors")
    with (
        testing.replay(cassette, match_on=["method", "path", same_question]),
        pytest.raises(vcr_errors.CannotOverwriteExistingCassetteException),
    ):
        ask("Wie hoch ist der Pilatus?")


def test_replay_without_repeats_plays_each_interaction_once(cassette: Path) -> None:
    vcr_errors = pytest.importorskip("vcr.errors")
    with testing.replay(cassette, match_on=[same_question], allow_playback_repeats=False):
        ask("東京タワーの高さは?")
        with pytest.raises(vcr_errors.CannotOverwriteExistingCassetteException):
            ask("東京タワーの高さは?")


def test_the_default_matchers_ignore_the_body(cassette: Path) -> None:
    pytest.importorskip("vcr")
    with testing.replay(cassette, allow_playback_repeats=False):
        assert ask("anything")["text"] == "2502 m ü. M."  # the first unplayed POST to the URL
        assert ask("anything else")["text"] == "333メートル"


def test_a_missing_cassette_is_an_error(tmp_path: Path) -> None:
    pytest.importorskip("vcr")
    with pytest.raises(FileNotFoundError, match="no cassette"):
        testing.replay(tmp_path / "nothing.yaml")


# --- live or replay -----------------------------------------------------------------------------


def test_without_the_key_it_replays_with_a_placeholder_key(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("vcr")
    monkeypatch.delenv(KEY, raising=False)
    with testing.live_or_replay(cassette, env=KEY, match_on=[same_question]) as played:
        assert os.environ[KEY] == testing.PLACEHOLDER_KEY
        assert ask("東京タワーの高さは?") == {"text": "333メートル"}
    assert played is not None
    assert played.play_count == 1
    assert KEY not in os.environ


def test_an_empty_key_counts_as_missing_and_is_put_back(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("vcr")
    monkeypatch.setenv(KEY, "")
    with testing.live_or_replay(cassette, env=KEY) as played:
        assert os.environ[KEY] == testing.PLACEHOLDER_KEY
    assert played is not None
    assert os.environ[KEY] == ""


def test_with_the_key_it_does_nothing(cassette: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY, "sk-live")
    with testing.live_or_replay(cassette, env=KEY) as played:
        assert played is None
        assert os.environ[KEY] == "sk-live"
    # Live, neither vcrpy nor the cassette is needed.
    with testing.live_or_replay(cassette.parent / "nothing.yaml", env=KEY) as played:
        assert played is None


# --- without vcrpy ------------------------------------------------------------------------------


def test_missing_vcrpy_is_a_clear_import_error(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "vcr", None)  # as if not installed
    monkeypatch.delenv(KEY, raising=False)
    for call in (
        lambda: testing.replay(cassette),
        lambda: testing.live_or_replay(cassette, env=KEY),
    ):
        with pytest.raises(ImportError, match=r'needs vcrpy: pip install "unicite\[testing\]"'):
            call()
    assert KEY not in os.environ


def test_importing_the_module_needs_neither_vcrpy_nor_yaml() -> None:
    code = (
        "import sys, unicite.testing\n"
        "print(','.join(m for m in ('vcr', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
