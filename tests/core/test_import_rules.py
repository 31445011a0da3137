"""No private name crosses a subpackage or a distribution (DESIGN, "Layers").

import-linter checks which modules import which; it cannot see the names imported. This test
reads every import statement (lazy ones included) and applies the rule:

- a private module (``_x`` in the dotted path) belongs to the package holding it and may be
  imported only from inside that package: ``unicite._segment`` from anywhere in ``unicite``,
  ``unicite.sources._ledger`` only from inside ``unicite.sources``;
- a private name (``from m import _x``) belongs to the package of ``m`` and may be imported only
  by modules of that same package, not by its subpackages: ``from unicite._segment import _RE``
  is fine in ``unicite/_text.py``, not in ``unicite/markers/_stream.py``;
- adapters, tests, benchmarks, examples and scripts see public names only.

`KNOWN_VIOLATIONS` lists the crossings that exist today. It only shrinks: it must reach zero.
A new crossing fails the test; so does an entry that no longer occurs (delete it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[2]

# Where each first-party distribution's import package lives.
PACKAGES = {
    "unicite": ROOT / "shared" / "unicite",
    "unicite_langchain": ROOT / "integrations" / "langchain" / "unicite_langchain",
    "unicite_llamaindex": ROOT / "integrations" / "llamaindex" / "unicite_llamaindex",
    "unicite_pydantic_ai": ROOT / "integrations" / "pydantic_ai" / "unicite_pydantic_ai",
    "unicite_haystack": ROOT / "integrations" / "haystack" / "unicite_haystack",
}
# Code outside every distribution: it may use public names only.
OUTSIDE = ("tests", "benchmarks", "examples", "scripts")

# (file relative to the repository root, the private module or name it imports).
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset(
    {
        # Benchmarks fitting and measuring the local attributor's model.
        ("benchmarks/attribution.py", "unicite.attribution._calibration"),
        ("benchmarks/attribution.py", "unicite.attribution._claims.claim_text"),
        ("benchmarks/attribution.py", "unicite.attribution._lexical"),
        ("benchmarks/fit_attribution.py", "unicite.attribution._calibration"),
        ("benchmarks/fit_attribution.py", "unicite.attribution._claims.claim_text"),
        ("benchmarks/fit_attribution.py", "unicite.attribution._lexical"),
        # Tests of private machinery (the calibration model, the stats counter, the segmenter):
        # through the public API, or the helper moves.
        ("tests/core/test_attribution.py", "unicite.attribution._calibration"),
        ("tests/core/test_attribution.py", "unicite.attribution._lexical"),
        ("tests/core/test_markers_structured.py", "unicite.markers._structured.escape_pointer"),
        ("tests/core/test_markers_structured.py", "unicite.markers._structured.resolve_pointer"),
        ("tests/core/test_segment.py", "unicite._segment.CITATION_MARKER_RE"),
        ("tests/core/test_segment.py", "unicite._segment.MARKER_RE"),
        ("tests/core/test_segment.py", "unicite._segment.Segment"),
        ("tests/core/test_segment.py", "unicite._segment.claim_span"),
        ("tests/core/test_segment.py", "unicite._segment.claim_spans"),
        ("tests/core/test_segment.py", "unicite._segment.clauses"),
        ("tests/core/test_segment.py", "unicite._segment.find_markers"),
        ("tests/core/test_segment.py", "unicite._segment.segment"),
    }
)


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _python_files() -> Iterator[tuple[Path, str | None]]:
    """Every checked file with its module name (None outside the distributions)."""
    for top, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [top, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            yield path, ".".join(parts)
    for name in OUTSIDE:
        for path in sorted((ROOT / name).rglob("*.py")):
            yield path, None


def _package_of(path: Path, module: str | None) -> str | None:
    if module is None:
        return None
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imports(tree: ast.AST, package: str | None) -> Iterator[tuple[str, str | None]]:
    """(module, name) for every import; name is None for ``import module``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = (package or "").split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            for alias in node.names:
                yield module, alias.name


def _crossing(importer: str | None, package: str | None, module: str, name: str | None) -> bool:
    """Whether `importer` (in `package`) may not import ``module`` (and ``name`` from it)."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return False
    for index, part in enumerate(parts[1:], start=1):
        owner = ".".join(parts[:index])
        if _is_private(part) and not (
            importer is not None and (importer == owner or importer.startswith(owner + "."))
        ):
            return True
    if name is None or not _is_private(name):
        return False
    # A private name is shared by the modules of one package, not by its subpackages. Whether
    # ``module`` is itself a package decides which package the name belongs to.
    folder = PACKAGES[parts[0]].joinpath(*parts[1:])
    owner = module if (folder / "__init__.py").exists() else module.rpartition(".")[0]
    return package != owner


def violations() -> set[tuple[str, str]]:
    """Every private module or name imported across a package or distribution boundary."""
    found: set[tuple[str, str]] = set()
    for path, module in _python_files():
        package = _package_of(path, module)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target, name in _imports(tree, package):
            if _crossing(module, package, target, name):
                shown = target if name is None else f"{target}.{name}"
                found.add((path.relative_to(ROOT).as_posix(), shown))
    return found


def test_no_new_private_import_crosses_a_boundary() -> None:
    new = sorted(violations() - KNOWN_VIOLATIONS)
    assert not new, "private modules or names imported across a boundary:\n" + "\n".join(
        f"  {file}: {name}" for file, name in new
    )


def test_known_violations_only_shrink() -> None:
    fixed = sorted(KNOWN_VIOLATIONS - violations())
    assert not fixed, "no longer found, so take them off KNOWN_VIOLATIONS:\n" + "\n".join(
        f"  {file}: {name}" for file, name in fixed
    )


def test_the_rule() -> None:
    inside = "unicite.markers._stream", "unicite.markers"
    assert not _crossing(*inside, "unicite.markers._parse", "build_answer")
    assert not _crossing(*inside, "unicite._segment", "claim_spans")
    assert _crossing(*inside, "unicite._segment", "_FENCE_RE")
    assert _crossing(*inside, "unicite.sources._ledger", "SourceLedger")
    assert not _crossing(*inside, "unicite.sources", "SourceLedger")
    assert not _crossing("unicite._text", "unicite", "unicite._segment", "_FENCE_RE")
    assert not _crossing(
        "unicite.attribution._verify", "unicite.attribution", "unicite.attribution", "_lexical"
    )
    assert _crossing(
        "unicite_langchain._runnable", "unicite_langchain", "unicite._segment", "MARKER_RE"
    )
    assert _crossing(None, None, "unicite._segment", None)
    assert not _crossing(None, None, "unicite", "render")
    assert not _crossing(None, None, "unicite", "__version__")
    assert not _crossing(None, None, "_fuzz", "_helper")
