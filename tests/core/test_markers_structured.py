"""`parse_structured`: JSON/YAML sidecar citations by JSON Pointer, and inline markers."""

from __future__ import annotations

import copy
import json

import pytest

from unicite import CitationError, Source, UsageError
from unicite.markers import parse_structured
from unicite.markers._structured import escape_pointer, resolve_pointer

SOURCES = [Source(id=k, url=f"https://{k}.example/", title=k.upper()) for k in "abcde"]

DOCUMENT = {
    "name": "Harbour Bridge",
    "facts": [{"opened": "1932"}, {"lanes": 8}],
    "a/b": {"m~n": "escaped keys"},
    "_citations": [
        {"path": "/name", "sids": [3, 5]},
        {"path": "/facts/0/opened", "sids": [1]},
        {"path": "/a~1b/m~0n", "sids": ["2"]},
        {"path": "/name", "sids": ["d"]},
    ],
}


def test_sidecar_citations_by_pointer() -> None:
    before = copy.deepcopy(DOCUMENT)
    result = parse_structured(DOCUMENT, SOURCES)
    assert before == DOCUMENT  # not modified
    assert result.data == {k: v for k, v in DOCUMENT.items() if k != "_citations"}
    assert result.citations == {
        "/name": ["c", "e", "d"],
        "/facts/0/opened": ["a"],
        "/a~1b/m~0n": ["b"],
    }
    assert result.diagnostics == []
    assert result.sources == SOURCES
    assert result.answers == {}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("not an object", "expected an object with path and sids"),
        ({"path": "name", "sids": [1]}, "is not a JSON Pointer"),
        ({"path": "/missing", "sids": [1]}, "names nothing in the document"),
        ({"path": "/facts/01/opened", "sids": [1]}, "names nothing"),
        ({"path": "/facts/-", "sids": [1]}, "names nothing"),
        ({"path": "/facts/1/lanes", "sids": [1]}, "names a number, not a string"),
        ({"path": "/facts", "sids": [1]}, "names a list, not a string"),
        ({"path": "/name"}, "no sids"),
        ({"path": "/name", "sids": []}, "empty sids"),
        ({"path": "/name", "sids": [0]}, "source 0 in 1-based numbering"),
        ({"path": "/name", "sids": [9]}, "source 9 out of range (5 sources given)"),
        ({"path": "/name", "sids": ["zz"]}, "'zz' is not a source number or id"),
        ({"path": "/name", "sids": [True]}, "'True' is not a source number or id"),
        ({"path": "/name", "sids": [1, "a"]}, "cites 'a' twice"),
    ],
)
def test_invalid_entries_are_reported(entry: object, problem: str) -> None:
    document = {"name": "x", "facts": [{"opened": "1932"}, {"lanes": 8}], "_citations": [entry]}
    result = parse_structured(document, SOURCES)
    assert any(problem in d for d in result.diagnostics), result.diagnostics
    assert all(d.startswith("/_citations") for d in result.diagnostics)
    with pytest.raises(CitationError):
        parse_structured(document, SOURCES, on_invalid="raise")


def test_keep_cites_non_string_values() -> None:
    document = {"lanes": 8, "_citations": [{"path": "/lanes", "sids": [2]}]}
    assert parse_structured(document, SOURCES).citations == {}
    kept = parse_structured(document, SOURCES, on_invalid="keep")
    assert kept.citations == {"/lanes": ["b"]}
    assert kept.diagnostics == ["/_citations/0: path '/lanes' names a number, not a string"]


def test_sidecar_elsewhere_and_zero_based() -> None:
    document = {"meta": {"cites": [{"path": "/title", "sids": [0]}]}, "title": "T"}
    result = parse_structured(document, SOURCES, key="/meta/cites", base=0)
    assert result.data == {"meta": {}, "title": "T"}
    assert result.citations == {"/title": ["a"]}
    listed = parse_structured([{"x": "y"}, [{"path": "/0/x", "sids": [1]}]], SOURCES, key="/1")
    assert listed.data == [{"x": "y"}]
    assert listed.citations == {"/0/x": ["a"]}


def test_inline_markers_in_strings() -> None:
    document = {
        "summary": "The bridge opened in 1932 [[S:1]] and has eight lanes [[S:2,3]].",
        "items": ["Steel arch [[S:4]]", "no citation"],
        "_citations": [{"path": "/items/1", "sids": [5]}],
    }
    result = parse_structured(json.dumps(document), SOURCES)
    assert result.data == {
        "summary": "The bridge opened in 1932 and has eight lanes.",
        "items": ["Steel arch", "no citation"],
    }
    assert result.citations == {
        "/items/1": ["e"],
        "/summary": ["a", "b", "c"],
        "/items/0": ["d"],
    }
    summary = result.answers["/summary"]
    assert summary.text == result.data["summary"]
    assert [(c.text, c.source_ids, c.marker_span) for c in summary.citations] == [
        ("The bridge opened in 1932", ["a"], None),
        ("and has eight lanes", ["b", "c"], None),
    ]
    plain = parse_structured(document, SOURCES, inline=False)
    assert plain.data["summary"] == document["summary"]
    assert "/summary" not in plain.citations


def test_inline_problems_are_reported_by_pointer() -> None:
    result = parse_structured({"x": "Claim [[S:9]]."}, SOURCES)
    assert result.data == {"x": "Claim."}
    assert result.diagnostics == [
        "/x: marker '[[S:9]]' at 6: source 9 out of range (5 sources given)"
    ]


def test_yaml_text() -> None:
    pytest.importorskip("yaml")
    text = "name: Bridge\n_citations:\n  - path: /name\n    sids: [2]\n"
    result = parse_structured(text, SOURCES)
    assert result.data == {"name": "Bridge"}
    assert result.citations == {"/name": ["b"]}


@pytest.mark.parametrize("text", ["", "{not json", "- [unclosed", "just a string", b"\xff\xfe"])
def test_unreadable_documents_are_diagnosed(text: str | bytes) -> None:
    result = parse_structured(text, SOURCES)
    assert result.citations == {}
    assert len(result.diagnostics) == 1
    assert result.data == text


def test_no_sidecar() -> None:
    assert parse_structured({"x": "y"}, SOURCES).diagnostics == []
    assert parse_structured({"x": "y"}, SOURCES, inline=False).diagnostics == [
        "no citations at /_citations"
    ]
    result = parse_structured({"_citations": "oops"}, SOURCES)
    assert result.diagnostics == ["/_citations: expected a list of citations, got str"]


def test_pointer_helpers() -> None:
    document = {"a/b": {"m~n": [10, 20]}, "": "empty key"}
    assert resolve_pointer(document, "") == (True, document)
    assert resolve_pointer(document, "/a~1b/m~0n/1") == (True, 20)
    assert resolve_pointer(document, "/") == (True, "empty key")
    assert resolve_pointer(document, "/a~1b/m~0n/2") == (False, None)
    assert escape_pointer("a/b~c") == "a~1b~0c"
    with pytest.raises(UsageError):
        resolve_pointer(document, "a")


def test_misuse() -> None:
    with pytest.raises(UsageError):
        parse_structured(42, SOURCES)
    with pytest.raises(UsageError):
        parse_structured({}, SOURCES, key="")
    with pytest.raises(UsageError):
        parse_structured({}, SOURCES, inline="yes")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        parse_structured({}, SOURCES, on_invalid="never")  # type: ignore[arg-type]


def test_deep_documents_do_not_crash() -> None:
    deep: object = "leaf [[S:1]]"
    for _ in range(600):
        deep = [deep]
    result = parse_structured(deep, SOURCES)
    assert any("nested too deeply" in d for d in result.diagnostics)
