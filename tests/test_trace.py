"""``lintloader trace -- CMD`` end to end: the real CLI runs real training scripts (plain torch,
Lightning 2.x on the CPU, the fetcher fixtures, spawn workers, a 2-rank torchrun job, loaders
rebuilt per epoch or per evaluation, a loop in a thread) with real DataLoader worker
processes, and the tests read its exit code, its text and JSON report and the command's own
output. The verdict is per creation site: pools started against pools needed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from child_processes import Processes
from test_docs_console import (
    TRACED_BY_TEST_TRACE,
    assert_block_printed,
    block_env,
    trace_parts,
)
from trace_agreement import disagreements

from lintloader.runtime.trace.session import GRACE_S

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
RUNTIME = REPO / "fixtures" / "runtime"
SCRIPTS = RUNTIME / "trace"
PYTHON = sys.executable
TORCHRUN = shutil.which("torchrun", path=str(Path(PYTHON).parent))
CI = ("--max-passes", "2")  # the documented CI setting
AT_ONCE = 6  # traced runs started side by side (each mostly waits on worker start-up)


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


def run_args(name: str, out: Path) -> list[str]:
    """``trace --json OUT/NAME.json`` of the run ``name`` (:data:`RUNS`, else a block's)."""
    command, options = RUNS[name] if name in RUNS else as_docs_show(name)
    return [arg.replace("{out}", str(out)) for arg in trace_args(name, *command, options=options)]


def script(name: str, *args: str) -> tuple[str, ...]:
    return (PYTHON, str(SCRIPTS / f"{name}.py"), *args)


def fetcher(kind: str, *args: str) -> tuple[str, ...]:
    return script("fetcher_loop", str(RUNTIME / f"{kind}_fetcher.py"), *args)


def as_docs_show(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The command and options of docs/trace.md's block for the run ``name``, as the block
    types them: the run is checked against the block too
    (test_the_docs_block_is_what_the_run_printed)."""
    return trace_parts(TRACED_BY_TEST_TRACE[name])


RUNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "persistent": (script("torch_loop"), ()),
    "non_persistent": as_docs_show("non_persistent"),  # torch_loop.py --no-persistent
    "max_passes": (script("torch_loop", "--epochs", "5"), ("--max-passes", "2")),
    # spawned workers, one per pool (each imports torch again: some 1.3 s of CPU), in a run
    # that also ends with its own exit code
    "spawn": (script("torch_loop", "--spawn", "1", "--epochs", "2", "--exit", "3"), ()),
    "buggy": as_docs_show("buggy"),  # fetcher_loop.py over buggy_fetcher.py
    "fixed": as_docs_show("fixed"),  # and over fixed_fetcher.py
    "lossy": (fetcher("lossy"), ()),
    "lightning": as_docs_show("lightning"),  # lightning_fit.py
    # the table of issue 30, each under the CI setting, and each fixed
    "rebuild_ci": (script("rebuild_loop", "--epochs", "4"), CI),
    "rebuild_fixed_ci": (script("rebuild_loop", "--fixed", "--epochs", "4"), CI),
    "reload_ci": (script("lightning_probe", "--reload", "1", "--epochs", "4"), CI),
    "reload_fixed_ci": (script("lightning_fit", "--epochs", "4"), CI),
    "warmup_ci": as_docs_show("warmup_ci"),  # buggy_fetcher.py, --warmup 2 --epochs 5, CI
    "warmup_fixed_ci": (fetcher("fixed", "--warmup", "2", "--epochs", "5"), CI),
    "eval": (script("rebuild_loop", "--eval"), ()),
    "thread_ci": as_docs_show("thread_ci"),  # rebuild_loop.py --thread --epochs 5, CI
    "thread_fixed_ci": (script("rebuild_loop", "--thread", "--fixed", "--epochs", "5"), CI),
    "rebuild_spawn": (script("rebuild_loop", "--spawn", "1", "--epochs", "2"), ()),
}
if TORCHRUN:  # torchrun ddp_loop.py (2 ranks) under --max-passes 2, as docs/trace.md shows it
    RUNS["ddp"] = as_docs_show("ddp")


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

    def site(self, caller: str) -> dict[str, Any]:
        """The one site whose calling frame is the function ``caller``."""
        (found,) = [s for s in self.report["sites"] if s["created_by"][1]["function"] == caller]
        return found


def trace_env(home: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The test's environment (or ``base``), with the hook's private directory under
    ``home``."""
    env = {**(base or os.environ), "PYTHONUNBUFFERED": "1", "XDG_CACHE_HOME": str(home)}
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, module_processes: Processes) -> dict[str, Run]:
    """Every run, :data:`AT_ONCE` side by side, then read."""
    out = tmp_path_factory.mktemp("trace")
    env = trace_env(out / "cache", block_env(REPO, out / "lintloader-cache"))  # as the docs'
    names = list(RUNS)
    done = {}
    for begin in range(0, len(names), AT_ONCE):
        started = {}
        for name in names[begin : begin + AT_ONCE]:
            started[name] = module_processes.start(
                run_args(name, out), cwd=REPO, env=env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        for name, proc in started.items():
            stdout, stderr = proc.communicate(timeout=300)
            done[name] = read_run(
                subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), out, name
            )
    return done


def read_run(proc: subprocess.CompletedProcess[str], out: Path, name: str) -> Run:
    """The finished run ``name`` with its JSON report (none where it wrote none)."""
    path = out / f"{name}.json"
    return Run(proc, json.loads(path.read_text()) if path.exists() else {})


def test_persistent_loader_keeps_its_pool(runs: dict[str, Run]) -> None:
    run = runs["persistent"]
    assert run.code == 0, run.stderr
    loader = run.only_loader()
    assert loader["created_at"]["path"].endswith("torch_loop.py")
    assert loader["created_at"]["line"] == 22
    assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (3, 1, 0)
    assert [p["batches"] for p in loader["passes"]] == [4, 4, 4]
    assert loader["device"] == "cpu"
    (site,) = run.report["sites"]
    assert (site["worker_pools"], site["needed_pools"], site["full_passes"]) == (1, 1, 3)
    assert run.report["verdict"] == "OK" and run.report["lost_s"] == 0
    assert "OK: no creation site started more worker pools than it needed" in run.stderr


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
    (site,) = run.report["sites"]
    assert site["worker_pools"] == 3 and not site["failing"]
    assert "pass persistent_workers=True at fixtures/runtime/trace/torch_loop.py:22" in run.stderr


def test_command_exit_code_is_kept(runs: dict[str, Run]) -> None:
    run = runs["spawn"]  # `--exit 3`: the run passes (test_spawned_workers), the command exits 3
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
    assert "stopped after 2 full passes" in run.stderr


def test_spawned_workers(runs: dict[str, Run]) -> None:
    run = runs["spawn"]
    assert run.code == 3, run.stderr  # the command's own exit code (`--exit 3`), kept
    assert run.report["verdict"] == "OK" and "OK: no creation site started" in run.stderr
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
    (site,) = run.report["sites"]
    assert (site["worker_pools"], site["needed_pools"], site["failing"]) == (3, 1, True)
    assert {extra["kind"] for extra in site["extra_pools"]} == {"respawn"}
    assert site["lost_s"] > 0 and run.report["lost_s"] == site["lost_s"]
    assert "fixtures/runtime/buggy_fetcher.py:20 _shutdown_workers_and_reset_iterator" in run.stderr
    assert (
        "change: LL101 at fixtures/runtime/buggy_fetcher.py:34: "
        "`lintloader fix fixtures/runtime/buggy_fetcher.py` fixes it (relocate)"
    ) in run.stderr
    assert "FAIL: 1 of 1 creation site(s) started 2 worker pool(s) more than needed" in run.stderr


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
    assert [s["failing"] for s in run.report["sites"]] == [False, False]


@pytest.mark.skipif(TORCHRUN is None, reason="torchrun is not installed next to this Python")
def test_ddp_ranks_each_get_a_report(runs: dict[str, Run]) -> None:
    run = runs["ddp"]
    assert run.code == 0, run.stderr
    assert sorted(p["rank"] for p in run.report["processes"]) == [0, 1]
    for process in run.report["processes"]:  # 2 full passes each, one pool: then stopped
        (loader,) = process["loaders"]
        assert (len(loader["passes"]), len(loader["pool_starts"]), loader["respawn_count"]) == (
            2,
            1,
            0,
        )
    assert run.report["stopped_by_max_passes"] is True
    assert "rank 0 (pid" in run.stderr and "rank 1 (pid" in run.stderr
    assert all(f"rank {r} epoch 2 done" in run.stdout for r in (0, 1))
    assert "epoch 3 done" not in run.stdout


@pytest.mark.parametrize("name", sorted(TRACED_BY_TEST_TRACE))
def test_the_docs_block_is_what_the_run_printed(
    name: str, runs: dict[str, Run], injected: Run
) -> None:
    """docs/trace.md's block of this run's command is what the run printed (stdout, then
    stderr; tests/test_docs_console.py's matcher): the run is made once, for both."""
    if name not in (*runs, "injected"):
        pytest.skip(f"{name}: torchrun is not installed next to this Python")
    run = injected if name == "injected" else runs[name]
    done = subprocess.CompletedProcess(name, run.code, run.stdout, run.stderr)
    assert_block_printed(TRACED_BY_TEST_TRACE[name], done)


def test_command_that_cannot_start_exits_2(tmp_path: Path, processes: Processes) -> None:
    missing = tmp_path / "no-such-program"
    proc = processes.run(
        [PYTHON, "-m", "lintloader", "trace", "--", str(missing)],
        timeout=60,
    )
    assert proc.returncode == 2
    assert "cannot start" in proc.stderr and "ERROR: the command could not start" in proc.stderr


def test_hook_chains_user_sitecustomize_and_leaves_torch_unimported(
    tmp_path: Path, processes: Processes
) -> None:
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
    proc = processes.run(
        [PYTHON, "-m", "lintloader", "trace", "--", PYTHON, "-c", probe],
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"user sitecustomize ran\nFalse {tmp_path / 'sitecustomize.py'}\n['{tmp_path}']\n"
    )
    assert "no DataLoader was iterated" in proc.stderr


# -- issue 30's table: each row fails under the CI setting; its fixed version passes ------------
def test_loader_rebuilt_every_epoch_fails_per_site(runs: dict[str, Run]) -> None:
    run = runs["rebuild_ci"]
    assert run.code == 1, run.stderr
    (site,) = run.report["sites"]
    assert site["created_at"]["function"] == "make_loader"
    assert site["created_by"][1]["function"] == "train"
    # the third loader is built, then --max-passes stops its first pass before its pool
    assert (len(site["loaders"]), site["worker_pools"], site["needed_pools"]) == (3, 2, 1)
    assert [extra["kind"] for extra in site["extra_pools"]] == ["new loader"]
    assert site["full_passes"] == 2 and run.report["stopped_by_max_passes"] is True
    assert run.stderr.count("\nFAIL fixtures/runtime/trace/rebuild_loop.py:") == 1  # one block
    assert "by hand, build the loader once, outside the loop that runs" in run.stderr
    assert run.stdout == "epoch 1: 32 samples\nepoch 2: 32 samples\n"


def test_loaders_built_once_per_split_pass(runs: dict[str, Run]) -> None:
    run = runs["rebuild_fixed_ci"]
    assert run.code == 0, run.stderr
    (site,) = run.report["sites"]  # train and val loaders: one site, one pool each
    assert (len(site["loaders"]), site["worker_pools"], site["needed_pools"]) == (2, 2, 2)
    assert not site["failing"] and run.report["stopped_by_max_passes"] is True
    assert run.stdout.startswith("epoch 1: 32 samples, val ")


def test_lightning_reload_every_epoch_fails_and_names_the_setting(runs: dict[str, Run]) -> None:
    run = runs["reload_ci"]
    assert run.code == 1, run.stderr
    train = run.site("Tiny.train_dataloader")
    assert train["failing"] and train["lightning_reload"] == 1
    assert train["worker_pools"] > train["needed_pools"] == 1
    assert {extra["kind"] for extra in train["extra_pools"]} == {"lightning reload"}
    assert "`Trainer(reload_dataloaders_every_n_epochs=1)`" in run.stderr
    assert "fit finished" not in run.stdout  # --max-passes ended it


def test_a_callbacks_own_rebuild_is_not_lightnings_reload(runs: dict[str, Run]) -> None:
    """Issue 41: under reload_dataloaders_every_n_epochs=1, a loader that a callback builds at
    every epoch's start is the callback's own rebuild, told as such, and its own fix advised."""
    run = runs["reload_ci"]
    (probe,) = [s for s in run.report["sites"] if s["created_at"]["function"].startswith("Probe.")]
    assert probe["failing"] and probe["lightning_reload"] is None
    assert {extra["kind"] for extra in probe["extra_pools"]} == {"new loader"}
    block = run.stderr.split("lightning_probe.py:23 Probe.on_train_epoch_start, called from")[1]
    block = block.split("\nFAIL ")[0].split("\nok ")[0]
    assert "change: LL202 at fixtures/runtime/trace/lightning_probe.py:23" in block, block
    assert "reload_dataloaders_every_n_epochs" not in block, block


def test_lightning_without_reload_passes_under_ci_setting(runs: dict[str, Run]) -> None:
    run = runs["reload_fixed_ci"]
    assert run.code == 0, run.stderr
    assert all(not site["failing"] for site in run.report["sites"])
    assert run.report["stopped_by_max_passes"] is True


def test_warm_up_peeks_do_not_use_the_pass_budget(runs: dict[str, Run]) -> None:
    run = runs["warmup_ci"]
    assert run.code == 1, run.stderr
    loader = run.only_loader()
    assert [p["full"] for p in loader["passes"]] == [False, False, True, True]
    (site,) = run.report["sites"]
    assert site["worker_pools"] == 3 and site["failing"]
    assert run.stdout == "epoch 1: 6 batches\nepoch 2: 6 batches\n"
    assert "(peek)" in run.stderr


def test_warm_up_with_fixed_fetcher_passes(runs: dict[str, Run]) -> None:
    run = runs["warmup_fixed_ci"]
    assert run.code == 0, run.stderr
    (site,) = run.report["sites"]
    assert (site["worker_pools"], site["full_passes"]) == (1, 2)
    assert run.report["stopped_by_max_passes"] is True


def test_eval_loader_rebuilt_per_evaluate_call_fails(runs: dict[str, Run]) -> None:
    run = runs["eval"]
    assert run.code == 1, run.stderr
    evaluate = run.site("evaluate")
    assert evaluate["failing"] and evaluate["worker_pools"] == 3 and evaluate["needed_pools"] == 1
    train = run.site("train")
    assert not train["failing"] and train["worker_pools"] == 1
    assert run.report["sites"][0] == evaluate  # sorted by time lost
    # no finding is reported at these frames (the loop is in the caller): no borrowed link
    assert evaluate["extra_pools"][0]["static"] is None
    assert "no lintloader finding and no fixer cover it: by hand" in run.stderr
    assert "FAIL: 1 of 2 creation site(s) started 2 worker pool(s) more than needed" in run.stderr


def test_loader_in_a_thread_is_traced_and_max_passes_ends_the_program(
    runs: dict[str, Run],
) -> None:
    run = runs["thread_ci"]
    assert run.code == 1, run.stderr
    (site,) = run.report["sites"]
    assert site["created_by"][1]["function"] == "train" and site["failing"]
    assert run.stdout == "epoch 1: 32 samples\nepoch 2: 32 samples\n"  # no "thread joined"
    fixed = runs["thread_fixed_ci"]
    assert fixed.code == 0, fixed.stderr
    assert fixed.report["stopped_by_max_passes"] is True
    assert "thread joined" not in fixed.stdout and "training finished" not in fixed.stdout


def test_spawned_workers_of_rebuilt_loaders(runs: dict[str, Run]) -> None:
    run = runs["rebuild_spawn"]
    assert run.code == 1, run.stderr
    (site,) = run.report["sites"]
    assert site["worker_pools"] == 2 and site["failing"]
    assert {loader["start_method"] for loader in run.loaders()} == {"spawn"}


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory, module_processes: Processes) -> Run:
    """docs/trace.md's run of rebuild_loop.py (3 epochs, its default) with a 1.5 s sleep in
    every worker's init, alone: no run beside it slows its pool starts."""
    out = tmp_path_factory.mktemp("injected")
    env = trace_env(out / "cache", block_env(REPO, out / "lintloader-cache"))
    proc = module_processes.run(run_args("injected", out), cwd=REPO, env=env, timeout=300)
    return read_run(proc, out, "injected")


def test_reported_loss_matches_an_injected_pool_start_delay(injected: Run) -> None:
    """Each pool start sleeps a known 1.5 s in every worker's init (in parallel): a loader
    rebuilt in each of 3 epochs starts 2 pools more than needed, 3.0 s lost."""
    delay, epochs = 1.5, 3
    assert TRACED_BY_TEST_TRACE["injected"].endswith(f"rebuild_loop.py --init-sleep {delay}")
    assert injected.code == 1, injected.stderr
    lost = delay * (epochs - 1)
    assert abs(injected.report["lost_s"] - lost) <= 0.2 * lost, injected.report["lost_s"]
    assert f"; {injected.report['lost_s']:.3f} s lost (" in injected.stderr


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


# A loader rebuilt for each of two epochs (two pools started), then "ready" and a wait with
# the last pool alive: the signal comes while the command waits, never while a replaced
# loader's ``__del__`` shuts its pool down (a KeyboardInterrupt raised there is swallowed, and
# the loop ran on until trace's grace period killed it: 10 s and more under load).
WAITING_PROBE = """\
import sys, time
from torch.utils.data import DataLoader

data = list(range(16))
for epoch in (1, 2):  # the same data, a new loader and pool each epoch: one too many
    loader = DataLoader(data, batch_size=8, num_workers=2, persistent_workers=True)
    print(f"epoch {epoch}: {sum(len(batch) for batch in loader)} samples", flush=True)
print("ready", flush=True)
time.sleep(300)
sys.exit("not interrupted")
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_sigterm_is_passed_on_and_the_report_so_far_printed(
    signum: signal.Signals, tmp_path: Path, processes: Processes
) -> None:
    """Sent to ``trace`` alone (not from a terminal): passed on to the command, which ends at
    once (no grace period spent), and the report holds the two pools started so far."""
    out = tmp_path / "term.json"
    probe = tmp_path / "waiting_probe.py"
    probe.write_text(WAITING_PROBE)
    proc = processes.start(
        [PYTHON, "-m", "lintloader", "trace", "--json", str(out), "--", PYTHON, str(probe)],
        cwd=REPO, env=trace_env(tmp_path / "cache"), text=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("epoch 1:")
    assert proc.stdout.readline().startswith("epoch 2:")
    assert proc.stdout.readline() == "ready\n"
    signalled = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - signalled < GRACE_S, stderr  # ended by the signal, not killed
    assert proc.returncode == 1, stderr  # the rebuilds seen so far fail the run
    assert f"note: {signum.name} received: passed on to the command; the run so far" in stderr
    report = json.loads(out.read_text())
    assert report["sites"][0]["worker_pools"] >= 2
    pids = {p["pid"] for p in report["processes"]}
    pids |= {pid for site in report["sites"] for pool in site["pools"] for pid in pool["pids"]}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not [pid for pid in pids if _alive(pid)]
    assert list((tmp_path / "cache" / "lintloader" / "trace").iterdir()) == []


# -- issue 28: where the hook lives, and what the static check runs -----------------------------
def test_hook_directory_is_private_and_removed(tmp_path: Path, processes: Processes) -> None:
    probe = "import os, sys; print(os.environ['PYTHONPATH'].split(os.pathsep)[0])"
    proc = processes.run(
        [PYTHON, "-m", "lintloader", "trace", "--", PYTHON, "-c", probe],
        env=trace_env(tmp_path), timeout=60,
    )  # fmt: skip
    hook_dir = Path(proc.stdout.strip())
    parent = tmp_path / "lintloader" / "trace"
    assert hook_dir.parent.parent == parent
    assert parent.stat().st_mode & 0o777 == 0o700 and parent.stat().st_uid == os.getuid()
    assert not hook_dir.exists() and list(parent.iterdir()) == []


def test_hook_refuses_a_directory_others_can_write(tmp_path: Path, processes: Processes) -> None:
    from lintloader.runtime.trace.inject import prepare

    injection = prepare()
    try:
        injection.root.chmod(0o777)
        env = injection.environment(trace_env(tmp_path))
        code = "import torch.utils.data as d; d.DataLoader(list(range(4)), batch_size=2)"
        proc = processes.run([PYTHON, "-c", code], env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert f"hook not run: {injection.root} is not private" in proc.stderr
        assert list(injection.run_dir.iterdir()) == []
    finally:
        injection.remove()


def test_static_check_runs_no_code_from_the_working_directory(
    tmp_path: Path, processes: Processes
) -> None:
    planted = "import pathlib; pathlib.Path(__file__).with_name('PWNED').write_text('x')\n"
    (tmp_path / "lintloader").mkdir()
    (tmp_path / "lintloader" / "__init__.py").write_text(planted)
    (tmp_path / "lintloader" / "__main__.py").write_text(planted)
    (tmp_path / "json.py").write_text(planted)
    out = tmp_path / "report.json"
    lintloader = Path(PYTHON).with_name("lintloader")
    command = fetcher("buggy")
    proc = processes.run(
        [str(lintloader), "trace", "--json", str(out), "--", *command],
        cwd=tmp_path, env=trace_env(tmp_path / "cache"), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert not list(tmp_path.rglob("PWNED"))
    (site,) = json.loads(out.read_text())["sites"]
    assert site["extra_pools"][0]["static"]["code"] == "LL101"


def test_static_check_that_cannot_run_says_so(tmp_path: Path) -> None:
    from lintloader.runtime.trace.records import Frame
    from lintloader.runtime.trace.static_link import check_files

    frame = Frame(str(RUNTIME / "buggy_fetcher.py"), 20, "f")
    findings = check_files([frame], str(REPO), str(tmp_path / "missing"))
    assert findings.by_site == {} and findings.error is not None
    assert findings.error.startswith("static check did not run:")


def test_hook_refuses_a_run_directory_others_can_write(
    tmp_path: Path, processes: Processes
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    code = (
        "from lintloader.runtime.trace import hook; hook.install()\n"
        "import torch.utils.data as d\n"
        "for _ in d.DataLoader(list(range(4)), batch_size=2): pass\n"
    )
    env = {**os.environ, "LINTLOADER_TRACE_DIR": str(shared)}
    proc = processes.run([PYTHON, "-c", code], env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"hook not installed: {shared} is not private" in proc.stderr
    assert list(shared.iterdir()) == []


def test_advice_names_unsafe_fixes_when_only_an_unsafe_fixer_covers_it(
    tmp_path: Path, processes: Processes
) -> None:
    """A loader built directly in the epoch loop that also sets state on the dataset: LL202,
    covered only by hoist-dataloader (unsafe; the safe hoist-loader-call refuses). The advice
    says so; plain `fix` leaves it, `fix --unsafe-fixes` fixes it, and the fixed script traces
    OK."""
    loop = "    for epoch in range(3):\n"
    source = (SCRIPTS / "direct_loop.py").read_text()
    assert loop in source
    stateful = source.replace(loop, f"{loop}        dataset.epoch = epoch\n")
    (tmp_path / "direct_loop.py").write_text(stateful)
    env = trace_env(tmp_path / "cache")

    def trace() -> subprocess.CompletedProcess[str]:
        return processes.run(
            [PYTHON, "-m", "lintloader", "trace", "--json", str(tmp_path / "r.json"), "--",
             PYTHON, "direct_loop.py"],
            cwd=tmp_path, env=env, timeout=300,
        )  # fmt: skip

    first = trace()
    assert first.returncode == 1, first.stderr
    assert (
        "change: LL202 at direct_loop.py:15: only an unsafe fix covers it: "
        "`lintloader fix --unsafe-fixes direct_loop.py` (hoist-dataloader; review the diff)"
    ) in first.stderr
    (site,) = json.loads((tmp_path / "r.json").read_text())["sites"]
    static = site["extra_pools"][0]["static"]
    assert (static["fixes"], static["safe_fixes"]) == (["hoist-dataloader"], [])

    def fix(*flags: str) -> subprocess.CompletedProcess[str]:
        return processes.run(
            [PYTHON, "-m", "lintloader", "fix", *flags, "direct_loop.py"],
            cwd=tmp_path, timeout=120,
        )  # fmt: skip

    assert fix().returncode == 1  # the safe fixes leave it in place
    assert fix("--unsafe-fixes").returncode == 0
    after = trace()
    assert after.returncode == 0, after.stderr
    (site,) = json.loads((tmp_path / "r.json").read_text())["sites"]
    assert (site["worker_pools"], site["needed_pools"]) == (1, 1)


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="re-creates the hook directory as 'nobody' (needs root and setpriv)",
)
def test_another_user_cannot_recreate_the_removed_hook_directory(processes: Processes) -> None:
    """A process that outlives the command keeps PYTHONPATH pointing at the removed hook
    directory: another user must not be able to create it again with a sitecustomize."""
    shared = Path(tempfile.mkdtemp(prefix="trace-shared-", dir="/tmp"))
    try:
        shared.chmod(0o755)  # traversable by anyone, as a home or a cache directory is
        probe = "import os; print(os.environ['PYTHONPATH'].split(os.pathsep)[0])"
        proc = processes.run(
            [PYTHON, "-m", "lintloader", "trace", "--", PYTHON, "-c", probe],
            env=trace_env(shared), timeout=60,
        )  # fmt: skip
        hook_dir = Path(proc.stdout.strip())
        assert hook_dir.is_relative_to(shared) and not hook_dir.exists()
        plant = f"import os; os.makedirs({str(hook_dir)!r})"
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        attempt = processes.run(
            [*as_nobody, sys.executable, "-I", "-c", plant],
            timeout=60,
        )  # fmt: skip
        assert attempt.returncode != 0 and "PermissionError" in attempt.stderr
        assert not hook_dir.exists()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


# Where check and trace cannot name the same site (docs/concepts.md): run and the function that
# calls the loader's construction -> why.
UNLINKED: dict[tuple[str, str], str] = {
    ("non_persistent", "<module>"): "persistent_workers=not args.no_persistent: check cannot "
    "know the argument turns it off (a branch by argument); LL204 reports only a loader that "
    "is surely not persistent",
    ("eval", "evaluate"): "make_loader builds both loaders of rebuild_loop.py; check gives the "
    "construction site one finding, at train's epoch loop (line 58), and lists evaluate's "
    "caller under 'also reached from': no finding at evaluate's own frames",
    ("reload_ci", "Tiny.train_dataloader"): "LL205 is reported where the Trainer is built "
    "(reload_dataloaders_every_n_epochs=args.reload), a line that is no frame of the loader's "
    "construction, and at info: the reload count is an argument (a branch by argument)",
}


def test_check_and_trace_name_the_same_site_and_kind(runs: dict[str, Run]) -> None:
    """Issue 41: every extra pool these runs count links to a finding of `check` at one of its
    creating frames, of the same kind (defeated, avoidable, raise), or the table above says why
    it cannot."""
    found = [
        line for name, run in runs.items() for line in disagreements(name, run.report, UNLINKED)
    ]
    assert not found, "\n".join(found)
