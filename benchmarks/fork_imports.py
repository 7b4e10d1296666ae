#!/usr/bin/env python3
"""What a cold ``check`` imports before its first child is forked, and what that costs.

1. Runs ``lintloader check ARGS`` once per ``--code`` folder under ``python -X importtime``,
   with ``os.fork`` wrapped to mark the fork in the same stream: the modules imported before
   it (the importtime order: a module after those it imports) are the parent's serial start.
2. In fresh interpreters, interleaved, ``--runs`` times per folder: imports the first
   folder's list in that order, then the rules (``all_rules``: ``import_module`` bypasses
   importtime's lines), and prints the CPU (``time.process_time``) with the number of
   dataclasses and of named tuples made; then the medians.

Usage (the cwd outside any repository, ``.pyc`` files compiled for both)::

    git archive 17d4ef9 lintloader | tar -x -C /tmp/old
    python benchmarks/fork_imports.py --code /tmp/old --code /tmp/new --runs 12 \\
        --cwd /tmp/lintloader-issue45/transformers-4.55 -- --no-cache .
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

MARK = "import time: FORK"
# run as the console script, with the fork marked on the importtime stream (stderr)
LISTER = f"""
import os, runpy, sys
_fork = os.fork
def fork():
    if not getattr(fork, "done", False):
        fork.done = True
        sys.stderr.write({MARK!r} + "\\n")
        sys.stderr.flush()
    return _fork()
os.fork = fork
sys.argv = ["lintloader", *sys.argv[1:]]
runpy.run_module("lintloader", run_name="__main__", alter_sys=True)
"""
# import the listed modules and the rules; print the CPU and what was made
TIMER = """
import collections, dataclasses, importlib, json, sys, time
made = collections.Counter()
_process_class, _namedtuple = dataclasses._process_class, collections.namedtuple
def process_class(*args):
    made["dataclasses"] += 1
    return _process_class(*args)
def namedtuple(*args, **kwargs):
    made["named_tuples"] += 1
    return _namedtuple(*args, **kwargs)
dataclasses._process_class, collections.namedtuple = process_class, namedtuple
modules = json.loads(sys.argv[1])
start = time.process_time()
for name in modules:
    importlib.import_module(name)
from lintloader.rules.registry import all_rules
all_rules()
print(json.dumps({"cpu": time.process_time() - start, **made}))
"""


def env_for(code: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": code}


def before_fork(code: str, cwd: str, args: list[str]) -> list[str]:
    command = [sys.executable, "-X", "importtime", "-c", LISTER, "check", *args]
    run = subprocess.run(command, cwd=cwd, env=env_for(code), capture_output=True, text=True)
    lines = run.stderr.splitlines()
    if MARK not in lines:
        raise SystemExit(f"{code}: no fork (exit {run.returncode}):\n{run.stderr[-2000:]}")
    rows = [line.split("|") for line in lines[: lines.index(MARK)]]
    names = [row[2].strip() for row in rows if len(row) == 3 and "imported package" not in row[2]]
    return [name for name in names if name.startswith(("lintloader", "click"))]


def timed(code: str, modules: list[str]) -> dict[str, float]:
    command = [sys.executable, "-c", TIMER, json.dumps(modules)]
    run = subprocess.run(command, cwd="/tmp", env=env_for(code), capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"{code}: {run.stderr[-2000:]}")
    return dict(json.loads(run.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cwd", required=True)
    parser.add_argument("args", nargs="+", help="check's arguments (after --)")
    options = parser.parse_args()
    for code in options.code:
        listed = before_fork(code, options.cwd, options.args)
        print(f"{code}: {len(listed)} lintloader and click modules before the fork")
    modules = before_fork(options.code[0], options.cwd, options.args)
    for code in options.code:
        timed(code, modules)  # .pyc files written
    runs: dict[str, list[dict[str, float]]] = {code: [] for code in options.code}
    for _ in range(options.runs):
        for code in options.code:
            runs[code].append(timed(code, modules))
            print(code, json.dumps(runs[code][-1]), f"load {os.getloadavg()[0]:.2f}")
    for code, figures in runs.items():
        cpu = statistics.median(run["cpu"] for run in figures)
        print(f"median {code} cpu {cpu:.4f}", {k: v for k, v in figures[0].items() if k != "cpu"})


if __name__ == "__main__":
    main()
