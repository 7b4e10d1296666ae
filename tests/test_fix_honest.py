"""A finding is fixable only when ``fix`` applies a fix to it (issue 43), through the real CLI:

* ``check`` then ``fix`` on every fixture of fixtures/rules (each alone in its own folder, one
  tree of the rules the run tests, one run of each command): per file, the findings ``check``
  calls fixable with ``--fix`` are the ones ``fix`` ends, and with ``--unsafe-fixes`` the same;
  one it changes but does not end is not promised;
* the safe LL201 guard and the unsafe hoist of the same loop-built loader compose, and the guard
  that ends its finding is not "changed but not fixed";
* a fix that fails is not promised again.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, run_cli

from lintloader.finding.findings import Severity
from lintloader.finding.fix_safety import FIX_SAFETY
from lintloader.rules.registry import rules_by_code

RULES = rules_by_code()
FIXED = re.compile(r"^(?P<path>[^:\s]+):\d+: LL\d{3} fixed by [\w-]+ ", re.M)
# rules whose fixtures hold a finding that only an unsafe fix ends
UNSAFE_ONLY = ("LL101", "LL102", "LL105", "LL203")


def folder_of(source: Path) -> str:
    return f"{source.parent.name}_{source.stem}"


def tree_of(codes: tuple[str, ...], root: Path) -> Path:
    """The fixtures of rules ``codes`` (fixtures/rules/<code>/*.py), each in a folder of its own
    (``<code>_<stem>``)."""
    for code in codes:
        for source in sorted((FIXTURES / "rules" / code).glob("*.py")):
            (root / folder_of(source)).mkdir(parents=True)
            shutil.copy(source, root / folder_of(source) / source.name)
    return root


def ended(tree: Path, copy: Path, *flags: str) -> Counter[str]:
    """Per file: the findings ``fix`` fixed in a copy of ``tree`` (not those it changed while
    their loader still starts a pool: those are not promised)."""
    shutil.copytree(tree, copy)
    done = run_cli("fix", "--no-cache", *flags, ".", cwd=copy)
    assert done.returncode in (0, 1), done.stderr
    return Counter(match["path"] for match in FIXED.finditer(done.stderr))


@dataclass(frozen=True)
class Runs:
    """The findings ``check`` prints for the tree, and per file those ``fix`` ended."""

    findings: list[dict[str, Any]]
    safe: Counter[str]
    unsafe: Counter[str]

    def of(self, code: str) -> list[dict[str, Any]]:
        """The findings of rule ``code``'s fixture files (any rule's findings in them)."""
        return [f for f in self.findings if f["path"].startswith(f"{code}_")]


def codes_tested(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The rules whose cases this run of the module holds (``-k`` in test_new_rule_copy's copy
    leaves the new rule's alone)."""
    cases = [item for item in request.session.items if item.module is request.module]
    return tuple(
        sorted({item.callspec.params["code"] for item in cases if "code" in _params(item)})
    )


def _params(item: pytest.Item) -> dict[str, Any]:
    callspec = getattr(item, "callspec", None)
    return callspec.params if callspec is not None else {}


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """``check``, ``fix`` and ``fix --unsafe-fixes``, each run once on one tree of the
    fixtures of the rules this run tests: what ``check`` promises a file is compared with
    what ``fix`` does to that file in the same tree, as in a tree per rule, for some three
    quarters of the CPU of one run of each per rule."""
    root = tmp_path_factory.mktemp("honest")
    tree = tree_of(codes_tested(request), root / "fixtures")
    done = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tree)
    assert done.returncode in (0, 1), done.stderr
    return Runs(
        json.loads(done.stdout),
        ended(tree, root / "safe"),
        ended(tree, root / "unsafe", "--unsafe-fixes"),
    )


def promised(findings: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """Per file: the findings ``check`` calls fixable with ``--fix``, and with any fix."""
    safe: Counter[str] = Counter()
    any_fix: Counter[str] = Counter()
    for finding in findings:
        names = finding["fixes"]
        safe[finding["path"]] += any(FIX_SAFETY[name].safe for name in names)
        any_fix[finding["path"]] += bool(names)
    return safe, any_fix


def of_code(counts: Counter[str], code: str) -> Counter[str]:
    return +Counter({path: n for path, n in counts.items() if path.startswith(f"{code}_")})


# one case per rule: a new rule's case runs alone in test_new_rule_copy's copy (its -k leaves out
# the cases named by the other rules' codes, which a rule that fixes nothing cannot change)
@pytest.mark.enumerates_rules
@pytest.mark.parametrize("code", tuple(RULES))
def test_check_promises_what_fix_applies_on_every_rule_fixture(code: str, runs: Runs) -> None:
    safe, any_fix = promised(runs.of(code))
    rule = RULES[code]
    if rule.fixes and rule.severity >= Severity.WARNING:  # what the tree's findings show
        assert sum(safe.values()), code
    if code in UNSAFE_ONLY:
        assert sum(any_fix.values()) > sum(safe.values()), code
    assert +safe == of_code(runs.safe, code)
    assert +any_fix == of_code(runs.unsafe, code)


LOOP_BUILT = """\
from torch.utils.data import DataLoader


def train(dataset, epochs, workers):
    for epoch in range(epochs):
        dataset.epoch = epoch  # per-epoch state: the safe hoist-loader-call refuses
        loader = DataLoader(dataset, batch_size=2, num_workers=workers, persistent_workers=True)
        for batch in loader:
            pass
"""


def test_the_guard_and_the_hoist_of_one_loader_compose(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(LOOP_BUILT)
    done = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert "[*] 1 fixable with `--fix` (1 more with `--unsafe-fixes`)." in done.stderr
    safe = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert safe.returncode == 1  # the LL202 is left
    assert "mod.py:7: LL201 fixed by persistent-workers-guard (mod.py)" in safe.stderr
    assert "not fixed: `--unsafe-fixes` offers hoist-dataloader" in safe.stderr
    assert "changed" not in safe.stderr
    assert "Fixed 1 finding in 1 file; 1 finding left (1 fixable with --unsafe-fixes)." in (
        safe.stderr
    )
    unsafe = run_cli("fix", "--no-cache", "--unsafe-fixes", ".", cwd=tmp_path)
    assert unsafe.returncode == 0, unsafe.stderr
    assert "LL202 fixed by hoist-dataloader" in unsafe.stderr
    assert "Fixed 1 finding in 1 file; 0 findings left." in unsafe.stderr
    fixed = (tmp_path / "mod.py").read_text()
    assert "    loader = DataLoader(dataset, batch_size=2, num_workers=workers, " in fixed
    assert "persistent_workers=workers > 0)\n    for epoch in range(epochs):\n" in fixed
    after = run_cli("check", "--no-cache", "--min-severity", "info", ".", cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == "", after.stdout


def test_a_finding_no_fixer_handles_is_named_with_why(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "rules" / "LL104" / "positive.py", tmp_path / "mod.py")
    done = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert re.search(
        r"^note: mod\.py:\d+: LL104 not fixed: no fixer for this shape$", done.stderr, re.M
    )
    assert "Fixed 0 findings in 0 files; 1 finding left." in done.stderr
    assert "fixable" not in run_cli("check", "--no-cache", ".", cwd=tmp_path).stderr


def test_persistence_is_safe_only_without_per_epoch_state(tmp_path: Path) -> None:
    """The loop of `curriculum` sets the dataset's difficulty every epoch: persistent workers
    would keep the first one, so the safe fix refuses it and says why."""
    shutil.copy(FIXTURES / "rules" / "LL204" / "fix_stateless_before.py", tmp_path / "mod.py")
    done = run_cli("fix", "--no-cache", "--min-severity", "info", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert "mod.py:10: LL204 fixed by persistent-workers-stateless (mod.py)" in done.stderr
    assert (
        "note: mod.py:19: LL204 persistent-workers-stateless not applied: the epoch loop sets "
        "per-epoch state (line 21: `dataset.difficulty = epoch`)"
    ) in done.stderr
    assert "note: mod.py:19: LL204 not fixed: `--unsafe-fixes` offers add-persistent-workers" in (
        done.stderr
    )
    expected = FIXTURES / "rules" / "LL204" / "fix_stateless_after.py"
    assert (tmp_path / "mod.py").read_bytes() == expected.read_bytes()


TWO_LOADERS = """\
from torch.utils.data import DataLoader


def train(dataset, epochs, workers=2):
    seen = 0
    for epoch in range(epochs):
        train_loader = DataLoader(dataset, batch_size=4, num_workers=workers)
        for step, batch in enumerate(train_loader):
            seen += len(batch)
            if step % 2 == 0:
                test_loader = DataLoader(dataset, batch_size=4, num_workers=workers)
                for batch in test_loader:
                    seen += len(batch)
    return seen
"""


def test_a_finding_a_fix_moves_on_is_not_counted_twice(tmp_path: Path) -> None:
    """Two loaders of one function: the test loader hoisted out of the step loop (round 1)
    sits in the epoch loop, a finding no first-round one matches alone, hoisted again in round
    2. ``fix`` counts the findings it ends as ``check`` promised them: 2, not 3."""
    (tmp_path / "train.py").write_text(TWO_LOADERS)
    info = ("--no-cache", "--min-severity", "info", "train.py")
    check = run_cli("check", *info, cwd=tmp_path)
    assert "[*] 2 fixable with `--fix`" in check.stderr
    done = run_cli("fix", *info, cwd=tmp_path)
    assert "Fixed 2 findings in 1 file; 0 findings left" in done.stderr, done.stderr
    assert run_cli("check", *info, cwd=tmp_path).returncode == 0
