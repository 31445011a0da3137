"""The LlamaIndex examples run offline and print what they promise."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """Run an example as its own script, with no API key set: it must run offline."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the example adds tests/ for its replay
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def test_query_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_index.llms.openai")
    pytest.importorskip("vcr")
    out = run_example("llamaindex_query.py", capsys, monkeypatch)
    # The model cited [2], [1], [3] and [6] of four passages: renumbered in reading order,
    # and the [6] that names nothing is reported.
    assert out[0].startswith("Une traboule est un passage piéton")
    assert (
        "1. Les traboules – Lyon Tourisme — https://www.lyon-france.com/decouvrir/traboules" in out
    )
    assert "2. Traboule — Wikipédia — https://fr.wikipedia.org/wiki/Traboule" in out
    assert out[-4].startswith("[1] 0-104: 'Une traboule est un passage piéton")
    assert out[-1] == "note: marker '[6]' at 253: source 6 out of range (4 sources given)"


def test_side_by_side_example(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_example("llamaindex_vs_citation_query_engine.py", capsys, monkeypatch)
    written = out[1].split(": ", 1)[1]
    middle = out.index("== unicite CitedQueryEngine ==")
    llamaindex = out[out.index("== LlamaIndex CitationQueryEngine ==") : middle]
    unicite = out[middle:]
    # LlamaIndex returns the text as the model wrote it, [7] included, and the two chunks of
    # one passage get either its id twice or fresh random ids (depending on its version).
    assert llamaindex[1].endswith("et ses cabines actuelles datent de 1976 [2][7].")
    own = "  the passage's two chunks have ids of their own: "
    stable = "  the same ids when asked again: "
    assert f"{own}False" in llamaindex or f"{stable}False" in llamaindex
    # unicite renumbers in reading order, removes and reports [7], and gives the chunks ids
    # of their own that stay the same.
    assert unicite[1] == (
        "Les « bulles » du téléphérique relient le centre-ville au fort de la Bastille en "
        "quelques minutes [1]. Il fonctionne depuis 1934, ce qui en fait l’un des premiers "
        "téléphériques urbains au monde [2], et ses cabines actuelles datent de 1976 [3]."
    )
    assert unicite[2:6] == [
        "  Source 1: Les bulles – Téléphérique Grenoble-Bastille",
        "  Source 2: Téléphérique de Grenoble-Bastille — Wikipédia",
        "  Source 3: Téléphérique de Grenoble-Bastille — Wikipédia",
        "  Source 4: Le fort de la Bastille",
    ]
    assert f"{own}True" in unicite
    assert f"{stable}True" in unicite
    at = written.index("[7]")
    assert f"  note: marker '[7]' at {at}: source 7 out of range (4 sources given)" in unicite
