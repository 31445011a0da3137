"""Fuzzing `cite`: any text, sources and options give a valid answer or a documented error.

`cite` composes markers, renumbering, source merging and attribution; whatever it is given,
only `UsageError` (caller mistakes) and `GroundingRequiredError` (``require``) may escape, and
what it returns keeps every invariant of a `CitedAnswer`.
"""

from __future__ import annotations

from typing import Any

import pytest
from _fuzz import check_answer, cited_answers, fuzz_settings, hostile_text, outcome, source_like
from hypothesis import given
from hypothesis import strategies as st

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, UsageError, cite
from unicite.markers import parse_markers, renumber

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

MARKERS = st.sampled_from(
    ["[1]", "[2, 3]", "[2-4]", "[0]", "[9]", "[[S:1,2]]", "[^1]", "<sup>2</sup>", "`[1]`", ". "]
)
TEXT = st.lists(st.one_of(MARKERS, hostile_text), max_size=12).map("".join)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "renumber": st.booleans(),
        "on_invalid": st.sampled_from(["drop", "keep"]),
        "markers": st.sampled_from(["auto", "brackets", "sids", "sup", "footnotes"]),
        "attribute": st.sampled_from([None, "lexical"]),
        "require": st.sampled_from([None, "citations", "grounding"]),
        "exclude_inline": st.booleans(),
    },
)


@fuzz_settings()
@given(
    text=TEXT,
    sources=st.lists(source_like, max_size=5),
    options=OPTIONS,
    listed=st.sampled_from(["cited", "all"]),
)
def test_cite_text_keeps_every_invariant(
    text: str, sources: list[Any], options: dict[str, Any], listed: str
) -> None:
    result = outcome(
        lambda: cite(text, sources, policy=CitePolicy(sources=listed), **options),  # type: ignore[arg-type]
        UsageError,
        GroundingRequiredError,
    )
    if isinstance(result, CitedAnswer):
        check_answer(result)


@fuzz_settings(0.5)
@given(answer=cited_answers(), sources=st.lists(source_like, max_size=4), options=OPTIONS)
def test_cite_an_answer_keeps_every_invariant(
    answer: CitedAnswer, sources: list[Any], options: dict[str, Any]
) -> None:
    result = outcome(lambda: cite(answer, sources, **options), UsageError, GroundingRequiredError)
    if isinstance(result, CitedAnswer):
        check_answer(result)
        # Citations the answer carried are never lost.
        assert len(result.citations) >= len(answer.citations)


@fuzz_settings()
@given(text=TEXT)
def test_cite_is_parse_then_renumber(text: str) -> None:
    sources = [{"url": f"https://s{n}.example/", "title": f"S{n}"} for n in range(1, 5)]
    parsed = parse_markers(text, sources)
    result = cite(text, sources)
    if parsed.citations:
        assert [c.id for c in result.citations] == [
            f"ref-{k}" for k in range(len(parsed.citations))
        ]
        assert result == renumber(parsed)
    else:
        # Nothing cited: the text loses only its invalid markers, and the sources stay.
        assert (result.text, result.citations, len(result.sources)) == (parsed.text, [], 4)
