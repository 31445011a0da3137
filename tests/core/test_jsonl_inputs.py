"""JSON Lines logs of provider streams: every entry point reads them, and reads them alike.

A stream logged one event per line (``{"type": "response.output_text.delta", ...}``) is what
`collect_stream` takes; `extract` (text or bytes) and ``unicite extract FILE`` take it too and
give the same answer. The logs under ``tests/data/jsonl/`` were written from the documented
event shapes of each provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from unicite import CitedAnswer, collect_stream, extract, render

DATA = Path(__file__).resolve().parents[1] / "data" / "jsonl"
LOGS = {
    "openai": "openai_responses_stream.jsonl",
    "anthropic": "anthropic_messages_stream.jsonl",
    "gemini": "gemini_stream.jsonl",
}


def log_text(provider: str) -> str:
    return (DATA / LOGS[provider]).read_text("utf-8")


def events_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def as_sse(events: list[dict[str, Any]]) -> str:
    """The events as the SSE log the provider would have sent."""
    frames = []
    for event in events:
        name = f"event: {event['type']}\n" if "type" in event else ""  # Gemini names none
        frames.append(f"{name}data: {json.dumps(event, ensure_ascii=False)}\n\n")
    return "".join(frames)


@pytest.mark.parametrize("provider", sorted(LOGS))
def test_extract_reads_a_json_lines_log_like_collect_stream(provider: str) -> None:
    text = log_text(provider)
    events = events_of(text)
    expected = collect_stream(events)
    assert expected.provider == provider
    assert expected.diagnostics == []
    assert expected.citations
    assert not expected.text.isascii()
    assert extract(text) == expected
    assert extract(text.encode("utf-8")) == expected
    assert extract(bytearray(text.encode("utf-8"))) == expected
    assert collect_stream(text) == expected
    assert collect_stream(text.encode("utf-8")) == expected
    # The same events as an SSE log, and as a JSON array, read the same.
    assert extract(as_sse(events)) == expected
    assert extract(json.dumps(events, ensure_ascii=False)) == expected
    assert extract(text, provider=provider) == expected


@pytest.mark.parametrize("provider", sorted(LOGS))
def test_line_endings_and_blank_lines_do_not_matter(provider: str) -> None:
    text = log_text(provider)
    expected = extract(text)
    variants = [
        text.replace("\n", "\r\n"),
        "\n\n" + text.replace("\n", "\n\n") + "\n",
        text.rstrip("\n"),
        "  " + text,
    ]
    for variant in variants:
        assert extract(variant) == expected
        assert collect_stream(variant) == expected


def test_the_answers_are_those_of_the_final_responses() -> None:
    openai = events_of(log_text("openai"))
    final = extract(openai[-1]["response"])
    streamed = extract(log_text("openai"))
    assert (streamed.text, streamed.citations, streamed.sources) == (
        final.text,
        final.citations,
        final.sources,
    )
    gemini = extract(log_text("gemini"))
    assert [c.text for c in gemini.citations] == [
        "La tour Eiffel mesure 330 mètres depuis 2022.",
        "Elle a été inaugurée en 1889 à Paris.",
    ]
    anthropic = extract(log_text("anthropic"))
    [citation] = anthropic.citations
    assert citation.text == "le Mont accueille près de 3 millions de visiteurs par an."
    assert citation.quote is not None
    assert "&amp;" not in citation.quote
    assert anthropic.extras["search_queries"] == ["Mont-Saint-Michel fréquentation"]


# A Gemini chunk is itself a GenerateContentResponse: one alone is read as that response.
@pytest.mark.parametrize(("provider", "n"), [("openai", -1), ("anthropic", 8)])
def test_one_event_on_one_line_is_a_stream_of_one(provider: str, n: int) -> None:
    event = events_of(log_text(provider))[n]
    line = json.dumps(event, ensure_ascii=False) + "\n"
    expected = collect_stream([event])
    assert expected.provider == provider
    assert expected.text
    assert extract(line) == expected == collect_stream(line)
    assert extract(line.encode("utf-8")) == expected


def test_a_json_document_is_still_one_response() -> None:
    final = events_of(log_text("openai"))[-1]["response"]
    expected = extract(final)
    assert extract(json.dumps(final, ensure_ascii=False, indent=2)) == expected
    assert extract(json.dumps(final, ensure_ascii=False) + "\n\n") == expected
    # A document with something after it on its own line is not a log of events.
    broken = extract(json.dumps(final) + ' {"type": "x"}')
    assert broken.text == ""
    assert any("not valid JSON" in d for d in broken.diagnostics)


def test_bad_lines_of_a_log_are_diagnosed_not_fatal() -> None:
    text = log_text("anthropic")
    lines = text.splitlines()
    lines.insert(3, '{"type": "content_block_delta", broken')
    answer = extract("\n".join(lines))
    assert answer.text == extract(text).text
    assert any("not JSON" in d for d in answer.diagnostics)


@pytest.mark.parametrize("provider", sorted(LOGS))
def test_the_cli_extracts_a_json_lines_file(provider: str, tmp_path: Path) -> None:
    pytest.importorskip("typer", reason="the cli extra is not installed")
    from typer.testing import CliRunner

    from unicite.cli import app

    path = tmp_path / f"{provider}.jsonl"
    path.write_bytes(log_text(provider).encode("utf-8"))
    result = CliRunner().invoke(app, ["extract", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = CitedAnswer.from_json(result.output)
    expected = extract(log_text(provider))
    assert shown.text == expected.text
    assert [(c.start, c.end, c.source_ids) for c in shown.citations] == [
        (c.start, c.end, c.source_ids) for c in expected.citations
    ]
    text_out = CliRunner().invoke(app, ["extract", str(path), "-f", "text"])
    assert text_out.exit_code == 0, text_out.output
    assert text_out.output == render(expected, "text").rstrip("\n") + "\n"
