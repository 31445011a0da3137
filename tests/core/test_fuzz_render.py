"""Fuzzing `render` in every format, and the JSON round trip, on arbitrary valid answers.

Answers carry hostile text everywhere (lone surrogates, controls, bidi overrides, markup) and
free-form fields holding what JSON cannot (NaN, bytes, surrogate keys, deep nesting). Output
must be deterministic, encodable as UTF-8 (it is written to terminals and files), free of
escape sequences outside terminal hyperlinks, and the JSON form must read back.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from _fuzz import (
    FORMATS,
    HUGE,
    HUGE_WORD,
    check_answer,
    cited_answers,
    fuzz_settings,
    json_scalars,
    json_values,
    nested,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import Citation, CitedAnswer, Source, UsageError, render

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

ODD_VALUES: list[Any] = [
    math.nan,
    -math.inf,
    b"\xff\xfe",
    {"\ud800": "key"},
    {1: "int key"},
    ("a", "tuple"),
    nested(300),
    nested(100, {"\udfff": math.nan}, "dict"),
    object(),
]


@st.composite
def answers_with_odd_extras(draw: st.DrawFn) -> CitedAnswer:
    answer = draw(cited_answers())
    odd = st.sampled_from(ODD_VALUES) | json_scalars
    sources = [
        s.model_copy(update={"raw": draw(odd), "extras": {"x": draw(odd)}}) for s in answer.sources
    ]
    citations = [c.model_copy(update={"raw": draw(odd)}) for c in answer.citations]
    return CitedAnswer(
        text=answer.text,
        sources=sources,
        citations=citations,
        extras={draw(st.sampled_from(["k", "\ud800", "search_entry_point"])): draw(odd)},
        diagnostics=[draw(st.text(max_size=20))],
    )


def assert_safe(out: str, fmt: str, links: bool) -> None:
    assert isinstance(out, str)
    out.encode("utf-8")  # no lone surrogate reaches a terminal or a file
    if fmt != "terminal" or not links:
        assert "\x1b" not in out
    assert "\x9b" not in out
    assert "\x9d" not in out


@fuzz_settings()
@given(
    cited_answers(),
    st.sampled_from(FORMATS),
    st.sampled_from(["cited", "all"]),
    st.sampled_from(["brackets", "footnotes"]),
    st.booleans(),
    st.none() | st.integers(1, 200),
)
def test_every_format_renders_any_answer(
    answer: CitedAnswer, fmt: str, sources: str, markers: str, links: bool, width: int | None
) -> None:
    options: dict[str, Any] = {
        "sources": sources,
        "markers": markers,
        "hyperlinks": links,
        "width": width,
    }
    out = render(answer, fmt, **options)  # type: ignore[arg-type]
    assert_safe(out, fmt, links)
    assert render(answer, fmt, **options) == out  # type: ignore[arg-type]


@fuzz_settings()
@given(answers_with_odd_extras())
def test_odd_free_form_fields_never_break_json_or_rendering(answer: CitedAnswer) -> None:
    check_answer(answer)
    for fmt in FORMATS:
        assert_safe(render(answer, fmt, hyperlinks=False), fmt, False)  # type: ignore[arg-type]
    rendered = json.loads(render(answer, "json"))
    # raw is never rendered.
    assert all(s["raw"] is None for s in rendered["sources"])
    assert all(c["raw"] is None for c in rendered["citations"])


def test_json_with_schema_and_odd_extras() -> None:
    answer = CitedAnswer(
        text="x\ud800", extras={str(n): value for n, value in enumerate(ODD_VALUES)}
    )
    rendered = json.loads(render(answer, "json", schema=True))
    assert set(rendered) == {"schema", "answer"}
    assert rendered["answer"]["text"] == "x\ud800"
    check_answer(answer)


def test_huge_fields_render() -> None:
    text = HUGE + HUGE_WORD
    source = Source(id="s", url="https://example.com/" + HUGE_WORD, title=HUGE, snippet=HUGE_WORD)
    citation = Citation(
        start=0, end=len(text), text=text, source_ids=["s"], quote=HUGE, marker_span=(0, 5)
    )
    answer = CitedAnswer(text=text, sources=[source], citations=[citation])
    for fmt in FORMATS:
        out = render(answer, fmt, hyperlinks=True, width=40)  # type: ignore[arg-type]
        assert_safe(out, fmt, True)
    check_answer(answer, render=False)


def test_wrong_render_arguments_are_usage_errors() -> None:
    answer = CitedAnswer(text="x")
    bad: list[tuple[Any, dict[str, Any]]] = [
        ("pdf", {}),
        (None, {}),
        ("terminal", {"width": 0}),
        ("terminal", {"width": True}),
        ("terminal", {"width": "80"}),
        ("terminal", {"hyperlinks": "yes"}),
        ("markdown", {"markers": "sup"}),
        ("text", {"sources": "some"}),
        ("html", {"prefix": "1 bad id"}),
        ("html", {"prefix": "\ud800"}),
    ]
    for fmt, options in bad:
        with pytest.raises(UsageError):
            render(answer, fmt, **options)
    for value in (None, "text", {"text": "x"}, [answer]):
        with pytest.raises(UsageError):
            render(value)  # type: ignore[arg-type]


@fuzz_settings()
@given(st.binary(max_size=200) | st.text(max_size=200) | json_values.map(json.dumps))
def test_from_json_rejects_garbage_with_value_errors(data: bytes | str) -> None:
    try:
        answer = CitedAnswer.from_json(data)
    except ValueError:
        return
    check_answer(answer)


def test_from_json_on_deep_documents() -> None:
    for data in ("[" * 10_000, '{"text": "x", "extras": ' + "[" * 10_000 + "]" * 10_000 + "}"):
        with pytest.raises(ValueError, match="json_invalid"):
            CitedAnswer.from_json(data)
