#!/usr/bin/env python3
"""Two copies of lintloader and ruff, cold, interleaved: wall and CPU medians of each.

Each pair runs ``python -m lintloader check --no-cache --exit-zero ARGS`` once with each copy
on ``PYTHONPATH`` (``git archive`` of each commit's ``lintloader/``; which goes first
alternates), then ``ruff check --no-cache --select E,F --output-format concise .`` (its code
frames would flatter lintloader), all in ``--cwd``; the load average
is read before each pair. Wall from ``perf_counter``, CPU as the user + system time of the
process and its children (``getrusage``). ``.pyc`` files are written (the timing is of warm
imports). ``--fresh-cache``: each lintloader run gets an empty ``--cache-dir`` of its own
instead of ``--no-cache`` (a cold run that writes its cache, as ``issue45_figures.py`` times
it). Prints the medians, and every run as JSON to ``--json``::

    cd /tmp && python $REPO/benchmarks/paired_ruff.py --base /tmp/base --head /tmp/head \\
        --ruff $REPO/.venv/bin/ruff --cwd /tmp/work/transformers-4.55 --pairs 10 -- .
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measured(command: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall, user + system CPU) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--head", required=True)
    parser.add_argument("--ruff", required=True)
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--json")
    parser.add_argument("--fresh-cache", action="store_true", help="an empty cache per run")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    args = [a for a in options.args if a != "--"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ruff = [options.ruff, "check", "--no-cache", "--select", "E,F", "--exit-zero", "-q",
            "--output-format", "concise", "."]  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {"base": [], "head": [], "ruff": []}
    loads = []
    scratch = Path(tempfile.mkdtemp(prefix="paired-ruff-"))
    cache = scratch / "cache"
    caching = ["--cache-dir", str(cache)] if options.fresh_cache else ["--no-cache"]
    for pair in range(options.pairs):
        loads.append(os.getloadavg()[0])
        for name in ("base", "head") if pair % 2 == 0 else ("head", "base"):
            copy = dict(env, PYTHONPATH=getattr(options, name))
            check = [sys.executable, "-m", "lintloader", "check", *caching, "--exit-zero"]
            shutil.rmtree(cache, ignore_errors=True)
            runs[name].append(measured([*check, *args], options.cwd, copy))
        runs["ruff"].append(measured(ruff, options.cwd, env))
    shutil.rmtree(scratch, ignore_errors=True)
    medians = {
        name: {
            "wall_s": round(statistics.median(w for w, _ in values), 3),
            "cpu_s": round(statistics.median(c for _, c in values), 3),
        }
        for name, values in runs.items()
    }
    load = [round(min(loads), 2), round(max(loads), 2)]
    print(json.dumps({"medians": medians, "load": load}, indent=1))
    if options.json:
        Path(options.json).write_text(json.dumps({"medians": medians, "load": load, "runs": runs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
