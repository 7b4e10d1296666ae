"""``lintloader trace -- CMD`` end to end: the real CLI runs real training scripts (plain torch,
Lightning 2.x on the CPU, the fetcher fixtures, spawn workers, a 2-rank torchrun job) with real
DataLoader worker processes, and the tests read its exit code, its text and JSON report and
the command's own output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
RUNTIME = REPO / "fixtures" / "runtime"
SCRIPTS = RUNTIME / "trace"
PYTHON = sys.executable
TORCHRUN = shutil.which("torchrun", path=str(Path(PYTHON).parent))


def trace_args(name: str, *command: str, options: tuple[str, ...] = ()) -> list[str]:
    return [
        PYTHON,
        "-m",
        "lintloader",
        "trace",
        "--json",
        f"{{out}}/{name}.json",
        *options,
        "--",
        *command,
    ]


def script(name: str, *args: str) -> tuple[str, ...]:
    return (PYTHON, str(SCRIPTS / f"{name}.py"), *args)


def fetcher(kind: str) -> tuple[str, ...]:
    return script("fetcher_loop", str(RUNTIME / f"{kind}_fetcher.py"))


RUNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "persistent": (script("torch_loop"), ()),
    "non_persistent": (script("torch_loop", "--no-persistent"), ()),
    "own_exit": (script("torch_loop", "--epochs", "2", "--exit", "3"), ()),
    "max_passes": (script("torch_loop", "--epochs", "5"), ("--max-passes", "2")),
    "spawn": (script("torch_loop", "--spawn", "--epochs", "2"), ()),
    "buggy": (fetcher("buggy"), ()),
    "fixed": (fetcher("fixed"), ()),
    "lossy": (fetcher("lossy"), ()),
    "lightning": (script("lightning_fit"), ()),
}
if TORCHRUN:
    RUNS["ddp"] = (
        (TORCHRUN, "--standalone", "--nproc-per-node", "2", str(SCRIPTS / "ddp_loop.py")),
        (),
    )


class Run:
    """One finished ``trace`` run: exit code, the command's stdout, stderr, the JSON report."""

    def __init__(self, proc: subprocess.CompletedProcess[str], report: dict[str, Any]) -> None:
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.report = report

    def loaders(self) -> list[dict[str, Any]]:
        return [loader for p in self.report["processes"] for loader in p["loaders"]]

    def only_loader(self) -> dict[str, Any]:
        (loader,) = self.loaders()
        return loader


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every run at once (each mostly waits on worker start-up), then read."""
    out = tmp_path_factory.mktemp("trace")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = {}
    for name, (command, options) in RUNS.items():
        args = [
            arg.replace("{out}", str(out)) for arg in trace_args(name, *command, options=options)
        ]
        started[name] = subprocess.Popen(
            args, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    done = {}
    for name, proc in started.items():
        stdout, stderr = proc.communicate(timeout=300)
        path = out / f"{name}.json"
        report = json.loads(path.read_text()) if path.exists() else {}
        done[name] = Run(
            subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), report
        )
    return done


def test_persistent_loader_keeps_its_pool(runs: dict[str, Run]) -> None:
    run = runs["persistent"]
    assert run.code == 0, run.stderr
    loader = run.only_loader()
    assert loader["created_at"]["path"].endswith("torch_loop.py")
    assert loader["created_at"]["line"] == 22
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (3, 1, 0)
    assert [p["batches"] for p in loader["passes"]] == [4, 4, 4]
    assert loader["device"] == "cpu"
    assert "OK: no persistent loader respawned" in run.stderr


def test_command_output_passes_through_unchanged(runs: dict[str, Run]) -> None:
    expected = "".join(f"epoch {n}: 32 samples\n" for n in (1, 2, 3)) + "training finished\n"
    assert runs["persistent"].stdout == expected
    assert "lintloader trace:" not in runs["persistent"].stdout
    assert "lintloader trace:" in runs["persistent"].stderr


def test_non_persistent_loader_respawns_every_pass(runs: dict[str, Run]) -> None:
    run = runs["non_persistent"]
    assert run.code == 0, run.stderr  # a non-persistent loader is reported, not failed
    loader = run.only_loader()
    assert loader["persistent_workers"] is False
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (3, 3, 3)
    assert [r["pass"] for r in loader["respawns"]] == [1, 2, 3]
    assert {r["cause"] for r in loader["respawns"]} == {"persistent_workers=False"}
    pids = [tuple(start["pids"]) for start in loader["pool_starts"]]
    assert len(set(pids)) == 3 and all(len(p) == 2 for p in pids)
    assert {s["cause"] for s in loader["shutdowns"]} == {"end of pass (persistent_workers=False)"}


def test_command_exit_code_is_kept(runs: dict[str, Run]) -> None:
    run = runs["own_exit"]
    assert run.code == 3
    assert run.report["command_exit"] == 3
    assert run.stdout.endswith("training finished\n")


def test_max_passes_stops_the_command_cleanly(runs: dict[str, Run]) -> None:
    run = runs["max_passes"]
    assert run.code == 0, run.stderr
    assert run.stdout == "epoch 1: 32 samples\nepoch 2: 32 samples\n"
    loader = run.only_loader()
    assert len(loader["passes"]) == 2 and loader["stopped"]
    assert run.report["stopped_by_max_passes"] is True
    assert "stopped after 2 passes" in run.stderr


def test_spawned_workers(runs: dict[str, Run]) -> None:
    run = runs["spawn"]
    assert run.code == 0, run.stderr
    loader = run.only_loader()
    assert loader["start_method"] == "spawn"
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (2, 1, 0)


def test_buggy_fetcher_fails_and_names_the_shutdown_frame(runs: dict[str, Run]) -> None:
    run = runs["buggy"]
    assert run.code == 1, run.stderr
    assert run.stdout == "".join(f"epoch {n}: 6 batches\n" for n in (1, 2, 3))
    loader = run.only_loader()
    assert loader["persistent_workers"] is True
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (3, 3, 2)
    assert loader["cost_s"] > 0
    for respawn in loader["respawns"]:
        assert respawn["cause"] == "_shutdown_workers()"
        innermost = respawn["frames"][0]
        assert Path(innermost["path"]).name == "buggy_fetcher.py"
        assert innermost["line"] == 20
        assert innermost["function"] == "_shutdown_workers_and_reset_iterator"
        assert [f["function"] for f in respawn["frames"][1:3]] == [
            "Fetcher.reset",
            "Fetcher.__iter__",
        ]
        assert respawn["static"]["code"] == "LL101"
        assert respawn["static"]["line"] == 34
    assert "fixtures/runtime/buggy_fetcher.py:20 _shutdown_workers_and_reset_iterator" in run.stderr
    assert "LL101 at fixtures/runtime/buggy_fetcher.py:34 — run `lintloader fix`" in run.stderr
    assert "FAIL: 1 persistent loader(s) respawned their workers (2 respawns" in run.stderr


def test_fixed_fetcher_passes(runs: dict[str, Run]) -> None:
    run = runs["fixed"]
    assert run.code == 0, run.stderr
    loader = run.only_loader()
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (3, 1, 0)
    # the one shutdown is the teardown after training, by the fixture's own call
    (shutdown,) = loader["shutdowns"]
    assert shutdown["cause"] == "_shutdown_workers()"
    assert (
        shutdown["stack"][0]["line"] == 18
        and shutdown["stack"][1]["function"] == "Fetcher.teardown"
    )


def test_lossy_fetcher_keeps_workers_but_its_later_passes_are_empty(runs: dict[str, Run]) -> None:
    run = runs["lossy"]
    assert run.code == 0, run.stderr
    assert run.stdout == "epoch 1: 6 batches\nepoch 2: 0 batches\nepoch 3: 0 batches\n"
    loader = run.only_loader()
    assert (len(loader["pool_starts"]), loader["respawn_count"]) == (1, 0)
    assert loader["empty_passes"] == [2, 3]
    assert "warning: passes 2, 3 yielded no batch" in run.stderr


def test_lightning_run_reuses_train_and_val_workers(runs: dict[str, Run]) -> None:
    run = runs["lightning"]
    assert run.code == 0, run.stderr
    assert run.stdout.endswith("fit finished\n")
    loaders = run.loaders()
    assert len(loaders) == 2
    callers = set()
    for loader in loaders:
        assert Path(loader["created_at"]["path"]).name == "lightning_fit.py"
        callers.add(loader["created_by"][1]["function"])
        assert (len(loader["pool_starts"]), loader["respawn_count"]) == (1, 0)
    # val: the sanity check and one pass per epoch; train: one pass per epoch
    assert sorted(len(loader["passes"]) for loader in loaders) == [3, 4]
    assert callers == {"Tiny.train_dataloader", "Tiny.val_dataloader"}


@pytest.mark.skipif(TORCHRUN is None, reason="torchrun is not installed next to this Python")
def test_ddp_ranks_each_get_a_report(runs: dict[str, Run]) -> None:
    run = runs["ddp"]
    assert run.code == 0, run.stderr
    assert sorted(p["rank"] for p in run.report["processes"]) == [0, 1]
    for process in run.report["processes"]:
        (loader,) = process["loaders"]
        assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (
            3,
            1,
            0,
        )
    assert "rank 0 (pid" in run.stderr and "rank 1 (pid" in run.stderr
    assert all(f"rank {r} epoch 3 done" in run.stdout for r in (0, 1))


def test_command_that_cannot_start_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-program"
    proc = subprocess.run(
        [PYTHON, "-m", "lintloader", "trace", "--", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "cannot start" in proc.stderr and "ERROR: the command could not start" in proc.stderr


def test_hook_chains_user_sitecustomize_and_leaves_torch_unimported(tmp_path: Path) -> None:
    # the user's own sitecustomize; it speaks only in the traced command (lintloader itself
    # runs with the same PYTHONPATH)
    (tmp_path / "sitecustomize.py").write_text(
        "import os\nif 'LINTLOADER_TRACE_DIR' in os.environ:\n    print('user sitecustomize ran')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    probe = (
        "import os, sys; print('torch' in sys.modules, sys.modules['sitecustomize'].__file__);"
        "print(os.environ['PYTHONPATH'].split(os.pathsep)[1:])"
    )
    proc = subprocess.run(
        [PYTHON, "-m", "lintloader", "trace", "--", PYTHON, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"user sitecustomize ran\nFalse {tmp_path / 'sitecustomize.py'}\n['{tmp_path}']\n"
    )
    assert "no DataLoader was iterated" in proc.stderr
