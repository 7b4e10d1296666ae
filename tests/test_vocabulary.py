"""Issue 29, shape 10: a team's own resets, roots and loader factories, declared in
``[tool.lintloader]`` (extend-resets, extend-roots, extend-loaders), change what the real CLI
reports; a malformed name is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

DATA = """\
class Loader:
    def __init__(self, dataset):
        self.dataset = dataset

    def restart(self):
        self.pool = None


def make_loader(dataset):
    return Loader(dataset)
"""

TRAIN = """\
from mypkg.data import Loader, make_loader


class Engine:
    def __init__(self, dataset):
        self.loader = Loader(dataset)

    def run_epoch(self):
        self.loader.restart()

    def __iter__(self):
        self.loader.restart()
        return iter(self.loader.dataset)


def fit(dataset, epochs):
    for epoch in range(epochs):
        loader = make_loader(dataset)
"""

VOCABULARY = """\
[tool.lintloader]
extend-resets = ["mypkg.data.Loader.restart"]
extend-roots = ["mypkg.train.Engine.run_epoch"]
extend-loaders = ["mypkg.data.make_loader"]
"""


def project(root: Path, table: str) -> Path:
    (root / "mypkg").mkdir()
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "data.py").write_text(DATA)
    (root / "mypkg" / "train.py").write_text(TRAIN)
    (root / "pyproject.toml").write_text(table)
    return root


def findings(root: Path) -> list[tuple[str, str, str, int]]:
    result = run_cli("check", "--output-format", "json", "--no-cache", "mypkg", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return [(f["code"], f["severity"], f["path"], f["line"]) for f in json.loads(result.stdout)]


def test_declared_vocabulary_is_followed(tmp_path: Path) -> None:
    assert findings(project(tmp_path, VOCABULARY)) == [
        ("LL102", "warning", "mypkg/train.py", 9),
        ("LL101", "error", "mypkg/train.py", 12),
        ("LL202", "warning", "mypkg/train.py", 18),
    ]


def test_without_the_declarations_nothing_is_known(tmp_path: Path) -> None:
    assert findings(project(tmp_path, "[tool.lintloader]\n")) == []


def test_a_declared_reset_alone_needs_no_root_to_be_listed(tmp_path: Path) -> None:
    table = '[tool.lintloader]\nextend-resets = ["mypkg.data.Loader.restart"]\n'
    assert findings(project(tmp_path, table)) == [("LL101", "error", "mypkg/train.py", 12)]


def test_a_malformed_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\n")
    for table in (
        '[tool.lintloader]\nextend-resets = ["restart"]\n',
        '[tool.lintloader]\nextend-roots = ["mypkg.train.Engine.run-epoch"]\n',
        '[tool.lintloader]\nextend-loaders = ["mypkg..make_loader", 3]\n',
    ):
        (tmp_path / "pyproject.toml").write_text(table)
        result = run_cli("check", "--no-cache", str(tmp_path), cwd=tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "[tool.lintloader]: extend-" in lines[0], result.stderr


def test_a_name_its_linked_module_does_not_define_is_one_line_and_exit_2(tmp_path: Path) -> None:
    table = '[tool.lintloader]\nextend-resets = ["mypkg.data.Loader.restrat"]\n'
    root = project(tmp_path, table)
    result = run_cli("check", "--no-cache", "mypkg", cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "'mypkg.data.Loader.restrat' names no function or method of module mypkg.data" in line
