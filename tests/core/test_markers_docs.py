"""Azure's ``[docN]`` marker style: read by `parse_markers`, `cite`, `MarkerStream`; never prose."""

from __future__ import annotations

import pytest

import unicite
from unicite import CitedAnswer, Source, UsageError
from unicite.markers import MARKER_RE, MarkerStream, parse_markers, renumber

SOURCES = [
    Source(id="a", title="Politique de télétravail", content="Deux jours par semaine."),
    Source(id="b", title="東京オフィス利用ガイド", content="平日9時から18時まで。"),
    Source(id="c", title="Guide des avantages", content="50 % des transports."),
]


def cited(answer: CitedAnswer) -> list[tuple[str, list[str], str]]:
    """(claim, source ids, marker text) of every citation."""
    out = []
    for c in answer.citations:
        assert c.origin == "marker"
        assert c.marker_span is not None
        out.append((c.text, c.source_ids, answer.text[c.marker_span[0] : c.marker_span[1]]))
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Deux jours de télétravail[doc1].", [("Deux jours de télétravail", ["a"], "[doc1]")]),
        ("Deux jours de télétravail [doc1].", [("Deux jours de télétravail", ["a"], "[doc1]")]),
        ("Deux jours de télétravail.[doc1]", [("Deux jours de télétravail.", ["a"], "[doc1]")]),
        ("平日9時から開きます[doc2]。", [("平日9時から開きます", ["b"], "[doc2]")]),
        ("Transports 🚆[doc3][doc1].", [("Transports 🚆", ["c", "a"], "[doc3][doc1]")]),
        ("Transports [doc3] [doc1].", [("Transports", ["c", "a"], "[doc3] [doc1]")]),
        # A plain word glued to the marker is prose (Azure writes them so), whatever the word.
        ("Voir mydoc[doc1] ici.", [("Voir mydoc", ["a"], "[doc1]")]),
        ("Python 3.12[doc2] suffit.", [("Python 3.12", ["b"], "[doc2]")]),
        ("- [doc1] Deux jours par semaine", [("Deux jours par semaine", ["a"], "[doc1]")]),
    ],
)
def test_doc_markers_cite(text: str, expected: list[tuple[str, list[str], str]]) -> None:
    answer = parse_markers(text, SOURCES)
    assert cited(answer) == expected
    assert answer.diagnostics == []
    assert answer.text == text


@pytest.mark.parametrize(
    "text",
    [
        "Les [docs] et le [document] restent du texte.",
        "Un espace : [doc 1], une majuscule : [Doc1], un tiret : [doc-1].",
        "Collé à un mot : [doc1]s, x[doc1]y, [doc1]_suite.",
        "Dans le code : `hits[doc1]` et\n\n```python\nhits[doc2]\n```\n",
        "Dans une URL : https://intranet.example/wiki/[doc1] fin.",
        "Dans une définition : [[doc1]] et \\[doc1\\].",
    ],
)
def test_what_is_no_doc_marker(text: str) -> None:
    answer = parse_markers(text, SOURCES)
    assert answer.citations == []
    assert answer.diagnostics == []
    assert answer.text == text


@pytest.mark.parametrize("text", ["my_docs[doc1]", "myDocs[doc1]", "self.docs[doc2]"])
def test_a_name_from_code_indexes_rather_than_cites(text: str) -> None:
    answer = parse_markers(f"Le résultat est {text}.", SOURCES)
    assert answer.citations == []
    assert answer.text == f"Le résultat est {text}."
    assert len(answer.diagnostics) == 1
    assert "may be an index, not a citation (a name from code before it)" in answer.diagnostics[0]


def test_marker_re_finds_doc_markers() -> None:
    text = "Un[doc1][doc12] deux [doc9999] trois [doc10000] [docs]"
    assert [m.group() for m in MARKER_RE.finditer(text)] == ["[doc1]", "[doc12]", "[doc9999]"]


def test_out_of_range_doc_markers_are_dropped_or_kept() -> None:
    text = "Deux jours[doc1]. Cantine[doc7]."
    dropped = parse_markers(text, SOURCES)
    assert dropped.text == "Deux jours[doc1]. Cantine."
    assert cited(dropped) == [("Deux jours", ["a"], "[doc1]")]
    assert dropped.diagnostics == ["marker '[doc7]' at 25: source 7 out of range (3 sources given)"]
    kept = parse_markers(text, SOURCES, on_invalid="keep")
    assert kept.text == text
    assert len(kept.citations) == 1
    zero = parse_markers("Rien[doc0].", SOURCES)
    assert zero.diagnostics == [
        "marker '[doc0]' at 4: source 0 in 1-based numbering (use base=0 for 0-based producers)"
    ]


def test_styles_select_doc_markers() -> None:
    text = "Un [1]. Deux [doc2]."
    assert cited(parse_markers(text, SOURCES, style="docs")) == [("Deux", ["b"], "[doc2]")]
    assert cited(parse_markers(text, SOURCES, style="brackets")) == [("Un", ["a"], "[1]")]
    assert len(parse_markers(text, SOURCES).citations) == 2
    with pytest.raises(UsageError):
        parse_markers(text, SOURCES, style="doc")  # type: ignore[arg-type]


def test_renumber_rewrites_doc_markers_in_their_style() -> None:
    answer = renumber(parse_markers("Transports[doc3]. Télétravail[doc1][doc3].", SOURCES))
    # A run is written in ascending order, as renumbered [n] runs are.
    assert answer.text == "Transports[doc1]. Télétravail[doc1][doc2]."
    assert [s.id for s in answer.sources] == ["c", "a"]


def test_cite_reads_doc_answers_with_sources() -> None:
    answer = unicite.cite(
        "Deux jours de télétravail[doc1]. 東京は9時に開きます[doc2]。", sources=SOURCES
    )
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Deux jours de télétravail", ["a"]),
        ("東京は9時に開きます", ["b"]),
    ]
    assert answer.text == "Deux jours de télétravail[doc1]. 東京は9時に開きます[doc2]。"


@pytest.mark.parametrize("renumbering", [True, False])
def test_doc_markers_stream_like_the_whole_text(renumbering: bool) -> None:
    text = (
        "Transports 🚆[doc3][doc1]. 東京オフィスは平日9時から開きます[doc2]。 Cantine[doc8]. "
        "Code : my_docs[doc1], `x[doc2]`. Fin [doc1]"
    )
    parsed = parse_markers(text, SOURCES)
    whole = renumber(parsed, keep_unused=False) if renumbering else parsed
    for size in (1, 2, 3, 5, 7):
        marker_stream = MarkerStream(SOURCES, renumber=renumbering)
        shown = [marker_stream.feed(text[k : k + size]) for k in range(0, len(text), size)]
        shown.append(marker_stream.close())
        assert marker_stream.answer == whole, size
        assert "".join(shown) == whole.text
