import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("typer", reason="the cli extra is not installed")

from typer.testing import CliRunner

from unicite import CitedAnswer, extract, render
from unicite.cli import app

runner = CliRunner()

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "providers"
# The responses `unicite demo` shows, as recorded: the demo bundles the same bodies.
RECORDED = {
    "openai": "test_openai_sdk/test_responses_web_search.yaml",
    "anthropic": "test_anthropic_sdk/test_plain_text_document_char_location.yaml",
    "gemini": "test_gemini_sdk/test_generate_content_google_search.yaml",
}


def recorded_response(provider: str) -> Any:
    data = yaml.safe_load((CASSETTES / RECORDED[provider]).read_text("utf-8"))
    return data["interactions"][0]["response"]["parsed_body"]


@pytest.fixture
def openai_file(tmp_path: Path) -> Path:
    path = tmp_path / "response.json"
    path.write_text(json.dumps(recorded_response("openai")), "utf-8")
    return path


def test_extract_renders_a_response_file(openai_file: Path) -> None:
    result = runner.invoke(app, ["extract", str(openai_file), "--format", "text"])
    assert result.exit_code == 0, result.output
    assert "Sources" in result.output
    assert "1. La tour Eiffel en chiffres" in result.output
    assert "\x1b" not in result.output


def test_extract_reads_stdin_and_every_format(openai_file: Path) -> None:
    data = openai_file.read_text("utf-8")
    for fmt in ("terminal", "markdown", "html", "json", "text"):
        result = runner.invoke(app, ["extract", "-", "-f", fmt, "--no-hyperlinks"], input=data)
        assert result.exit_code == 0, (fmt, result.output)
    json_out = runner.invoke(app, ["extract", "-", "-f", "json"], input=data).output
    assert CitedAnswer.from_json(json_out).citations == [
        c.model_copy(update={"raw": None}) for c in extract(data).citations
    ]


def test_extract_reads_an_sse_log(tmp_path: Path) -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Héllo"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    log = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    path = tmp_path / "stream.sse.txt"
    path.write_text(log, "utf-8")
    result = runner.invoke(app, ["extract", str(path), "-f", "text"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Héllo")


def test_require_citations_exits_3(tmp_path: Path) -> None:
    plain = {
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hi"}],
    }
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(plain), "utf-8")
    result = runner.invoke(app, ["extract", str(path), "--require-citations"])
    assert result.exit_code == 3
    assert "no grounding" in result.output
    assert runner.invoke(app, ["extract", str(path)]).exit_code == 0


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("{not json", [], "not valid JSON"),
        ('{"hello": 1}', [], "unrecognised response shape"),
        ("{}", ["--provider", "nope"], "unknown provider"),
        ("{}", ["--format", "pdf"], "unknown format"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: str, args: list[str], message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, "utf-8")
    result = runner.invoke(app, ["extract", str(path), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ([], "extract"),
        (["extract"], "--no-hyperlinks"),
        (["extract"], "--provider"),
        (["render"], "--all-sources"),
        (["attribute"], "--sources"),
        (["stats"], "--json"),
        (["schema"], "JSON Schema"),
        (["demo"], "--hyperlinks"),
    ],
)
def test_help(command: list[str], option: str) -> None:
    result = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert option in result.output


def test_missing_file_is_exit_2() -> None:
    result = runner.invoke(app, ["extract", "/nonexistent/file.json"])
    assert result.exit_code == 2
    assert "/nonexistent/file.json: cannot read" in result.output


def test_render_a_stored_answer(tmp_path: Path) -> None:
    answer = extract(recorded_response("anthropic"))
    path = tmp_path / "answer.json"
    path.write_text(answer.to_json(), "utf-8")
    result = runner.invoke(app, ["render", str(path), "-f", "markdown"])
    assert result.exit_code == 0, result.output
    assert "carnet-de-voyage.txt" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": "x", "citations": [{"start": 0}]}', "utf-8")
    result = runner.invoke(app, ["render", str(bad)])
    assert result.exit_code == 2
    assert "not a CitedAnswer" in result.output


def test_stats_over_a_jsonl_log(tmp_path: Path) -> None:
    lines = [json.dumps(recorded_response(name)) for name in RECORDED] * 3
    lines.append("{broken json")
    lines.append("")
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", "utf-8")
    # In its own process: stdout and stderr apart (click's runner mixes them before 8.2).
    result = subprocess.run(
        [sys.executable, "-m", "unicite", "stats", str(log), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(result.stdout)
    # The bad line is counted and named on stderr, with its file and line number.
    assert f"{log}:{len(RECORDED) * 3 + 1}: line is not valid JSON" in result.stderr
    assert summary["bad_lines"] == [
        f"{log}:{len(RECORDED) * 3 + 1}: line is not valid JSON: "
        + "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    ]
    answers = [extract(recorded_response(name)) for name in RECORDED]
    assert summary["responses"] == 10
    assert summary["unreadable"] == 1
    assert summary["with_citations"] == 9
    assert summary["citations"] == 3 * sum(len(a.citations) for a in answers)
    assert summary["sources"] == 3 * sum(len(a.sources) for a in answers)
    assert summary["providers"] == {"anthropic": 3, "gemini": 3, "openai": 3}
    redirects = 3 * sum(s.redirect for a in answers for s in a.sources)
    assert summary["redirect_share"] == round(redirects / summary["sources"], 4)
    top = {row["domain"]: row["count"] for row in summary["top_domains"]}
    assert top["wikipedia.org"] == 3 * sum(
        s.domain == "wikipedia.org" for a in answers for s in a.sources
    )
    assert summary["counts_exact"] is True
    table = runner.invoke(app, ["stats", str(log)])
    assert table.exit_code == 0
    assert "wikipedia.org" in table.output


def test_schema_and_demo_as_subprocesses() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "unicite", "demo", "--no-hyperlinks"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for title in ("OpenAI", "Anthropic", "Gemini"):
        assert f"── {title}" in proc.stdout
    assert "\x1b" not in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "unicite", "extract", "/nonexistent"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("unicite: /nonexistent")
    assert "Traceback" not in proc.stderr


def test_demo_shows_the_recorded_responses() -> None:
    result = runner.invoke(app, ["demo", "--no-hyperlinks"])
    assert result.exit_code == 0, result.output
    for provider in RECORDED:
        answer = extract(recorded_response(provider))
        assert answer.provider == provider
        assert render(answer, "terminal", hyperlinks=False, width=80) in result.output


def test_attribute_all_supporting(tmp_path: Path) -> None:
    claim = "Zürich ist die grösste Stadt der Schweiz mit rund 440 000 Einwohnern."
    sources = tmp_path / "sources.jsonl"
    rows = [
        {"id": "weaker", "content": "Die grösste Stadt der Schweiz hat rund 440 000 Einwohner."},
        {"id": "zurich", "content": claim},
    ]
    sources.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    args = ["attribute", "--answer", claim, "--sources", str(sources), "-f", "json"]
    strongest = CitedAnswer.from_json(runner.invoke(app, args).output)
    assert [c.source_ids for c in strongest.citations] == [["zurich"]]
    every = CitedAnswer.from_json(runner.invoke(app, [*args, "--all-supporting"]).output)
    assert [c.source_ids for c in every.citations] == [["zurich", "weaker"]]


def test_attribute_command(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text(
        "The Rhine flows through Basel before it reaches Strasbourg. I hope this helps!", "utf-8"
    )
    sources = tmp_path / "sources.jsonl"
    rows = [
        {
            "url": "https://example.org/rhine",
            "title": "The Rhine",
            "content": "Going north, the Rhine flows through Basel and then reaches Strasbourg.",
        },
        {"url": "https://example.org/alps", "title": "The Alps", "content": "Mountains in Europe."},
    ]
    sources.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    result = runner.invoke(
        app, ["attribute", "--answer", str(answer), "--sources", str(sources), "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    cited = CitedAnswer.from_json(result.output)
    assert [c.text for c in cited.citations] == [
        "The Rhine flows through Basel before it reaches Strasbourg."
    ]
    assert cited.citations[0].origin == "posthoc-lexical"
    assert cited.sources[0].title == "The Rhine"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"urll": 1}\n', "utf-8")
    result = runner.invoke(app, ["attribute", "--answer", str(answer), "--sources", str(bad)])
    assert result.exit_code == 2
    assert "not a list of sources" in result.output
