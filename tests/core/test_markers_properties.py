"""Properties of the marker protocols: round trips with inject and renumber, totality.

"Recovers" for inject → parse: citations whose spans are whole sentences (segments) are given
markers by `inject_markers`; parsing the result gives, for every cited span, the same span and
the same set of sources. Citations ending at the same place share one marker, so they are
compared as the union of their sources per span.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import Citation, CitedAnswer, Source, segment
from unicite.markers import inject_markers, parse_markers, renumber

SOURCES = [Source(id=f"s{n}", url=f"https://s{n}.example/", title=f"Source {n}") for n in range(6)]
IDS = [s.id for s in SOURCES]

WORDS = st.sampled_from(
    ["river", "stone", "garden", "city", "north", "light", "über", "caf\u00e9", "\u6771\u4eac"]
)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=2, max_size=7))
    words[0] = words[0].capitalize()
    # No "?": the marker pattern reads "?[1]" as part of a URL query.
    return " ".join(words) + draw(st.sampled_from([".", "!", ":", ""]))


@st.composite
def texts(draw: st.DrawFn) -> str:
    blocks = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["paragraph", "bullets", "code", "heading"]))
        if kind == "paragraph":
            items = draw(st.lists(sentences(), min_size=1, max_size=4))
            blocks.append(" ".join(s if s[-1] in ".!?" else s + "." for s in items))
        elif kind == "bullets":
            blocks.append(
                "\n".join("- " + s for s in draw(st.lists(sentences(), min_size=1, max_size=3)))
            )
        elif kind == "code":
            blocks.append("```\nvalue = items[1]\n```")
        else:
            blocks.append("## " + draw(sentences()))
    return "\n\n".join(blocks)


@st.composite
def cited_answers(draw: st.DrawFn) -> CitedAnswer:
    text = draw(texts())
    citations = []
    for seg in segment(text):
        if seg.kind in ("code", "heading") or not draw(st.booleans()):
            continue
        start = seg.start + (2 if seg.kind == "bullet" else 0)
        ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
        citations.append(
            Citation(start=start, end=seg.end, text=text[start : seg.end], source_ids=ids)
        )
    return CitedAnswer(text=text, sources=SOURCES, citations=citations)


def by_span(answer: CitedAnswer) -> dict[tuple[int, int], set[str]]:
    spans: dict[tuple[int, int], set[str]] = defaultdict(set)
    for c in answer.citations:
        spans[(c.start, c.end)] |= set(c.source_ids)
    return dict(spans)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cited_answers(), st.sampled_from(["brackets", "sids", "footnotes", "sup"]))
def test_property_parse_recovers_injected_citations(answer: CitedAnswer, style: str) -> None:
    injected = inject_markers(answer, style)  # type: ignore[arg-type]
    parsed = parse_markers(injected.text, injected.sources)
    assert parsed.text == injected.text
    assert parsed.diagnostics == []
    assert by_span(parsed) == by_span(injected)
    assert {c.marker_span for c in parsed.citations} == {c.marker_span for c in injected.citations}


MARKERISH = st.lists(
    st.sampled_from(
        [
            *"ab .\n\t`~[]()<>:,-^|*#0129",
            "\u3010",
            "\u3011",
            "\u2020",
            "S:",
            "[[S:",
            "sup",
            "](",
            "^",
        ]
    ),
    max_size=40,
).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=80), MARKERISH)
OPTIONS = st.fixed_dictionaries(
    {
        "style": st.sampled_from(
            ["auto", "brackets", "sids", "sup", "footnotes", "assistant", "links"]
        ),
        "on_invalid": st.sampled_from(["drop", "keep"]),
        "base": st.sampled_from([0, 1]),
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_TEXT, st.integers(0, 6), OPTIONS)
def test_property_parsing_never_raises(text: str, count: int, options: dict[str, object]) -> None:
    answer = parse_markers(text, SOURCES[:count], **options)  # type: ignore[arg-type]
    # Building the answer checked every invariant; the text only ever loses spans.
    assert len(answer.text) <= len(text)
    for c in answer.citations:
        assert c.marker_span is not None
        assert c.origin == "marker"
        assert answer.text[c.start : c.end] == c.text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MARKERISH)
def test_property_renumbered_text_reads_back_the_same(text: str) -> None:
    once = renumber(parse_markers(text, SOURCES))
    again = parse_markers(once.text, once.sources)
    assert [(c.start, c.end, c.source_ids, c.marker_span) for c in again.citations] == [
        (c.start, c.end, c.source_ids, c.marker_span) for c in once.citations
    ]
    assert renumber(once) == once
    # Footnote n is the n-th source cited.
    first_seen: list[str] = []
    for c in sorted(once.citations, key=lambda c: c.marker_span or (c.end, c.end)):
        first_seen.extend(sid for sid in c.source_ids if sid not in first_seen)
    assert [s.id for s in once.sources][: len(first_seen)] == first_seen
