"""``check -`` and ``fix -``: the source comes from standard input, as editors send it, and the
project around ``--stdin-filename`` is indexed; nothing is written."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conftest import FIXTURES
from harness import run_cli

BUGGY = """\
class Fetcher:
    def __iter__(self):
        self.loader._iterator = None
        return iter(self.loader)
"""
CLEAN = "class Fetcher:\n    def __iter__(self):\n        return iter(self.loader)\n"


def run(args: list[str], data: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, input=data, cwd=cwd, timeout=120)


def test_check_reads_the_source_from_stdin_not_from_disk(tmp_path: Path) -> None:
    (tmp_path / "feeder.py").write_text(CLEAN)  # what is on disk is not what is checked
    done = run(["check", "--no-cache", "--output-format", "json", "--stdin-filename",
                "feeder.py", "-"], BUGGY, tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert [(f["code"], f["path"], f["line"]) for f in json.loads(done.stdout)] == [
        ("LL101", "feeder.py", 3)
    ]
    clean = run(["check", "--no-cache", "--stdin-filename", "feeder.py", "-"], CLEAN, tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_without_a_name_stdin_is_called_stdin_py(tmp_path: Path) -> None:
    done = run(["check", "--no-cache", "--output-format", "concise", "-"], BUGGY, tmp_path)
    assert done.returncode == 1 and done.stdout.startswith("stdin.py:3:9: LL101")


def test_the_project_around_the_stdin_file_is_indexed(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "check" / "lightning150" / "minilight", tmp_path / "minilight")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    name = "minilight/utilities/fetching.py"
    source = (tmp_path / name).read_text()
    done = run(["check", "--no-cache", "--output-format", "json", "--stdin-filename", name, "-"],
               source, tmp_path)  # fmt: skip
    findings = json.loads(done.stdout)
    assert [(f["code"], f["path"]) for f in findings] == [("LL101", name)]
    assert findings[0]["chain"][-1]["path"] == "minilight/trainer/supporters.py"


def test_fix_prints_the_fixed_source_and_writes_nothing(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "check" / "lightning150" / "minilight", tmp_path / "minilight")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    name = "minilight/utilities/fetching.py"
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.py")}
    source = (tmp_path / name).read_text()
    done = run(["fix", "--no-cache", "--stdin-filename", name, "-"], source, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout != source and "def teardown" in done.stdout
    again = run(["check", "--no-cache", "--stdin-filename", name, "-"], done.stdout, tmp_path)
    assert again.returncode == 0, again.stdout
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.py")} == before


def test_check_fix_prints_the_fixed_source_as_fix_does(tmp_path: Path) -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, persistent_workers=True)\n"
    )
    done = run(["check", "--no-cache", "--fix", "-"], source, tmp_path)
    fixed = run(["fix", "--no-cache", "-"], source, tmp_path)
    assert done.returncode == fixed.returncode == 0, done.stderr
    assert done.stdout == fixed.stdout == source.replace("True", "False")
    assert "LL201 fixed by persistent-workers-guard" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_fix_prints_an_unfixable_source_unchanged(tmp_path: Path) -> None:
    done = run(["fix", "--no-cache", "-"], CLEAN, tmp_path)
    assert done.returncode == 0 and done.stdout == CLEAN


def test_stdin_must_be_the_only_path(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text("")
    mixed = run(["check", "-", "other.py"], BUGGY, tmp_path)
    assert mixed.returncode == 2 and "must be the only PATH" in mixed.stderr
    named = run(["check", "--stdin-filename", "x.py", "other.py"], BUGGY, tmp_path)
    assert named.returncode == 2 and "give no PATHS" in named.stderr


def test_stdin_filename_alone_reads_stdin_as_ruff_does(tmp_path: Path) -> None:
    done = run(["check", "--no-cache", "--output-format", "concise", "--stdin-filename",
                "feeder.py"], BUGGY, tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("feeder.py:3:9: LL101 [error]")
    assert not (tmp_path / "feeder.py").exists()
