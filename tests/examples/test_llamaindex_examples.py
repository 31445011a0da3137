"""The LlamaIndex examples run offline and print what they promise."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """Run an example as its own script, with no API key set: it must run offline."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
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


# llama-index-workflows inspects the agent's members, touching pydantic's deprecated attributes.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
def test_agent_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_index.llms.openai")
    pytest.importorskip("vcr")
    out = run_example("llamaindex_agent.py", capsys, monkeypatch)
    # The model saw the archives' two passages as [sid:1] and [sid:2], the web page as
    # [sid:3], and cited [2], [1], [3] and [6]: renumbered in reading order, each claim tied
    # to the node or page the tool returned, and the [6] that names nothing reported.
    assert out[0].startswith("Le pont du Gard a été construit au Ier siècle après J.-C.")
    assert out[out.index("Sources") + 1 :][:3] == [
        "1. Histoire du pont du Gard — https://www.pontdugard.fr/fr/histoire",
        "2. Pont du Gard — Wikipédia — https://fr.wikipedia.org/wiki/Pont_du_Gard",
        "3. Pont du Gard (aqueduc romain) — UNESCO — https://whc.unesco.org/fr/list/344",
    ]
    cited = [line for line in out if re.match(r"\[\d\] \d+-\d+: ", line)]
    assert cited == [
        "[1] 0-99: 'Le pont du Gard a été construit au Ier siècle après J.-C. pour acheminer "
        "l’eau d’Uzès jusqu’à Nîmes'",
        "[2] 105-180: 'Haut de 48,77 mètres, c’est le plus haut pont-aqueduc connu du monde "
        "romain'",
        "[3] 186-246: 'Il est inscrit au patrimoine mondial de l’UNESCO depuis 1985'",
    ]
    assert out[-1] == "note: marker '[6]' at 290: source 6 out of range (3 sources given)"
