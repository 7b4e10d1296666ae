"""A long fuzzing run of the robustness properties (issue 8), beyond what CI affords.

CI runs ``tests/unit/test_fuzz.py`` with 30 examples per property. This script runs the same
properties with many more (hypothesis + hypothesmith), and optionally the interrupt test with more
seeds, and prints what it ran and how long it took::

    .venv/bin/python benchmarks/fuzz.py                     # 2000 examples per property
    .venv/bin/python benchmarks/fuzz.py --examples 10000 --seed 7
    .venv/bin/python benchmarks/fuzz.py --interrupt-seeds 20   # also 20 interrupt runs
    .venv/bin/python benchmarks/fuzz.py --revisit-seeds 10     # also 10 series of edits

A failure prints hypothesis's minimal failing example (the program bytes) and exits non-zero.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(command: list[str], env: dict[str, str]) -> tuple[int, float]:
    started = time.monotonic()
    code = subprocess.call(command, cwd=REPO, env={**os.environ, **env})
    return code, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per property")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default random)")
    parser.add_argument(
        "--interrupt-seeds",
        type=int,
        default=0,
        help="also run the interrupt test with this many different seeds",
    )
    parser.add_argument(
        "--revisit-seeds",
        type=int,
        default=0,
        help="also run this many series of 60 random edits replayed from the cache",
    )
    args = parser.parse_args()

    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    seed = ["--hypothesis-seed", str(args.seed)] if args.seed is not None else []
    code, took = run(
        [*pytest, *seed, "tests/unit/test_fuzz.py"],
        {"LINTLOADER_FUZZ_EXAMPLES": str(args.examples)},
    )
    print(f"fuzz: {args.examples} examples per property: exit {code} in {took:.0f} s")
    failed = code != 0
    for offset in range(args.interrupt_seeds):
        code, took = run(
            [*pytest, "tests/test_robustness_interrupt.py"],
            {"LINTLOADER_INTERRUPT_SEED": str(1000 + offset)},
        )
        print(f"interrupt seed {1000 + offset}: exit {code} in {took:.0f} s")
        failed = failed or code != 0
    series = ["tests/test_revisit.py", "-k", "any_series_of_edits"]
    for offset in range(args.revisit_seeds):
        env = {"LINTLOADER_REVISIT_SEED": str(2000 + offset), "LINTLOADER_REVISIT_STEPS": "60"}
        code, took = run([*pytest, *series], env)
        print(f"revisit seed {2000 + offset}: exit {code} in {took:.0f} s")
        failed = failed or code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
