"""The pydantic-ai example runs offline, replaying its cassette, and prints a cited answer."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.agent")
pytest.importorskip("openai")
pytest.importorskip("vcr")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_agent_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runpy.run_path(str(EXAMPLES / "pydantic_ai_agent.py"), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.err == ""
    out = captured.out.splitlines()
    # The search tool numbered the height page [sid:1] and the history page [sid:2]; the model
    # cited [2] then [1]. Renumbered in reading order, the history page comes first.
    assert out[:2] == [
        "Le viaduc de Millau a été inauguré le 14 décembre 2004 [1]. Il culmine à 343 mètres au",
        "sommet de son plus haut pylône [2].",
    ]
    assert "1. Histoire du viaduc — https://www.leviaducdemillau.com/fr/histoire" in out
    assert out[-2:] == [
        "[1] marker: 'Le viaduc de Millau a été inauguré le 14 décembre 2004'",
        "[2] marker: 'Il culmine à 343 mètres au sommet de son plus haut pylône'",
    ]
