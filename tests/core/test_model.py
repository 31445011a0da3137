import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    Source,
    UrlLocation,
)


def _cite(text: str, claim: str, *source_ids: str, **kw: object) -> Citation:
    start = text.index(claim)
    return Citation(
        start=start, end=start + len(claim), text=claim, source_ids=list(source_ids), **kw
    )


TEXT = "Café crème costs 3 €. 東京タワーは333メートルです。Emoji 👍🏽 too."


def _answer() -> CitedAnswer:
    a = Source(id="a", url="https://example.com/a", title="A")
    b = Source(id="b", title="B", content="東京タワーは333メートルです。")
    return CitedAnswer(
        text=TEXT,
        sources=[a, b],
        citations=[
            _cite(
                TEXT, "東京タワーは333メートルです。", "b", location=CharLocation(start=0, end=18)
            ),
            _cite(TEXT, "Café crème costs 3 €.", "a", "b", confidence=0.5),
        ],
        provider="test",
    )


def test_citations_are_sorted_and_slice_to_their_text() -> None:
    answer = _answer()
    assert [c.start for c in answer.citations] == sorted(c.start for c in answer.citations)
    for c in answer.citations:
        assert answer.text[c.start : c.end] == c.text


def test_footnotes_are_one_based_display_order() -> None:
    answer = _answer()
    assert answer.footnote_number("a") == 1
    assert answer.footnote_number("b") == 2
    assert answer.footnote_number("zzz") is None
    assert answer.source("b") is answer.sources[1]


def test_cited_sources_keep_display_order_and_skip_uncited() -> None:
    extra = Source(id="c", url="https://uncited.example.org/")
    answer = _answer()
    answer2 = CitedAnswer(
        text=answer.text, sources=[extra, *answer.sources], citations=answer.citations
    )
    assert [s.id for s in answer2.cited_sources()] == ["a", "b"]


def test_mismatched_citation_text_is_rejected() -> None:
    with pytest.raises(ValidationError, match="does not match"):
        CitedAnswer(
            text="hello world",
            sources=[Source(id="a")],
            citations=[Citation(start=0, end=5, text="world", source_ids=["a"])],
        )


def test_citation_past_the_text_is_rejected() -> None:
    with pytest.raises(ValidationError, match="past the text"):
        CitedAnswer(
            text="hi",
            sources=[Source(id="a")],
            citations=[Citation(start=0, end=5, text="hi", source_ids=["a"])],
        )


def test_unknown_source_id_is_rejected() -> None:
    with pytest.raises(ValidationError, match="unknown source id 'nope'"):
        CitedAnswer(
            text="hi",
            sources=[Source(id="a")],
            citations=[Citation(start=0, end=2, text="hi", source_ids=["nope"])],
        )


def test_duplicate_source_ids_are_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate source id"):
        CitedAnswer(text="", sources=[Source(id="a"), Source(id="a")])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"start": 3, "end": 1, "text": "", "source_ids": ["a"]},
        {"start": 0, "end": 1, "text": "x", "source_ids": []},
        {"start": 0, "end": 1, "text": "x", "source_ids": ["a"], "confidence": 1.5},
        {"start": 0, "end": 1, "text": "x", "source_ids": ["a"], "marker_span": (4, 2)},
        {"start": -1, "end": 1, "text": "x", "source_ids": ["a"]},
    ],
)
def test_invalid_citations_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Citation(**kwargs)  # type: ignore[arg-type]


def test_models_are_frozen_and_forbid_unknown_fields() -> None:
    source = Source(id="a")
    with pytest.raises(ValidationError):
        source.title = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Source(id="a", urll="https://typo.example")  # type: ignore[call-arg]


def test_source_id_domain_and_redirect_are_derived() -> None:
    s1 = Source(url="https://Forums.BBC.co.uk/thread?utm_source=x#top", title="t")
    s2 = Source(url="https://forums.bbc.co.uk/thread")
    assert s1.id == s2.id
    assert s1.id.startswith("u-")
    assert s1.domain == "bbc.co.uk"
    assert s1.kind == "web"
    assert not s1.redirect
    doc = Source(title="Notes", content="some text")
    assert doc.id.startswith("h-")
    assert doc.kind == "document"
    assert doc.id == Source(title="Notes", content="some text").id
    assert doc.id != Source(title="Notes", content="other text").id
    assert Source(provider_id="file-123", url="https://x.example").id == "file-123"


def test_vertex_redirect_takes_domain_from_title() -> None:
    url = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE123"
    s = Source(url=url, title="www.reuters.com")
    assert s.redirect
    assert s.domain == "reuters.com"
    assert Source(url=url, title="Some Article").domain is None


def test_explicit_fields_are_kept() -> None:
    s = Source(id="x", url="https://a.example.com/", domain="custom", redirect=True, kind="tool")
    assert (s.domain, s.redirect, s.kind) == ("custom", True, "tool")


@pytest.mark.parametrize(
    "location",
    [
        CharLocation(start=2, end=9, document_index=0),
        PageLocation(start_page=1, end_page=2),
        BlockLocation(start_block=0, end_block=3),
        SearchResultLocation(search_result_index=1, start_block=0, end_block=1),
        UrlLocation(url="https://example.com"),
    ],
)
def test_locations_round_trip_through_json_by_kind(location: object) -> None:
    text = "abc"
    citation = Citation(start=0, end=3, text=text, source_ids=["a"], location=location)  # type: ignore[arg-type]
    answer = CitedAnswer(text=text, sources=[Source(id="a")], citations=[citation])
    back = CitedAnswer.from_json(answer.to_json())
    assert back == answer
    assert type(back.citations[0].location) is type(location)


def test_json_round_trip_is_lossless() -> None:
    answer = _answer().model_copy(update={"diagnostics": ["odd"], "extras": {"queries": ["q"]}})
    raw = {"type": "url_citation", "nested": [1, 2, {"x": None}]}
    source = Source(id="r", url="https://r.example", raw=raw, extras={"page_age": "2 days"})
    answer = CitedAnswer(
        text=answer.text,
        sources=[*answer.sources, source],
        citations=answer.citations,
        diagnostics=["odd"],
        extras={"queries": ["q"]},
        model="m-1",
        provider="test",
    )
    text = answer.to_json()
    back = CitedAnswer.from_json(text)
    assert back == answer
    assert back.to_json() == text
    assert json.loads(text)["sources"][2]["raw"] == raw


def test_location_ranges_must_be_ordered() -> None:
    with pytest.raises(ValidationError):
        CharLocation(start=5, end=1)
    with pytest.raises(ValidationError):
        PageLocation(start_page=3, end_page=2)
    with pytest.raises(ValidationError):
        BlockLocation(start_block=3, end_block=2)


def test_spans_convert_to_utf16_and_bytes() -> None:
    answer = _answer()
    for c in answer.citations:
        u16 = answer.utf16_span(c)
        encoded16 = answer.text.encode("utf-16-le")
        assert encoded16[u16[0] * 2 : u16[1] * 2].decode("utf-16-le") == c.text
        b = answer.byte_span(c)
        assert answer.text.encode()[b[0] : b[1]].decode() == c.text
        assert answer.span_from_utf16(*u16) == (c.start, c.end)
        assert answer.span_from_bytes(*b) == (c.start, c.end)


def test_footnote_lookup_survives_model_copy() -> None:
    answer = _answer()
    swapped = answer.model_copy(update={"sources": list(reversed(answer.sources))})
    assert swapped.footnote_number("a") == 2
    assert swapped.source("a") is swapped.sources[1]


_non_ascii = st.text(
    alphabet=st.sampled_from(list("aé東京👍🏽\u0301 .,ßЖ\U0001f1ef\U0001f1f5")),
    min_size=0,
    max_size=40,
)


@given(_non_ascii, st.data())
def test_offsets_survive_non_ascii_text(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    citation = Citation(start=start, end=end, text=text[start:end], source_ids=["s"])
    answer = CitedAnswer(text=text, sources=[Source(id="s")], citations=[citation])
    assert answer.text[citation.start : citation.end] == citation.text
    back = CitedAnswer.from_json(answer.to_json())
    assert back == answer
    b = answer.byte_span(citation)
    assert text.encode()[b[0] : b[1]].decode() == citation.text
    u = answer.utf16_span(citation)
    assert text.encode("utf-16-le")[2 * u[0] : 2 * u[1]].decode("utf-16-le") == citation.text
    assert answer.span_from_bytes(*b) == (start, end)
    assert answer.span_from_utf16(*u) == (start, end)


def test_equality_ignores_lookup_caches() -> None:
    answer = _answer()
    copy = CitedAnswer.from_json(answer.to_json())
    answer.utf16_span(answer.citations[0])
    answer.footnote_number("b")
    assert answer == copy
    assert answer != copy.model_copy(update={"text": copy.text + " "})


def test_json_round_trip_with_lone_surrogates_and_odd_raw() -> None:
    text = "bad \ud800 text"
    citation = Citation(start=0, end=3, text="bad", source_ids=["s"], raw={"obj": object})
    answer = CitedAnswer(text=text, sources=[Source(id="s", title="t\udfff")], citations=[citation])
    written = answer.to_json()
    assert written.isascii()
    back = CitedAnswer.from_json(written)
    assert back.text == text
    assert back.sources[0].title == "t\udfff"
    assert back.citations[0].raw == {"obj": repr(object)}
    assert CitedAnswer.from_json(answer.to_json(indent=2)).text == text
    with pytest.raises(ValidationError):
        CitedAnswer.from_json("{not json")
