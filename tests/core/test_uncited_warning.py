"""The warning that tools or search ran but no citation could be extracted.

DESIGN's quiet rule: one warning per run when tools ran but nothing could be cited, never one
per answer. It is given once per process and provider, so each test runs in a new interpreter
(this one may have given it already).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MESSAGE = "tools or search ran but no citation could be extracted"

SEARCHED_UNCITED: dict[str, Any] = {
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
            "content": [{"type": "output_text", "text": "Zürich ist gross.", "annotations": []}],
        },
    ],
}
"""An OpenAI Responses answer: a web search ran, the message carries no annotations."""

GEMINI_SEARCHED = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Zürich ist gross."}], "role": "model"},
            "groundingMetadata": {"webSearchQueries": ["Zürich"]},
        }
    ]
}

# Runs one scenario in a new interpreter; prints the warnings unicite logged, as JSON.
SCRIPT = """
import json, logging, sys

import unicite

warnings = []


class Keep(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            warnings.append(record.getMessage())


logging.getLogger("unicite").addHandler(Keep())
openai, gemini = json.loads(sys.argv[2]), json.loads(sys.argv[3])
scenario = sys.argv[1]
if scenario == "loop":
    for _ in range(21):
        assert unicite.extract(openai).citations == []
elif scenario == "providers":
    for _ in range(3):
        unicite.extract(openai)
        unicite.extract(gemini)
        unicite.cite(json.dumps(openai).encode())
elif scenario == "quiet":
    # Citing disabled logs nothing, analytics counts such answers instead of warning: neither
    # uses up the warning the next answer gives.
    unicite.cite(openai, enabled=False)
    try:
        from unicite.analytics import analyze
    except ImportError:
        pass
    else:
        assert analyze([json.dumps(openai)], fast=False)[0]["grounded"]
    assert warnings == []
    unicite.extract(openai)
    unicite.extract(openai)
print(json.dumps(warnings))
"""


def warnings_of(scenario: str) -> list[str]:
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            scenario,
            json.dumps(SEARCHED_UNCITED),
            json.dumps(GEMINI_SEARCHED),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    found: list[str] = json.loads(run.stdout)
    return found


def test_a_loop_over_one_response_warns_once() -> None:
    assert warnings_of("loop") == [f"openai: {MESSAGE}"]


def test_each_provider_warns_once() -> None:
    assert warnings_of("providers") == [f"openai: {MESSAGE}", f"gemini: {MESSAGE}"]


def test_a_quiet_reading_does_not_use_up_the_warning() -> None:
    assert warnings_of("quiet") == [f"openai: {MESSAGE}"]


def test_one_cli_run_warns_once(tmp_path: Path) -> None:
    pytest.importorskip("typer", reason="the cli extra is not installed")
    path = tmp_path / "response.json"
    path.write_text(json.dumps(SEARCHED_UNCITED), "utf-8")
    # Without --require-citations the input is read once; with it, once more to say why.
    for extra in ([], ["--require-citations"]):
        run = subprocess.run(
            [sys.executable, "-m", "unicite", "extract", str(path), "-f", "text", *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == (3 if extra else 0), run.stderr
        assert run.stderr.count(MESSAGE) == 1, run.stderr
