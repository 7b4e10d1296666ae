"""Suppression as ruff users expect it, through the real CLI: ``# noqa`` anywhere in a
multi-line statement, file-level ``# lintloader: noqa``, and ``--add-noqa`` for adoption."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from conftest import run_cli

SCRIPT = """\
from torch.utils.data import DataLoader


def fit(ds, epochs):
    for epoch in range(epochs):  # the epoch loop
        loader = DataLoader(
            ds,
            num_workers=0,
            persistent_workers=True,{keyword}
        ){close}
        for batch in loader:
            pass


class Fetcher:
    def __iter__(self):
        self.loader._iterator = None  # keep: explained below
        return iter(self.loader)
"""


def write(tmp_path: Path, keyword: str = "", close: str = "", header: str = "") -> Path:
    path = tmp_path / "train.py"
    path.write_text(header + SCRIPT.format(keyword=keyword, close=close))
    return path


def codes(tmp_path: Path, *args: str) -> list[tuple[str, int]]:
    done = run_cli(
        "check", "--no-cache", "--project-root", "none", "--output-format", "json", *args,
        "train.py", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return [(f["code"], f["line"]) for f in json.loads(done.stdout)]


def test_both_findings_without_comments(tmp_path: Path) -> None:
    write(tmp_path)
    assert codes(tmp_path) == [("LL201", 6), ("LL101", 17)]


@pytest.mark.parametrize(
    ("keyword", "close"),
    [("  # noqa: LL201", ""), ("", "  # noqa: LL201"), ("", "  # noqa")],
    ids=["on-the-keyword-line", "after-the-closing-parenthesis", "bare"],
)
def test_noqa_on_any_line_of_a_multi_line_statement(tmp_path: Path, keyword, close) -> None:
    write(tmp_path, keyword=keyword, close=close)
    assert codes(tmp_path) == [("LL101", 17)]


def test_noqa_for_another_code_does_not_suppress(tmp_path: Path) -> None:
    write(tmp_path, close="  # noqa: LL202")
    assert ("LL201", 6) in codes(tmp_path)


def test_a_noqa_in_a_loop_body_does_not_cover_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(
        "class Fetcher:\n"
        "    def __iter__(self):\n"
        "        for _ in range(1):\n"
        "            pass  # noqa\n"
        "        self.loader._iterator = None\n"
        "        return iter(self.loader)\n"
    )
    assert codes(tmp_path) == [("LL101", 5)]


@pytest.mark.parametrize(
    ("header", "left"),
    [
        ("# lintloader: noqa\n", []),
        ("# lintloader: noqa: LL201\n", [("LL101", 18)]),
        ("x = 1  # lintloader: noqa\n", [("LL201", 7), ("LL101", 18)]),  # not on its own line
    ],
    ids=["all-codes", "one-code", "trailing-is-not-file-level"],
)
def test_file_level_suppression(tmp_path: Path, header: str, left) -> None:
    write(tmp_path, header=header)
    assert codes(tmp_path) == left


def test_add_noqa_lets_a_team_adopt_the_hook_today(tmp_path: Path) -> None:
    path = write(tmp_path)
    done = run_cli("check", "--no-cache", "--project-root", "none", "--add-noqa", "train.py",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Added 2 noqa directives." in done.stderr
    lines = path.read_text().splitlines()
    assert lines[9] == "        )  # noqa: LL201"
    assert (
        lines[16] == "        self.loader._iterator = None  # keep: explained below  # noqa: LL101"
    )
    assert codes(tmp_path) == []
    again = run_cli("check", "--no-cache", "--project-root", "none", "--add-noqa", "train.py",
                    cwd=tmp_path)  # fmt: skip
    assert "Added 0 noqa directives." in again.stderr
    assert path.read_text().splitlines() == lines


def test_add_noqa_extends_an_existing_noqa(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(range(4), num_workers=0, persistent_workers=True)  # noqa: E501\n"
    )
    done = run_cli("check", "--no-cache", "--project-root", "none", "--add-noqa", "train.py",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert path.read_text().splitlines()[1].endswith("# noqa: E501, LL201")


def test_add_noqa_leaves_a_read_only_file_alone(tmp_path: Path) -> None:
    path = write(tmp_path)
    before = path.read_bytes()
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    done = run_cli("check", "--no-cache", "--project-root", "none", "--add-noqa", "train.py",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "read-only" in done.stderr
    assert path.read_bytes() == before
