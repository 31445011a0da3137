"""One logger namespace: every logger is ``unicite``, ``unicite.langchain``,
``unicite.llamaindex`` or a child of one of them, so one ``logging.getLogger("unicite")``
configures them all.

The source is read, not imported: the adapters' frameworks need not be installed. Every
``getLogger(...)`` call is checked, at module level or not, whatever it is imported as.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# Each distribution's package, its module prefix, and the namespace its loggers live under.
PACKAGES = {
    "unicite": (ROOT / "shared" / "unicite", "unicite"),
    "unicite_langchain": (
        ROOT / "integrations" / "langchain" / "unicite_langchain",
        "unicite.langchain",
    ),
    "unicite_llamaindex": (
        ROOT / "integrations" / "llamaindex" / "unicite_llamaindex",
        "unicite.llamaindex",
    ),
    "unicite_pydantic_ai": (
        ROOT / "integrations" / "pydantic_ai" / "unicite_pydantic_ai",
        "unicite.pydantic_ai",
    ),
}
ADAPTER_NAMESPACES = ("unicite.langchain", "unicite.llamaindex", "unicite.pydantic_ai")
QUIETED = {"unicite": {"ray.data"}}
"""Other libraries' loggers a package takes only to quiet them (Ray Data's console messages
during `unicite stats --engine ray`), never to log under."""


def module_name(package: str, folder: Path, path: Path) -> str:
    parts = [package, *path.relative_to(folder).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_get_logger(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "getLogger"


def logger_calls(package: str) -> Iterator[tuple[str, int, str | None]]:
    """``(file, line, logger name)`` of every ``getLogger`` call; None when not a literal."""
    folder, _ = PACKAGES[package]
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not is_get_logger(node):
                continue
            if not node.args:
                yield where, node.lineno, None
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield where, node.lineno, arg.value
            elif isinstance(arg, ast.Name) and arg.id == "__name__":
                yield where, node.lineno, module_name(package, folder, path)
            else:
                yield where, node.lineno, None


def within(name: str, namespace: str) -> bool:
    return name == namespace or name.startswith(namespace + ".")


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_logger_is_in_its_namespace(package: str) -> None:
    folder, namespace = PACKAGES[package]
    if not folder.is_dir():
        pytest.skip(f"{package} is not in this checkout")
    calls = list(logger_calls(package))
    assert calls, f"{package}: no getLogger call found: is the scan still right?"
    wrong = []
    for where, line, name in calls:
        ok = name is not None and (within(name, namespace) or name in QUIETED.get(package, set()))
        if package == "unicite" and name is not None:
            # The core's loggers stay out of the adapters' namespaces.
            ok = ok and not any(within(name, other) for other in ADAPTER_NAMESPACES)
        if not ok:
            wrong.append(f"{where}:{line}: getLogger({name!r})")
    assert not wrong, f"loggers outside {namespace!r}:\n" + "\n".join(wrong)


def test_the_scan_sees_what_it_checks() -> None:
    source = "import logging\nfrom logging import getLogger\n"
    source += 'a = logging.getLogger("unicite_langchain")\nb = getLogger()\nc = getLogger(x)\n'
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and is_get_logger(n)]
    assert len(calls) == 3
    assert not within("unicite_langchain", "unicite")
    assert within("unicite.langchain.handler", "unicite.langchain")
