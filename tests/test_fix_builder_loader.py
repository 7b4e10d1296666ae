"""keep-builder-loader (unsafe, issue 43), through the real CLI: a loader per evaluation set
built by a builder in another file is kept by the caller, and the builder, in its own file,
gains the keyword that makes it persistent. ``check`` promises it (with ``--unsafe-fixes``)
exactly where ``fix --unsafe-fixes`` applies it, both files come out as
fixtures/fix/keep_builder_loader/*.out.py, a second ``fix`` changes nothing, ``fix`` without
the flag says it needs it, and what cannot be kept honestly is refused with its reason.
tests/test_fix_proof.py runs the fixed pair with real workers (one pool per set over three
evaluations)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fix_pairs import copy_in, stage, texts
from harness import run_cli

PAIR = Path(__file__).resolve().parents[1] / "fixtures" / "fix" / "keep_builder_loader"
INFO = ("--min-severity", "info")
STRATEGY = "keep-builder-loader"
MODULES = ("mod", "loaders")


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--no-cache", *INFO, ".", cwd=cwd, timeout=180)


def expected(name: str) -> dict[str, str]:
    return stage(PAIR, MODULES, name)


def test_check_promises_what_fix_applies_in_both_files(tmp_path: Path) -> None:
    copy_in(PAIR, MODULES, tmp_path)
    check = lintloader("check", "--output-format", "json", cwd=tmp_path)
    promised = [f for f in json.loads(check.stdout) if f["fixes"]]
    assert [(f["code"], f["path"], f["fixes"]) for f in promised] == [
        ("LL202", "mod.py", [STRATEGY])
    ], check.stdout
    # the summary on stderr is the one the text output ends with
    assert "[*] 1 fixable with `--fix --unsafe-fixes`." in check.stderr, check.stderr

    safe = lintloader("fix", cwd=tmp_path)
    assert safe.returncode == 1, safe.stderr
    assert f"LL202 not fixed: `--unsafe-fixes` offers {STRATEGY}" in safe.stderr
    assert texts(tmp_path) == expected("in")

    done = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"mod.py:26: LL202 fixed by {STRATEGY} (loaders.py, mod.py)" in done.stderr
    assert texts(tmp_path) == expected("out")

    again = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert texts(tmp_path) == expected("out")
    left = lintloader("check", cwd=tmp_path)
    assert left.returncode == 0, left.stdout


CALLER = """\
from {module} import {builder}


def evaluate(config, dataset):
    for split in config.splits:
        loader = {builder}(dataset, split{more})
        for batch in loader:
            pass


def train(config, dataset, epochs):
    for epoch in range(epochs):
        evaluate(config, dataset)
"""

# each builder, and the reason `fix` gives for not keeping its loaders
REFUSED = {
    "swallowed": (
        """\
from torch.utils.data import DataLoader


def make(dataset, split, num_workers=2, **kwargs):
    return DataLoader(dataset, num_workers=num_workers, **kwargs)
""",
        "`make` takes `**kwargs`, which would swallow a `persistent_workers` keyword",
    ),
    "listed": (
        """\
from torch.utils.data import DataLoader


def make(dataset, split, num_workers=2):
    loaders = []
    for part in (dataset, split):
        loaders.append(DataLoader(part, num_workers=num_workers))
    return loaders[0]
""",
        "`make` builds its loader in a loop: one construction per call is not what it returns",
    ),
    "mapped": (
        """\
import functools

from torch.utils.data import DataLoader


def from_split(func):
    @functools.wraps(func)
    def wrapped(dataset, split, **kwargs):
        return func(dataset[split])

    return wrapped


@from_split
def make(dataset, num_workers=2):
    return DataLoader(dataset, num_workers=num_workers)
""",
        "`@from_split` does not hand its `**kwargs` on to the function it wraps",
    ),
    "drawn": (
        """\
import random

from torch.utils.data import DataLoader


class Sample:
    def __init__(self, dataset):
        self.items = random.sample(list(dataset), 4)


def make(dataset, split, num_workers=2):
    return DataLoader(Sample(dataset), num_workers=num_workers)
""",
        "`make(...)` draws at each build (`random.sample` in `Sample.__init__`): built once, "
        "each use would read the same draw",
    ),
}


def test_refuses_what_it_cannot_keep_honestly(tmp_path: Path) -> None:
    """One ``fix`` over a caller and a builder per case: each refused with its reason, both
    files left as they were."""
    for case, (builder, _) in REFUSED.items():
        (tmp_path / f"build_{case}.py").write_text(builder)
        caller = CALLER.format(module=f"build_{case}", builder="make", more="")
        (tmp_path / f"use_{case}.py").write_text(caller)
    (tmp_path / "build_moving.py").write_text(REFUSED["swallowed"][0].replace(", **kwargs", ""))
    moving = CALLER.format(module="build_moving", builder="make", more=", num_workers=size")
    moving = moving.replace(
        "    for split in config.splits:\n",
        "    for split in config.splits:\n        size = len(split)\n",
    )
    (tmp_path / "use_moving.py").write_text(moving)
    (tmp_path / "build_epoch.py").write_text(BY_EPOCH)
    (tmp_path / "use_epoch.py").write_text(PER_EPOCH)
    before = texts(tmp_path)
    done = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    for case, (_, reason) in REFUSED.items():
        assert f"use_{case}.py:13: LL202 {STRATEGY} not applied: {reason}" in done.stderr, case
    assert (
        f"use_moving.py:14: LL202 {STRATEGY} not applied: `size` changes with the loop: a kept "
        "loader would not see it" in done.stderr
    )
    assert (
        f"use_epoch.py:6: LL202 {STRATEGY} not applied: the builder is called in the loop that "
        "repeats (`for epoch in range(epochs)`): a loader kept per pass would keep a pool per "
        "pass" in done.stderr
    )
    assert texts(tmp_path) == before


# the loop's item is the epoch: a loader per key would be a pool per epoch, kept for the run
BY_EPOCH = """\
from torch.utils.data import DataLoader, Subset


def make(dataset, epoch, num_workers=2):
    part = Subset(dataset, range(epoch % 2, len(dataset), 2))
    return DataLoader(part, num_workers=num_workers)
"""
PER_EPOCH = """\
from build_epoch import make


def train(dataset, epochs):
    for epoch in range(epochs):
        loader = make(dataset, epoch)
        for batch in loader:
            pass
"""


CONFIGURABLE = """\
import functools

from torch.utils.data import DataLoader


def configurable(from_config):
    def wrapper(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            if args and isinstance(args[0], dict):
                explicit = mapped(from_config, *args, **kwargs)
                return func(**explicit)
            return func(*args, **kwargs)

        return wrapped

    return wrapper


def mapped(from_config, cfg, *args, **kwargs):
    names = set(from_config.__code__.co_varnames)
    mine = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
    explicit = from_config(cfg, *args, **mine)
    explicit.update(kwargs)  # what from_config does not take goes to the function
    return explicit


def _from_config(cfg, split):
    return {"dataset": cfg["sets"][split], "num_workers": cfg["workers"]}


@configurable(from_config=_from_config)
def make(dataset, num_workers=0):
    return DataLoader(dataset, num_workers=num_workers)
"""


def test_keeps_a_builder_whose_decorator_hands_keywords_on(tmp_path: Path) -> None:
    """detectron2's shape (facebookresearch/detectron2 tools/plain_train_net.py `do_test`,
    detectron2/data/build.py `build_detection_test_loader`, `@configurable`): the decorator
    maps a config to the builder's arguments and hands the others on, so the keyword reaches
    the builder; the caller passes it and the fixed pair runs: one pool per set."""
    (tmp_path / "build_cfg.py").write_text(CONFIGURABLE)
    (tmp_path / "use_cfg.py").write_text(
        CALLER.format(module="build_cfg", builder="make", more="").replace(
            "(dataset, split)", "(config, split)"
        )
    )
    done = lintloader("fix", "--unsafe-fixes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"LL202 fixed by {STRATEGY} (build_cfg.py, use_cfg.py)" in done.stderr
    fixed = texts(tmp_path)
    assert "def make(dataset, num_workers=0, persistent_workers=False):" in fixed["build_cfg.py"]
    assert "make(config, split, persistent_workers=True)" in fixed["use_cfg.py"]


def test_refuses_when_the_builders_file_is_not_given(tmp_path: Path) -> None:
    """The fix edits the builder's file too: given the caller's file alone (in its project),
    it is refused, naming the other file, and nothing is written."""
    copy_in(PAIR, MODULES, tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    done = run_cli("fix", "--no-cache", "--unsafe-fixes", *INFO, "mod.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        f"mod.py:26: LL202 {STRATEGY} not applied: loaders.py: not among the files given, and "
        "the fix edits it (give it too, or fix the directory)" in done.stderr
    )
    assert texts(tmp_path) == expected("in")
