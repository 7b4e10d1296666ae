"""A new rule is one module plus one fixtures folder (docs/architecture.md, "Adding a rule"):
in a copy of the checkout, add ``rules/llNNN_throwaway_reset.py`` and ``fixtures/rules/LLNNN/``,
run ``python -m lintloader.dev regenerate``, and run every test that reads the set of rules there
(marked ``enumerates_rules``): they pass with nothing else edited.

The marked modules run in a few parts (:data:`PARTS`), each its own pytest process in the one
copy a pytest process makes (a session-scoped fixture: this module has no module-scoped one,
so ``pytest -n 2`` hands each part to whichever worker is free, tests/worker_groups.py): no
worker is left alone with the whole run at the end."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import run_python

from lintloader.rules.registry import rules_by_code

REPO = Path(__file__).resolve().parents[1]
CODES = tuple(rules_by_code())
THIS = Path(__file__).relative_to(REPO).as_posix()

NEW_RULE = '''"""
## throwaway-reset ({code})

### What it does
Finds a call of `throwaway_reset()`, a reset no library has.

### Why is this bad?
It stands for a new rule: the test-suite adds it to show that a rule is one module plus one
fixtures folder.

### Example
```python
throwaway_reset(loader)
```

### Fix safety
No fix.

**Cost** ([cost model](../concepts.md#the-cost-model)): none; it stands for a rule's finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    for info, call in ctx.program.calls_named(("throwaway_reset",)):
        where = (ctx.display(info.file.path), call.site.line, call.site.column)
        yield Finding(RULE.code, RULE.severity, *where, "`throwaway_reset()` called")


RULE = Rule(
    code="{code}",
    name="throwaway-reset",
    severity=Severity.WARNING,
    summary="a call of throwaway_reset()",
    doc=__doc__,
    check=check,
    # a token most files that matter hold: the rule makes a scan parse more files
    seed_tokens=((b"DataLoader",), (b"throwaway_reset",)),
    valid=("throwaway_other(loader)\\n",),
    invalid=("throwaway_reset(loader)\\n",),
)
'''
# What a new rule touches: its docs and the README's table, its examples and fixtures, the rule
# contract, the did-you-mean of selectors, --show-settings, and the console transcripts that a
# rule which parses more files, or is one typo from a selector they show, would change.
# every test that reads the set of rules carries this mark (tests/unit/test_rule_set_marker.py
# finds them by a rule): the tests a new rule may change, run again in the copy
MARKER = "enumerates_rules"


def marked_modules(root: Path) -> list[str]:
    """The test modules under ``root`` that carry :data:`MARKER`, as ``tests/...`` paths."""
    return [
        path.relative_to(root).as_posix()
        for path in sorted((root / "tests").rglob("test_*.py"))
        if f"mark.{MARKER}" in path.read_text(encoding="utf-8")
    ]


# cases of the marked tests that hold the new rule's code: they ran in the copy
NEW_RULE_CASES = (
    "tests/test_user_rules.py::test_fixture_findings_match_markers[{code}/positive.py]",
    "tests/test_user_rules.py::test_fixture_findings_match_markers[{code}/negative.py]",
    "tests/test_user_rules.py::test_every_rule_has_fixtures_and_known_fixes[{code}]",
    "tests/test_fix_honest.py::test_check_promises_what_fix_applies_on_every_rule_fixture[{code}]",
    "tests/test_rule_docs.py::test_committed_page_is_what_the_generator_writes[{code}.md]",
    "tests/unit/test_rule_examples.py::test_rule_example[{code}-invalid-0]",
    "tests/unit/test_rule_examples.py::test_rule_example[{code}-valid-0]",
    "tests/unit/test_rule_examples.py::test_rule_is_documented_in_ruff_style[{code}]",
    "tests/unit/test_moves.py::test_every_line_a_fixture_records_is_declared[{code}/positive.py]",
)


def unchanged_cases(copy: Path, code: str) -> str:
    """A ``-k`` expression that leaves out the cases of the other rules (an id naming their
    code: their fixtures, pages, examples, fix pairs): the new rule finds only a
    ``throwaway_reset()`` call, which no file of theirs holds, and the regeneration rewrites
    no page of theirs, so it cannot change them. Every test that reads the whole set runs."""
    fixtures = copy / "fixtures"
    holders = [
        path.relative_to(copy).as_posix()
        for path in fixtures.rglob("*.py")
        if "throwaway_reset" in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert holders == [f"fixtures/rules/{code}/positive.py"]
    # -k matches names too: a marked test named after a rule would be left out whole
    assert marked_tests_named_by_a_code(copy) == []
    return f"not ({' or '.join(CODES)})"


def marked_tests_named_by_a_code(root: Path) -> list[str]:
    """The marked test functions (and modules) of ``root``'s tests whose name holds a rule
    code (``-k`` is case-blind): ``-k "not (LL201 ...)"`` would leave them out."""
    named = re.compile(r"ll\d{3}", re.I)
    found = []
    for module in marked_modules(root):
        if named.search(module):
            found.append(module)
        functions = [
            node
            for node in ast.walk(ast.parse((root / module).read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        found += [
            f"{module}::{node.name}"
            for node in functions
            if named.search(node.name)
            and any(MARKER in ast.unparse(d) for d in node.decorator_list)
        ]
    return found


def test_a_marked_test_named_after_a_rule_is_caught(tmp_path: Path) -> None:
    """The new-rule test's ``-k`` leaves out ids naming another rule's code: a marked test
    whose own name holds one would go with them, and is named instead."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        f"import pytest\n\n\n@pytest.mark.{MARKER}\ndef test_ll201_thing():\n    pass\n\n\n"
        "def test_ll202_unmarked():\n    pass\n"
    )
    assert marked_tests_named_by_a_code(tmp_path) == ["tests/test_x.py::test_ll201_thing"]
    assert marked_tests_named_by_a_code(REPO) == []


COPIED = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", "*.egg-info", ".pytest_cache", ".mypy_cache", ".ruff_cache"
)


def free_code() -> str:
    return next(f"LL{n}" for n in range(106, 200) if f"LL{n}" not in rules_by_code())


@dataclass(frozen=True)
class Copy:
    """A copy of the checkout with the throwaway rule ``code`` added and regenerated."""

    root: Path
    code: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` in the copy, its lintloader the one imported."""
        return run_python(*args, cwd=self.root, env={"PYTHONPATH": str(self.root)}, timeout=900)


@pytest.fixture(scope="session")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    """The copy (once per pytest process: every part of a worker shares it): the rule module,
    its fixtures folder, then ``regenerate``, which writes the rule's page, the index and the
    README's table, and nothing else."""
    root = tmp_path_factory.mktemp("new-rule") / "project"
    shutil.copytree(REPO, root, ignore=COPIED, symlinks=True)
    code = free_code()
    module = root / "lintloader" / "rules" / f"ll{code[2:]}_throwaway_reset.py"
    module.write_text(NEW_RULE.replace("{code}", code))
    fixtures = root / "fixtures" / "rules" / code
    fixtures.mkdir()
    (fixtures / "positive.py").write_text(f"throwaway_reset(loader)  # expect: {code} warning\n")
    (fixtures / "negative.py").write_text("throwaway_other(loader)\n")
    made = Copy(root, code)
    regenerated = made.run("-m", "lintloader.dev", "regenerate")
    assert regenerated.returncode == 0, regenerated.stderr
    assert regenerated.stdout.splitlines() == [
        f"updated: docs/rules/{code}.md",
        "updated: docs/rules/README.md",
        "updated: README.md",
    ]
    return made


# The marked modules (but this one, which drives the copy) shared out over parts of some equal
# CPU (round 13, serial, in the copy: console 10 s, fixtures 8 s, the rest 7 s, each part's
# start and collection some 1 s more): a module no part names runs in "rest".
PARTS: dict[str, tuple[str, ...]] = {
    "console": ("tests/test_docs_console.py",),
    "fixtures": (
        "tests/test_check_fixtures.py",
        "tests/test_fix_proof.py",
        "tests/test_forked_rounds.py",
    ),
    "rest": (),
}


def part_modules(part: str, modules: list[str]) -> list[str]:
    """The marked ``modules`` that ``part`` runs: those it names, or (``rest``) those no part
    names; never this module."""
    named = {module for names in PARTS.values() for module in names}
    assert named <= set(modules), f"PARTS names unmarked modules: {sorted(named - set(modules))}"
    if PARTS[part]:
        return list(PARTS[part])
    return [m for m in modules if m not in named and m != THIS]


@pytest.mark.enumerates_rules
def test_the_parts_run_every_marked_module_once() -> None:
    modules = marked_modules(REPO)  # the copy's: the new rule adds no test module
    assert len(modules) >= 10 and "tests/test_docs_console.py" in modules and THIS in modules
    shared = [m for part in PARTS for m in part_modules(part, modules)]
    assert sorted(shared) == sorted(set(modules) - {THIS}) and len(shared) == len(set(shared))
    # each new-rule case runs in a part, which asserts it passed
    assert {case.split("::")[0] for case in NEW_RULE_CASES} <= set(shared)


@pytest.mark.enumerates_rules
def test_the_new_rule_is_documented_and_found(copy: Copy) -> None:
    rule_doc = copy.run("-m", "lintloader", "rule", copy.code)
    assert f"throwaway-reset ({copy.code})" in rule_doc.stdout, rule_doc.stderr
    assert "Fix: no fix." in rule_doc.stdout
    found = copy.run(
        "-m", "lintloader", "check", "--no-cache", "--select", copy.code,
        f"fixtures/rules/{copy.code}",
    )  # fmt: skip
    assert found.stdout.startswith(
        f"fixtures/rules/{copy.code}/positive.py:1:1: {copy.code} [warning]"
    ), found.stderr


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("part", PARTS)
def test_a_new_rule_is_one_module_plus_a_fixtures_folder(copy: Copy, part: str) -> None:
    """Every test of the part's marked modules passes in the copy, those of the new rule's
    cases among them (docs/architecture.md, "Adding a rule")."""
    modules = part_modules(part, marked_modules(copy.root))
    assert modules, part  # an empty list would run the whole suite
    # in one process: under the suite's own -n 2, workers of its own would only add their
    # collection and start to the CPU the two cores share
    done = copy.run(
        *("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", MARKER, "-rfEp"),
        *("-k", unchanged_cases(copy.root, copy.code), *modules),
    )
    assert done.returncode == 0, done.stdout[-4000:]
    passed = set(re.findall(r"^PASSED (\S+)", done.stdout, re.M))
    cases = {case.format(code=copy.code) for case in NEW_RULE_CASES}
    ours = {case for case in cases if case.split("::")[0] in modules}
    assert ours <= passed, done.stdout[-4000:]
