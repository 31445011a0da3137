"""The code on the documentation pages is real code: run it, offline.

Every ```python block of ``docs/quickstart.md`` and ``docs/guides/*.md`` runs, except one
preceded by ``<!-- no-run -->``. The blocks of a page run in order in one namespace, as a
reader would type them. A top-level ``print(...)  # value`` must print ``value`` (the comment
up to two spaces, which start an explanation). Network access fails the test; a block
that needs an optional package missing here (Starlette, FastAPI...) skips its page.
"""

from __future__ import annotations

import ast
import io
import re
import socket
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted([DOCS / "quickstart.md", *(DOCS / "guides").glob("*.md")])
PAGES = [page for page in PAGES if page.is_file()]

# A fenced block, and whether the line before it (blank lines skipped) says not to run it.
_FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_NO_RUN = "<!-- no-run -->"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of each runnable python block of a page."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
        if before.strip() == _NO_RUN:
            continue
        blocks.append((text.count("\n", 0, match.start()) + 2, match.group(1)))
    return blocks


def expectations(code: str) -> dict[tuple[int, int], str]:
    """What each top-level commented ``print`` call must print, by its lines in the block.

    The comment is the one on the call's last line, as ``ruff format`` leaves it when it wraps
    a long call: ``print(...)  # value`` or ``print(\n    ...\n)  # value``.
    """
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(code).readline)
        if token.type == tokenize.COMMENT
    }
    expected = {}
    for node in ast.parse(code).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        comment = comments.get(node.end_lineno or node.lineno)
        if call.func.id == "print" and comment:
            value = comment.lstrip("#").strip().split("  ", 1)[0].strip()
            expected[node.lineno, node.end_lineno or node.lineno] = value
    return expected


class _Printed:
    """A ``print`` for the examples that records what each line of a block printed."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: dict[int, list[str]] = {}

    def __call__(
        self, *args: object, sep: str | None = None, end: str | None = None, **kw: Any
    ) -> None:
        text = (" " if sep is None else sep).join(str(a) for a in args)
        text += "\n" if end is None else end
        caller = sys._getframe(1)
        if caller.f_code.co_filename == self.filename:
            self.lines.setdefault(caller.f_lineno, []).append(text)
        print(text, end="", **kw)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("the documentation examples must run offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_docs_pages_exist() -> None:
    if not DOCS.is_dir():
        pytest.skip("no docs/ in this checkout")
    assert PAGES, "docs/ has no quickstart or guide page"


def _missing_package(error: ImportError) -> str | None:
    """The optional package an import failed for, when it is not installed here.

    Either it is missing, or what imported under its name is a folder of the tests (a test
    folder named after a framework imports as a namespace package where it is missing).
    """
    name = error.name
    if not name or name.startswith("unicite"):
        return None
    if isinstance(error, ModuleNotFoundError):
        return name
    module = sys.modules.get(name)
    return name if module is not None and getattr(module, "__file__", None) is None else None


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
@pytest.mark.usefixtures("offline")
def test_page_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(page.parent)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for line, code in python_blocks(page.read_text(encoding="utf-8")):
        filename = f"{page.relative_to(DOCS.parent).as_posix()}:{line}"
        printed = _Printed(filename)
        namespace["print"] = printed
        try:
            exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - our own pages
        except ImportError as error:
            missing = _missing_package(error)
            if missing:
                pytest.skip(f"{filename}: needs {missing}")
            raise
        for (first, last), want in expectations(code).items():
            got = [text for n in range(first, last + 1) for text in printed.lines.get(n, [])]
            where = f"{page.relative_to(DOCS.parent).as_posix()}:{line + first - 1}"
            assert got, f"{where}: printed nothing"
            assert "".join(got).rstrip("\n") == want, where
