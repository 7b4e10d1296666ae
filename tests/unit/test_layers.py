"""The package's import graph has no loop: neither between its parts (each subpackage or
top-level module one node) nor between its files.

Every import counts, the ones inside a function or under ``TYPE_CHECKING`` too: a lazy import
keeps a start-up fast, it does not make a loop between two layers any less of one. The graph is
read with ``ast`` from the files, so an import that is never run is still seen.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import lintloader

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

PACKAGE = Path(lintloader.__file__).parent
Graph = dict[str, set[str]]


def _module_name(path: Path) -> str:
    parts = ["lintloader", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imported(name: str, path: Path) -> Iterator[str]:
    """Every dotted name an import statement of the module names (``from a import b``: both
    ``a.b`` and ``a``; the caller keeps the longest that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" for alias in node.names)
            yield base


def _owning_module(dotted: str, modules: dict[str, Path]) -> str | None:
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def file_graph() -> Graph:
    """Module -> the modules of lintloader it imports."""
    modules = _modules()
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        for dotted in _imported(name, path):
            target = _owning_module(dotted, modules) if dotted.startswith("lintloader") else None
            if target is not None and target != name and not name.startswith(f"{target}."):
                graph[name].add(target)
    return graph


def part_of(module: str) -> str:
    """The part a module belongs to: its subpackage, or itself for a top-level module."""
    return ".".join(module.split(".")[:2])


def part_graph(files: Graph) -> Graph:
    graph: Graph = {}
    for name, targets in files.items():
        mine = graph.setdefault(part_of(name), set())
        mine.update(part_of(target) for target in targets if part_of(target) != part_of(name))
    return graph


def loops(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def _explained(graph: Graph, component: list[str]) -> list[str]:
    return [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]


def test_no_loop_between_the_packages_parts() -> None:
    graph = part_graph(file_graph())
    assert {"lintloader.link", "lintloader.incremental", "lintloader.workers"} <= set(graph)
    assert [_explained(graph, component) for component in loops(graph)] == []


def test_no_import_cycle_between_files() -> None:
    graph = file_graph()
    assert [_explained(graph, component) for component in loops(graph)] == []


def test_the_check_finds_a_loop() -> None:
    """The check itself: a loop of three parts, and one through a lazy import, are found."""
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    here = file_graph()
    assert "lintloader.link.program" in here["lintloader.analysis.reachability"]
    # engine imports the parser only inside a function: still an edge
    assert "lintloader.select.policy" in here["lintloader.pipeline.engine"]


def test_the_layers_below_import_nothing_above() -> None:
    """The floors the folders promise: the worker processes, the storage primitives and the
    linker's helpers import nothing of the analysis, the selection or reuse."""
    graph = part_graph(file_graph())
    above = {"lintloader.analysis", "lintloader.rules", "lintloader.select"}
    above |= {"lintloader.incremental", "lintloader.pipeline", "lintloader.cli"}
    for low in ("lintloader.workers", "lintloader.cache", "lintloader.summary", "lintloader.scan"):
        assert graph[low] & above == set(), low
    assert graph["lintloader.link"] & above == set()
    floor = ("workers", "finding", "domain", "text", "trust")
    for part in floor:  # the floor imports nothing else of lintloader
        assert graph[f"lintloader.{part}"] == set(), part
