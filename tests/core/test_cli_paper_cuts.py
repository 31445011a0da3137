"""The command line says what happened: a version flag, a provider forced on the wrong data, a
blocked prompt, ``--answer`` text, a provider response handed to ``render``, JSON that is not
an object, and locations written in the API's numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("typer", reason="the cli extra is not installed")

from typer.testing import CliRunner, Result

import unicite
from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    Source,
    detect_provider,
    extract,
)
from unicite.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes" / "providers"
DATA = ROOT / "tests" / "data" / "providers"


def recorded(relative: str) -> Any:
    data = yaml.safe_load((CASSETTES / relative).read_text("utf-8"))
    return data["interactions"][0]["response"]["parsed_body"]


def openai_response() -> Any:
    return recorded("test_openai_sdk/test_responses_web_search.yaml")


def write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return str(path)


def invoke(*args: str, stdin: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=stdin, terminal_width=200)


def one_line(result: Result) -> str:
    """The single ``unicite:`` line on stderr of a failed command."""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().split("\n")
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("unicite: ")
    return lines[0]


# --- 1. --version --------------------------------------------------------------------------


def test_version_flag() -> None:
    result = invoke("--version")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"unicite {unicite.__version__}\n"
    assert invoke("version").stdout == result.stdout


def test_version_flag_of_the_console_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "unicite", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        f"unicite {unicite.__version__}\n",
        "",
    )


# --- 2. a provider forced on another provider's data ---------------------------------------


@pytest.mark.parametrize(
    ("forced", "canonical"), [("gemini", "a gemini"), ("claude", "an anthropic")]
)
def test_forcing_the_wrong_provider_says_so(tmp_path: Path, forced: str, canonical: str) -> None:
    response = openai_response()
    path = write(tmp_path, "openai_response.json", response)
    result = invoke("extract", "--provider", forced, path)
    assert result.exit_code == 2
    assert result.stdout == ""
    line = one_line(result)
    looks = detect_provider(response)
    assert looks == "openai"
    assert f"nothing could be read as {canonical} response (--provider {forced})" in line
    assert f"the data looks like an {looks} response: use --provider {looks}" in line


def test_forcing_the_wrong_provider_on_a_stream(tmp_path: Path) -> None:
    path = str(DATA / "perplexity_sonar_pro_stream.json")
    assert invoke("extract", path, "-f", "text").exit_code == 0
    result = invoke("extract", "-p", "anthropic", path)
    assert result.exit_code == 2
    assert "looks like a perplexity response" in one_line(result)


def test_forcing_a_provider_on_unknown_data(tmp_path: Path) -> None:
    result = invoke("extract", "-p", "gemini", write(tmp_path, "empty.json", {}))
    assert result.exit_code == 2
    line = one_line(result)
    assert "nothing could be read as a gemini response" in line
    assert "no provider recognises the data" in line


def test_forcing_the_right_provider_still_renders(tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", openai_response())
    forced = invoke("extract", "-p", "openai", path, "-f", "text")
    assert forced.exit_code == 0
    assert forced.stdout == invoke("extract", path, "-f", "text").stdout
    assert forced.stderr == ""


# --- 3. a blocked prompt -------------------------------------------------------------------


def test_blocked_prompt_says_why() -> None:
    path = str(DATA / "gemini_blocked_prompt.json")
    result = invoke("extract", path, "-f", "text")
    assert result.exit_code == 0
    assert result.stdout.strip() == ""
    line = result.stderr.strip()
    assert line == (
        f"unicite: {path}: gemini blocked the prompt (block reason SAFETY); triggered by "
        "HARM_CATEGORY_DANGEROUS_CONTENT (probability HIGH, blocked)"
    )
    # The JSON rendering keeps the feedback for whoever reads it.
    as_json = invoke("extract", path, "-f", "json")
    assert CitedAnswer.from_json(as_json.stdout).extras["prompt_feedback"]["blockReason"] == (
        "SAFETY"
    )
    assert invoke("extract", "-p", "gemini", path).stderr == result.stderr


def test_blocked_prompt_with_a_message_and_severities() -> None:
    path = str(DATA / "vertex_blocked_prompt.json")
    result = invoke("extract", path)
    assert result.exit_code == 0
    assert result.stderr.strip() == (
        f"unicite: {path}: gemini blocked the prompt (block reason PROHIBITED_CONTENT: "
        "Die Anfrage wurde blockiert: verbotene Inhalte – 禁止されたコンテンツ.); triggered by "
        "HARM_CATEGORY_DANGEROUS_CONTENT (probability MEDIUM, severity HARM_SEVERITY_HIGH, "
        "blocked)"
    )


def test_blocked_prompt_and_require_citations() -> None:
    result = invoke("extract", str(DATA / "gemini_blocked_prompt.json"), "--require-citations")
    assert result.exit_code == 3
    line = one_line(result)
    assert "no grounding" in line
    assert "gemini blocked the prompt (block reason SAFETY)" in line


def test_blocked_prompt_from_stdin_as_a_stream() -> None:
    response = json.loads((DATA / "gemini_blocked_prompt.json").read_text("utf-8"))
    result = invoke("extract", "-", stdin=f"data: {json.dumps(response)}\n\n")
    assert result.exit_code == 0
    assert "unicite: -: gemini blocked the prompt (block reason SAFETY)" in result.stderr


def test_answer_stopped_for_safety_says_why(tmp_path: Path) -> None:
    response = {
        "candidates": [
            {
                "finishReason": "SAFETY",
                "index": 0,
                "safetyRatings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
                    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "HIGH"},
                ],
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }
    result = invoke("extract", write(tmp_path, "stopped.json", response))
    assert result.exit_code == 0
    assert result.stderr.strip().endswith(
        "the answer is empty: gemini stopped it (finish reason SAFETY); triggered by "
        "HARM_CATEGORY_HATE_SPEECH (probability HIGH)"
    )


def test_an_ordinary_answer_prints_no_note(tmp_path: Path) -> None:
    result = invoke("extract", write(tmp_path, "r.json", openai_response()))
    assert result.exit_code == 0
    assert result.stderr == ""


# --- 4. attribute --answer TEXT, --answer-file FILE -----------------------------------------

ANSWER = "The Rhine flows through Basel before it reaches Strasbourg."
SOURCE = {
    "url": "https://example.org/rhine",
    "title": "The Rhine",
    "content": "Going north, the Rhine flows through Basel and then reaches Strasbourg.",
}


@pytest.fixture
def sources(tmp_path: Path) -> str:
    return write(tmp_path, "sources.jsonl", json.dumps(SOURCE) + "\n")


def attributed(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [c.text for c in CitedAnswer.from_json(result.stdout).citations]


def test_answer_takes_text(sources: str) -> None:
    assert attributed(
        invoke("attribute", "--answer", ANSWER, "--sources", sources, "-f", "json")
    ) == [ANSWER]


def test_answer_file_and_stdin(tmp_path: Path, sources: str) -> None:
    path = write(tmp_path, "answer.txt", ANSWER)
    for args, stdin in [
        (["--answer-file", path], None),
        (["--answer-file", "-"], ANSWER),
        # As before --answer-file existed: a file's path, or - for stdin.
        (["--answer", path], None),
        (["--answer", "-"], ANSWER),
    ]:
        result = invoke("attribute", *args, "--sources", sources, "-f", "json", stdin=stdin)
        assert attributed(result) == [ANSWER], args


def test_answer_text_of_any_length(sources: str) -> None:
    # Text no file system takes as a path (a name too long, a NUL) is text all the same.
    long_answer = ANSWER + " " + "Basel " * 300
    for text in (long_answer, ANSWER + "\x00"):
        result = invoke("attribute", "--answer", text, "--sources", sources, "-f", "json")
        assert result.exit_code == 0, result.output
        assert CitedAnswer.from_json(result.stdout).text == text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "missing the answer: --answer TEXT, or --answer-file FILE"),
        (["--answer", "x", "--answer-file", "-"], "give the answer once"),
        (["--answer", "answr.txt"], "answr.txt: cannot read: no such file"),
        (["--answer", "notes/answer"], "notes/answer: cannot read: no such file"),
        (["--answer-file", "/nonexistent/answer.txt"], "/nonexistent/answer.txt: cannot read"),
    ],
)
def test_answer_mistakes_are_one_line(sources: str, args: list[str], message: str) -> None:
    result = invoke("attribute", *args, "--sources", sources)
    assert result.exit_code == 2
    assert message in one_line(result)


def test_attribute_help_tells_text_from_file() -> None:
    result = invoke("attribute", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.replace("│", " ").split())
    assert "--answer-file" in text
    assert "The answer text itself; - reads it from stdin." in text
    assert "A file holding the answer as plain text; - for stdin." in text


# --- 5. render given a provider response ---------------------------------------------------


def test_render_extracts_a_provider_response_and_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "openai_response.json", openai_response())
    rendered = invoke("render", path, "-f", "text")
    assert rendered.exit_code == 0
    assert rendered.stdout == invoke("extract", path, "-f", "text").stdout
    assert rendered.stderr.strip() == (
        f"unicite: {path}: an openai response, not a stored CitedAnswer: "
        f"rendered as `unicite extract {path}` renders it"
    )


def test_render_extracts_a_stream_log_too() -> None:
    path = str(DATA / "perplexity_sonar_pro_stream.json")
    rendered = invoke("render", path, "-f", "json")
    assert rendered.exit_code == 0
    assert CitedAnswer.from_json(rendered.stdout).provider == "perplexity"
    assert "a perplexity response, not a stored CitedAnswer" in rendered.stderr


def test_render_of_neither_is_still_an_error(tmp_path: Path) -> None:
    result = invoke("render", write(tmp_path, "x.json", {"hello": 1}))
    assert result.exit_code == 2
    assert "not a CitedAnswer" in one_line(result)


def test_render_of_an_error_body_quotes_the_provider(tmp_path: Path) -> None:
    body = {"error": {"code": 401, "message": "clé invalide", "status": "UNAUTHENTICATED"}}
    result = invoke("render", write(tmp_path, "error.json", body))
    assert result.exit_code == 2
    assert one_line(result).endswith(
        "not a CitedAnswer: the provider returned an error: UNAUTHENTICATED: clé invalide"
    )


def test_render_of_a_stored_answer_prints_no_note(tmp_path: Path) -> None:
    stored = write(tmp_path, "a.json", extract(openai_response()).to_json())
    result = invoke("render", stored)
    assert result.exit_code == 0
    assert result.stderr == ""


# --- 6. JSON that is not an object ---------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("[1, 2, 3]", "a JSON array of 3 items"),
        ("[]", "an empty JSON array"),
        ('["x"]', "a JSON array of 1 item"),
        ('"hello"', "a JSON string"),
        ("42", "a JSON number"),
        ("true", "a JSON boolean"),
        ("null", "JSON null"),
    ],
)
def test_json_that_is_not_an_object(tmp_path: Path, content: str, kind: str) -> None:
    path = write(tmp_path, "input.json", content)
    for result in (invoke("extract", path), invoke("extract", "-", stdin=content)):
        assert result.exit_code == 2
        assert one_line(result).endswith(
            f": expected a JSON object (a provider response), got {kind}"
        )
    result = invoke("render", path)
    assert result.exit_code == 2
    assert one_line(result).endswith(f": expected a JSON object (a CitedAnswer), got {kind}")


def test_arrays_of_objects_say_what_they_hold(tmp_path: Path) -> None:
    result = invoke("extract", write(tmp_path, "a.json", [{"a": 1}, {"b": 2}]))
    assert one_line(result).endswith(
        "expected a JSON object (a provider response), got a JSON array of 2 items, none of "
        "them a stream event"
    )
    result = invoke("extract", write(tmp_path, "b.json", [openai_response()] * 2))
    assert one_line(result).endswith(
        "got a JSON array of 2 items, holding provider responses (extract reads one; "
        "`unicite stats` reads a JSON Lines log of many)"
    )
    # A JSON array of stream events is a stream, and reads as one.
    assert invoke("extract", str(DATA / "perplexity_sonar_pro_stream.json")).exit_code == 0


def test_sources_that_are_not_objects(tmp_path: Path) -> None:
    cases = [
        ("[1, 2, 3]", "not a list of sources: item 1 is a JSON number, expected a JSON object"),
        ('"hello"', "expected a JSON array of source objects or JSON Lines of them, got a JSON"),
        (json.dumps(SOURCE) + "\n[1]\n", "item 2 is a JSON array of 1 item"),
        ('[{"url": "https://a.example"}, {"urll": 1}]', "item 2: not a valid source: urll"),
    ]
    for content, message in cases:
        path = write(tmp_path, "sources.json", content)
        result = invoke("attribute", "--answer", ANSWER, "--sources", path)
        assert result.exit_code == 2, content
        assert message in one_line(result), content


def test_sources_as_one_pretty_printed_document(tmp_path: Path) -> None:
    for data in (SOURCE, [SOURCE]):
        path = write(tmp_path, "sources.json", json.dumps(data, indent=2))
        result = invoke("attribute", "--answer", ANSWER, "--sources", path, "-f", "json")
        assert attributed(result) == [ANSWER]


# --- 7. locations in the API's numbers -----------------------------------------------------

QUOTES = {
    "char": CharLocation(start=0, end=35),
    "one_char": CharLocation(start=7, end=8),
    "pages": PageLocation(start_page=3, end_page=5),
    "page": PageLocation(start_page=3, end_page=4),
    "blocks": BlockLocation(start_block=0, end_block=3),
    "block": BlockLocation(start_block=1, end_block=2),
    "result": SearchResultLocation(search_result_index=0, start_block=2, end_block=4),
}
SHOWN = {
    "char": "chars [0, 35)",
    "one_char": "char 7",
    "pages": "pages 3–4",
    "page": "page 3",
    "blocks": "blocks [0, 3)",
    "block": "block 1",
    "result": "1st search result, blocks [2, 4)",
}


def located() -> CitedAnswer:
    text = " ".join(f"Claim {name}." for name in QUOTES)
    sources = [Source(id=name, kind="document", title=f"Doc {name}") for name in QUOTES]
    citations = []
    for name, location in QUOTES.items():
        claim = f"Claim {name}."
        start = text.index(claim)
        citations.append(
            Citation(
                start=start,
                end=start + len(claim),
                text=claim,
                source_ids=[name],
                quote=f"quote {name}",
                location=location,
            )
        )
    return CitedAnswer(text=text, sources=sources, citations=citations)


@pytest.mark.parametrize("fmt", ["terminal", "text", "markdown", "html"])
def test_locations_use_the_api_numbers(tmp_path: Path, fmt: str) -> None:
    path = write(tmp_path, "answer.json", located().to_json())
    result = invoke("render", path, "-f", fmt, "--no-hyperlinks")
    assert result.exit_code == 0, result.output
    for shown in SHOWN.values():
        # Markdown escapes the bracket so that it never opens a link.
        expected = shown.replace("[", "\\[") if fmt == "markdown" else shown
        assert expected in result.stdout, (fmt, shown)
