"""``cst_edit.nodes_of`` finds what ``libcst.matchers.findall`` finds, and a fix run never
imports ``libcst.matchers`` (building its classes costs every fix trial 0.3-0.8 s of CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from lintloader.fixers.edit.cst_edit import nodes_of

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "lintloader" / "fixers").rglob("*.py"))


@pytest.fixture(scope="module")
def trees() -> dict[Path, cst.Module]:
    """Each source parsed once, for every kind the test below looks for."""
    return {path: cst.parse_module(path.read_text(encoding="utf-8")) for path in SOURCES}


@pytest.mark.parametrize("kind", [cst.Call, cst.For, cst.Name, cst.FunctionDef])
def test_nodes_of_is_findall_node_for_node(
    kind: type[cst.CSTNode], trees: dict[Path, cst.Module]
) -> None:
    import libcst.matchers as m

    matcher = getattr(m, kind.__name__)()
    for path, tree in trees.items():
        ours = nodes_of(tree, kind)
        theirs = m.findall(tree, matcher)
        assert len(ours) == len(theirs), path
        assert all(a is b for a, b in zip(ours, theirs, strict=True)), path


def test_a_fix_run_does_not_import_libcst_matchers(tmp_path: Path) -> None:
    fixture = ROOT / "fixtures" / "rules" / "LL203"
    script = (
        "import sys\n"
        "from lintloader.cli.group import main\n"
        "try:\n"
        f"    main(['fix', '--diff', '--unsafe-fixes', '--no-cache', {str(fixture)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('libcst.matchers' in sys.modules, 'lintloader.fixers.strategies.reuse_iterator'"
        " in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # the strategies were loaded and tried (the second answer), and matchers never imported
    assert done.stdout.strip().splitlines()[-1] == "False True", done.stdout + done.stderr
