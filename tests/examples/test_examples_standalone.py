"""The examples run outside the repository: nothing in them reaches into tests/.

Offline replay comes from the package (`unicite.testing`), so an example copied into a project
with ``unicite[testing]`` installed runs as it is. Each file under examples/ is read for what
would tie it to this repository's test tree: importing the test helpers, changing ``sys.path``
or ``PYTHONPATH``, or building a path to the tests folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TESTS = ROOT / "tests"

# Modules importable only with the repository or tests/ on the path: the test tree itself and
# its helper modules (``_cassettes``...).
TEST_MODULES = {"tests", "conftest"} | {path.stem for path in TESTS.glob("*.py")}


def problems(path: Path, root: Path = ROOT) -> list[str]:
    """What ties one example file to the test tree, one line per finding."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [
                f"{where}: imports {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] in TEST_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if (node.module or "").split(".")[0] in TEST_MODULES:
                found.append(f"{where}: imports from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr == "path":
            if isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{where}: uses sys.path")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            found.append(f"{where}: imports a module by name")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            if node.value == "PYTHONPATH":
                found.append(f"{where}: changes PYTHONPATH")
            parts = node.value.replace("\\", "/").split("/")
            if "tests" in parts:
                found.append(f"{where}: names the tests folder ({node.value!r})")
    return found


def example_files() -> list[Path]:
    return sorted(EXAMPLES.rglob("*.py"))


@pytest.mark.parametrize(
    "path", example_files(), ids=lambda path: path.relative_to(EXAMPLES).as_posix()
)
def test_example_does_not_reach_into_tests(path: Path) -> None:
    assert problems(path) == []


def test_the_check_finds_each_way_in(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        '"""Docstrings may mention tests/examples freely."""\n'
        "import os, sys\n"
        "sys.path.insert(0, str(ROOT / 'tests'))\n"
        "import _cassettes\n"
        "from tests.examples import helper\n"
        "os.environ['PYTHONPATH'] = 'tests/'\n",
        encoding="utf-8",
    )
    assert sorted(problems(sneaky, root=tmp_path)) == [
        "sneaky.py:3: names the tests folder ('tests')",
        "sneaky.py:3: uses sys.path",
        "sneaky.py:4: imports _cassettes",
        "sneaky.py:5: imports from tests.examples",
        "sneaky.py:6: changes PYTHONPATH",
        "sneaky.py:6: names the tests folder ('tests/')",
    ]


def test_every_example_is_checked() -> None:
    names = {path.relative_to(EXAMPLES).as_posix() for path in example_files()}
    assert {"langchain_rag.py", "llamaindex_query.py", "web/app.py", "terminal_chat.py"} <= names
