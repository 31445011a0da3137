"""The compiled accelerator gives the same results as the pure-Python modules, and is optional.

The differential tests run each accelerated public function on the same generated input in this
process (the compiled build, as ``uv sync`` makes it) and in a pure-Python process
(``UNICITE_PURE_PYTHON=1``, `_accel_eval` as a script); they skip where no compiled build runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _accel_eval import evaluate
from _fuzz import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import unicite

HERE = Path(__file__).resolve().parent
PACKAGE = Path(unicite.__file__).resolve().parent

FRAGMENTS = st.sampled_from(
    [
        "[1]",
        "[2][3]",
        "[1, 2]",
        "[2-4]",
        "[0]",
        "[9]",
        "[[S:1]]",
        "[[S:1,2]]",
        "[^1]",
        "\n[^1]: https://www.example.com/a\n",
        "<sup>2</sup>",
        '<sup class="cite" data-sids="2">[2]</sup>',
        "\u30101:0\u2020source\u3011",
        "\u30102\u3011",
        "([a](https://docs.example.org/b))",
        "[link](https://example.com/p?q=1)",
        "https://x.example/?q=[1]",
        "Zürich zählt 440 000 Einwohner",
        "東京は日本の首都です。",
        "Привет, мир!",
        "مرحبا",
        "Dr. Smith",
        "e.g. this",
        "3.14",
        "U.S.",
        ". ",
        "! ",
        "? ",
        "; ",
        ": ",
        ", and ",
        ", which ",
        "word",
        "fact.[1]",
        "a[1]b",
        "`code [1]`",
        "```\nx = [1]\n```\n",
        "    indented [2]\n",
        "\n\n",
        "\n",
        "- ",
        "* ",
        "1. ",
        "> ",
        "# ",
        "## Heading\n",
        "Title\n===\n",
        "| a [1] | b |\n| --- | --- |\n| c | d [2] |\n",
        "**bold** ",
        "---\n",
        "\u200b",
        "\ud800",
        "e\u0301",
        "\U0001f468\u200d\U0001f469",
        "[",
        "]",
        "(",
        "<sup",
        "`",
        "\t",
    ]
)
TEXTS = st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=30).map("".join)

URLS = st.one_of(
    st.builds(
        "{}://{}{}{}{}{}".format,
        st.sampled_from(["http", "https", "HTTPS", "ftp", "javascript", ""]),
        st.sampled_from(
            [
                "www.example.com",
                "Example.CO.uk",
                "sub.blogspot.com",
                "xn--zrich-kva.ch",
                "zürich.ch",
                "bücher.example",
                "127.0.0.1",
                "[::1]",
                "user:pw@host.example.org",
                "a.b.c.d.e.github.io",
                "localhost",
                "",
                "ex ample.com",
                "vertexaisearch.cloud.google.com",
            ]
        ),
        st.sampled_from(["", ":80", ":443", ":8080", ":x"]),
        st.sampled_from(["", "/", "/a/../b/", "/p%20q", "/grounding-api-redirect/abc", "/ü"]),
        st.sampled_from(["", "?utm_source=x&b=2&a=1", "?a=%41", "?q=[1]", "?"]),
        st.sampled_from(["", "#frag", "#:~:text=hi"]),
    ),
    st.text(max_size=40),
)

TEXT_CALLS = ["segment", "clauses", "claim_span", "parse_markers", "cite"]
URL_CALLS = ["normalize_url", "registrable_domain", "safe_href", "is_redirect_url"]


class PureProcess:
    """A pure-Python unicite in a process of its own, answering `evaluate` requests."""

    def __init__(self) -> None:
        env = {**os.environ, "UNICITE_PURE_PYTHON": "1"}
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "_accel_eval.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self.accelerated = self._read()

    def _read(self) -> Any:
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())

    def evaluate(self, call: str, arg: str) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([call, arg]) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


@pytest.fixture(scope="module")
def pure() -> Iterator[PureProcess]:
    if not unicite.accelerated():
        pytest.skip("no compiled build runs here (a pure install, or UNICITE_PURE_PYTHON=1)")
    process = PureProcess()
    try:
        assert process.accelerated is False
        yield process
    finally:
        process.close()


@pytest.mark.parametrize("call", TEXT_CALLS)
def test_compiled_text_functions_match_pure_python(pure: PureProcess, call: str) -> None:
    @fuzz_settings(0.5)
    @given(TEXTS)
    def check(text: str) -> None:
        assert evaluate(call, text) == pure.evaluate(call, text)

    check()


@pytest.mark.parametrize("call", URL_CALLS)
def test_compiled_url_functions_match_pure_python(pure: PureProcess, call: str) -> None:
    @fuzz_settings(0.5)
    @given(URLS)
    def check(url: str) -> None:
        assert evaluate(call, url) == pure.evaluate(call, url)

    check()


def _run(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )


def _module_files() -> str:
    """Code printing whether unicite is accelerated, and which of its modules are not .py files."""
    return (
        "import json, sys, unicite\n"
        "unicite.cite('Zürich [1].', [unicite.Source(url='https://www.stadt-zuerich.ch/')])\n"
        "other = sorted(n for n, m in sys.modules.items() if n.startswith('unicite.')\n"
        "               and not str(getattr(m, '__file__', '') or '.py').endswith('.py'))\n"
        "print(json.dumps([unicite.accelerated(), other, unicite.__file__]))\n"
    )


def test_pure_python_env_runs_every_module_from_its_source() -> None:
    out = _run(_module_files(), env={"UNICITE_PURE_PYTHON": "1"})
    accelerated, compiled, _ = json.loads(out.stdout)
    assert accelerated is False
    assert compiled == []


def _copy_package(target: Path, *, with_build: bool) -> Path:
    """A copy of the installed package under `target`, with or without its compiled build."""

    def ignore(folder: str, names: list[str]) -> list[str]:
        skipped = [n for n in names if n == "__pycache__"]
        if not with_build and Path(folder).name == "_accel":
            skipped += [n for n in names if not n.endswith(".py")]
        return skipped

    shutil.copytree(PACKAGE, target / "unicite", ignore=ignore)
    return target / "unicite"


def test_import_without_a_compiled_build(tmp_path: Path) -> None:
    copy = _copy_package(tmp_path, with_build=False)
    env = {"UNICITE_PURE_PYTHON": "", "PYTHONPATH": str(tmp_path)}
    out = _run(_module_files(), env=env)
    accelerated, compiled, file = json.loads(out.stdout)
    assert Path(file).parent == copy
    assert accelerated is False
    assert compiled == []
    assert out.stderr == ""


@pytest.mark.parametrize("checkout", [False, True], ids=["installed", "checkout"])
def test_a_changed_source_runs_as_pure_python(tmp_path: Path, checkout: bool) -> None:
    if not unicite.accelerated():
        pytest.skip("no compiled build runs here (a pure install, or UNICITE_PURE_PYTHON=1)")
    copy = _copy_package(tmp_path, with_build=True)
    source = copy / "_segment.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    if checkout:  # a source checkout, as `uv sync` installs it: the next sync rebuilds
        (tmp_path / "hatch_build.py").write_text("", encoding="utf-8")
    env = {"UNICITE_PURE_PYTHON": "", "PYTHONPATH": str(tmp_path)}
    out = _run(_module_files(), env=env)
    accelerated, compiled, file = json.loads(out.stdout)
    assert Path(file).parent == copy
    assert accelerated is False
    assert "unicite._segment" not in compiled
    assert "unicite._urls" in compiled
    # A warning where it is installed; in a checkout an info message (no handler shows it).
    warned = "older than the source of unicite._segment" in out.stderr
    assert warned is not checkout


def test_the_compiled_build_serves_the_accelerated_modules() -> None:
    if not unicite.accelerated():
        pytest.skip("no compiled build runs here (a pure install, or UNICITE_PURE_PYTHON=1)")
    out = _run(_module_files(), env={"UNICITE_PURE_PYTHON": ""})
    accelerated, compiled, _ = json.loads(out.stdout)
    assert accelerated is True
    assert compiled == [
        "unicite._glued",
        "unicite._marker_syntax",
        "unicite._segment",
        "unicite._urls",
    ]
