"""cache-loader-per-dataset (unsafe, issue 43), through the real CLI: ``check`` promises it
(with ``--unsafe-fixes``) exactly where ``fix --unsafe-fixes`` applies it, a second ``fix``
changes nothing, ``fix`` without the flag says it needs it, and it refuses a dataset that is new
at each call. The fixture pairs are in fixtures/fix/cache_loader_*; tests/test_fix_proof.py runs
them with real workers (one pool over three evaluations)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fix"
INFO = ("--min-severity", "info")
STRATEGY = "cache-loader-per-dataset"


def fix_unsafe(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "mod.py").write_text(source)
    return run_cli(
        "fix", "--no-cache", "--unsafe-fixes", *INFO, "mod.py", cwd=tmp_path, timeout=180
    )


@pytest.mark.parametrize(
    "name", ["cache_loader_per_set", "cache_loader_given_dataset", "cache_loader_global_dataset"]
)
def test_check_promises_what_fix_applies_and_a_second_fix_changes_nothing(
    name: str, tmp_path: Path
) -> None:
    shutil.copy(FIX / f"{name}.in.py", tmp_path / "mod.py")
    check = run_cli("check", "--no-cache", *INFO, "--output-format", "json", "mod.py", cwd=tmp_path)
    findings = json.loads(check.stdout)
    promised = [f for f in findings if f["fixes"]]
    assert [f["code"] for f in promised] == ["LL202"], findings
    # the summary on stderr is the one the text output ends with
    assert "[*] 1 fixable with `--fix --unsafe-fixes`." in check.stderr, check.stderr

    safe = run_cli("fix", "--no-cache", *INFO, "mod.py", cwd=tmp_path, timeout=180)
    assert safe.returncode == 1, safe.stderr
    assert f"LL202 not fixed: `--unsafe-fixes` offers {STRATEGY}" in safe.stderr
    assert "1 finding left (1 fixable with --unsafe-fixes)" in safe.stderr
    assert (tmp_path / "mod.py").read_bytes() == (FIX / f"{name}.in.py").read_bytes()

    done = run_cli(
        "fix", "--no-cache", "--unsafe-fixes", *INFO, "mod.py", cwd=tmp_path, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert len(promised) == done.stderr.count(f" fixed by {STRATEGY} ") == 1, done.stderr
    assert (tmp_path / "mod.py").read_bytes() == (FIX / f"{name}.out.py").read_bytes()

    again = run_cli("fix", "--no-cache", "--unsafe-fixes", *INFO, "mod.py", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "mod.py").read_bytes() == (FIX / f"{name}.out.py").read_bytes()


NEW_EACH_CALL = """\
from torch.utils.data import DataLoader


def evaluate(model, files):
    dataset = list(files)
    loader = DataLoader(dataset, batch_size=2, num_workers=2)
    return sum(model(batch) for batch in loader)


def score(model, dataset):
    loader = DataLoader(dataset, batch_size=2, num_workers=2)
    return sum(model(batch) for batch in loader)


def train(model, parts, epochs):
    for epoch in range(epochs):
        files = parts[epoch % 2]
        evaluate(model, files)
        if epoch % 2 == 0:
            fresh = list(files)
            score(model, fresh)
"""


def test_refuses_a_dataset_that_is_new_at_each_call(tmp_path: Path) -> None:
    """A cache by dataset would keep one pool per call: refused, with the reason (`fresh` is
    made in the block of the call, under an `if` of the loop)."""
    done = fix_unsafe(tmp_path, NEW_EACH_CALL)
    assert done.returncode == 1, done.stderr
    refused = f"LL202 {STRATEGY} not applied: "
    assert (
        f"{refused}`dataset` is bound in `evaluate` at each call: a new dataset each time "
        "would keep a pool of its own" in done.stderr
    )
    assert (
        f"{refused}`fresh` is made at every pass of the loop: each dataset would keep a pool "
        "of its own" in done.stderr
    )
    assert (tmp_path / "mod.py").read_text() == NEW_EACH_CALL


SETS_MADE_EACH_CALL = """\
from torch.utils.data import DataLoader


def make_loaders(build, names):
    datasets = build(names)
    loaders = []
    for dataset in datasets:
        loader = DataLoader(dataset, batch_size=4, num_workers=2)
        loaders.append(loader)
    return loaders


def train(model, build, names, epochs):
    for epoch in range(epochs):
        for loader in make_loaders(build, names):
            model(loader)
"""


def test_refuses_sets_the_function_makes_at_each_call(tmp_path: Path) -> None:
    """lufficc/SSD 68dc0a2 ssd/data/build.py `make_data_loader`: the datasets are built anew at
    each call, so a loader kept by a dataset's identity is never found again: each evaluation
    would add a pool kept for the run (2 sets, 3 evaluations: 12 workers left alive)."""
    done = fix_unsafe(tmp_path, SETS_MADE_EACH_CALL)
    assert done.returncode == 1, done.stderr
    assert (
        f"LL202 {STRATEGY} not applied: the sets `datasets` are bound in `make_loaders` at each "
        "call: new sets each time would each keep a pool of their own" in done.stderr
    )
    assert (tmp_path / "mod.py").read_text() == SETS_MADE_EACH_CALL


READ_AGAIN = """\
from torch.utils.data import DataLoader, SequentialSampler


def evaluate(model, eval_data):
    sampler = SequentialSampler(eval_data)
    size = 4
    loader = DataLoader(eval_data, sampler=sampler, batch_size=size, num_workers=2)
    print(len(sampler))
    return sum(model(batch) for batch in loader)


def train(model, parts, epochs):
    for epoch in range(epochs):
        current = parts[0]
        evaluate(model, current)
"""


def test_only_what_feeds_the_loader_alone_moves_into_the_if(tmp_path: Path) -> None:
    """`size` feeds only the loader and moves; `sampler`, read again after it, stays."""
    done = fix_unsafe(tmp_path, READ_AGAIN)
    assert done.returncode == 0, done.stderr
    assert f"LL202 fixed by {STRATEGY} (mod.py)" in done.stderr
    fixed = (tmp_path / "mod.py").read_text()
    assert (
        "    sampler = SequentialSampler(eval_data)\n"
        "    if id(eval_data) not in _evaluate_loaders:\n"
        "        size = 4\n"
        "        _evaluate_loaders[id(eval_data)] = DataLoader(" in fixed
    )
    assert "    loader = _evaluate_loaders[id(eval_data)]\n    print(len(sampler))\n" in fixed


PRIVATE_METHOD = """\
from torch.utils.data import DataLoader


class Queue:
    def __init__(self, dataset, rounds):
        self.dataset = dataset
        self.rounds = rounds
        self.items = None

    def fill(self):
        taken = []
        while len(taken) < self.rounds * len(self.dataset):
            taken.append(self._next())
        return taken

    def _next(self):
        try:
            return next(self.items)
        except (StopIteration, TypeError):
            self.items = self._subjects()
            return next(self.items)

    def _subjects(self):
        loader = DataLoader(self.dataset, num_workers=2, collate_fn=self._first)
        return iter(loader)

    def _first(self, batch):
        return batch[0]


if __name__ == "__main__":
    print(sum(Queue(list(range(4)), 3).fill()))
"""


def test_the_cache_of_a_private_method_is_not_mangled_and_runs(tmp_path: Path) -> None:
    """torchio 1.2.1's shape (a subjects loader built by `Queue._get_subjects_iterable` each
    pass): the module dict is named after the method without its underscores, since a name
    with two leading underscores used inside a class is mangled (`_Queue__...`): NameError at
    the first call. The fixed file runs, with real workers, and takes the same items."""
    done = fix_unsafe(tmp_path, PRIVATE_METHOD)
    assert f"LL202 fixed by {STRATEGY}" in done.stderr, done.stderr
    fixed = (tmp_path / "mod.py").read_text()
    assert "\n_subjects_loaders = {}\n" in fixed and "__subjects_loaders" not in fixed, fixed
    ran = subprocess.run(
        [sys.executable, "mod.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert (ran.returncode, ran.stdout) == (0, "18\n"), ran.stderr
