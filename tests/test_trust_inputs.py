"""Hostile or unusual inputs (issue 28, part B): ``[tool.lintloader]`` in every way TOML can
write it, a pyproject.toml nested too deeply, ``--config`` naming a device or a FIFO, and
``fix`` given a link that points out of the scanned paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli

BUG = "class Fetcher:\n    def __iter__(self):\n        self.loader._iterator = None\n"

SPELLINGS = {
    "tool-table-dotted-key": '[tool]\nlintloader.ignore = ["LL101"]\n',
    "dotted-root-key": 'tool.lintloader.ignore = ["LL101"]\n',
    "spaces-in-header": '[ tool . lintloader ]\nignore = ["LL101"]\n',
    "quoted-key": '[tool."lintloader"]\nignore = ["LL101"]\n',
    "literal-quoted-key": "[tool.'lintloader']\nignore = ['LL101']\n",
    "escaped-quoted-key": '[tool."lint\\u006coader"]\nignore = ["LL101"]\n',
    "inline-table": '[tool]\nlintloader = { ignore = ["LL101"] }\n',
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_table_is_found_however_toml_spells_it(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "fetch.py").write_text(BUG)
    (tmp_path / "pyproject.toml").write_text(SPELLINGS[spelling] + '[project]\nname = "x"\n')
    done = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "LL101" not in done.stdout


def test_a_mention_that_is_no_table_does_not_shadow_the_real_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.lintloader]\nignore = ["LL101"]\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "fetch.py").write_text(BUG)
    (inner / "pyproject.toml").write_text(
        '# settings for [tool.lintloader]: one level up\n[tool.other]\nx = "[tool.lintloader]"\n'
    )
    done = run_cli("check", "--no-cache", "inner", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_pyproject_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "fetch.py").write_text(BUG)
    deep = "x = " + "[" * 20000 + "]" * 20000 + "\n"
    (tmp_path / "pyproject.toml").write_text(deep + "[tool.lintloader]\n")
    done = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [  # relative: the file is in the working dir
        "lintloader: error: pyproject.toml: cannot read configuration (nested too deeply)"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["device", "fifo", "missing"])
def test_config_that_is_no_regular_file_is_one_line(tmp_path: Path, kind: str) -> None:
    (tmp_path / "fetch.py").write_text(BUG)
    target = {"device": Path("/dev/zero"), "fifo": tmp_path / "fifo", "missing": tmp_path / "no"}
    if kind == "fifo":
        os.mkfifo(target["fifo"])
    if kind == "device" and not target["device"].exists():
        pytest.skip("no /dev/zero")
    done = run_cli(
        "check", "--no-cache", "--config", str(target[kind]), ".", cwd=tmp_path, timeout=60
    )
    assert done.returncode == 2
    why = "no such file" if kind == "missing" else "not a regular file"
    assert done.stderr == f"lintloader: error: --config {target[kind]}: {why}\n"


@pytest.mark.parametrize("project_root", [None, "none"])
def test_fix_of_a_named_link_never_writes_its_target_outside(
    tmp_path: Path, project_root: str | None
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "fetch.py").write_text(BUG)
    work = tmp_path / "work"  # no pyproject.toml, no .git: outside any project
    work.mkdir()
    (work / "LINK.py").symlink_to(outside / "fetch.py")
    (work / "own.py").write_text(BUG)
    extra = [f"--project-root={project_root}"] if project_root else []
    done = run_cli("fix", "--no-cache", "--unsafe-fixes", *extra, "LINK.py", "own.py", cwd=work)
    assert done.returncode == 1, done.stderr  # refused, as with a directory argument
    assert "not applied: LINK.py: resolves (through a symbolic link) outside" in done.stderr
    assert (outside / "fetch.py").read_text() == BUG
    assert (work / "LINK.py").is_symlink()
    assert (work / "own.py").read_text() != BUG  # the file itself is still fixed


BASE = """from torch.utils.data import DataLoader


class Base:
    def __init__(self, loader: DataLoader):
        self.loader = loader

    def reset(self):
        self.fetched = 0
        self.loader._iterator = None

    def close(self):
        self.reset()
"""
SUB = """from base import Base


class Sub(Base):
    def __iter__(self):
        self.reset()
        return iter(self.loader)
"""


@pytest.mark.parametrize("command", [["fix"], ["check", "--fix"]])
def test_fix_of_a_given_file_never_edits_a_base_class_file_not_given(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "sub.py").write_text(SUB)
    done = run_cli(*command, "--no-cache", "--project-root=auto", "sub.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "base.py").read_text() == BASE
    assert (
        "note: sub.py:6: LL101 relocate not applied: base.py: not among the files given, "
        "and the fix edits it" in done.stderr
    )
    both = run_cli(*command, "--no-cache", "--project-root=auto", "sub.py", "base.py", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert "sub.py:6: LL101 fixed by relocate (base.py)" in both.stderr  # which file was edited
    assert (tmp_path / "base.py").read_text() != BASE
