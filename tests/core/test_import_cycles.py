"""No import circle: no two first-party modules import each other, directly or through others.

DESIGN, "Layers": arrows only point down, inside a package as between packages. import-linter's
layers contract orders the top-level modules of ``unicite``; this test covers every module of
every distribution (the core and the adapters), subpackages included.

What counts as an import:

- every ``import`` and ``from ... import`` statement, wherever it stands: at module level, inside
  a function (a lazy import only postpones the circle to the first call: the two modules still
  need each other) and under ``if TYPE_CHECKING:`` (the two still cannot be read one without the
  other);
- an import depends on the module it names: ``from unicite.sources import reconcile`` on the
  package ``unicite.sources`` (its ``__init__``), ``from unicite import sources`` on that
  subpackage, ``import unicite.sources._ledger`` on ``unicite.sources._ledger``;
- the parent packages Python initialises on the way are not counted: otherwise every module would
  be in a circle with the ``__init__`` that imports it.

Folders are scanned as they are on disk: a module or package deleted is simply not there.

`KNOWN_CYCLES` lists the circles that exist today. It only shrinks: a new circle fails the test,
and so does an entry that no longer occurs (delete it).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path

from test_import_rules import PACKAGES, ROOT

Graph = Mapping[str, Mapping[str, int]]
"""Each module's imports: the first-party modules it imports, with the line of the first one."""

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset(
    {
        # `search`'s reconcile and filter stages call `unicite.sources.reconcile` and
        # `filter_content` through the package at call time, so that a replaced public name
        # (tests/core/test_sources_search.py patches it) is the one that runs.
        frozenset({"unicite.sources", "unicite.sources._pipeline"}),
    }
)


def _modules() -> dict[str, Path]:
    """Every first-party module on disk, by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for top, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [top, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _known(name: str, modules: Mapping[str, object]) -> str | None:
    """The longest prefix of dotted ``name`` that is a first-party module, if any."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(
    tree: ast.AST, module: str, is_package: bool, modules: Mapping[str, object]
) -> Iterator[tuple[str, int]]:
    """(first-party module, line) for every import statement anywhere in ``tree``."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name, modules)
                if target is not None:
                    yield target, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                target = submodule if submodule in modules else _known(base, modules)
                if target is not None:
                    yield target, node.lineno


def import_graph(modules: Mapping[str, Path]) -> dict[str, dict[str, int]]:
    """The first-party imports of every module in ``modules``."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: dict[str, int] = {}
        for target, line in _imported(tree, module, path.name == "__init__.py", modules):
            if target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def strongly_connected(graph: Graph) -> list[frozenset[str]]:
    """The groups of two or more modules that each reach the others (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next((t for t in targets if t in graph), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(frozenset(group))
    return groups


def shortest_circle(graph: Graph, group: frozenset[str]) -> list[str]:
    """A shortest circle through the first module of ``group``, as a path back to it."""
    start = min(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node]):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if target in group and target not in came_from:
                came_from[target] = node
                queue.append(target)
    raise AssertionError(f"{sorted(group)} is not a circle")


def describe(graph: Graph, modules: Mapping[str, Path], group: frozenset[str]) -> str:
    """A circle as its steps, each with the file and line of the import that makes it."""
    circle = shortest_circle(graph, group)
    steps = [f"  {', '.join(sorted(group))}:"]
    for here, there in pairwise(circle):
        where = f"{modules[here].relative_to(ROOT).as_posix()}:{graph[here][there]}"
        steps.append(f"    {here} imports {there} ({where})")
    return "\n".join(steps)


def test_no_new_import_cycle() -> None:
    modules = _modules()
    graph = import_graph(modules)
    new = [group for group in strongly_connected(graph) if group not in KNOWN_CYCLES]
    assert not new, "modules importing each other, directly or through others:\n" + "\n".join(
        describe(graph, modules, group) for group in sorted(new, key=min)
    )


def test_known_cycles_only_shrink() -> None:
    found = set(strongly_connected(import_graph(_modules())))
    fixed = sorted(sorted(group) for group in KNOWN_CYCLES - found)
    assert not fixed, "no longer found, so take them off KNOWN_CYCLES:\n" + "\n".join(
        f"  {', '.join(group)}" for group in fixed
    )


def test_every_distribution_is_scanned() -> None:
    adapters = {path.name for path in ROOT.glob("integrations/*/unicite_*") if path.is_dir()}
    assert adapters <= set(PACKAGES), sorted(adapters - set(PACKAGES))


def test_the_rule() -> None:
    modules = dict.fromkeys(["p", "p._a", "p._b", "p.sub", "p.sub._c", "q"], Path())
    source = """
from typing import TYPE_CHECKING
import os
import p.sub._c.missing
from . import _b
from .sub import name_in_sub_init
from p import _a, not_a_module
if TYPE_CHECKING:
    from q import Thing
def lazy():
    from p._a import helper
"""
    found = set(_imported(ast.parse(source), "p._a", False, modules))
    assert {target for target, _ in found} == {"p.sub._c", "p._b", "p.sub", "p._a", "p", "q"}
    assert ("p._a", 11) in found  # the lazy import, besides line 7's
    up = ast.parse("from .. import _a")
    assert {target for target, _ in _imported(up, "p.sub", True, modules)} == {"p._a"}
    assert {target for target, _ in _imported(up, "p.sub._c", False, modules)} == {"p._a"}

    graph = {
        "p": {"p._a": 1},
        "p._a": {"p._b": 1},
        "p._b": {"p.sub": 1, "p._a": 2},
        "p.sub": {"p.sub._c": 1},
        "p.sub._c": {"p.sub": 1, "q": 3},
        "q": {},
    }
    groups = strongly_connected(graph)
    assert sorted(map(sorted, groups)) == [["p._a", "p._b"], ["p.sub", "p.sub._c"]]
    assert shortest_circle(graph, frozenset({"p._a", "p._b"})) == ["p._a", "p._b", "p._a"]
    assert strongly_connected({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []
