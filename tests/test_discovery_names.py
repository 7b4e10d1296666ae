"""Module names from discovery: scripts that share a file name are each analysed."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from lintloader.scan.discover.paths import discover_paths

SCRIPT = """\
from torch.utils.data import DataLoader


def fit(ds):
    for epoch in range(3):
        loader = DataLoader(ds, num_workers=2, persistent_workers=True)
"""


def test_scripts_with_one_name_in_two_folders_are_both_checked(tmp_path: Path) -> None:
    for folder in ("mnist", "cifar"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(SCRIPT)
    done = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    paths = sorted(f["path"] for f in json.loads(done.stdout) if f["code"] == "LL202")
    assert paths == ["cifar/train.py", "mnist/train.py"]


def test_only_the_second_script_gets_a_qualified_name(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text("")
    found = discover_paths(["a", "b", "pkg"], cwd=str(tmp_path))
    assert sorted(f.module for f in found.files) == ["pkg", "pkg.train", "train", "train@b"]
