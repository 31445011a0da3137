"""Fuzzing the marker protocol: parse, renumber, inject, stream, and structured answers.

Text is marker-like noise mixed with hostile characters (lone surrogates, controls, bidi
overrides, huge runs); sources are valid, garbage, or of the wrong type. Only `UsageError`
(caller mistakes) and `CitationError` (``on_invalid="raise"``) may escape.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from _fuzz import (
    HOSTILE_STRINGS,
    HUGE,
    check_answer,
    cited_answers,
    fuzz_settings,
    hostile_text,
    json_values,
    nested_json,
    outcome,
    source_like,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import CitationError, CitedAnswer, MarkerStream, Source, UniciteError, UsageError
from unicite.markers import inject_markers, parse_markers, parse_structured, renumber

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

MARKER_NOISE = st.sampled_from(
    [
        "[1]",
        "[2, 3]",
        "[2-4]",
        "[4-2]",
        "[0]",
        "[99]",
        "[2024]",
        "[[S:1]]",
        "[[S:1,9]]",
        "[[USAGE:1,2]]",
        "[^1]",
        "[^a]",
        "\n[^a]: https://a.example/\n",
        "<sup>1</sup>",
        '<sup class="cite" data-sids="2">[2]</sup>',
        "\u30101:0\u2020source\u3011",
        "([a](https://a.example/))",
        "[",
        "]",
        "(",
        "<sup",
        "\u3010",
        "`",
        "```\n",
        "    ",
        "\n\n",
        "- ",
        ". ",
        "a[1]",
        "https://x.example/?q=[1]",
    ]
)
noisy_text = st.lists(st.one_of(MARKER_NOISE, hostile_text), max_size=25).map("".join)
OPTIONS = st.fixed_dictionaries(
    {
        "style": st.sampled_from(
            ["auto", "brackets", "sids", "sup", "footnotes", "assistant", "links"]
        ),
        "on_invalid": st.sampled_from(["drop", "keep", "raise"]),
        "base": st.sampled_from([0, 1]),
    }
)
SOURCES = [
    Source(id="a", url="https://a.example/", title="A"),
    Source(provider_id="b\ud800", url="https://\ud800.example/", title="source"),
    Source(id="c", title="\u202ec", content="text"),
]


def parsed(text: str, sources: object, **options: Any) -> CitedAnswer | None:
    """`parse_markers`, or None when it raised a documented error for these options."""
    allowed: tuple[type[BaseException], ...] = (UsageError,)
    if options.get("on_invalid") == "raise":
        allowed = (UsageError, CitationError)
    result = outcome(lambda: parse_markers(text, sources, **options), *allowed)
    if isinstance(result, CitationError):
        assert options.get("on_invalid") == "raise"
        return None
    if isinstance(result, UsageError):
        return None
    return check_answer(result)


@fuzz_settings()
@given(noisy_text, st.lists(source_like, max_size=5), OPTIONS)
def test_parse_markers_on_noise(text: str, sources: list[Any], options: dict[str, Any]) -> None:
    answer = parsed(text, sources, **options)
    if answer is None:
        return
    for c in answer.citations:
        assert c.origin == "marker"
        assert c.marker_span is not None
    # Renumbering and injecting keep every invariant and are stable.
    once = check_answer(renumber(answer), render=False)
    assert renumber(once) == once
    for style in ("brackets", "sids", "footnotes", "sup"):
        check_answer(inject_markers(answer, style), render=False)


@fuzz_settings()
@given(noisy_text, json_values | st.lists(json_values, max_size=4))
def test_parse_markers_with_garbage_sources(text: str, sources: Any) -> None:
    result = outcome(lambda: parse_markers(text, sources), UsageError)
    if not isinstance(result, UsageError):
        check_answer(result)


@fuzz_settings()
@given(cited_answers(), st.sampled_from(["brackets", "sids", "footnotes", "sup"]))
def test_inject_and_renumber_any_valid_answer(answer: CitedAnswer, style: str) -> None:
    injected = check_answer(inject_markers(answer, style))  # type: ignore[arg-type]
    for c in injected.citations:
        assert c.marker_span is not None
    check_answer(renumber(injected), render=False)
    check_answer(renumber(answer), render=False)


@fuzz_settings()
@given(
    noisy_text,
    st.data(),
    st.sampled_from(
        [
            {},
            {"on_invalid": "keep"},
            {"base": 0},
            {"keep_unused": True},
            {"renumber": False},
            {"renumber": False, "on_invalid": "keep"},
            {"renumber": False, "base": 0},
        ]
    ),
)
def test_marker_stream_emits_what_parse_returns(
    text: str, data: st.DataObject, options: dict[str, Any]
) -> None:
    parse_options = {k: v for k, v in options.items() if k not in ("renumber", "keep_unused")}
    whole = parse_markers(text, SOURCES, **parse_options)
    if options.get("renumber", True):
        whole = renumber(whole, keep_unused=options.get("keep_unused", False))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=10)))
    bounds = [0, *cuts, len(text)]
    stream = MarkerStream(SOURCES, **options)
    emitted = "".join(stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    emitted += stream.close()
    assert emitted == whole.text
    assert check_answer(stream.answer) == whole


def test_marker_stream_misuse_is_a_usage_error() -> None:
    stream = MarkerStream(SOURCES)
    for chunk in (None, 3, b"[1]", ["[1]"]):
        with pytest.raises(UsageError):
            stream.feed(chunk)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        _ = stream.answer
    stream.feed("a [1]")
    stream.close()
    with pytest.raises(UsageError):
        stream.feed("more")


def test_wrong_argument_types_are_usage_errors() -> None:
    for text in (None, 1, b"[1]", ["[1]"]):
        with pytest.raises(UsageError):
            parse_markers(text, SOURCES)  # type: ignore[arg-type]
    for options in ({"style": "nope"}, {"on_invalid": "x"}, {"base": 2}, {"base": True}):
        with pytest.raises(UsageError):
            parse_markers("a [1]", SOURCES, **options)
        with pytest.raises(UsageError):
            MarkerStream(SOURCES, **options)
    for options in ({"renumber": None}, {"keep_unused": "no"}):
        with pytest.raises(UsageError):
            MarkerStream(SOURCES, **options)
    for answer in (None, "text", {"text": "x"}):
        with pytest.raises(UsageError):
            renumber(answer)  # type: ignore[arg-type]
        with pytest.raises(UsageError):
            inject_markers(answer)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        inject_markers(CitedAnswer(text="x"), "nope")  # type: ignore[arg-type]


def test_huge_and_deep_marker_text() -> None:
    for text in (
        HUGE + "[1]" * 5_000,
        "[" * 50_000 + "1" + "]" * 50_000,
        "[[S:" + "1," * 20_000 + "1]]",
        "<sup>" * 10_000,
        "\u3010" * 10_000 + "\u2020",
        "\n[^a]: " * 10_000,
        "([a](" * 5_000,
        "".join(HOSTILE_STRINGS) * 200,
    ):
        answer = check_answer(parse_markers(text, SOURCES), render=False)
        assert len(answer.text) <= len(text)


@fuzz_settings()
@given(json_values, st.booleans(), st.sampled_from(["drop", "keep", "raise"]))
def test_parse_structured_on_any_document(data: Any, inline: bool, on_invalid: str) -> None:
    for document in (data, json.dumps(data)):
        result = outcome(
            lambda document=document: parse_structured(  # type: ignore[misc]
                document,
                SOURCES,
                inline=inline,
                on_invalid=on_invalid,  # type: ignore[arg-type]
            ),
            UsageError,
            CitationError,
        )
        if isinstance(result, UniciteError):
            if isinstance(result, CitationError):
                assert on_invalid == "raise"
            else:
                assert not isinstance(document, (str, dict, list))
            continue
        assert all(isinstance(d, str) for d in result.diagnostics)
        known = {s.id for s in result.sources}
        for ids in result.citations.values():
            assert set(ids) <= known
        for answer in result.answers.values():
            check_answer(answer, render=False)


def test_parse_structured_on_deep_and_invalid_documents() -> None:
    for document in (
        nested_json(10_000),
        nested_json(10_000, "dict"),
        b"\xff\xfe{",
        '{"a": "\ud800 [[S:1]]", "_citations": [{"path": "/a", "sids": [1]}]}',
        '{"_citations": ' + nested_json(10_000) + "}",
        "key: [unclosed",
    ):
        result = parse_structured(document, SOURCES)
        assert isinstance(result.diagnostics, list)
        for answer in result.answers.values():
            check_answer(answer, render=False)
