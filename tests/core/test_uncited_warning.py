"""The warning that tools or search ran but no citation could be extracted.

DESIGN's quiet rule: one warning per run when tools ran but nothing could be cited, never one
per answer. It is given once per process per provider (the suite's conftest resets that
memory before every test).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import unicite

MESSAGE = "tools or search ran but no citation could be extracted"


def searched_uncited(text: str = "Zürich ist gross.") -> dict[str, Any]:
    """An OpenAI Responses answer: a web search ran, the message carries no annotations."""
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
                "action": {"type": "search", "query": "Zürich"},
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


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and MESSAGE in r.getMessage()
    ]


def test_a_loop_over_one_response_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    response = searched_uncited()
    with caplog.at_level(logging.WARNING, logger="unicite"):
        for _ in range(21):
            assert unicite.extract(response).citations == []
    assert warnings(caplog) == [f"openai: {MESSAGE}"]


def test_each_provider_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    gemini = {
        "candidates": [
            {
                "content": {"parts": [{"text": "Zürich ist gross."}], "role": "model"},
                "groundingMetadata": {"webSearchQueries": ["Zürich"]},
            }
        ]
    }
    with caplog.at_level(logging.WARNING, logger="unicite"):
        for _ in range(3):
            unicite.extract(searched_uncited())
            unicite.extract(gemini)
    assert sorted(warnings(caplog)) == [f"gemini: {MESSAGE}", f"openai: {MESSAGE}"]


def test_a_quiet_reading_does_not_use_up_the_warning(caplog: pytest.LogCaptureFixture) -> None:
    # Citing disabled logs nothing at all; the next enabled answer still warns.
    with caplog.at_level(logging.WARNING, logger="unicite"):
        unicite.cite(searched_uncited(), enabled=False)
        assert warnings(caplog) == []
        unicite.cite(searched_uncited())
        unicite.cite(searched_uncited())
    assert warnings(caplog) == [f"openai: {MESSAGE}"]


def test_the_cli_warns_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("typer", reason="the cli extra is not installed")
    from typer.testing import CliRunner

    from unicite.cli import app

    path = tmp_path / "response.json"
    path.write_text(json.dumps(searched_uncited()), "utf-8")
    with caplog.at_level(logging.WARNING, logger="unicite"):
        result = CliRunner().invoke(app, ["extract", str(path), "--require-citations"])
    assert result.exit_code == 3, result.output
    assert "no citations" in result.output
    assert warnings(caplog) == [f"openai: {MESSAGE}"]
