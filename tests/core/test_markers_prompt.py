"""The prompt side: instructions whose own example reads back exactly, and the sources block."""

from __future__ import annotations

import json
import re

import pytest

from unicite import Source, UsageError
from unicite.markers import citation_instructions, format_sources, parse_markers, parse_structured
from unicite.sources import SourceLedger, estimate_tokens

SOURCES = [
    Source(id="a", url="https://a.example/", title="Alpha", snippet="Opened in 1932."),
    Source(id="b", url="https://b.example/", title="Beta", content="Steel arch. " * 50),
    Source(id="c", url="https://c.example/", title="Gamma", snippet="Eight lanes."),
]


def example_of(instructions: str) -> str:
    match = re.search(r"^Example: (.*)$", instructions, re.MULTILINE)
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize(
    ("format", "style"),
    [
        ("markdown", None),
        ("markdown", "brackets"),
        ("markdown", "sids"),
        ("markdown", "footnotes"),
        ("html", None),
        ("html", "brackets"),
        ("html", "sids"),
    ],
)
def test_text_instructions_state_the_rules_and_their_example_reads_back(
    format: str, style: str | None
) -> None:
    text = citation_instructions(format, style)  # type: ignore[arg-type]
    assert "right after the claim" in text
    assert "Never put citations inside code blocks or inline code" in text
    assert "Cite only the sources listed below" in text
    answer = parse_markers(example_of(text), SOURCES, style=style or "auto")  # type: ignore[arg-type]
    assert answer.diagnostics == []
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("The bridge has a steel arch", ["a"]),
        ("and it carries eight lanes", ["a", "c"]),
    ]


def test_usage_declaration() -> None:
    text = citation_instructions(usage=True)
    assert "[[USAGE:1,3]]" in text
    answer = parse_markers(example_of(text) + "\n[[USAGE:1,3]]", SOURCES)
    assert answer.sources_used == ["a", "c"]
    assert "USAGE" not in answer.text


def test_json_sidecar_instructions_read_back() -> None:
    text = citation_instructions("json")
    assert '"_citations"' in text
    assert "JSON Pointer" in text
    result = parse_structured(example_of(text), SOURCES)
    assert result.diagnostics == []
    assert result.citations == {"/opened": ["a", "c"]}

    nested = citation_instructions("json", key="/meta/sources")
    assert "/meta/sources" in nested


def test_json_inline_instructions_read_back() -> None:
    text = citation_instructions("json", "inline")
    result = parse_structured(json.loads(example_of(text)), SOURCES)
    assert result.citations == {"/summary": ["a", "c"]}
    assert "[[S:" not in result.data["summary"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "xml"}, "format must be"),
        ({"format": "markdown", "style": "sup"}, "style for markdown must be one of"),
        ({"format": "json", "style": "brackets"}, "style for json must be one of"),
        ({"format": "json", "usage": True}, "usage declarations are for text answers"),
        ({"usage": "yes"}, "usage must be a bool"),
        ({"format": "json", "key": ""}, "key must be a non-empty string"),
    ],
)
def test_instruction_misuse(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        citation_instructions(**kwargs)  # type: ignore[arg-type]


def test_format_sources_numbers_in_prompt_order() -> None:
    block = format_sources(SOURCES, tokenizer="estimate")
    headers = re.findall(r"^\[sid:(\d+)\] (.*)$", block, re.MULTILINE)
    assert headers == [("1", "Alpha"), ("2", "Beta"), ("3", "Gamma")]
    assert "Opened in 1932." in block
    assert "Eight lanes." in block
    # So [n] in an answer is the n-th source listed.
    assert parse_markers("Eight lanes [3].", SOURCES).citations[0].source_ids == ["c"]


def test_format_sources_budget_and_ledger() -> None:
    notes: list[str] = []
    block = format_sources(SOURCES, 40, tokenizer="estimate", diagnostics=notes)
    assert estimate_tokens(block) <= 40
    assert block.startswith("[sid:1] Alpha")
    ledger = SourceLedger()
    ledger.add_all(list(reversed(SOURCES)))
    assert re.findall(
        r"^\[sid:(\d+)\] (\w+)", format_sources(ledger, tokenizer="estimate"), re.M
    ) == [
        ("1", "Gamma"),
        ("2", "Beta"),
        ("3", "Alpha"),
    ]
    assert format_sources([], tokenizer="estimate") == ""


def test_format_sources_misuse() -> None:
    with pytest.raises(UsageError):
        format_sources(SOURCES, budget_tokens="many")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        format_sources("sources")  # type: ignore[arg-type]


def test_a_numbered_map_is_shown_and_read_under_its_numbers() -> None:
    from unicite import MarkerStream

    table = {
        2: Source(id="nantes", url="https://nantes.example/", title="Nantes — été"),
        5: Source(id="brest", url="https://brest.example/", title="Brest"),
    }
    block = format_sources(table)
    assert block.startswith("[sid:2] Nantes — été")
    assert "\n\n[sid:5] Brest" in block
    text = "Nantes est au bord de la Loire [2]. Brest a un port [5]. Rien [3]."
    answer = parse_markers(text, table)
    assert [c.source_ids for c in answer.citations] == [["nantes"], ["brest"]]
    assert answer.text == "Nantes est au bord de la Loire [2]. Brest a un port [5]. Rien."
    assert any("source 3 was not shown" in d for d in answer.diagnostics)
    stream = MarkerStream(table, renumber=False)
    shown = "".join(stream.feed(ch) for ch in text) + stream.close()
    assert shown == answer.text
    assert stream.answer == answer
