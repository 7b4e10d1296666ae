#!/usr/bin/env python3
"""The parent's serial start and end of a cold ``check``, paired with another revision.

Runs ``lintloader check ARGS --cache-dir FRESH --exit-zero -q`` (with ``--no-cache``: no cache
instead of an empty one) as the console script does (``cli.main.run``), in the working
directory ``--cwd`` (default: a temporary folder), in process, with a phase timer around the
parent's steps (wall and ``time.process_time``: the parent's CPU only, the forked children's
is not in it), once with each ``--code`` folder on ``sys.path`` (a ``git archive`` of a
revision, or this checkout), interleaved, and prints each run and the medians:

* ``start``: from the console script's first line to the selection's first round (imports,
  configuration, discovery, the stat of every file, the replay keys);
* ``end``: from the last round to the exit (the stat index stored, the rules, the run stored,
  the output, the warm fast path's answer stored);
* ``start_cpu``, ``end_cpu``: the parent's CPU in each;
* ``discover``, ``discover_cpu``: discovery, part of ``start`` (``cli.options.discover``: the
  walk, the files named, what the walk leaves to store);
* ``witness``: storing that answer (``Witness.store``), part of ``end``;
* ``cpu``: the parent's CPU over the whole run, ``wall`` the run's wall as the harness saw it;
* ``*_cpu`` of the store's other parts, in the parent: ``keys`` (the replay keys worked out
  before the rounds: ``replay_keys``, or ``replay_shape`` where a revision has it), ``puts``
  (the summaries this process parsed, written: ``SummaryCache.put``), ``index``
  (``SourceSet.save``), ``run_store`` (``store_analyzed``);
* ``hooks_cpu``: the demand hooks of every round (``select/policy.py``), and ``link_cpu``:
  linking the summaries (``Program.extend``, the first round's and each later one's).

Usage (the cwd outside any repository, ``.pyc`` files compiled for both)::

    git archive 5e1bca0 lintloader | tar -x -C /tmp/old
    python benchmarks/serial_phases.py --code /tmp/old --code . --pairs 8 -- --site-packages
    python benchmarks/serial_phases.py --code /tmp/old --code . --pairs 8 \\
        --cwd /tmp/lintloader-issue45/tree-4x-distinct --no-cache -- .
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the child: time the parent's steps, then run the console script
TIMER = r"""
import json, os, sys, time
T0, C0, PID, rows = time.perf_counter(), time.process_time(), os.getpid(), []
def timed(label, fn):
    def wrapped(*a, **k):
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            if os.getpid() == PID:
                now = time.process_time()
                rows.append((label, w - T0, time.perf_counter() - w, now - c, c - C0))
    return wrapped
from lintloader.cli import main, fast_record, options
options.discover = timed("discover", options.discover)
from lintloader.select import policy
from lintloader.pipeline import engine
from lintloader.cache.summaries import SummaryCache
from lintloader.scan.read.sources import SourceSet
policy.select = timed("select", policy.select)
hooks_of = policy.demand_hooks  # each rule's demand hook, timed each round
policy.demand_hooks = lambda rules: [timed("hooks", hook) for hook in hooks_of(rules)]
from lintloader.link.program import Program
Program.extend = timed("link", Program.extend)
fast_record.Witness.store = timed("witness", fast_record.Witness.store)
for name in ("replay_keys", "replay_shape"):
    if hasattr(engine, name):
        setattr(engine, name, timed("keys", getattr(engine, name)))
engine.store_analyzed = timed("run_store", engine.store_analyzed)
SummaryCache.put = timed("puts", SummaryCache.put)
SourceSet.save = timed("index", SourceSet.save)
leave = os._exit
def report(code):
    rows.append(("exit", time.perf_counter() - T0, 0.0, time.process_time() - C0, 0.0))
    with open(OUT, "w") as out:
        json.dump(rows, out)
    leave(code)
os._exit = report
OUT, sys.argv = sys.argv[1], ["lintloader", *sys.argv[2:]]
main.run(prog_name="lintloader")
"""


PARTS = ("keys", "puts", "index", "run_store", "hooks", "link")


def measure(
    code: Path, args: list[str], work: Path, cwd: Path | None = None, cache: bool = True
) -> dict[str, float]:
    folder, out = work / "cache", work / "phases.json"
    shutil.rmtree(folder, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(code.resolve()))
    command = [sys.executable, "-c", TIMER, str(out), "check", *args, "--exit-zero", "-q"]
    command += ["--cache-dir", str(folder)] if cache else ["--no-cache"]
    load = os.getloadavg()[0]
    began = time.perf_counter()
    subprocess.run(command, cwd=cwd or work, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    rows: dict[str, tuple[float, ...]] = {}
    cpu_of: dict[str, float] = {}
    for label, *row in json.loads(out.read_text()):
        rows[label] = tuple(row)
        cpu_of[label] = cpu_of.get(label, 0.0) + row[2]  # a phase timed more than once
    select_at, select_wall, select_cpu, start_cpu = rows["select"]
    exit_at, _, cpu, _ = rows["exit"]
    _, witness_wall, witness_cpu, _ = rows.get("witness", (0.0, 0.0, 0.0, 0.0))
    _, discover_wall, discover_cpu, _ = rows.get("discover", (0.0, 0.0, 0.0, 0.0))
    return {
        "start": select_at,
        "start_cpu": start_cpu,
        "end_cpu": cpu - start_cpu - select_cpu,
        "end": exit_at - select_at - select_wall,
        "witness": witness_wall,
        "witness_cpu": witness_cpu,
        "discover": discover_wall,
        "discover_cpu": discover_cpu,
        **{f"{part}_cpu": cpu_of.get(part, 0.0) for part in PARTS},
        "cpu": cpu,
        "wall": wall,
        "load": load,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", action="append", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--cwd", type=Path, help="where check runs (default: a temporary folder)")
    parser.add_argument("--no-cache", action="store_true", help="run with --no-cache")
    parser.add_argument("args", nargs="+", help="check's arguments (after --)")
    options = parser.parse_args()
    runs: dict[Path, list[dict[str, float]]] = {code: [] for code in options.code}
    with tempfile.TemporaryDirectory(prefix="serial-phases-") as folder:
        for pair in range(options.pairs):
            order = options.code if pair % 2 == 0 else options.code[::-1]
            for code in order:
                row = measure(code, options.args, Path(folder), options.cwd, not options.no_cache)
                runs[code].append(row)
                print(code, " ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
    for code, rows in runs.items():
        medians = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        print("median", code, " ".join(f"{k} {v:.3f}" for k, v in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
