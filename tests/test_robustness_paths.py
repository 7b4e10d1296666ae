"""Odd paths never crash a run (issue 8): directories named like modules, broken links, link
loops, links out of the scanned tree, unreadable files, FIFOs, missing paths, and files that
vanish or change between discovery and reading. All of them are created in tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_cli

from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.read.stamps import RACY_NS

GOOD = (
    "class Good:\n    def __iter__(self):\n        self.loader._iterator = None\n"
    "        return self\n"
)
BUG = "class Odd:\n    def __iter__(self):\n        self.l._iterator = None\n"


def check_json(root: Path, *paths: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    result = run_cli(
        "check",
        *(paths or (".",)),
        "--no-cache",
        "-j",
        "1",
        "--output-format",
        "json",
        cwd=root,
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    return result, json.loads(result.stdout)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "good.py").write_text(GOOD)
    return root


def codes(findings: list[dict]) -> set[tuple[str, str]]:
    return {(f["path"], f["code"]) for f in findings}


def ll000(findings: list[dict], path: str) -> str:
    found = [f for f in findings if f["path"] == path and f["code"] == "LL000"]
    assert len(found) == 1, findings
    return found[0]["message"]


def test_directory_named_like_a_module_is_walked(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "x.py").mkdir()
    (root / "x.py" / "inner.py").write_text(BUG)
    result, findings = check_json(root)
    assert codes(findings) == {("good.py", "LL101"), ("x.py/inner.py", "LL101")}
    assert result.returncode == 1
    _, named = check_json(root, "x.py")
    assert codes(named) == {("x.py/inner.py", "LL101")}


def test_broken_symlink_is_ll000_with_a_relative_path(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "dangling.py").symlink_to(tmp_path / "gone.py")
    result, findings = check_json(root)
    assert codes(findings) == {("good.py", "LL101"), ("dangling.py", "LL000")}
    assert ll000(findings, "dangling.py").startswith("broken symbolic link")
    assert result.returncode == 1
    _, named = check_json(root, "dangling.py")
    assert codes(named) == {("dangling.py", "LL000")}


def test_symlink_loop_is_ll000(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "a.py").symlink_to(root / "b.py")
    (root / "b.py").symlink_to(root / "a.py")
    (root / "self.py").symlink_to(root / "self.py")
    result, findings = check_json(root)
    assert codes(findings) == {
        ("good.py", "LL101"),
        ("a.py", "LL000"),
        ("b.py", "LL000"),
        ("self.py", "LL000"),
    }
    assert ll000(findings, "self.py") == "symbolic link loop"
    assert result.returncode == 1


def test_directory_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pkg").mkdir()
    (root / "pkg" / "again").symlink_to(root, target_is_directory=True)
    result, findings = check_json(root)
    assert codes(findings) == {("good.py", "LL101")}
    assert result.returncode == 1


def test_file_symlink_out_of_the_tree_is_scanned_under_its_link_path(tmp_path: Path) -> None:
    """Documented: a linked *file* is scanned (as found, under the link's path); a linked
    *directory* is not followed. ``fix`` never writes through the link (see test_security)."""
    root = project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.py").write_text(BUG)
    (outside / "deeper.py").write_text(BUG)
    (root / "linked.py").symlink_to(outside / "target.py")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    result, findings = check_json(root)
    assert codes(findings) == {("good.py", "LL101"), ("linked.py", "LL101")}
    assert all(not f["path"].startswith("/") for f in findings)
    assert result.returncode == 1


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="runs as root: chmod 000 does not stop root from reading (see the FIFO test)",
)
def test_unreadable_file_is_ll000(tmp_path: Path) -> None:
    root = project(tmp_path)
    secret = root / "secret.py"
    secret.write_text(BUG)
    secret.chmod(0)
    try:
        result, findings = check_json(root)
    finally:
        secret.chmod(0o644)
    assert codes(findings) == {("good.py", "LL101"), ("secret.py", "LL000")}
    assert ll000(findings, "secret.py") == "cannot read: Permission denied"
    assert result.returncode == 1


def test_a_file_without_its_owners_read_bit_is_judged_as_the_kernel_judges_it(
    tmp_path: Path,
) -> None:
    """The scan answers "may I read it?" from its stat only for a file the user owns with
    the owner's read bit set; any other file is asked of the kernel (``os.access``), which
    knows what the mode bits do not (root reads a mode-000 file; another owner's file).
    Old enough to be admitted unread, so that the answer is the admission's, not a read's."""
    root = project(tmp_path)
    mine = root / "mine.py"
    mine.write_text(BUG)
    theirs = root / "theirs.py"
    theirs.write_text(BUG)
    if os.geteuid() == 0:  # only root can give a file to another owner
        os.chown(theirs, 65534, 65534)
    for path in (mine, theirs):
        path.chmod(0)
    time.sleep(RACY_NS / 1e9 + 0.2)  # ctime is "now": wait the racy window out
    try:
        _, findings = check_json(root)
        expected = {
            path.name: "LL101" if os.access(path, os.R_OK) else "LL000" for path in (mine, theirs)
        }
    finally:
        for path in (mine, theirs):
            path.chmod(0o644)
    assert codes(findings) == {("good.py", "LL101"), *expected.items()}
    for name, code in expected.items():
        if code == "LL000":
            assert ll000(findings, name) == "cannot read: Permission denied"


def test_fifo_named_on_the_command_line_is_ll000_and_never_blocks(tmp_path: Path) -> None:
    """A FIFO with no writer blocks any plain ``open()``, even root's: a file that cannot be
    read whatever the privileges. Inside a tree it is not a source file and is skipped."""
    root = project(tmp_path)
    os.mkfifo(root / "pipe.py")
    result, findings = check_json(root, "good.py", "pipe.py")
    assert codes(findings) == {("good.py", "LL101"), ("pipe.py", "LL000")}
    assert ll000(findings, "pipe.py") == "cannot read: not a regular file"
    assert result.returncode == 1
    _, walked = check_json(root)
    assert codes(walked) == {("good.py", "LL101")}


def test_device_file_is_ll000(tmp_path: Path) -> None:
    root = project(tmp_path)
    _, findings = check_json(root, "good.py", "/dev/zero")
    assert ll000(findings, "/dev/zero") == "cannot read: not a regular file"


def test_missing_path_is_an_operational_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = run_cli("check", "good.py", "no_such_dir/missing.py", "--no-cache", cwd=root)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "lintloader: error: no_such_dir/missing.py: no such file or directory\n"


def test_file_deleted_between_discovery_and_reading(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "doomed.py").write_text(BUG)
    discovery = discover_paths(["."], cwd=str(root))
    assert {f.display for f in discovery.files} == {"good.py", "doomed.py"}
    (root / "doomed.py").unlink()
    result = run_check(discovery, CheckOptions(jobs=1))
    found = {(f.path, f.code, f.message) for f in result.findings}
    assert found == {
        ("good.py", "LL101", next(f.message for f in result.findings if f.path == "good.py")),
        ("doomed.py", "LL000", "cannot read: No such file or directory"),
    }


def test_file_changed_between_discovery_and_reading(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "fickle.py").write_text("x = 1\n")
    (root / "turned_dir.py").write_text(BUG)
    discovery = discover_paths(["."], cwd=str(root))
    (root / "fickle.py").write_text(BUG)  # now holds a finding
    (root / "turned_dir.py").unlink()
    (root / "turned_dir.py").mkdir()  # now a directory
    result = run_check(discovery, CheckOptions(jobs=1))
    assert {(f.path, f.code) for f in result.findings} == {
        ("good.py", "LL101"),
        ("fickle.py", "LL101"),
    }
