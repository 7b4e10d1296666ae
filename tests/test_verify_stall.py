"""``lintloader verify`` reports worker pools started and the per-epoch stall (first batch
minus the steady first batch, median over the epochs), for the buggy and the fixed fetcher:
the real CLI, real DataLoader workers, a known worker-init delay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from child_processes import Processes

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "runtime"
DELAY = "0.4"  # each worker's init sleeps this long: every pool start stalls by about that


def verify_args(name: str, *more: str) -> list[str]:
    factory = f"{FIXTURES / name}_fetcher.py:make_loader"
    return [sys.executable, "-m", "lintloader", "verify", "--dataloader", factory,
            "--worker-init-delay", DELAY, *more]  # fmt: skip


@pytest.fixture(scope="module")
def runs(module_processes: Processes) -> dict[str, subprocess.CompletedProcess[str]]:
    commands = {
        "buggy": verify_args("buggy", "--json"),
        "fixed": verify_args("fixed", "--json"),
        "buggy_text": verify_args("buggy"),
    }
    started = {
        name: module_processes.start(
            args, cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for name, args in commands.items()
    }
    done = {}
    for name, proc in started.items():
        out, err = proc.communicate(timeout=180)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


def test_buggy_fetcher_starts_a_pool_and_stalls_every_epoch(runs) -> None:
    proc = runs["buggy"]
    assert proc.returncode == 1, proc.stderr
    (loader,) = json.loads(proc.stdout)["loaders"]
    assert loader["pools_started"] == 3 and loader["stall_epochs"] == 3
    assert loader["median_stall_s"] >= 0.8 * float(DELAY)
    assert all(epoch["stall_s"] >= 0.8 * float(DELAY) for epoch in loader["epochs"])


def test_fixed_fetcher_starts_one_pool_and_later_epochs_do_not_stall(runs) -> None:
    proc = runs["fixed"]
    assert proc.returncode == 0, proc.stderr
    (loader,) = json.loads(proc.stdout)["loaders"]
    assert loader["pools_started"] == 1 and loader["stall_epochs"] == 3
    first, *later = loader["epochs"]
    assert first["stall_s"] >= 0.8 * float(DELAY)
    assert all(epoch["stall_s"] < 0.25 * float(DELAY) for epoch in later)
    assert loader["median_stall_s"] < 0.25 * float(DELAY)


def test_text_names_pools_and_median_stall(runs) -> None:
    proc = runs["buggy_text"]
    assert proc.returncode == 1, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "worker pools started" in x)
    assert line.strip().startswith("worker pools started: 3; stall per epoch (first batch minus")
    assert line.endswith("of 3 epochs")
