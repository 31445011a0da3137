"""A ``[n]`` glued to the text before it: indexes are never cited, glued citations are.

The numbers decide nothing here (five sources are given, so every number names one): the rule
reads the expression before the bracket and its line (`unicite._glued`). `parse_markers`,
`cite` and `MarkerStream` read it alike, and the labelled corpus in
``tests/data/glued_markers`` holds the rule to its two figures: no index cited, and at least
90 % of glued citations read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unicite
from unicite import CitedAnswer, MarkerStream, Source, parse_markers

SOURCES = [
    Source(id=f"s{n}", url=f"https://example.org/{n}", title=f"Source {n}") for n in range(1, 6)
]
CORPUS = Path(__file__).parent.parent / "data" / "glued_markers"
_BRACKET_RE = re.compile(r"\[\d[\d ,\u2013\-]*\]")

# The index forms a new user saw cited, each in prose (not code).
INDEXES = [
    "Matrix m[2][3] is set.",
    "Set x[1] to zero.",
    "The value arr[2] is read.",
    "Let a[i] and a[1] be equal.",
    "Use dp[i][j] and dp[1][2].",
    "self.items[2] is removed.",
    "row[0] and row[1] hold names.",
    "Compute f(x)[1] now.",
    "In Python, lst[1] is the second item.",
    "The first element is data[1], the second data[2].",
    "Assign y = values[3] before the loop.",
    "df.columns[1] holds the dates and get_rows()[2] the totals.",
    "Die Variable arr[2] enthält den Wert.",
    "配列 scores[2] には 2 番目の要素が入ります。",
    "Then compare nums[1] with nums[2], as before.",
    "userNames[2] is empty; row_2[1] too.",
]

# Glued citations: a name, a brand with digits, an acronym, a run, another script, numbers.
CITATIONS = [
    ("OpenAI[1] released it.", 1),
    ("GPT-4o[2] is fast.", 1),
    ("CO2[1] levels rose.", 1),
    ("Kubernetes[3][4] runs most clusters.", 1),
    ("東京[2]は日本の首都です。", 1),
    ("Inflation was 2.4%[1] in May.", 1),
    ("The bridge opened in 1952[3].", 1),
    ("Köln[2] ist die viertgrößte Stadt.", 1),
    ("Paris is the capital of France[1], and Berlin[2] of Germany.", 2),
    ("It is widely used in production systems[3].", 1),
    ("Apple reported revenue of $94.9 billion[2] for the quarter.", 1),
    ("The iPhone[2] launched in 2007[5].", 2),
]


def cited_brackets(answer: CitedAnswer) -> set[int]:
    spans = [c.marker_span for c in answer.citations if c.marker_span is not None]
    return {
        m.start()
        for m in _BRACKET_RE.finditer(answer.text)
        if any(a <= m.start() < b for a, b in spans)
    }


def perplexity(text: str) -> dict[str, Any]:
    """A Perplexity Sonar response whose answer is `text`, with five search results."""
    return {
        "id": "3f1c9a52-7d4e-4b8e-9a61-0c2d5e7f8a90",
        "model": "sonar-pro",
        "object": "chat.completion",
        "created": 1771322640,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "citations": [source.url for source in SOURCES],
    }


def streamed(text: str, size: int, **options: Any) -> tuple[str, CitedAnswer]:
    stream = MarkerStream(SOURCES, **options)
    shown = [stream.feed(text[k : k + size]) for k in range(0, len(text), size)]
    shown.append(stream.close())
    return "".join(shown), stream.answer


def every_reading(text: str) -> list[CitedAnswer]:
    """`text` read by parse_markers, cite and MarkerStream (three chunkings), unrenumbered."""
    answers = [parse_markers(text, SOURCES), unicite.cite(text, SOURCES, renumber=False)]
    for size in (1, 3, 7):
        live, answer = streamed(text, size, renumber=False)
        assert live == answer.text
        answers.append(answer)
    return answers


@pytest.mark.parametrize("text", INDEXES)
def test_an_index_in_prose_is_never_cited(text: str) -> None:
    for answer in every_reading(text):
        assert answer.citations == [], answer
        assert answer.text == text
    # The answer keeps its text and says why each bracket naming a source stayed text.
    notes = parse_markers(text, SOURCES).diagnostics
    named = [m for m in _BRACKET_RE.finditer(text) if m.group() != "[0]"]
    assert len([n for n in notes if "may be an index" in n]) == len(named)
    # Nor do the provider readers that read markers (Perplexity's).
    assert unicite.extract(perplexity(text)).citations == []


@pytest.mark.parametrize(("text", "count"), CITATIONS)
def test_a_glued_citation_is_read(text: str, count: int) -> None:
    for answer in every_reading(text):
        assert len(answer.citations) == count, answer
        assert cited_brackets(answer) == {m.start() for m in _BRACKET_RE.finditer(text)}
        assert answer.diagnostics == []
    assert len(unicite.extract(perplexity(text)).citations) == count


def test_renumbered_live_text_carries_the_final_numbers() -> None:
    text = "Set x[1] = 0 first. OpenAI[3] and Kubernetes[4][1] agree; arr[2] is read."
    whole = unicite.cite(text, SOURCES)
    for size in (1, 2, 5):
        live, answer = streamed(text, size)
        assert live == answer.text == whole.text
    # x[1] and arr[2] stay text; renumbered, their numbers would name other sources: escaped.
    assert whole.text == (
        "Set x\\[1] = 0 first. OpenAI[1] and Kubernetes[2][3] agree; arr\\[2] is read."
    )
    assert [s.id for s in whole.sources] == ["s3", "s4", "s1"]


def test_the_stream_waits_for_the_rest_of_the_sentence_only_when_it_decides() -> None:
    # "Paris[1] is list" may go on as "listen": a word is read once the sentence ended.
    stream = MarkerStream(SOURCES, renumber=False)
    stream.feed("Paris[1] is in the list")
    assert "[1]" not in stream.text
    stream.feed("en to it. ")
    stream.close()
    assert len(stream.answer.citations) == 1
    # A lowercase word at the end of a clause is a citation unless code follows in the sentence.
    stream = MarkerStream(SOURCES, renumber=False)
    assert stream.feed("Read data[1], ") == "Read data"
    # Its sentence has not ended (more text may yet end a word): the bracket waits.
    assert stream.feed("then sum the array.") == ""
    stream.close()
    assert stream.answer.citations == []
    stream = MarkerStream(SOURCES, renumber=False)
    stream.feed("Sales grew in Asia and Europe[1], ")
    shown = stream.feed("as reported. More")
    assert shown
    assert "Europe[1]" in stream.text
    stream.close()
    assert len(stream.answer.citations) == 1
    # An index decided by the word alone is shown at once.
    stream = MarkerStream(SOURCES, renumber=False)
    assert stream.feed("Set x[1] to") == "Set x[1] to"


def test_a_percentage_after_a_space_is_a_citation() -> None:
    answer = parse_markers("Le chômage est tombé à 7,3 %[2] au trimestre.", SOURCES)
    assert [c.source_ids for c in answer.citations] == [["s2"]]


def test_format_strings_and_calls_in_parentheses_are_not_glued() -> None:
    # Go's explicit argument index is no citation; a parenthesis that closes prose is no call.
    assert parse_markers("Use %[1]d in the format.", SOURCES).citations == []
    answer = parse_markers("The bridge (opened in 1952)[3] is long.", SOURCES)
    assert [c.source_ids for c in answer.citations] == [["s3"]]


def _corpus(name: str) -> list[dict[str, Any]]:
    path = CORPUS / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["dev", "holdout"])
def test_the_labelled_corpus_cites_no_index_and_reads_glued_citations(name: str) -> None:
    rows = _corpus(name)
    if not rows:
        pytest.skip(f"no {name} corpus")
    wrong: list[str] = []
    missed: list[str] = []
    for row in rows:
        text = row["text"]
        parsed = parse_markers(text, SOURCES)
        cited = unicite.cite(text, SOURCES, renumber=False)
        _, live = streamed(text, 3, renumber=False)
        readings = [cited_brackets(a) for a in (parsed, cited, live)]
        assert readings[0] == readings[1] == readings[2], row["id"]
        if row["label"] == "index" and readings[0]:
            wrong.append(row["id"])
        if row["label"] == "citation" and len(readings[0]) < len(_BRACKET_RE.findall(text)):
            missed.append(row["id"])
    assert wrong == []
    citations = sum(row["label"] == "citation" for row in rows)
    assert len(missed) <= citations // 10, missed


_NAMES = st.sampled_from(
    ["x", "arr", "self.items", "f(x)", "OpenAI", "data", "Köln", "東京", "2024", "row_2", "dp"]
)
_GLUE = st.sampled_from(["[1]", "[2]", "[0]", "[1][2]", "[i]", "[3, 4]"])
_AFTER = st.sampled_from([".", ",", " ", " = 0", " is read", "。", "\n", "[j]", " and the array."])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_NAMES, _GLUE, _AFTER), min_size=1, max_size=6), st.integers(1, 9))
def test_property_glued_brackets_stream_as_they_parse(
    parts: list[tuple[str, str, str]], size: int
) -> None:
    text = " ".join(name + glue + after for name, glue, after in parts)
    whole = unicite.renumber(parse_markers(text, SOURCES))
    live, answer = streamed(text, size)
    assert live == answer.text == whole.text
    assert answer.citations == whole.citations
