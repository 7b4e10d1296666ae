"""Fixing from ``check``, as ruff does: ``--fix``, ``--diff``, ``--unsafe-fixes``,
``--show-fixes``, ``--exit-non-zero-on-fix``; the summary counts what is fixable, and every
finding a fix leaves gets a note saying why. All through the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURES / "rules" / "LL101" / "fix_before.py", tmp_path / "fetch.py")
    # the loop sets state on the dataset: only the unsafe hoist-dataloader applies
    shutil.copy(FIXTURES / "fix" / "hoist_dataloader_state.in.py", tmp_path / "train.py")
    return tmp_path


def check(project: Path, *args: str):
    return run_cli("check", "--no-cache", *args, ".", cwd=project)


def test_the_summary_counts_safe_and_unsafe_fixes(project: Path) -> None:
    done = check(project)
    assert done.returncode == 1
    assert "[*] 1 fixable with `--fix` (1 more with `--unsafe-fixes`)." in done.stderr


def test_diff_says_would_and_writes_nothing(project: Path) -> None:
    before = {p: p.read_bytes() for p in project.iterdir()}
    done = check(project, "--diff")
    assert done.returncode == 1  # there is something to fix
    assert done.stdout.startswith("--- a/fetch.py\n+++ b/fetch.py\n")
    assert "LL101 would be fixed by relocate" in done.stderr and "LL101 fixed by" not in done.stderr
    assert "Would fix 1 finding in 1 file." in done.stderr
    assert {p: p.read_bytes() for p in project.iterdir()} == before


def test_fix_applies_safe_fixes_and_notes_what_is_left(project: Path) -> None:
    done = check(project, "--fix", "--show-fixes")
    assert done.returncode == 1  # the LL202 is left: its fix is unsafe
    assert (project / "fetch.py").read_bytes() == (
        FIXTURES / "rules" / "LL101" / "fix_after.py"
    ).read_bytes()
    assert "Fixed 1 finding:\n- fetch.py:\n    1 \u00d7 LL101 (relocate)" in done.stderr
    assert "note: train.py:12:18: LL202 not fixed: `--unsafe-fixes` offers hoist-dataloader" in (
        done.stderr
    )
    assert "[*] 1 fixable with `--fix --unsafe-fixes`." in done.stderr  # not the one that failed
    assert "LL202" in done.stdout and "LL101" not in done.stdout


def test_unsafe_fixes_and_exit_non_zero_on_fix(project: Path) -> None:
    done = check(project, "--fix", "--unsafe-fixes")
    assert done.returncode == 0, done.stderr  # nothing left at warning or above
    marked = check(project, "--fix", "--exit-non-zero-on-fix")
    assert marked.returncode == 0  # nothing was fixed this time
    shutil.copy(FIXTURES / "rules" / "LL201" / "fix_before.py", project / "guard.py")
    again = check(project, "--fix", "--exit-non-zero-on-fix")
    assert again.returncode == 1 and "LL201" not in again.stdout


def test_a_shape_the_fix_does_not_support_gets_its_reason(tmp_path: Path) -> None:
    (tmp_path / "fetch.py").write_text(
        "class Fetcher:\n"
        "    def __iter__(self):\n"
        "        self.reset()\n"
        "        return iter(self.loader)\n\n"
        "    def reset(self):\n"
        "        self.fetched = 0\n"
        "        self.loader._iterator = None\n"
    )
    done = check(tmp_path, "--fix")
    assert done.returncode == 1
    refused = "note: fetch.py:3: LL101 relocate not applied: `Fetcher` has no teardown"
    assert refused in done.stderr
    more = "LL101 remove-reset-call not applied: `Fetcher.reset` does more than the reset: line 7"
    assert more in done.stderr
    assert "note: fetch.py:3:9: LL101 not fixed: `--unsafe-fixes` offers remove-call" in done.stderr
    # relocate does not apply, so no safe fix is promised, before the fix or after it
    assert "[*] 1 fixable with `--fix --unsafe-fixes`." in done.stderr
    assert "[*] 1 fixable with `--fix --unsafe-fixes`." in check(tmp_path).stderr
