"""Every test that reads the set of rules carries the ``enumerates_rules`` marker, found by a
rule rather than a hand list: ``tests/test_new_rule_copy.py`` adds a throwaway rule module and its
fixtures folder to a copy of the checkout, regenerates, and runs every test so marked there.

A test reads the set of rules when its source (or a module-level name or helper it uses,
followed to a fixed point) names what :data:`READS_RULES` matches: the registry, every rule's
fixtures folder, the generated docs, console transcripts, the check fixtures' golden output,
a did-you-mean, the settings or statistics listing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

TESTS = Path(__file__).resolve().parents[1]
MARKER = "enumerates_rules"
READS_RULES = re.compile(
    r"\b(?:all_rules|rule_codes|rule_module_names)\b|\brules_by_code\(\)(?!\[)"  # the registry
    r"|/ \"rules\"(?!\s*/)|fixtures/rules/\*"  # every rule's fixtures folder
    r"|\bexpected\.txt\b"  # the check fixtures' golden output
    r"|\blintloader\.dev\b"  # the generated docs: rule pages, tables
    r"|\bALL_BLOCKS\b"  # console transcripts
    r"|[Dd]id you mean|--show-settings"  # listings a new rule changes
)


def _marked(node: ast.AST, markers: set[str]) -> bool:
    """A decorator names the marker, or calls a helper of the module that marks parameters
    (``pytest.param(..., marks=[pytest.mark.enumerates_rules])``)."""
    for decorator in getattr(node, "decorator_list", []):
        used = {n.id for n in ast.walk(decorator) if isinstance(n, ast.Name)}
        if MARKER in ast.unparse(decorator) or used & markers:
            return True
    return False


def _text(lines: list[str], node: ast.stmt) -> str:
    """The statement's source, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return "\n".join(lines[first - 1 : node.end_lineno])


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        module = getattr(node, "module", None) or ""
        return {
            alias.asname or alias.name.split(".")[0]
            for alias in node.names
            if module.startswith("lintloader.dev") or READS_RULES.search(alias.name)
        }
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def unmarked_readers(source: str) -> list[str]:
    """The test functions of a module's ``source`` that read the set of rules without the
    marker (on themselves, or on the whole module through ``pytestmark``)."""
    lines = source.splitlines()
    statements = [(node, _text(lines, node)) for node in ast.parse(source).body]
    reading: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node, text in statements:
            names = _bound(node) - reading
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            imported = isinstance(node, (ast.Import, ast.ImportFrom))
            if names and (imported or READS_RULES.search(text) or used & reading):
                reading |= names
                changed = True
    if any("pytestmark" in _bound(node) and MARKER in text for node, text in statements):
        return []
    markers = {
        node.name
        for node, text in statements
        if isinstance(node, ast.FunctionDef) and f"mark.{MARKER}" in text
    }
    return sorted(
        node.name
        for node, _ in statements
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
        and node.name in reading
        and not _marked(node, markers)
    )


def test_every_test_that_reads_the_set_of_rules_carries_the_marker() -> None:
    missing = {
        path.relative_to(TESTS).as_posix(): names
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.name != Path(__file__).name
        if (names := unmarked_readers(path.read_text(encoding="utf-8")))
    }
    assert missing == {}, f"add @pytest.mark.{MARKER} (or a module pytestmark): {missing}"


def test_the_rule_bites() -> None:
    reader = "from lintloader.rules.registry import all_rules\n\ndef test_a():\n    all_rules()\n"
    helper = "CODES = {r.code for r in all_rules()}\n\ndef test_b():\n    assert CODES\n"
    marked = "import pytest\n\n@pytest.mark.enumerates_rules\ndef test_c():\n    all_rules()\n"
    module = "import pytest\npytestmark = [pytest.mark.enumerates_rules]\n" + helper
    assert unmarked_readers(reader) == ["test_a"]
    assert unmarked_readers(helper) == ["test_b"]
    assert unmarked_readers(marked) == [] and unmarked_readers(module) == []
    assert unmarked_readers("def test_d():\n    assert 'LL101'\n") == []
    param = "def marked(b):\n    return pytest.param(b, marks=[pytest.mark.enumerates_rules])\n"
    blocks = (
        "\n@pytest.mark.parametrize('b', [marked(b) for b in ALL_BLOCKS])\ndef test_e(b): ...\n"
    )
    assert unmarked_readers(param + blocks) == []
    assert unmarked_readers(blocks) == ["test_e"]
