"""``lintloader verify`` end to end: the real CLI in a subprocess, real DataLoader workers;
the buggy and fixed fetchers' probes with a known worker-init delay, so that the pools started
and the per-epoch stall they report can be checked too."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from child_processes import Processes
from harness import run_cli
from test_docs_console import (
    VERIFIED_BY_TEST_VERIFY,
    assert_block_printed,
    block_env,
)

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "runtime"
CLI = [sys.executable, "-m", "lintloader", "verify"]
PIPES: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}


def run_verify(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_cli("verify", *args, env=env, timeout=timeout)


def fixture(name: str) -> str:
    return f"{FIXTURES / name}.py:make_loader"


DELAY = "1.0"  # each worker's init sleeps this long: every pool start stalls by about that
STALL = ("--worker-init-delay", DELAY)
# docs/verify.md's probe of the buggy fetcher (as text), as the block types it: checked against
# the block too (test_the_docs_block_is_what_the_probe_printed)
AS_DOCS_SHOW = shlex.split(VERIFIED_BY_TEST_VERIFY["buggy"])
# The long probes run concurrently (each mostly waits on its workers), then the tests read them.
CONCURRENT_RUNS = {
    "lightning": ("--val", "--json"),
    "buggy": tuple(AS_DOCS_SHOW[2:]),  # with STALL: relative to the checkout
    "buggy_json": ("--dataloader", fixture("buggy_fetcher"), *STALL, "--json"),
    "fixed": ("--dataloader", fixture("fixed_fetcher"), *STALL, "--json"),
    "lossy": ("--dataloader", fixture("lossy_fetcher"), "--json"),
}


@pytest.fixture(scope="module")
def runs(
    module_processes: Processes, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    env = block_env(REPO, tmp_path_factory.mktemp("verify") / "cache")  # as the docs'
    started = {
        name: (args, module_processes.start([*CLI, *args], cwd=REPO, env=env, text=True, **PIPES))
        for name, args in CONCURRENT_RUNS.items()
    }
    done = {}
    for name, (args, proc) in started.items():
        out, err = proc.communicate(timeout=120)
        done[name] = subprocess.CompletedProcess(args, proc.returncode, out, err)
    return done


def as_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    proc = run_verify(*args, "--json")
    return proc.returncode, as_json(proc)


def all_pids(result: dict[str, Any]) -> set[int]:
    pids: set[int] = set()
    for loader in result["loaders"]:
        for epoch in loader["epochs"]:
            pids |= set(epoch["worker_pids"]) | set(epoch["started_pids"]) | set(epoch["pool_pids"])
    return pids


def alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie (an orphan may wait for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def env_without(*packages: str, tmp_path: Path) -> dict[str, str]:
    """An environment in which importing ``packages`` raises ImportError."""
    for package in packages:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            f"raise ImportError('{package} hidden by the test')\n"
        )
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


def test_lightning_probe_passes_and_reuses_workers_for_train_and_val(runs: Any) -> None:
    code, result = runs["lightning"].returncode, as_json(runs["lightning"])
    assert code == 0, result
    assert result["verdict"] == "PASS"
    assert result["engine"] == "lightning"
    assert "pytorch_lightning" in result["versions"] or "lightning" in result["versions"]
    assert result["device"]["type"] == "cpu"
    assert [loader["name"] for loader in result["loaders"]] == ["train", "val"]
    for loader in result["loaders"]:
        epochs = loader["epochs"]
        assert len(epochs) == 3
        first_pids = epochs[0]["worker_pids"]
        assert len(first_pids) == 2 and epochs[0]["workers_started"] == 2
        for epoch in epochs:
            assert epoch["samples"] == epoch["unique_samples"] == loader["dataset_size"]
            assert epoch["first_batch_s"] is not None
        for epoch in epochs[1:]:
            assert epoch["workers_started"] == 0
            assert epoch["worker_pids"] == first_pids
    # no worker process outlives the CLI
    assert result["leftover_pids"] == []
    pids = all_pids(result)
    assert pids and not [pid for pid in pids if alive(pid)]


def test_buggy_fetcher_fails_with_the_respawn_shown(runs: Any) -> None:
    proc = runs["buggy"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout
    assert "epoch 2: respawned workers: 2 started this epoch" in proc.stdout
    assert "epoch 3: respawned workers" in proc.stdout


def test_fixed_fetcher_passes_with_every_sample_every_epoch(runs: Any) -> None:
    code, result = runs["fixed"].returncode, as_json(runs["fixed"])
    assert code == 0, result["problems"]
    epochs = result["loaders"][0]["epochs"]
    assert [e["unique_samples"] for e in epochs] == [48, 48, 48]
    assert [e["workers_started"] for e in epochs] == [2, 0, 0]
    assert epochs[1]["worker_pids"] == epochs[2]["worker_pids"] == epochs[0]["worker_pids"]


def test_lossy_fix_fails_on_sample_count_although_workers_are_stable(runs: Any) -> None:
    code, result = runs["lossy"].returncode, as_json(runs["lossy"])
    assert code == 1
    epochs = result["loaders"][0]["epochs"]
    assert epochs[0]["samples"] == 48
    assert [e["samples"] for e in epochs[1:]] == [0, 0]
    assert [e["workers_started"] for e in epochs[1:]] == [0, 0]
    assert epochs[1]["pool_pids"] == epochs[0]["pool_pids"] != []
    assert any("epoch 2: 48 of 48 samples missing" in p for p in result["problems"])
    assert not any("respawn" in p for p in result["problems"])


# -- pools started and the per-epoch stall (first batch minus the steady first batch, median
# over the epochs), with the known worker-init delay DELAY ------------------------------------
def test_buggy_fetcher_starts_a_pool_and_stalls_every_epoch(runs: Any) -> None:
    proc = runs["buggy_json"]
    assert proc.returncode == 1, proc.stderr
    (loader,) = json.loads(proc.stdout)["loaders"]
    assert loader["pools_started"] == 3 and loader["stall_epochs"] == 3
    assert loader["median_stall_s"] >= 0.8 * float(DELAY)
    assert all(epoch["stall_s"] >= 0.8 * float(DELAY) for epoch in loader["epochs"])


def test_fixed_fetcher_starts_one_pool_and_later_epochs_do_not_stall(runs: Any) -> None:
    proc = runs["fixed"]
    assert proc.returncode == 0, proc.stderr
    (loader,) = json.loads(proc.stdout)["loaders"]
    assert loader["pools_started"] == 1 and loader["stall_epochs"] == 3
    first, *later = loader["epochs"]
    assert first["stall_s"] >= 0.8 * float(DELAY)
    assert all(epoch["stall_s"] < 0.25 * float(DELAY) for epoch in later)
    assert loader["median_stall_s"] < 0.25 * float(DELAY)


def test_text_names_pools_and_median_stall(runs: Any) -> None:
    proc = runs["buggy"]
    assert proc.returncode == 1, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "worker pools started" in x)
    assert line.strip().startswith("worker pools started: 3; stall per epoch (first batch minus")
    assert line.endswith("of 3 epochs")


def test_the_docs_block_is_what_the_probe_printed(runs: Any) -> None:
    """docs/verify.md's block of the buggy fetcher's probe is what the module's run printed
    (tests/test_docs_console.py's matcher): the probe runs once, for both."""
    assert AS_DOCS_SHOW[:2] == ["lintloader", "verify"] and AS_DOCS_SHOW[-1] == DELAY
    assert_block_printed(VERIFIED_BY_TEST_VERIFY["buggy"], runs["buggy"])


def test_buggy_fetcher_passes_after_lintloader_fix(tmp_path: Path) -> None:
    copy = tmp_path / "buggy_fetcher.py"
    shutil.copy(FIXTURES / "buggy_fetcher.py", copy)
    before = copy.read_text()
    fix = run_cli("fix", "--no-cache", str(copy), timeout=60)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert copy.read_text() != before, fix.stdout + fix.stderr
    code, result = run_json("--dataloader", f"{copy}:make_loader")
    assert code == 0, result["problems"]
    epochs = result["loaders"][0]["epochs"]
    assert [e["samples"] for e in epochs] == [48, 48, 48]
    assert [e["workers_started"] for e in epochs] == [2, 0, 0]


def test_missing_torch_exits_2_with_one_line_install_hint(tmp_path: Path) -> None:
    proc = run_verify(env=env_without("torch", tmp_path=tmp_path))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    # the interpreter that lacks it, with the pins of a checkout (a CPU torch, not CUDA's)
    assert "torch is not importable by" in lines[0]
    assert "-m pip install -c constraints.txt torch" in lines[0]


def test_missing_lightning_exits_2_with_the_hint(tmp_path: Path) -> None:
    env = env_without("pytorch_lightning", "lightning", tmp_path=tmp_path)
    proc = run_verify(env=env)
    assert proc.returncode == 2
    assert "Lightning is not importable" in proc.stderr
    assert "-m pip install -c constraints.txt pytorch-lightning" in proc.stderr


def test_ctrl_c_leaves_no_worker_behind(processes: Processes) -> None:
    proc = processes.start(
        [*CLI, "--engine", "torch", "--worker-init-delay", "0.5", "--epochs", "50"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: set[int] = set()
    deadline = time.monotonic() + 30
    while len(seen) < 2 and time.monotonic() < deadline and proc.poll() is None:
        seen |= children_of(proc.pid)
        time.sleep(0.05)
    time.sleep(0.3)
    seen |= children_of(proc.pid)
    assert len(seen) >= 2, "the workers never started"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not [pid for pid in seen if alive(pid)]


def test_verify_command_imports_without_torch(tmp_path: Path) -> None:
    env = env_without("torch", tmp_path=tmp_path)
    check = "import sys, lintloader.cli.verify; assert 'torch' not in sys.modules"
    imported = subprocess.run(
        [sys.executable, "-c", check], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr
    helped = run_verify("--help", env=env)
    assert helped.returncode == 0
    assert "RUNS YOUR CODE" in helped.stdout
