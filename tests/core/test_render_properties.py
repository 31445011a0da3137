"""Properties of `render` over random answers: it never raises and wrapping keeps its promises."""

from __future__ import annotations

import re

from _width import display_width
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    Source,
    UrlLocation,
    render,
)

CHARS = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(
        [
            *("\x1b", "\x9b", "\x9d", "\x07", "\x1b\\", "\u202e", "\u200b", "\r", "\n", "\t"),
            *("[", "]", "(", ")", "<", ">", "`", "*", "_", "#", "&", '"', "'", "\\", ":"),
            *("[1]", "[^2]", "](javascript:x)", "<script>", "```\n", "東京", "e\u0301", " "),
        ]
    ),
)
TEXT = st.lists(CHARS, max_size=40).map("".join)
URL = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "https://example.com/a b(c)",
            "javascript:alert(1)",
            "//evil.example/",
            "https://пример.рф/",
            "http://[::1]/",
            "data:text/html,x",
        ]
    ),
    TEXT,
)
LOCATION = st.one_of(
    st.none(),
    st.builds(PageLocation, start_page=st.integers(1, 5), end_page=st.integers(5, 9)),
    st.builds(CharLocation, start=st.integers(0, 5), end=st.integers(5, 9)),
    st.builds(BlockLocation, start_block=st.integers(0, 5), end_block=st.integers(5, 9)),
    st.builds(SearchResultLocation, search_result_index=st.integers(0, 5)),
    st.builds(UrlLocation, url=TEXT),
)


@st.composite
def answers(draw: st.DrawFn) -> CitedAnswer:
    text = draw(TEXT)
    count = draw(st.integers(0, 4))
    sources = [
        Source(
            id=f"s{n}",
            url=draw(URL),
            title=draw(st.none() | TEXT),
            snippet=draw(st.none() | TEXT),
        )
        for n in range(count)
    ]
    citations = []
    if count:
        for _ in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, len(text)))
            end = draw(st.integers(start, len(text)))
            span = None
            if draw(st.booleans()):
                left = draw(st.integers(0, len(text)))
                span = (left, draw(st.integers(left, len(text))))
            citations.append(
                Citation(
                    start=start,
                    end=end,
                    text=text[start:end],
                    source_ids=draw(st.lists(st.sampled_from([s.id for s in sources]), min_size=1)),
                    quote=draw(st.none() | TEXT),
                    location=draw(LOCATION),
                    marker_span=span,
                )
            )
    extras = {"search_entry_point": draw(TEXT)} if draw(st.booleans()) else {}
    return CitedAnswer(text=text, sources=sources, citations=citations, extras=extras)


OSC8 = re.compile(r"\x1b\]8;;[^\x1b]*\x1b\\")


def visible_text(out: str) -> str:
    """The characters shown, ignoring whitespace and block-quote marks (wrapping adds those)."""
    return re.sub(r"[\s>]", "", OSC8.sub("", out))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answers(),
    st.sampled_from(["terminal", "text", "markdown", "html", "json"]),
    st.sampled_from(["cited", "all"]),
    st.sampled_from(["brackets", "footnotes"]),
    st.booleans(),
    st.integers(1, 120),
)
def test_render_never_raises(
    answer: CitedAnswer, format: str, sources: str, markers: str, links: bool, width: int
) -> None:
    out = render(
        answer,
        format,  # type: ignore[arg-type]
        sources=sources,  # type: ignore[arg-type]
        markers=markers,  # type: ignore[arg-type]
        hyperlinks=links,
        width=width,
    )
    assert isinstance(out, str)
    assert out == render(
        answer,
        format,  # type: ignore[arg-type]
        sources=sources,  # type: ignore[arg-type]
        markers=markers,  # type: ignore[arg-type]
        hyperlinks=links,
        width=width,
    )
    if format != "terminal" or not links:
        assert "\x1b" not in out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers(), st.integers(10, 80))
def test_wrapping_never_splits_words_links_or_markers(answer: CitedAnswer, width: int) -> None:
    wide = render(answer, "terminal", hyperlinks=True, width=100_000, sources="all")
    out = render(answer, "terminal", hyperlinks=True, width=width, sources="all")
    # Only line breaks and indentation (and repeated quote marks) change.
    assert visible_text(out) == visible_text(wide)
    for line in out.split("\n"):
        # Every link opens and closes on the same line.
        assert len(re.findall(r"\x1b\]8;;[^\x1b]+\x1b\\", line)) == line.count("\x1b]8;;\x1b\\")
        visible = OSC8.sub("", line)
        # A line wider than the limit holds one unbreakable word (after its indentation).
        if display_width(visible) > width:
            assert len(visible.split()) <= 3 or visible.lstrip().startswith(("```", "|"))
