"""What the fix trial shares cannot change its answer (``fixers/runner.py``'s ``FixRounds``,
``fixers/edit/shared_parse.py``):

* the rounds with the unsafe strategies, gone on from where the safe rounds stopped, end as
  rounds run from the files as they are: the same edits, fixes (with what each leaves), notes,
  findings left and rounds; on trees where a safe fix comes first and an unsafe one follows in
  a later round (in the same file, across the files of a project, and fixtures/fix);
* a file's parents found in one walk are libcst's own, node for node, and the function index
  that skips expressions finds every def and class.

In-process through the library API, as ``lintloader check`` and ``fix`` call it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
import pytest
from conftest import FIXTURES
from libcst.metadata import MetadataWrapper, ParentNodeProvider
from test_fix_honest import LOOP_BUILT  # the safe LL201 guard, then the unsafe hoist

from lintloader.finding.findings import Severity
from lintloader.fixers.base import FixError
from lintloader.fixers.edit.cst_edit import _FunctionFinder
from lintloader.fixers.edit.parsing import parse_module
from lintloader.fixers.edit.shared_parse import parents_of
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import FixOutcome, FixRounds, fix_in_memory
from lintloader.pipeline.engine import CheckOptions
from lintloader.scan.discover.paths import discover_paths
from lintloader.settings.config import Config

pytestmark = pytest.mark.fast  # in-process: `pytest -m fast` (CONTRIBUTING.md)

# a project: the safe guard in one file while the unsafe fixes of the other wait a round
CALLER = """\
from loop_built import train


def main(dataset, workers):
    for epoch in range(3):
        train(dataset, 1, workers)
"""


def outcome_parts(outcome: FixOutcome) -> dict[str, object]:
    return {
        "sources": outcome.changed,
        "applied": [
            (a.finding, a.strategy.name, a.paths, a.keys, a.residual) for a in outcome.applied
        ],
        "notes": outcome.notes,
        "found": outcome.found,
        "left": outcome.left,
        "remaining": outcome.remaining,
        "rounds": outcome.rounds,
    }


def tree(name: str, root: Path) -> Path:
    if name == "loop_built":
        (root / "loop_built.py").write_text(LOOP_BUILT)
    elif name == "project":
        (root / "loop_built.py").write_text(LOOP_BUILT)
        (root / "main.py").write_text(CALLER)
    else:
        shutil.copytree(FIXTURES / name, root / "tree")
    return root


@pytest.mark.parametrize("name", ["loop_built", "project", "fix"])
def test_unsafe_rounds_after_the_safe_ones_end_as_rounds_from_the_start(
    name: str, tmp_path: Path
) -> None:
    root = tree(name, tmp_path)
    discovery = discover_paths([str(root)], cwd=str(root))
    config = Config(min_severity=Severity.INFO)
    options = CheckOptions(config=config, jobs=1, cache_writes=False)
    rounds = FixRounds(discovery, options, load_registry())
    safe = rounds.run(unsafe=False)
    went_on = rounds.unsafe_after()
    from_start = fix_in_memory(discovery, options, load_registry(), unsafe=True)
    assert outcome_parts(went_on) == outcome_parts(from_start)
    # not a vacuous case: the safe rounds fixed something and the unsafe ones did more after
    assert safe.applied and len(went_on.applied) > len(safe.applied)
    assert any(not a.strategy.safe for a in went_on.applied[len(safe.applied) :])


def test_a_second_unsafe_run_goes_on_from_the_same_place(tmp_path: Path) -> None:
    root = tree("project", tmp_path)
    discovery = discover_paths([str(root)], cwd=str(root))
    rounds = FixRounds(discovery, CheckOptions(jobs=1), load_registry())
    rounds.run(unsafe=False)
    first, second = rounds.unsafe_after(), rounds.unsafe_after()
    assert outcome_parts(first) == outcome_parts(second)


def fixture_modules() -> list[Path]:
    """The fixers' and the cross-file fixtures, and the newer and older grammar's."""
    folders = [FIXTURES / "fix", FIXTURES / "check", FIXTURES / "grammar"]
    return sorted(p for folder in folders for p in folder.rglob("*.py") if p.is_file())


def test_parents_in_one_walk_are_libcsts() -> None:
    modules = [(p, m) for p in fixture_modules() if (m := _parsed(p)) is not None]
    assert len(modules) > 100
    for path, module in modules:
        ours = parents_of(module)
        assert ours is not None, path  # a fresh parse holds each node once
        theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
        assert ours.keys() == theirs.keys(), path
        assert all(ours[node] is theirs[node] for node in ours), path


def test_a_node_in_two_places_is_noticed() -> None:
    shared = cst.parse_statement("x = 1\n")
    module = cst.Module(body=[shared, shared])
    assert parents_of(module) is None


class _EveryDefinition(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[cst.FunctionDef | cst.ClassDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.seen.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.seen.append(node)


def test_the_function_index_finds_every_definition() -> None:
    source = b"class A:\n    def f(self):\n        def g():\n            pass\n" + (
        b"@dec(lambda: 1)\ndef h(x=lambda: 0):\n    if x:\n        class B:\n            pass\n"
    )
    for module in [parse_module(source), *(_parsed(p) for p in fixture_modules())]:
        if module is None:
            continue
        every, finder = _EveryDefinition(), _FunctionFinder()
        module.visit(every)
        module.visit(finder)
        found: list[cst.FunctionDef | cst.ClassDef] = [*finder.found.values()]
        found += finder.classes.values()
        # the first definition of each qualified name is indexed; none is missed
        assert {id(n) for n in found} <= {id(n) for n in every.seen}
        names = {n.name.value for n in every.seen}
        assert {n.name.value for n in found} == names


def _parsed(path: Path) -> cst.Module | None:
    try:
        return parse_module(path.read_bytes())
    except (cst.ParserSyntaxError, FixError):  # a grammar fixture the fixers do not read
        return None
