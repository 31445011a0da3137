"""The LangChain examples run offline, replaying their cassettes, and print cited answers."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_openai")
pytest.importorskip("vcr")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """Run an example as its own script, with no API key set: it must replay its cassette."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_rag_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_example("langchain_rag.py", capsys, monkeypatch).splitlines()
    assert out[0].startswith("Die Stadt Zürich zählte Ende 2024 rund 448 000 Einwohnerinnen")
    assert "1. Bevölkerung — https://www.stadt-zuerich.ch/bevoelkerung" in out
    assert "2. Zürich — https://de.wikipedia.org/wiki/Z%C3%BCrich" in out
    assert out[-2:] == [
        "[1] marker: 'Die Stadt Zürich zählte Ende 2024 rund 448 000 Einwohnerinnen und Einwohner'",
        "[2] marker: 'Sie liegt auf 408 Metern über Meer, am nördlichen Ende des Zürichsees'",
    ]


def test_agent_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langchain")  # create_agent
    out = run_example("langchain_agent.py", capsys, monkeypatch).splitlines()
    # The agent searched twice in one step; CitationMiddleware numbered the pages in call order
    # (the height [sid:1], the inauguration [sid:2]) and the model cited [2] then [1].
    # Renumbered in reading order, the inauguration page comes first.
    assert out[:2] == [
        "Le viaduc de Millau a été inauguré le 14 décembre 2004 [1]. Il culmine à 343 mètres au",
        "sommet de son plus haut pylône [2].",
    ]
    assert "1. Histoire du viaduc — https://www.leviaducdemillau.com/fr/histoire" in out
    assert out[-2:] == [
        "1. Histoire du viaduc (found by search_encyclopedia)",
        "2. Viaduc de Millau — Wikipédia (found by search_encyclopedia)",
    ]
