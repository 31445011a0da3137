"""The Haystack example runs offline, replaying its cassette, and prints a cited answer."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("haystack.core")
pytest.importorskip("openai")
pytest.importorskip("vcr")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_pipeline_example(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runpy.run_path(str(EXAMPLES / "haystack_pipeline.py"), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.err == ""
    out = captured.out.splitlines()
    # BM25 put the Millau page second and the Köhlbrandbrücke third in the prompt; the model
    # cited [2] then [3], and an [9] that names no document.
    assert out[:2] == [
        "Le viaduc de Millau culmine à 343 mètres [1] et a été inauguré en 2004 [1]. Die",
        "Köhlbrandbrücke ist 3 618 Meter lang [2]. 明石海峡大橋は1998年に開通しました。",
    ]
    assert "1. Viaduc — https://fr.wikipedia.org/wiki/Viaduc_de_Millau" in out
    assert "[1] millau (was [2])" in out
    assert "[2] koehlbrand (was [3])" in out
    assert out[-1] == "note: marker '[9]' at 142: source 9 out of range (3 sources given)"
