import pytest

from unicite import CharLocation, CitationError, Source
from unicite.providers import AnswerBuilder


def test_sources_are_numbered_in_first_cited_order() -> None:
    b = AnswerBuilder("test")
    start = b.append_text("First claim. ")
    b.append_text("Second claim.")
    uncited = b.add_source(Source(url="https://uncited.example/"))
    late = b.add_source(Source(url="https://late.example/"))
    early = b.add_source(Source(url="https://early.example/"))
    assert b.cite(13, 26, [late])
    assert b.cite(start, 12, [early], location=CharLocation(start=0, end=3))
    answer = b.build()
    assert [s.id for s in answer.sources] == [early, late, uncited]
    assert [c.text for c in answer.citations] == ["First claim.", "Second claim."]


def test_invalid_citations_are_dropped_with_diagnostics() -> None:
    b = AnswerBuilder("test")
    b.append_text("abc")
    sid = b.add_source(Source(id="s"))
    assert not b.cite(0, 9, [sid], where="x")
    assert not b.cite(2, 1, [sid])
    assert not b.cite(0, 1, ["unknown"])
    assert b.cite(0, 1, [sid, "unknown", sid], confidence=7.0, marker_span=(5, 9))
    answer = b.build()
    assert len(answer.citations) == 1
    assert answer.citations[0].source_ids == ["s"]
    assert answer.citations[0].confidence is None
    assert answer.citations[0].marker_span is None
    assert len(answer.diagnostics) == 5


def test_strict_build_raises_with_all_diagnostics() -> None:
    b = AnswerBuilder("gemini")
    b.note("first problem")
    b.note("second problem")
    with pytest.raises(CitationError) as info:
        b.build(strict=True)
    assert info.value.provider == "gemini"
    assert info.value.diagnostics == ["first problem", "second problem"]


def test_text_accumulates_with_offsets() -> None:
    b = AnswerBuilder(None)
    assert b.append_text("héllo ") == 0
    assert b.append_text("") == 6
    assert b.append_text("wörld") == 6
    assert b.text == "héllo wörld"
    assert b.length == 11
