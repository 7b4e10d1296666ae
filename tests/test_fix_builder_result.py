"""keep-builder-result (unsafe, issue 43), through the real CLI: a function called at every
evaluation that asks a builder in another file for its loaders once per call keeps what the
builder returns, and the builder gains the keyword that makes it persistent. ``check`` promises
it (with ``--unsafe-fixes``) exactly where ``fix --unsafe-fixes`` applies it, the files come out
as fixtures/fix/keep_builder_result/*.out.py, a second ``fix`` changes nothing, a builder that
returns a list of loaders (lufficc/SSD's ``make_data_loader``) is kept whole and then starts one
pool per loader for the run with real workers, and what cannot be kept honestly is refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fix_pairs import copy_in, stage, texts
from harness import run_cli, run_python

PAIR = Path(__file__).resolve().parents[1] / "fixtures" / "fix" / "keep_builder_result"
HARNESS = Path(__file__).resolve().parent / "pool_harness.py"
INFO = ("--min-severity", "info")
STRATEGY = "keep-builder-result"
MODULES = ("mod", "scoring", "eval_builder")


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--no-cache", *INFO, ".", cwd=cwd, timeout=180)


def expected(name: str) -> dict[str, str]:
    return stage(PAIR, MODULES, name)


def test_check_promises_what_fix_applies_in_both_files(tmp_path: Path) -> None:
    copy_in(PAIR, MODULES, tmp_path)
    check = lintloader("check", "--output-format", "json", cwd=tmp_path)
    promised = [(f["code"], f["path"], f["fixes"]) for f in json.loads(check.stdout)]
    assert promised == [("LL202", "mod.py", [STRATEGY])], check.stdout

    safe = lintloader("fix", cwd=tmp_path)
    assert safe.returncode == 1, safe.stderr
    assert f"LL202 not fixed: `--unsafe-fixes` offers {STRATEGY}" in safe.stderr
    assert texts(tmp_path) == expected("in")

    done = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"mod.py:19: LL202 fixed by {STRATEGY} (eval_builder.py, scoring.py)" in done.stderr
    assert texts(tmp_path) == expected("out")

    again = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert texts(tmp_path) == expected("out")
    assert lintloader("check", cwd=tmp_path).returncode == 0


# lufficc/SSD's shape (ssd/engine/trainer.py, inference.py, data/build.py at 68dc0a2): the
# builder makes its sets at each call and returns a loader per set
LISTED = """\
from torch.utils.data import DataLoader, Subset


def make_sets(dataset, starts):
    return [Subset(dataset, range(start, len(dataset), 2)) for start in starts]


def make_loaders(config, shuffle=False):
    sets = make_sets(config.dataset, config.starts)
    loaders = []
    for part in sets:
        loader = DataLoader(part, batch_size=2, shuffle=shuffle, num_workers=config.workers)
        loaders.append(loader)
    return loaders
"""
EVALUATE = """\
from build import make_loaders


def evaluate(config, model):
    scores = []
    loaders = make_loaders(config, shuffle=False)
    for loader in loaders:
        scores.append(sum(model(batch) for batch in loader))
    return scores
"""
TRAIN = """\
from evaluation import evaluate


class Config:
    starts = (0, 1)
    workers = 1

    def __init__(self, dataset):
        self.dataset = dataset


def train(dataset, epochs):
    config = Config(dataset)
    for epoch in range(epochs):
        evaluate(config, len)
"""


def listed_tree(folder: Path) -> Path:
    folder.mkdir()
    for name, text in (("build", LISTED), ("evaluation", EVALUATE), ("mod", TRAIN)):
        (folder / f"{name}.py").write_text(text)
    return folder


def pools(folders: list[Path], logs: Path) -> list[dict]:
    """:mod:`pool_harness` on ``train`` of each folder's mod.py, 3 evaluations each."""
    logs.mkdir()
    spec = [
        {"path": str(f / "mod.py"), "function": "train", "kwargs": {"epochs": 3}, "pairs": False}
        for f in folders
    ]
    done = run_python(str(HARNESS), str(logs), json.dumps(spec), timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_builder_of_a_list_is_kept_whole_one_pool_per_loader(tmp_path: Path) -> None:
    """The list is kept whole and each of its loaders is persistent: two loaders of one worker
    over 3 evaluations start 2 worker processes, where the unfixed code starts 6, and every
    evaluation loads all 8 samples both ways. The builder's loop over the sets it makes is then
    reported on its own (a loader per set: intended, now built once per kept list), which is
    not held against the fix: ``fix`` calls the finding fixed."""
    pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")
    before = listed_tree(tmp_path / "before")
    after = listed_tree(tmp_path / "after")
    done = lintloader("fix", "--unsafe-fixes", cwd=after)
    assert f"mod.py:15: LL202 fixed by {STRATEGY} (build.py, evaluation.py)" in done.stderr, (
        done.stderr
    )
    assert "not fixed: its arguments change with the loop" in done.stderr  # the per-set loop
    assert "Fixed 1 finding in 2 files; 1 finding left." in done.stderr, done.stderr
    fixed = texts(after)
    assert "def make_loaders(config, shuffle=False, persistent_workers=False):" in fixed["build.py"]
    assert "persistent_workers=persistent_workers and config.workers > 0" in fixed["build.py"]
    assert "if id(config) not in _evaluate_loaders:" in fixed["evaluation.py"]
    assert "persistent_workers=True" in fixed["evaluation.py"]
    unfixed, kept = pools([before, after], tmp_path / "logs")
    assert unfixed["error"] is None and kept["error"] is None, (unfixed, kept)
    assert (len(unfixed["pids"]), len(kept["pids"])) == (6, 2)
    assert unfixed["loads"] == kept["loads"] == 24


CALL = "    loaders = make_loaders(config, shuffle=False)\n"
# each caller's call, and the reason `fix` gives for not keeping what the builder returns
REFUSED_CALLERS = {
    # an attribute is not what the caller is given: read anew, it could be a new object
    "attribute": (
        "    loaders = make_loaders(config.inner)\n",
        "`config.inner` is not a parameter of `evaluate` or a literal",
    ),
    # a name the caller binds at each call: it may be a new object each time
    "bound": (
        "    cfg = config\n    loaders = make_loaders(cfg)\n",
        "`cfg` is not a parameter of `evaluate` or a literal",
    ),
    # a result per pass of the caller's own loop: not one per call
    "looped": (
        "    for _ in range(2):\n        loaders = make_loaders(config)\n",
        "the builder is called in a loop of its caller: not one result per call",
    ),
}


def test_refuses_a_result_it_cannot_find_again(tmp_path: Path) -> None:
    """Each caller passes what is new at each call: refused with the reason, nothing written."""
    listed_tree(tmp_path / "tree")
    tree = tmp_path / "tree"
    for case, (call, _) in REFUSED_CALLERS.items():
        text = EVALUATE.replace(CALL, call)
        text = text.replace("from build import", f"from build_{case} import")
        (tree / f"build_{case}.py").write_text(LISTED)
        (tree / f"evaluation_{case}.py").write_text(text)
        train = TRAIN.replace("from evaluation import", f"from evaluation_{case} import")
        (tree / f"train_{case}.py").write_text(train)
    for name in ("mod", "evaluation", "build"):
        (tree / f"{name}.py").unlink()
    before = texts(tree)
    done = lintloader("fix", "--unsafe-fixes", cwd=tree)
    assert done.returncode == 1, done.stderr
    for case, (_, reason) in REFUSED_CALLERS.items():
        assert f"train_{case}.py:15: LL202 {STRATEGY} not applied: {reason}" in done.stderr, case
    assert texts(tree) == before
