"""``lintloader trace`` counts pools against the cheapest correct run (lintloader/domain/cost.py),
on real runs: real DataLoader workers whose ``worker_init_fn`` sleeps a known time, so that every
pool start has a known least cost. The shortest settings that show each point: 2 workers per
loader, 2 or 3 epochs, 2 steps.

- a one-batch pass per step (``next(iter(loader))``) is a defeated pool, persistent or not;
- a val loader rebuilt per evaluation fails when persistent; when not, it reports what
  persistence would save, within 20 % of what the fixed run saves;
- a non-persistent loader kept across epochs is not a FAIL and reports what it could save;
- train/val splits of one dataset, their loaders built at one line, need 2 pools;
- a loader rebuilt from another line after the loop started replaces the first one;
- under torchrun, the wall-clock share is the slowest rank's, not the ranks' sum;
- a loader per stage of a curriculum (new data each epoch, by design) is needed, not extra.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_docs_console import (
    TRACED_BY_TEST_TRACE_COST,
    assert_block_printed,
    block_env,
    trace_parts,
)
from trace_agreement import caller_of, disagreements

pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "fixtures" / "runtime" / "trace" / "cost_loop.py"
PYTHON = sys.executable
TORCHRUN = shutil.which("torchrun", path=str(Path(PYTHON).parent))
SLEEP = 1.0  # seconds each worker's worker_init_fn sleeps: a pool start costs at least this
AT_ONCE = 4
SHORT = ("--epochs", "2", "--steps", "2", "--init-sleep", str(SLEEP))
THREE = ("--epochs", "3", "--init-sleep", str(SLEEP))

# docs/trace.md's run of `cost_loop.py step` with SHORT, as the block types it (checked
# against the block too: test_the_docs_block_is_what_the_run_printed)
STEP, _ = trace_parts(TRACED_BY_TEST_TRACE_COST["step"])
RUNS: dict[str, tuple[str, ...]] = {
    "step": STEP,
    "step_build_persistent": (PYTHON, str(SCRIPT), "step-build", "--persistent", *SHORT),
    "eval_persistent": (PYTHON, str(SCRIPT), "eval", "--persistent", *THREE),
    "eval": (PYTHON, str(SCRIPT), "eval", *THREE),
    "eval_fixed": (PYTHON, str(SCRIPT), "eval", "--fixed", *THREE),
    "kept": (PYTHON, str(SCRIPT), "kept", *THREE),
    "splits": (PYTHON, str(SCRIPT), "splits", "--persistent", "--epochs", "2"),
    "two_lines": (PYTHON, str(SCRIPT), "two-lines", "--persistent", *THREE),
    "curriculum": (PYTHON, str(SCRIPT.with_name("curriculum_loop.py")), "--persistent", *THREE),
}
if TORCHRUN:
    RUNS["torchrun"] = (
        TORCHRUN, "--standalone", "--nproc-per-node", "2",
        str(SCRIPT), "two-lines", "--persistent", *THREE,
    )  # fmt: skip


class Run:
    def __init__(self, code: int, stdout: str, stderr: str, report: dict[str, Any]) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.report = report

    def site(self, function: str, frame: int = 1) -> dict[str, Any]:
        """The one site whose ``frame``-th creating frame (0: the line that builds it, 1: its
        caller) is in ``function``."""
        sites = self.report["sites"]
        (found,) = [s for s in sites if s["created_by"][frame]["function"] == function]
        return found


def _started(name: str, out: Path) -> subprocess.Popen[str]:
    env = {**block_env(REPO, out / "lintloader-cache"), "PYTHONUNBUFFERED": "1"}  # the docs'
    env["XDG_CACHE_HOME"] = str(out / "cache")
    env.pop("XDG_RUNTIME_DIR", None)
    command = [PYTHON, "-m", "lintloader", "trace", "--json", str(out / f"{name}.json"), "--"]
    return subprocess.Popen(
        [*command, *RUNS[name]], cwd=REPO, env=env, text=True, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """Every run, :data:`AT_ONCE` side by side; each one's process group killed at the end."""
    out = tmp_path_factory.mktemp("cost")
    names = list(RUNS)
    done: dict[str, Run] = {}
    started: list[subprocess.Popen[str]] = []
    try:
        for begin in range(0, len(names), AT_ONCE):
            batch = {name: _started(name, out) for name in names[begin : begin + AT_ONCE]}
            started += batch.values()
            for name, proc in batch.items():
                stdout, stderr = proc.communicate(timeout=300)
                path = out / f"{name}.json"
                report = json.loads(path.read_text()) if path.exists() else {}
                done[name] = Run(proc.returncode, stdout, stderr, report)
        yield done
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _start_cost(site: dict[str, Any]) -> float:
    """The measured start cost of one pool of ``site``: the median of its pools'."""
    return statistics.median(float(pool["cost_s"]) for pool in site["pools"])


def test_one_batch_pass_per_step_is_defeated(runs: dict[str, Run]) -> None:
    run = runs["step"]
    assert run.code == 1, run.stderr
    (site,) = run.report["sites"]
    # 2 epochs x 2 steps: 4 pools, the cheapest run needs 1
    assert (site["worker_pools"], site["needed_pools"], site["defeated_pools"]) == (4, 1, 3)
    assert {extra["kind"] for extra in site["extra_pools"]} == {"pool per step"}
    assert {extra["cost_kind"] for extra in site["extra_pools"]} == {"defeated"}
    expected = 3 * _start_cost(site)
    assert abs(run.report["lost_s"] - expected) <= 0.2 * expected, (run.report["lost_s"], expected)
    assert run.report["lost_s"] >= 3 * SLEEP * 0.95  # each pool slept SLEEP in its workers
    assert "`it = iter(loader)` once" in run.stderr
    assert "persistent_workers=True" not in run.stderr.split("change:")[1]


def test_the_docs_block_is_what_the_run_printed(runs: dict[str, Run]) -> None:
    """docs/trace.md's block of the step run is what the run printed (stdout, then stderr;
    tests/test_docs_console.py's matcher): the run is made once, for both."""
    assert STEP[-len(SHORT) :] == SHORT
    run = runs["step"]
    done = subprocess.CompletedProcess("step", run.code, run.stdout, run.stderr)
    assert_block_printed(TRACED_BY_TEST_TRACE_COST["step"], done)


def test_a_new_persistent_loader_per_step_is_defeated(runs: dict[str, Run]) -> None:
    run = runs["step_build_persistent"]
    assert run.code == 1, run.stderr
    (site,) = run.report["sites"]
    assert (site["worker_pools"], site["needed_pools"], site["defeated_pools"]) == (4, 1, 3)
    assert {extra["kind"] for extra in site["extra_pools"]} == {"pool per step"}
    expected = 3 * _start_cost(site)
    assert abs(run.report["lost_s"] - expected) <= 0.2 * expected


def test_persistent_val_loader_rebuilt_per_evaluation_fails(runs: dict[str, Run]) -> None:
    run = runs["eval_persistent"]
    assert run.code == 1, run.stderr
    evaluate = run.site("evaluate")
    assert (evaluate["worker_pools"], evaluate["needed_pools"]) == (3, 1)
    assert {extra["kind"] for extra in evaluate["extra_pools"]} == {"new loader"}
    assert "LL201" not in run.stderr  # the guard against a raise is no fix for a rebuild
    assert "by hand, build the loader once, outside the loop" in run.stderr


def test_non_persistent_val_loader_rebuilt_per_evaluation_reports_what_it_could_save(
    runs: dict[str, Run],
) -> None:
    run, fixed = runs["eval"], runs["eval_fixed"]
    assert run.code == 0 and fixed.code == 0, (run.stderr, fixed.stderr)
    evaluate = run.site("evaluate")
    assert not evaluate["failing"] and evaluate["avoidable_pools"] == 2
    assert {extra["kind"] for extra in evaluate["extra_pools"]} == {"rebuilt"}
    # what the fixed run (one persistent val loader) saves, measured: time starting the val
    # loader's pools. Both runs build the same train loader (one pool); its start, the first in
    # each process, varies with the machine's load and is no part of what the fix changes.
    train_line = run.site("eval_mode")["created_by"][1]["line"]
    (fixed_val,) = [s for s in fixed.report["sites"] if s["created_by"][1]["line"] != train_line]
    saved = evaluate["startup_s"] - fixed_val["startup_s"]
    assert saved >= 2 * SLEEP * 0.95
    assert abs(run.report["could_save_s"] - saved) <= 0.2 * saved, (run.report, saved)
    assert f"could save {run.report['could_save_s']:.3f} s (" in run.stderr
    # never `persistent_workers=True` alone for a loader built per call
    (change,) = [line for line in run.stderr.splitlines() if "change:" in line]
    assert "build the loader once, outside the loop" in change


def test_a_sites_steady_first_batch_comes_from_its_own_passes(runs: dict[str, Run]) -> None:
    """Issue 41: the eval run has two sites, the train loader (one pool, warm passes after the
    first) and the val loader (a pool, slept SLEEP, at every evaluation). Each site's steady
    first batch comes from its own passes: below every first batch that started one of its
    pools, and far below SLEEP (another site's pool starts never inflate it)."""
    run = runs["eval"]
    sites = {caller_of(site): site for site in run.report["sites"]}
    assert set(sites) == {"eval_mode", "evaluate"}
    for name, site in sites.items():
        steady = site["steady_first_batch_s"]
        assert steady is not None and steady < SLEEP / 2, (name, steady)
        assert all(steady < pool["first_batch_s"] for pool in site["pools"]), (name, site)


def test_non_persistent_loader_kept_across_epochs_is_advice(runs: dict[str, Run]) -> None:
    run = runs["kept"]
    assert run.code == 0, run.stderr
    (site,) = run.report["sites"]
    assert not site["failing"] and (site["worker_pools"], site["needed_pools"]) == (3, 1)
    assert {extra["kind"] for extra in site["extra_pools"]} == {"pool per pass"}
    expected = 2 * _start_cost(site)
    assert abs(run.report["could_save_s"] - expected) <= 0.2 * expected
    assert run.report["could_save_s"] >= 2 * SLEEP * 0.95
    assert run.stderr.splitlines()[-1].startswith("OK: no worker pool defeated")
    assert f"could save {run.report['could_save_s']:.3f} s" in run.stderr.splitlines()[-1]
    assert "pass persistent_workers=True at" in run.stderr


def test_splits_of_one_dataset_built_at_one_line_need_a_pool_each(runs: dict[str, Run]) -> None:
    run = runs["splits"]
    assert run.code == 0, run.stderr
    (site,) = run.report["sites"]  # one line builds both, over two splits of the same length
    assert (len(site["loaders"]), site["worker_pools"], site["needed_pools"]) == (2, 2, 2)
    assert site["extra_pools"] == []


def test_a_loader_rebuilt_from_another_line_is_a_replacement(runs: dict[str, Run]) -> None:
    run = runs["two_lines"]
    assert run.code == 1, run.stderr
    rebuilt = run.site("two_lines", frame=0)
    first = [s for s in run.report["sites"] if s is not rebuilt]
    assert [s["needed_pools"] for s in first] == [1]
    assert (rebuilt["worker_pools"], rebuilt["needed_pools"]) == (2, 0)
    assert {extra["kind"] for extra in rebuilt["extra_pools"]} == {"new loader"}
    # the first rebuild replaced the loader of the other line; the second, the first rebuild
    assert [extra["replaced_at"] and extra["replaced_at"]["function"]
            for extra in rebuilt["extra_pools"]] == ["make_loader", None]  # fmt: skip
    assert "replacing the loader built at fixtures/runtime/trace/cost_loop.py:" in run.stderr
    expected = 2 * _start_cost(rebuilt)
    assert run.report["lost_s"] >= 2 * SLEEP * 0.95
    assert abs(run.report["lost_s"] - expected) <= 0.2 * expected


def test_a_loader_per_stage_of_a_curriculum_is_needed(runs: dict[str, Run]) -> None:
    """Issue 41: data that changes by design counts apart. A persistent loader built every
    epoch over that epoch's stage (a new subset) is a loader the cheapest correct run needs
    too: no extra pool, no FAIL, and no advice to build it once (which would train on the
    first stage forever)."""
    run = runs["curriculum"]
    assert run.code == 0, run.stderr
    (site,) = run.report["sites"]
    assert (len(site["loaders"]), site["worker_pools"], site["needed_pools"]) == (3, 3, 3)
    assert site["extra_pools"] == [] and site["advice"] == []
    assert "build the loader once" not in run.stderr


@pytest.mark.skipif(TORCHRUN is None, reason="torchrun is not installed next to this Python")
def test_torchrun_reports_the_slowest_ranks_wall_clock_share(runs: dict[str, Run]) -> None:
    run = runs["torchrun"]
    assert run.code == 1, run.stderr
    by_rank = run.report["lost_by_process"]
    assert len(by_rank) == 2 and all(value >= 2 * SLEEP * 0.95 for value in by_rank.values())
    assert run.report["lost_s"] == pytest.approx(max(by_rank.values()), abs=1e-6)
    assert run.report["lost_share"] == pytest.approx(
        run.report["lost_s"] / run.report["wall_s"], abs=1e-3
    )
    assert ", the slowest of 2 ranks)" in run.stderr


# Where check and trace cannot name the same site (docs/concepts.md): run and the function that
# calls the loader's construction -> why.
HELPER = (
    "make_loader builds every loader of cost_loop.py; check gives a construction site one "
    "finding, at its worst caller (step_build's step loop), and lists the other callers under "
    "'also reached from': no finding of its own at this caller's frames"
)
UNLINKED: dict[tuple[str, str], str] = {
    ("step", "step"): "check resolves no loader returned by a helper "
    "(`loader = make_loader(...)`) for LL203: a detection gap, not a cost disagreement",
    ("eval_persistent", "evaluate"): HELPER,
    ("eval", "evaluate"): HELPER,
    ("kept", "kept"): "persistent_workers=args.persistent: check cannot know the argument is "
    "off (a branch by argument), and LL204 reports only a loader that is surely not persistent",
}


def test_check_and_trace_name_the_same_site_and_kind(runs: dict[str, Run]) -> None:
    """Issue 41: every extra pool these runs count links to a finding of `check` of the same
    kind, or the table above says why it cannot."""
    found = [
        line for name, run in runs.items() for line in disagreements(name, run.report, UNLINKED)
    ]
    assert not found, "\n".join(found)
