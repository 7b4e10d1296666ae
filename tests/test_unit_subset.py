"""``pytest tests/unit`` is the quick subset (CONTRIBUTING.md): in-process tests only, so that
collecting and running it imports no torch and starts no CLI."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO
from harness import run_python

UNIT = REPO / "tests" / "unit"
COLLECT = """
import sys, pytest
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/unit"])
print("torch imported" if "torch" in sys.modules else "no torch", code)
"""


def test_collecting_the_unit_tests_imports_no_torch() -> None:
    done = run_python("-c", COLLECT, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert done.stdout.splitlines()[-1] == "no torch 0", done.stdout[-2000:]


def test_unit_tests_start_no_process() -> None:
    """No module there imports the CLI harness or subprocess: those tests live in tests/."""
    modules = sorted(UNIT.glob("test_*.py"))
    assert len(modules) >= 10
    for path in modules:
        assert not imported(path) & {"subprocess", "harness"}, path.name


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names
