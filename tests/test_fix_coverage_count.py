"""How benchmarks/fix_coverage.py counts a first-contact finding ended (issue 43).

The chain-root rule (no finding with the fixed one's code, file and chain root left) holds a
fixed evaluation loader against a training loader of the same function that no fix can end; the
rule at the finding's own site counts it, and still refuses a fix that leaves the same loader
rebuilt on another path over the same data; one rebuilt on another path over data that path's
loop changes (a new sample per step: a loader per pass is what that path asks for) is not held
against it. Each runs the real ``lintloader fix`` on a copy of a small tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import load_benchmark

from lintloader.rules.ll202_dataloader_in_loop import DEPENDENT_NOTE

fix_coverage = load_benchmark("fix_coverage")

# validate() every epoch (pass-loader-in ends it) beside a training loader over a dataset made
# anew each epoch (no fix: its arguments change with the loop); both rooted in `main`
BESIDE_A_TRAINING_LOADER = """\
from torch.utils.data import DataLoader


def evaluate(model, valset):
    loader = DataLoader(valset, batch_size=2, num_workers=2)
    for batch in loader:
        model(batch)


def main(model, make_train, valset, epochs):
    for epoch in range(epochs):
        trainset = make_train(epoch)
        train_loader = DataLoader(trainset, batch_size=2, num_workers=2)
        for batch in train_loader:
            model(batch)
        evaluate(model, valset)
"""

# evaluate() over the same test set per checkpoint (reported, line 16) and over a new sample
# each step (shown once the first is fixed): the loader in `evaluate` is still rebuilt there,
# over other data at each step
SAME_LOADER_ON_ANOTHER_PATH = """\
from torch.utils.data import DataLoader


def evaluate(model, data):
    loader = DataLoader(data, batch_size=2, num_workers=2)
    return [model(batch) for batch in loader]


def main(model, load, steps, checkpoints):
    for step in range(steps):
        sample = load(step)
        evaluate(model, sample)
    test = load(-1)
    for checkpoint in checkpoints:
        model.load(checkpoint)
        evaluate(model, test)
"""


def fixed(tmp_path: Path, source: str) -> tuple[list[dict[str, Any]], Any]:
    """The finding at line 16 (taken as true) and a safe ``fix`` of a copy of the tree."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(source)
    before = fix_coverage.findings(tree, *fix_coverage.INFO)
    true = [f for f in before if f["line"] == 16]
    assert [f["code"] for f in true] == ["LL202"], before
    return true, fix_coverage.fix_run(tree, tmp_path / "work", true, before)


def test_a_fixed_loader_counts_at_its_site_beside_another_of_its_function(tmp_path: Path):
    true, run = fixed(tmp_path, BESIDE_A_TRAINING_LOADER)
    assert fix_coverage.key(true[0]) in run.left  # the chain-root rule does not count it
    assert run.at_site == {0: "pass-loader-in"}  # the rule at its site does


def test_a_loader_left_rebuilt_over_new_data_on_another_path_is_not_held(tmp_path: Path):
    true, run = fixed(tmp_path, SAME_LOADER_ON_ANOTHER_PATH)
    # `fix` calls it fixed too: the finding left at line 13 (a new sample each step) is a loader
    # over other data at a place the fixed finding listed (lintloader/fixers/residual.py)
    assert run.at_site == {0: "pass-loader-in"}
    assert fix_coverage.key(true[0]) in run.left  # the chain-root rule does not count it


def test_a_fix_that_leaves_its_loader_rebuilt_over_the_same_data_is_not_counted(tmp_path: Path):
    """The same fix, the finding left on the loader read as one over unchanged data (its note
    taken off): held against the fixed finding."""
    tree, copy = tmp_path / "tree", tmp_path / "fixed"
    tree.mkdir()
    (tree / "train.py").write_text(SAME_LOADER_ON_ANOTHER_PATH)
    before = fix_coverage.findings(tree, *fix_coverage.INFO)
    true = [f for f in before if f["line"] == 16]
    shutil.copytree(tree, copy)
    fix_coverage.lintloader("fix", ".", *fix_coverage.INFO, cwd=copy)
    left = fix_coverage.still_wasting(copy, *fix_coverage.INFO)
    moved, broken = fix_coverage.line_moves(tree, copy)
    assert broken == [] and [f["line"] for f in left] == [13]
    assert fix_coverage.ended_at_site(true, before, left, moved) == true
    unchanged = [{**f, "message": f["message"].replace(DEPENDENT_NOTE, "")} for f in left]
    assert fix_coverage.ended_at_site(true, before, unchanged, moved) == []


def test_a_line_is_followed_through_the_edit(tmp_path: Path):
    before, after = tmp_path / "before", tmp_path / "after"
    for folder, lines in ((before, ["a", "b", "c", "d"]), (after, ["a", "new", "b", "C", "d"])):
        folder.mkdir()
        (folder / "m.py").write_text("".join(f"{line} = 1\n" for line in lines))
    (before / "same.py").write_text("x = 1\n")
    (after / "same.py").write_text("x = 1\n")
    moved, broken = fix_coverage.line_moves(before, after)
    assert broken == []
    assert list(moved("m.py", 2)) == [3]  # shifted down by the inserted line
    assert list(moved("m.py", 3)) == [4]  # edited: the lines it became
    assert list(moved("same.py", 1)) == [1]
    (after / "m.py").write_text("def broken(:\n")
    assert fix_coverage.line_moves(before, after)[1] == ["m.py"]


def test_the_third_count_takes_only_what_fix_called_fixed() -> None:
    """``fix_any`` counts a site ended at its site only where `fix` did not say "changed ...
    but not fixed" of it: no rule of the benchmark's own decides that figure."""
    sites = ["pass-loader-in", f"keep-builder-loader {fix_coverage.CHANGED_ONLY}", ""]
    assert [fix_coverage.said_fixed(site) for site in sites] == [True, False, False]
