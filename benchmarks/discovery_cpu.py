#!/usr/bin/env python3
"""The parent's discovery in a cold ``check``, paired with another revision.

Runs ``lintloader check ARGS --exit-zero -q`` as the console script does (``cli.main.run``),
with ``--cache-dir`` an empty folder (a fresh cache) or, with ``--no-cache``, none, once with
each ``--code`` folder on ``sys.path`` (a ``git archive`` of a revision, or this checkout),
interleaved, in the working directory ``--cwd``; a timer around ``cli.options.discover`` (the
walk, the files named, what the walk leaves to store) gives its wall and CPU
(``time.process_time``: the parent's), and the run's whole wall and the parent's CPU up to
the exit. Prints each run, with the load average beside it, and the medians.

Usage (the cwd outside any repository, ``.pyc`` files compiled for both)::

    git archive e5b4f1d lintloader | tar -x -C /tmp/old
    python benchmarks/discovery_cpu.py --code /tmp/old --code . --pairs 8 \\
        --cwd /tmp/lintloader-issue45/tree-4x-distinct -- .
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

# the child: time discovery, then run the console script
TIMER = r"""
import json, os, sys, time
T0, C0, PID, rows = time.perf_counter(), time.process_time(), os.getpid(), {}
from lintloader.cli import main, options
found = options.discover
def discover(*a, **k):
    w, c = time.perf_counter(), time.process_time()
    try:
        return found(*a, **k)
    finally:
        rows["discover"], rows["discover_cpu"] = time.perf_counter() - w, time.process_time() - c
options.discover = discover
leave = os._exit
def report(code):
    rows["cpu"] = time.process_time() - C0
    with open(OUT, "w") as out:
        json.dump(rows, out)
    leave(code)
os._exit = report
OUT, sys.argv = sys.argv[1], ["lintloader", *sys.argv[2:]]
main.run(prog_name="lintloader")
"""


def measure(code: Path, args: list[str], cwd: Path, work: Path, cache: bool) -> dict[str, float]:
    folder, out = work / "cache", work / "discovery.json"
    shutil.rmtree(folder, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(code.resolve()))
    command = [sys.executable, "-c", TIMER, str(out), "check", *args, "--exit-zero", "-q"]
    command += ["--cache-dir", str(folder)] if cache else ["--no-cache"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    return {**json.loads(out.read_text()), "wall": wall, "load": load}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", action="append", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("--no-cache", action="store_true", help="run with --no-cache")
    parser.add_argument("args", nargs="+", help="check's arguments (after --)")
    options = parser.parse_args()
    runs: dict[Path, list[dict[str, float]]] = {code: [] for code in options.code}
    with tempfile.TemporaryDirectory(prefix="discovery-cpu-") as folder:
        for pair in range(options.pairs):
            order = options.code if pair % 2 == 0 else options.code[::-1]
            for code in order:
                row = measure(code, options.args, options.cwd, Path(folder), not options.no_cache)
                runs[code].append(row)
                print(code, " ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
    for code, rows in runs.items():
        medians = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        print("median", code, " ".join(f"{k} {v:.3f}" for k, v in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
