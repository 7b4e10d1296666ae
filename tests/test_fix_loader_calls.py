"""The safe LL202 strategies refuse where the loader built once could differ from the one built
each time (issue 43), through the real CLI: per-epoch state set in the loop, a wrapper method
that changes what the kept loader reads, a function that sets what its loader reads before
building it. And the order of strategies: the call of a function that consumes its own loader
is not a loader to hoist, so pass-loader-in gets it; a loader name already taken gets another.

The fixture pairs in fixtures/fix/ (test_fix.py) show each edit; tests/test_fix_proof.py runs
them with real workers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fix"

REFUSED = """\
from torch.utils.data import DataLoader


def make_loader(dataset, sampler):
    return DataLoader(dataset, sampler=sampler, num_workers=2, persistent_workers=True)


def shuffled(dataset, sampler, epochs):
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in make_loader(dataset, sampler):
            pass


class Wrapper:
    def __init__(self, dataset):
        self.dataset = dataset

    def use(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        return iter(DataLoader(self.dataset, num_workers=2, persistent_workers=True))


def evaluate(args, dataset):
    args.eval_batch_size = args.eval_batch_size * 2
    loader = DataLoader(
        dataset, batch_size=args.eval_batch_size, num_workers=2, persistent_workers=True
    )
    return sum(len(b) for b in loader)


def train(args, dataset, steps):
    for step in range(steps):
        evaluate(args, dataset)
"""


def fix(tmp_path: Path, source: str) -> tuple[str, str]:
    (tmp_path / "mod.py").write_text(source)
    done = run_cli("fix", "--no-cache", "mod.py", cwd=tmp_path, timeout=180)
    assert done.returncode in (0, 1), done.stderr
    return done.stderr, (tmp_path / "mod.py").read_text()


def test_each_safe_strategy_refuses_what_persistence_would_change(tmp_path: Path) -> None:
    stderr, fixed = fix(tmp_path, REFUSED)
    assert fixed == REFUSED, stderr
    assert (
        "LL202 hoist-loader-call not applied: the loop sets per-epoch state "
        "(`sampler.set_epoch(epoch)`), which persistent workers would not see" in stderr
    )
    assert (
        "LL202 keep-iter-loader not applied: `use` changes what the loader is built from "
        "(`self.dataset = dataset`)" in stderr
    )
    assert (
        "LL202 pass-loader-in not applied: `evaluate` sets "
        "`args.eval_batch_size = args.eval_batch_size * 2` before it builds the loader" in stderr
    )
    assert "3 findings left" in stderr


SWITCHED = """\
from torch.utils.data import DataLoader


def evaluate(dataset):
    loader = DataLoader(dataset, batch_size=2, num_workers=2)
    return sum(len(b) for b in loader)


def train(dataset, steps, quick, log):
    for step in range(steps):
        if quick:
            log(step)
        else:
            evaluate(dataset)
"""


def test_pass_loader_in_refuses_switches_it_cannot_copy(tmp_path: Path) -> None:
    """A call in the ``else`` of a switch keeps its loader: the copy cannot be put under it."""
    stderr, fixed = fix(tmp_path, SWITCHED)
    assert fixed == SWITCHED, stderr
    assert "pass-loader-in not applied: the call is in the `else` of an `if` in the loop" in stderr
    assert "1 finding left" in stderr


CONSUMED = """\
from torch.utils.data import DataLoader


def evaluate(model, dataset, loader=None):
    val_loader = DataLoader(dataset, batch_size=2, num_workers=2, persistent_workers=True)
    return sum(model(batch) for batch in val_loader)


def train(model, dataset, steps, loader):
    for step in range(steps):
        for batch in loader:
            model(batch)
        evaluate(model, dataset)
    for epoch in range(steps):
        for batch in DataLoader(dataset, num_workers=2, persistent_workers=True):
            model(batch)
"""


def test_a_function_that_consumes_its_loader_gets_it_passed_in(tmp_path: Path) -> None:
    stderr, fixed = fix(tmp_path, CONSUMED)
    assert "LL202 fixed by pass-loader-in (mod.py)" in stderr
    assert "def evaluate(model, dataset, loader=None, val_loader=None):" in fixed
    assert "    if val_loader is None:\n        val_loader = DataLoader(" in fixed
    assert "evaluate(model, dataset, val_loader=val_loader)" in fixed
    # `loader` is a parameter of train: the hoisted loader bound to no name takes another
    hoisted = "data_loader = DataLoader(dataset, num_workers=2, persistent_workers=True)"
    assert f"\n    {hoisted}\n" in fixed
    assert "        for batch in data_loader:" in fixed
    assert "0 findings left" in stderr
    again = run_cli("fix", "--no-cache", "mod.py", cwd=tmp_path, timeout=180)
    assert again.returncode == 0 and (tmp_path / "mod.py").read_text() == fixed


CHANGED_VOCABULARY = """\
from torch.utils.data import DataLoader

from encoding import Encoded


def evaluate(model, vocabulary, dataset):
    eval_set = Encoded(vocabulary, dataset)
    eval_loader = DataLoader(eval_set, batch_size=2, num_workers=2)
    return sum(model(batch) for batch in eval_loader)


def train(model, vocabulary, dataset, steps):
    for step in range(steps):
        model.load_state_dict(model.state_dict())
        vocabulary.save_pretrained(f"checkpoint-{step}")
        vocabulary.add_tokens([f"<step-{step}>"])
        evaluate(model, vocabulary, dataset)
"""


def test_pass_loader_in_refuses_a_call_on_what_the_loader_is_built_from(tmp_path: Path) -> None:
    """The nearest negative of pass_loader_in_read_only: besides methods that only read it
    (``save_pretrained``) and a checkpoint loaded into the model the loader does not read, the
    loop calls a method of the vocabulary its evaluation set is encoded with (``add_tokens``),
    which may change what a loader built at each call would hold."""
    stderr, fixed = fix(tmp_path, CHANGED_VOCABULARY)
    assert fixed == CHANGED_VOCABULARY, stderr
    assert (
        "LL202 pass-loader-in not applied: the loop sets per-epoch state "
        '(`vocabulary.add_tokens([f"<step-{step}>"])`), which a persistent loader would not see'
        in stderr
    )
    added = '        vocabulary.add_tokens([f"<step-{step}>"])\n'
    read_only = CHANGED_VOCABULARY.replace(added, "")
    stderr, fixed = fix(tmp_path, read_only)
    assert "LL202 fixed by pass-loader-in (mod.py)" in stderr
    assert "evaluate(model, vocabulary, dataset, eval_loader=eval_loader)" in fixed


METHODS = """\
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, dataset):
        self.dataset = dataset

    def resample(self, dataset):
        self.dataset = dataset

    def train_epoch(self):
        loader = DataLoader(self.dataset, num_workers=2, persistent_workers=True)
        return sum(len(b) for b in loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()


class Base:
    def __init__(self, dataset):
        self.dataset = dataset

    def run_epoch(self):
        loader = DataLoader(self.dataset, num_workers=2, persistent_workers=True)
        return sum(len(b) for b in loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.run_epoch()


class Sub(Base):
    def run_epoch(self):
        return 0
"""


def test_pass_loader_in_refuses_a_method_whose_class_changes_its_loader(tmp_path: Path) -> None:
    """A method builds and consumes its loader: refused when another method reassigns what the
    loader reads, or when a subclass overrides the method (it would not take the loader)."""
    stderr, fixed = fix(tmp_path, METHODS)
    assert fixed == METHODS, stderr
    assert (
        "LL202 pass-loader-in not applied: `resample` changes what the loader is built from "
        "(`self.dataset = dataset`): a loader built once would not see it" in stderr
    )
    assert (
        "LL202 pass-loader-in not applied: `Sub.run_epoch` defines `run_epoch` too: an override "
        "would not take the loader" in stderr
    )


GETTERS = """\
from torch.utils.data import DataLoader


class Sized:
    def __init__(self, dataset):
        self.dataset = dataset

    def get_eval_dataloader(self, batch_size):
        return DataLoader(self.dataset, batch_size, num_workers=2, persistent_workers=True)

    def evaluate(self, batch_size):
        return sum(len(b) for b in self.get_eval_dataloader(batch_size))

    def fit(self, steps):
        for step in range(steps):
            self.evaluate(8)


class Epochs:
    def __init__(self, dataset, sampler):
        self.dataset = dataset
        self.sampler = sampler

    def get_eval_dataloader(self):
        return DataLoader(self.dataset, sampler=self.sampler, num_workers=2)

    def evaluate(self):
        return sum(len(b) for b in self.get_eval_dataloader())

    def fit(self, steps):
        for step in range(steps):
            self.sampler.set_epoch(step)
            self.evaluate()


class Fresh:
    def __init__(self, files):
        self.files = files

    def get_eval_dataloader(self):
        dataset = list(self.files)
        return DataLoader(dataset, num_workers=2, persistent_workers=True)

    def evaluate(self):
        return sum(len(b) for b in self.get_eval_dataloader())

    def fit(self, steps):
        for step in range(steps):
            self.evaluate()


class Passed:
    def __init__(self, files):
        self.files = files

    def get_eval_dataloader(self, eval_dataset):
        return DataLoader(eval_dataset, num_workers=2, persistent_workers=True)

    def evaluate(self, eval_dataset):
        return sum(len(b) for b in self.get_eval_dataloader(eval_dataset))

    def fit(self, steps):
        for step in range(steps):
            self.evaluate(list(self.files))


class Predicts:
    def __init__(self, dataset):
        self.dataset = dataset

    def get_eval_dataloader(self, eval_dataset=None):
        dataset = eval_dataset if eval_dataset is not None else self.dataset
        return DataLoader(dataset, num_workers=2, persistent_workers=True)

    def predict(self, items):
        return [len(b) for b in self.get_eval_dataloader(list(items))]

    def evaluate(self):
        return sum(len(b) for b in self.get_eval_dataloader())

    def fit(self, steps):
        for step in range(steps):
            self.evaluate()
"""


def test_keep_eval_loader_refuses_a_loader_that_depends_on_more_than_its_dataset(
    tmp_path: Path,
) -> None:
    """A getter's loader kept by its dataset: refused when it reads a parameter other than the
    dataset, when the class sets per-epoch state, when the getter builds its dataset, and when
    the dataset passed, on the chain or by another method of the class, may be another one at
    each call (one kept pool per call)."""
    stderr, fixed = fix(tmp_path, GETTERS)
    assert fixed == GETTERS, stderr
    refused = "LL202 keep-eval-loader not applied: "
    assert f"{refused}the loader reads `batch_size`, which may change between calls" in stderr
    assert (
        f"{refused}`fit` changes what the loader is built from (`self.sampler.set_epoch(step)`)"
        in stderr
    )
    assert f"{refused}`dataset` is bound in `get_eval_dataloader` to what may be a new" in stderr
    assert f"{refused}`self.evaluate(list(self.files))` passes a dataset that may be new" in stderr
    called = "`self.get_eval_dataloader(list(items))` passes a dataset that may be new at each call"
    assert f"{refused}{called}" in stderr


PROMISED = (
    "keep_eval_loader",
    "pass_loader_in_getter",
    "pass_loader_in_method",
    "pass_loader_in_read_only",
    "pass_loader_in_renamed",
    "pass_loader_in_setting",
    "pass_loader_in_switch",
)


@dataclass(frozen=True)
class Promised:
    """One ``check`` (JSON) and then one ``fix`` of a tree holding each fixture of
    :data:`PROMISED` as ``<name>/mod.py``, each folder a file of its own."""

    root: Path
    findings: list[dict]
    fixed: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def promised_runs(tmp_path_factory: pytest.TempPathFactory) -> Promised:
    root = tmp_path_factory.mktemp("promised")
    for name in PROMISED:
        (root / name).mkdir()
        shutil.copy(FIX / f"{name}.in.py", root / name / "mod.py")
    check = run_cli("check", "--no-cache", "--output-format", "json", *PROMISED, cwd=root)
    assert check.returncode in (0, 1), check.stderr
    done = run_cli("fix", "--no-cache", *PROMISED, cwd=root, timeout=180)
    return Promised(root, json.loads(check.stdout), done)


@pytest.mark.parametrize("name", PROMISED)
def test_check_promises_what_fix_applies(name: str, promised_runs: Promised) -> None:
    """``check`` calls fixable exactly the findings ``fix`` then fixes."""
    display = f"{name}/mod.py"
    promised = [f for f in promised_runs.findings if f["path"] == display and f["fixes"]]
    done = promised_runs.fixed
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith(f"{display}:")]
    assert len(promised) == sum(line.count(" fixed by ") for line in said) == 1, done.stderr
    fixed = (promised_runs.root / display).read_bytes()
    assert fixed == (FIX / f"{name}.out.py").read_bytes()


RESIZED = """\
import random

from torch.utils.data import DataLoader


class Resize:
    def __init__(self, size):
        self.size = size

    def __call__(self, batch):
        return batch


def train(dataset, steps):
    loader = DataLoader(dataset, batch_size=2, shuffle=True, num_workers=2)
    batches = iter(loader)
    for step in range(steps):
        next(batches)
        if step % 10 == 0:
            # multi-scale training: a new image size every 10 steps
            size = random.choice([320, 352, 384])
            resize = Resize(size)
            loader = DataLoader(dataset, batch_size=2, num_workers=2, collate_fn=resize)
            batches = iter(loader)
"""


def test_fix_says_why_a_loader_built_from_what_its_loop_changes_is_left(tmp_path: Path) -> None:
    """PyTorch_YOLOv3's multi-scale resize: the loop changes what the loader is built from, so
    no fix keeps one loader (it would not see the new size); the note says so in one line."""
    (tmp_path / "mod.py").write_text(RESIZED)
    done = run_cli("fix", "--no-cache", "--min-severity", "info", "mod.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "mod.py").read_text() == RESIZED
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: mod.py:23")]
    assert notes[-1] == (
        "note: mod.py:23: LL202 not fixed: its arguments change with the loop: a loader built "
        "once (or persistent) would not see the change, and a new loader may be intended"
    ), done.stderr
    # what a strategy tried says before it (the cache per dataset: no loop of sets here)
    assert all(" not applied: " in line for line in notes[:-1]), done.stderr
