"""``UNICITE_DEBUG_GROUNDING``: one forensic log record per response `unicite.extract` reads."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import unicite

LOGGER = "unicite.grounding"
_TEXT = "Le café à Zürich coûte 5 francs. Bern ist günstiger."


def gemini_without_supports() -> dict[str, Any]:
    """Gemini grounded by Google Search: chunks and queries, but no grounding supports."""
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": _TEXT}], "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["prix café Zürich"],
                    "groundingChunks": [
                        {"web": {"uri": "https://example.ch/cafe", "title": "example.ch"}}
                    ],
                    "searchEntryPoint": {"renderedContent": "<div></div>"},
                },
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def openai_without_annotations(text: str = _TEXT) -> dict[str, Any]:
    """OpenAI Responses: a web search ran, the message carries no annotations."""
    return {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-4.1",
        "status": "completed",
        "output": [
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "café Zürich"},
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        ],
    }


def openai_cited() -> dict[str, Any]:
    """The same answer with a url_citation annotation on its first sentence."""
    response = openai_without_annotations()
    end = len("Le café à Zürich coûte 5 francs.")
    response["output"][1]["content"][0]["annotations"] = [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": end,
            "url": "https://example.ch/cafe",
            "title": "Café",
        }
    ]
    return response


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Capture the forensics logger at every level; its own level is restored after."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    yield
    logging.getLogger(LOGGER).setLevel(logging.NOTSET)


def forensic(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records the forensics logged (not their own debug notes)."""
    return [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.INFO]


@pytest.fixture
def debug_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the forensics on for the test."""
    monkeypatch.setenv("UNICITE_DEBUG_GROUNDING", "1")


@pytest.mark.usefixtures("records")
@pytest.mark.parametrize("value", [None, "", "0", "off", "false", "No"])
def test_nothing_is_logged_unless_asked(
    value: str | None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    if value is None:
        monkeypatch.delenv("UNICITE_DEBUG_GROUNDING", raising=False)
    else:
        monkeypatch.setenv("UNICITE_DEBUG_GROUNDING", value)
    unicite.extract(gemini_without_supports())
    unicite.cite(openai_without_annotations())
    assert [r for r in caplog.records if r.name == LOGGER] == []


@pytest.mark.usefixtures("records", "debug_on")
def test_gemini_grounding_metadata_without_supports(caplog: pytest.LogCaptureFixture) -> None:
    answer = unicite.extract(gemini_without_supports())
    assert answer.citations == []
    (record,) = forensic(caplog)
    assert record.levelno == logging.INFO
    message = record.getMessage()
    assert message.startswith("gemini (gemini-2.5-flash): 1 tool call(s), 0 citation(s), 1 source")
    assert "grounding metadata present but no citations" in message
    assert "1 tool call(s) made but no citations extracted" in message
    assert (
        "grounding keys found: groundingMetadata, groundingMetadata.groundingChunks[1], "
        "groundingMetadata.searchEntryPoint, groundingMetadata.webSearchQueries[1]"
    ) in message
    assert "first output item: text" in message
    assert f"text: {_TEXT!r}" in message
    facts = record.unicite_grounding  # type: ignore[attr-defined]
    assert facts["provider"] == "gemini"
    assert facts["tool_calls"] == 1
    assert facts["citations"] == 0
    assert facts["sources"] == 1
    assert facts["grounded_effective"] is True
    assert facts["text"] == _TEXT


@pytest.mark.usefixtures("records", "debug_on")
def test_openai_web_search_without_annotations(caplog: pytest.LogCaptureFixture) -> None:
    unicite.extract(openai_without_annotations())
    (record,) = forensic(caplog)
    message = record.getMessage()
    assert message.startswith("openai (gpt-4.1): 1 tool call(s), 0 citation(s), 0 source(s)")
    assert "1 tool call(s) made but no citations extracted" in message
    # An empty annotations list is no grounding metadata.
    assert "grounding metadata present" not in message
    assert "grounding keys found: annotations[0]" in message
    assert "first output item: web_search_call" in message
    assert record.unicite_grounding["first_output_item"] == "web_search_call"  # type: ignore[attr-defined]


@pytest.mark.usefixtures("records", "debug_on")
def test_a_cited_answer_is_logged_without_warnings(caplog: pytest.LogCaptureFixture) -> None:
    answer = unicite.extract(openai_cited())
    assert len(answer.citations) == 1
    (record,) = forensic(caplog)
    message = record.getMessage()
    assert "1 citation(s), 1 source(s)" in message
    assert "but no citations" not in message
    assert record.unicite_grounding["warnings"] == []  # type: ignore[attr-defined]


@pytest.mark.usefixtures("records", "debug_on")
def test_the_preview_is_sanitised_and_short(caplog: pytest.LogCaptureFixture) -> None:
    hostile = "\x1b]8;;https://evil.example\x07Zürich\x1b]8;;\x07 \u202eevil\u202c " + "é" * 300
    unicite.extract(openai_without_annotations(hostile))
    (record,) = forensic(caplog)
    text = record.unicite_grounding["text"]  # type: ignore[attr-defined]
    assert len(text) <= 120
    assert text.startswith("Zürich evil éé")
    assert text.endswith("…")
    assert not any(ch in text for ch in "\x1b\x07\u202e\u202c")


@pytest.mark.usefixtures("records", "debug_on")
def test_one_record_per_response(caplog: pytest.LogCaptureFixture) -> None:
    unicite.cite(gemini_without_supports())
    unicite.extract({"unexpected": "shape"})
    records = forensic(caplog)
    assert [r.unicite_grounding["provider"] for r in records] == ["gemini", None]  # type: ignore[attr-defined]
    assert "grounding keys found: none" in records[1].getMessage()


@pytest.mark.usefixtures("records", "debug_on")
def test_streams_are_logged_without_response_keys(caplog: pytest.LogCaptureFixture) -> None:
    chunk = gemini_without_supports()
    unicite.extract([chunk])  # a list of stream chunks
    (record,) = forensic(caplog)
    assert "grounding keys found: n/a (no single response)" in record.getMessage()
    assert "grounding metadata present" not in record.getMessage()
    assert "1 tool call(s) made but no citations extracted" in record.getMessage()


@pytest.mark.usefixtures("records", "debug_on")
def test_nothing_is_logged_while_citations_are_disabled(caplog: pytest.LogCaptureFixture) -> None:
    unicite.cite(gemini_without_supports(), enabled=False)
    assert [r for r in caplog.records if r.name.startswith("unicite")] == []


@pytest.mark.usefixtures("records", "debug_on")
def test_odd_data_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    deep: Any = {"text": "Zürich"}
    for _ in range(5000):
        deep = {"groundingMetadata": {"groundingChunks": [deep]}}
    wide = {"candidates": [{"content": {"parts": [{"text": "Zürich"}]}}], "citations": [1] * 10**5}
    for response in (deep, wide, {"candidates": [None], 7: "x"}):
        unicite.extract(response, provider="gemini")
    assert len(forensic(caplog)) == 3


@pytest.mark.usefixtures("debug_on")
def test_the_level_is_lowered_when_nothing_sets_it(caplog: pytest.LogCaptureFixture) -> None:
    # The variable alone is enough: the logger, at no level of its own, is set to INFO.
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.NOTSET)
    try:
        unicite.extract(gemini_without_supports())
        assert logger.level == logging.INFO
        assert len(forensic(caplog)) == 1
    finally:
        logger.setLevel(logging.NOTSET)


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "UNICITE_DEBUG_GROUNDING"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**environ, **env, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("value", ["1", ""])
def test_setting_only_the_variable_shows_the_record_on_stderr(value: str) -> None:
    code = (
        "import json\nimport unicite\n"
        f"unicite.extract(json.loads({json.dumps(json.dumps(gemini_without_supports()))}))\n"
    )
    result = _python(code, UNICITE_DEBUG_GROUNDING=value)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(LOGGER)]
    if value:
        assert len(lines) == 1
        assert "grounding metadata present but no citations" in lines[0]
        assert "Zürich" in lines[0]
    else:
        assert lines == []
