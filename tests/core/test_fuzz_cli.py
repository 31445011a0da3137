"""Fuzzing the ``unicite`` command line, run in-process on random and truncated files.

Every command ends with exit code 0, 2 (bad input) or 3 (citations required but missing);
an error is one printable line on stderr starting with ``unicite:``, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _fuzz import (
    FORMATS,
    cited_answers,
    fuzz_settings,
    hostile_text,
    json_fidelity,
    json_payloads,
    json_values,
    mutate,
    nested_json,
    sse_payloads,
)
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("typer", reason="the cli extra is not installed")

from typer.testing import CliRunner, Result

from unicite import CitedAnswer
from unicite.cli import app

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")
runner = CliRunner()
# Terminal escapes or other controls must not reach stderr from file contents.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def run(args: list[str], data: bytes | None = None) -> Result:
    result = runner.invoke(app, args, input=data)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 2, 3), (result.exit_code, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    if result.exit_code:
        lines = result.stderr.strip().split("\n")
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("unicite: "), result.stderr
        assert not CONTROL.search(result.stderr.strip()), repr(result.stderr)
        result.stderr.encode("utf-8")
    else:
        result.stdout.encode("utf-8")
    return result


def write(folder: Path, data: bytes) -> str:
    path = folder / "input"
    path.write_bytes(data)
    return str(path)


FLAGS = st.lists(
    st.sampled_from(
        [
            ["--all-sources"],
            ["--no-hyperlinks"],
            ["--hyperlinks"],
            ["--require-citations"],
            ["--provider", "gemini"],
            ["--provider", "openai"],
        ]
    ),
    max_size=3,
).map(lambda groups: [flag for group in groups for flag in group])


@st.composite
def response_files(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["mutated", "sse", "arbitrary", "bytes"]))
    if kind == "mutated":
        payload = draw(st.sampled_from(json_payloads()))
        data = draw(mutate(payload.data))
        return json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if kind == "sse":
        raw = draw(st.sampled_from(sse_payloads())).raw
        return raw[: draw(st.integers(0, len(raw)))]
    if kind == "arbitrary":
        return json.dumps(draw(json_values)).encode()
    return draw(st.binary(max_size=200))


@fuzz_settings(0.5)
@given(response_files(), st.sampled_from(FORMATS), FLAGS, st.booleans())
def test_extract_any_file(
    tmp_path: Path, data: bytes, fmt: str, flags: list[str], stdin: bool
) -> None:
    source = "-" if stdin else write(tmp_path, data)
    result = run(["extract", source, "-f", fmt, *flags], data if stdin else None)
    if result.exit_code == 3:
        assert "--require-citations" in flags
    if result.exit_code == 0 and fmt == "json":
        CitedAnswer.from_json(result.stdout)


def test_extract_prefixes_of_recorded_responses(tmp_path: Path) -> None:
    for payload in json_payloads()[::6]:
        raw = payload.raw
        for cut in sorted({*range(0, len(raw), max(1, len(raw) // 25)), len(raw) - 1}):
            result = run(["extract", write(tmp_path, raw[:cut]), "-f", "text"])
            assert result.exit_code == 2, (payload.name, cut)
        assert run(["extract", write(tmp_path, raw), "-f", "json"]).exit_code == 0


def test_provider_error_bodies_and_deep_files(tmp_path: Path) -> None:
    bodies: list[Any] = [
        {"error": {"message": "Incorrect API key \x1b]8;;https://evil/\x07x\nline two"}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}},
    ]
    for body in bodies:
        result = run(["extract", write(tmp_path, json.dumps(body).encode())])
        assert result.exit_code == 2
        assert "the provider returned an error" in result.stderr
    for text in (nested_json(10_000), nested_json(10_000, "dict"), "data: " + "[" * 10_000):
        run(["extract", write(tmp_path, text.encode())])
        run(["render", write(tmp_path, text.encode())])


@fuzz_settings(0.3)
@given(cited_answers(), st.sampled_from(FORMATS), st.booleans(), st.data())
def test_render_stored_answers_and_broken_ones(
    tmp_path: Path, answer: CitedAnswer, fmt: str, cut: bool, data: st.DataObject
) -> None:
    stored = answer.to_json().encode()
    if cut:
        stored = stored[: data.draw(st.integers(0, len(stored)))]
    result = run(["render", write(tmp_path, stored), "-f", fmt, "--all-sources"])
    if not cut and json_fidelity(answer) != "ambiguous":
        assert result.exit_code == 0


@fuzz_settings(0.3)
@given(hostile_text, st.lists(json_values, max_size=4), st.sampled_from(["jsonl", "json"]))
def test_attribute_any_answer_and_sources(
    tmp_path: Path, text: str, items: list[Any], layout: str
) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_bytes(text.encode("utf-8", "surrogatepass"))
    sources = tmp_path / "sources"
    if layout == "json":
        sources.write_text(json.dumps(items), "utf-8")
    else:
        sources.write_text("\n".join(json.dumps(item) for item in items), "utf-8")
    run(["attribute", "--answer", str(answer), "--sources", str(sources), "-f", "text"])


@fuzz_settings(0.2)
@given(st.lists(response_files(), max_size=3), st.booleans())
def test_stats_over_any_log(tmp_path: Path, lines: list[bytes], as_json: bool) -> None:
    log = b"\n".join(line.replace(b"\n", b" ") for line in lines)
    result = run(["stats", write(tmp_path, log), *(["--json"] if as_json else [])])
    assert result.exit_code == 0
    if as_json:
        summary = json.loads(result.stdout)
        assert summary["unreadable"] <= summary["responses"] <= len(lines)


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    path = write(tmp_path, b"{}")
    for args in (
        ["extract", path, "-f", "pdf"],
        ["extract", path, "--provider", "nope"],
        ["extract", str(tmp_path / "missing.json")],
        ["render", str(tmp_path)],
        ["attribute", "--answer", path, "--sources", str(tmp_path / "missing")],
    ):
        assert run(args).exit_code == 2, args
