"""A fix that builds once what was built at each call is refused when the construction draws
randomness (fixers/edit/draws.py), through the real CLI on two-file fixture trees
(fixtures/check/draws_*): ``evaluate`` builds ``Episodes(...)`` and a loader over it at each
call; in ``draws_refused`` the dataset's ``__init__`` (episodes.py) draws its episodes with
``np.random.choice`` through a method, and ``pass-loader-in`` is refused with the reason, the
files untouched; in ``draws_fixed`` it does not, and the loader is passed in. ``check`` calls a
finding fixable exactly where ``fix`` ends it."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

REASON = (
    "pass-loader-in not applied: `Episodes(...)` draws at each build (`np.random.choice` in "
    "`Episodes.draw`): built once, each use would read the same draw"
)


def tree(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / "check" / name, root, ignore=shutil.ignore_patterns("*.txt"))
    return root


def fixable(root: Path) -> int:
    done = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return sum(bool(finding["fixes"]) for finding in json.loads(done.stdout))


@dataclass(frozen=True)
class Fixed:
    root: Path  # the tree, after the fix
    before: dict[str, bytes]  # its files before
    fixable: int  # the findings check called fixable before
    done: subprocess.CompletedProcess[str]  # the fix run


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Fixed]:
    """Each tree checked, then fixed, once (real CLI runs), which the tests below read."""
    base = tmp_path_factory.mktemp("draws")
    found = {}
    for name in ("draws_refused", "draws_fixed"):
        root = tree(name, base)
        before = {p.name: p.read_bytes() for p in root.glob("*.py")}
        promised = fixable(root)
        found[name] = Fixed(root, before, promised, run_cli("fix", "--no-cache", ".", cwd=root))
    return found


@pytest.mark.parametrize(("name", "ended"), [("draws_refused", 0), ("draws_fixed", 1)])
def test_check_promises_what_fix_applies(name: str, ended: int, fixed: dict[str, Fixed]) -> None:
    assert fixed[name].fixable == ended
    done = fixed[name].done
    assert done.returncode == (1 - ended), done.stdout + done.stderr
    assert done.stderr.count("LL202 fixed by pass-loader-in") == ended, done.stderr
    assert (REASON in done.stdout + done.stderr) == (ended == 0), done.stdout + done.stderr


def test_refused_tree_is_left_as_it_was(fixed: dict[str, Fixed]) -> None:
    refused = fixed["draws_refused"]
    assert {p.name: p.read_bytes() for p in refused.root.glob("*.py")} == refused.before


def test_twin_without_the_draw_builds_the_dataset_once(fixed: dict[str, Fixed]) -> None:
    root = fixed["draws_fixed"].root
    train = (root / "train.py").read_text()
    assert "    episodes = Episodes(classes, 6)\n    loader = DataLoader(" in train
    assert "evaluate(classes, batch_size, loader=loader)" in train
    assert fixable(root) == 0


SHUFFLED = """import torch
from torch.utils.data import DataLoader, Dataset


class Shuffled(Dataset):
    def __init__(self, items):
        self.items = items
        self.order = torch.{order}(len(items))

    def __getitem__(self, index):
        return self.items[self.order[index]]

    def __len__(self):
        return len(self.items)


def train(items, epochs):
    for epoch in range(epochs):
        for batch in DataLoader(Shuffled(items), batch_size=2, num_workers=2):
            print(epoch, batch)
"""


@pytest.mark.parametrize("order", ["randperm", "arange"])
def test_hoist_of_a_class_of_the_same_file(order: str, tmp_path: Path) -> None:
    """hoist-loader-call on a dataset class of the file itself: ``torch.randperm`` in its
    ``__init__`` refuses the hoist, ``torch.arange`` does not."""
    source = SHUFFLED.format(order=order)
    (tmp_path / "train.py").write_text(source)
    done = run_cli("fix", "--no-cache", "--min-severity", "info", ".", cwd=tmp_path)
    drawn = order == "randperm"
    reason = (
        "LL202 hoist-loader-call not applied: `Shuffled(...)` draws at each build "
        "(`torch.randperm` in `Shuffled.__init__`)"
    )
    assert (reason in done.stderr) == drawn, done.stderr
    assert ("LL202 fixed by hoist-loader-call" in done.stderr) != drawn, done.stderr
    assert ((tmp_path / "train.py").read_text() == source) == drawn
