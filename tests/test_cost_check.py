"""``check``'s severities and messages follow the cost model (lintloader/domain/cost.py), through
the real CLI: the same cost written two ways gets the same severity; the frequency read from the
code is said in the message; a costly start method (spawn, forkserver: explicit, or the
default of the Python the project's ``requires-python`` targets) raises the severity."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REBUILD_LOOP = Path(__file__).resolve().parents[1] / "fixtures/runtime/trace/rebuild_loop.py"

HEAD = "from torch.utils.data import DataLoader\n"

REBUILT = """
def train(ds, epochs):
    for epoch in range(epochs):
        loader = DataLoader(ds, num_workers=2)
        for batch in loader:
            pass
"""
KEPT = """
def train(ds, epochs):
    loader = DataLoader(ds, num_workers=2)
    for epoch in range(epochs):
        for batch in loader:
            pass
"""
WHILE = """
def train(ds, epochs):
    epoch = 0
    while epoch < epochs:
        loader = DataLoader(ds, num_workers=2)
        for batch in loader:
            pass
        epoch += 1
"""
HELPER = """
def make(ds):
    return DataLoader(ds, num_workers=2)

def train(ds, epochs):
    for epoch in range(epochs):
        for batch in make(ds):
            pass
"""
PER_STEP = """
def train(ds, steps):
    for step in range(steps):
        batch = next(iter(DataLoader(ds, num_workers=2)))
"""
PERSISTENT_REBUILT = """
def train(ds, epochs):
    for epoch in range(epochs):
        loader = DataLoader(ds, num_workers=2, persistent_workers=True)
        for batch in loader:
            pass
"""
UNKNOWN_REBUILT = """
def train(ds, epochs, args):
    for epoch in range(epochs):
        loader = DataLoader(ds, num_workers=2, persistent_workers=args.persistent)
        for batch in loader:
            pass
"""
EVERY_K = """
def train(ds, steps):
    for step in range(steps):
        if step % 500 == 0:
            val = DataLoader(ds, num_workers=4, persistent_workers=True)
"""
EVERY_K_HELPER = """
def evaluate(ds):
    return sum(1 for batch in DataLoader(ds, num_workers=4))

def train(ds, steps):
    for step in range(steps):
        if step % 500 == 0:
            evaluate(ds)
"""
RETRY = """
def load(ds):
    for attempt in range(3):
        try:
            loader = DataLoader(ds, num_workers=2)
            break
        except OSError:
            continue
    return loader
"""
RETRY_BY_SHAPE = """
def train_with_retry(ds, fit):
    for _ in range(3):
        loader = DataLoader(ds, num_workers=2, persistent_workers=True)
        try:
            fit(loader)
            break
        except RuntimeError:
            continue
"""
NO_BREAK = RETRY_BY_SHAPE.replace("            break\n", "")
SAMPLE_EVERY_K = """
def train(loader, sample_loader, sample_interval):
    for i, batch in enumerate(loader):
        if i % sample_interval == 0:
            sample = next(iter(sample_loader))
"""
SAMPLE_PARTS = (
    "\nloader = DataLoader(range(8), num_workers=2, persistent_workers=True)",
    "\nsample_loader = DataLoader(range(8), num_workers=2)\n",
)
SPAWN_KEPT = """
def train(ds, epochs):
    loader = DataLoader(ds, num_workers=2, multiprocessing_context="spawn")
    for epoch in range(epochs):
        for batch in loader:
            pass
"""


def check(
    tmp_path: Path, body: str, requires: str | None = ">=3.10", head: str = HEAD
) -> list[dict[str, Any]]:
    """``check`` on one file of a project whose pyproject targets ``requires``."""
    if requires is not None:
        (tmp_path / "pyproject.toml").write_text(
            f'[project]\nname = "demo"\nrequires-python = "{requires}"\n'
        )
    (tmp_path / "train.py").write_text(head + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-m", "lintloader", "check", "--no-cache", "--min-severity", "info",
         "--output-format", "json", "--project-root", "none", "train.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return [f for f in json.loads(done.stdout) if f["code"].startswith("LL2")]


def only(findings: list[dict[str, Any]]) -> dict[str, Any]:
    (finding,) = findings
    return finding


def test_rebuilt_and_kept_non_persistent_loaders_get_the_same_severity(tmp_path: Path) -> None:
    """Both start one pool per epoch: avoidable, info, and each message says so."""
    found = {}
    for name, body in {"rebuilt": REBUILT, "kept": KEPT, "while": WHILE, "helper": HELPER}.items():
        folder = tmp_path / name
        folder.mkdir()
        found[name] = only(check(folder, body))
    assert found["rebuilt"]["code"] == found["while"]["code"] == found["helper"]["code"] == "LL202"
    assert found["kept"]["code"] == "LL204"
    assert {f["severity"] for f in found.values()} == {"info"}
    for finding in found.values():
        assert "a new pool of 2 workers once per epoch: avoidable with" in finding["message"]


def test_a_pool_per_step_and_a_persistent_rebuild_are_defeated(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    step = [f for f in check(tmp_path / "a", PER_STEP) if f["code"] == "LL202"]
    assert only(step)["severity"] == "warning"
    assert only(step)["message"].endswith("a new pool of 2 workers every step")
    rebuilt = only(check(tmp_path / "b", PERSISTENT_REBUILT))
    assert rebuilt["severity"] == "warning" and "avoidable" not in rebuilt["message"]
    # persistence read from an argument may be asked for: the worse of the two costs
    (tmp_path / "c").mkdir()
    unknown = only(check(tmp_path / "c", UNKNOWN_REBUILT))
    assert unknown["severity"] == "warning" and "avoidable" not in unknown["message"]


def test_every_k_steps_and_bounded_retries_say_so(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    every = only(check(tmp_path / "a", EVERY_K))
    assert every["message"].endswith("a new pool of 4 workers every 500 steps")
    (tmp_path / "c").mkdir()  # the same through a helper: the test is on the call on the way
    helper = only(check(tmp_path / "c", EVERY_K_HELPER))
    assert "a new pool of 4 workers every 500 steps: avoidable with" in helper["message"]
    assert helper["severity"] == "info"
    retry = only(check(tmp_path / "b", RETRY))
    assert "once, and again on every retry of a bounded retry loop" in retry["message"]
    assert retry["severity"] == "info"


def test_a_loop_that_breaks_once_its_attempt_worked_is_a_retry(tmp_path: Path) -> None:
    """Issue 41: a bounded retry by its shape (`try: ...; break`), whatever the loop's name, is
    once plus retries: info, and the message says so; without the `break` every pass trains on
    a new persistent loader, a defeated pool per pass (warning)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    retry = only(check(tmp_path / "a", RETRY_BY_SHAPE))
    assert retry["severity"] == "info"
    assert "a new pool of 2 workers once, and again on every retry" in retry["message"]
    rebuilt = only(check(tmp_path / "b", NO_BREAK))
    assert rebuilt["severity"] == "warning" and "retry" not in rebuilt["message"]


def test_a_sample_batch_every_k_steps_is_a_defeated_pool(tmp_path: Path) -> None:
    """Issue 41: `next(iter(loader))` of a non-persistent loader every K steps is a one-batch
    pass repeated within an epoch (defeated: warning, "every K steps"); the same loader made
    persistent starts no pool (info)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    script = "".join(SAMPLE_PARTS) + SAMPLE_EVERY_K
    every = only([f for f in check(tmp_path / "a", script) if f["code"] == "LL203"])
    assert every["severity"] == "warning"
    assert "a new pool of 2 workers every sample_interval steps" in every["message"]
    persistent = script.replace("num_workers=2)", "num_workers=2, persistent_workers=True)")
    kept = only([f for f in check(tmp_path / "b", persistent) if f["code"] == "LL203"])
    assert kept["severity"] == "info" and "every sample_interval steps" not in kept["message"]


@pytest.mark.parametrize(
    ("body", "requires", "severity", "said"),
    [
        (KEPT, ">=3.10", "info", None),  # fork: Linux's default before Python 3.14
        (KEPT, ">=3.14", "warning", "start method forkserver, Python 3.14's default on Linux"),
        (SPAWN_KEPT, ">=3.10", "warning", "start method spawn, from multiprocessing_context"),
        (PERSISTENT_REBUILT, ">=3.14", "error", "start method forkserver"),
    ],
    ids=["fork", "forkserver-default", "spawn-explicit", "defeated-forkserver"],
)
def test_a_costly_start_method_raises_the_severity(
    tmp_path: Path, body: str, requires: str, severity: str, said: str | None
) -> None:
    if sys.platform != "linux":
        pytest.skip("the default start method is Linux's here")
    finding = only(check(tmp_path, body, requires))
    assert finding["severity"] == severity
    if said is None:
        assert "fresh interpreter" not in finding["message"]
    else:
        assert f"each worker a fresh interpreter: {said}" in finding["message"]


SPAWN_IF_FLAG = KEPT.replace("num_workers=2)", "num_workers=2, multiprocessing_context=CONTEXT)")


@pytest.mark.parametrize(
    ("context", "requires", "severity", "said"),
    [
        # spawn on one branch only: the base severity, and the message names the condition
        ('"spawn" if flag else None', ">=3.10", "info",
         "once per epoch, and under spawn when flag each worker a fresh interpreter "
         "(from multiprocessing_context): avoidable"),
        ('"spawn" if flag else "fork"', ">=3.10", "info", "under spawn when flag each worker"),
        # every branch costly: forkserver is 3.14's default, or both branches name one
        ('"spawn" if flag else None', ">=3.14", "warning",
         "each worker a fresh interpreter: start method spawn, from multiprocessing_context, "
         "or forkserver, Python 3.14's default on Linux"),
        ('"spawn" if flag else "forkserver"', ">=3.10", "warning",
         "each worker a fresh interpreter: start method spawn or forkserver, from "
         "multiprocessing_context"),
        # a config value names no method: the default's
        ("cfg.spawn", ">=3.10", "info", None),
    ],
    ids=["spawn-or-default", "spawn-or-fork", "spawn-or-forkserver-default", "every-branch",
         "config-value"],
)  # fmt: skip
def test_a_start_method_chosen_by_a_condition(
    tmp_path: Path, context: str, requires: str, severity: str, said: str | None
) -> None:
    """Issue 41: `multiprocessing_context="spawn" if flag else None` is spawn on one branch
    only: the severity is raised only when every branch is spawn or forkserver; else the
    message says under which condition the pool costs a fresh interpreter per worker."""
    if sys.platform != "linux":
        pytest.skip("the default start method is Linux's here")
    finding = only(check(tmp_path, SPAWN_IF_FLAG.replace("CONTEXT", context), requires))
    assert finding["severity"] == severity, finding["message"]
    if said is None:
        assert "fresh interpreter" not in finding["message"]
    else:
        assert said in finding["message"]


@pytest.mark.parametrize(
    ("requires", "severity", "said"),
    [
        (">=3.10", "warning", "once per epoch, and under spawn when args.spawn each worker"),
        (">=3.14", "error", "start method spawn, from multiprocessing_context, or forkserver"),
    ],
)
def test_the_spawn_fixture_is_read_on_both_branches(
    tmp_path: Path, requires: str, severity: str, said: str
) -> None:
    """The trace fixture that runs under `--spawn` (tests/test_trace.py) builds its persistent
    loader per epoch with `"spawn" if args.spawn else None`: a defeated pool, a warning that
    names the spawn branch's condition; an error when the other branch is costly too."""
    if sys.platform != "linux":
        pytest.skip("the default start method is Linux's here")
    findings = check(tmp_path, REBUILD_LOOP.read_text(), requires, head="")
    (train,) = [f for f in findings if f["code"] == "LL202" and "`train`" in f["message"]]
    assert train["severity"] == severity, train["message"]
    assert said in train["message"]
