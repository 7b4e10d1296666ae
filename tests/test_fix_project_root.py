"""``fix --project-root``: index the whole project, fix only what is located in the given files
(what the ``lintloader-fix`` pre-commit hook runs on the staged files)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES, run_cli

FETCHING = "minilight/utilities/fetching.py"
SUPPORTERS = "minilight/trainer/supporters.py"


def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "check" / "lightning150" / "minilight", tmp_path / "minilight")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path


def test_staged_file_alone_cannot_see_the_chain(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = (root / FETCHING).read_bytes()
    result = run_cli("fix", "--project-root", "none", FETCHING, "--no-cache", cwd=root)
    assert result.returncode == 0, result.stderr
    assert (root / FETCHING).read_bytes() == before


def test_project_root_fixes_the_chain_located_in_the_given_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    supporters = (root / SUPPORTERS).read_bytes()
    result = run_cli("fix", "--project-root=auto", FETCHING, "--no-cache", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "Fixed 1 finding in 1 file" in result.stderr
    fixed = (root / FETCHING).read_text()
    reset, teardown = fixed.split("def reset(self):")[1].split("def teardown(self):")
    assert "self.fetched = 0" in reset and "_shutdown_workers_and_reset_iterator" not in reset
    assert "_shutdown_workers_and_reset_iterator" in teardown
    assert (root / SUPPORTERS).read_bytes() == supporters  # not a given file, not edited
    check = run_cli("check", "--project-root=auto", FETCHING, "--no-cache", cwd=root)
    assert check.returncode == 0, check.stdout


def test_project_root_leaves_findings_outside_the_given_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = (root / FETCHING).read_bytes()
    result = run_cli("fix", "--project-root=auto", SUPPORTERS, "--no-cache", cwd=root)
    assert result.returncode == 0, result.stderr
    assert (root / FETCHING).read_bytes() == before


def test_a_file_inside_a_project_sees_its_project_by_default(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = (root / FETCHING).read_bytes()
    fixed = run_cli("fix", FETCHING, "--no-cache", cwd=root)
    assert fixed.returncode == 0, fixed.stderr
    assert (root / FETCHING).read_bytes() != before  # relocate: the shutdown left reset()
    check = run_cli("check", FETCHING, "--no-cache", "--min-severity", "info", cwd=root)
    assert "LL101" not in check.stdout


def test_project_root_does_not_combine_with_site_packages() -> None:
    result = run_cli("fix", "--site-packages", "--project-root=auto")
    assert result.returncode == 2
    assert "--project-root does not combine with --site-packages" in result.stderr
