#!/usr/bin/env python3
"""What the framework stubs cost a project scan (issue 42: with stubs <= 1.2x without them).

Two copies of this checkout's ``lintloader`` package are made in a scratch folder: one as it is,
one whose ``data/frameworks.toml`` is an empty table (no framework known, no stub roots). Each
project folder given is then scanned by the real CLI from each copy, in the venv running this
script (``python -m lintloader check --no-cache -j 1 --min-severity info --output-format json
.``, the copy first on ``PYTHONPATH``), the two alternating in ABBA order so that drift of a
shared machine hits both alike. It prints, per project, the median wall time of each, the
median of the paired ratios with/without, how many findings each printed and how many files
each parsed (the stubs may make a file worth reading that nothing else seeds: a call of a
framework's loader-building method; that work is what finds its waste), and the load average
before and after.

Usage (from the repository root)::

    .venv/bin/python benchmarks/stub_speed.py                       # fixtures/
    .venv/bin/python benchmarks/stub_speed.py /tmp/contact_trees/artidoro+qlora --rounds 9

Exit status 0 when every paired ratio's median is within the bar (1.2), 1 when one is not, 2
when a project folder is missing or a scan fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lintloader"
STUBS = Path("data") / "frameworks.toml"
EMPTY_STUBS = "# No framework known: stubs turned off for a timing comparison.\nframework = []\n"
BAR = 1.2
PARSED = re.compile(r"\((\d+) parsed")


@dataclass(frozen=True)
class Timing:
    seconds: float
    findings: int
    parsed: int  # files the scan parsed (``-v``): the stubs may make more of them worth reading


@dataclass(frozen=True)
class Pair:
    project: Path
    with_stubs: tuple[Timing, ...]
    without: tuple[Timing, ...]

    @property
    def ratio(self) -> float:
        pairs = zip(self.with_stubs, self.without, strict=True)
        return statistics.median(a.seconds / b.seconds for a, b in pairs)

    def lines(self) -> list[str]:
        def median(runs: tuple[Timing, ...]) -> float:
            return statistics.median(t.seconds for t in runs)

        return [
            f"{self.project}: {len(self.with_stubs)} pairs",
            f"  with stubs:    median {median(self.with_stubs):.3f} s, "
            f"{self.with_stubs[0].findings} findings, {self.with_stubs[0].parsed} files parsed",
            f"  without stubs: median {median(self.without):.3f} s, "
            f"{self.without[0].findings} findings, {self.without[0].parsed} files parsed",
            f"  paired ratio with/without: median {self.ratio:.3f} (bar {BAR})",
        ]


def copies(scratch: Path) -> tuple[Path, Path]:
    """The package as it is, and with an empty stubs table: each a folder for PYTHONPATH."""
    with_stubs, without = scratch / "with", scratch / "without"
    for root in (with_stubs, without):
        shutil.copytree(PACKAGE, root / "lintloader", ignore=shutil.ignore_patterns("__pycache__"))
    (without / "lintloader" / STUBS).write_text(EMPTY_STUBS, encoding="utf-8")
    return with_stubs, without


def scan(path_entry: Path, project: Path) -> Timing:
    command = [sys.executable, "-m", "lintloader", "check", "--no-cache", "-j", "1", "-v"]
    command += ["--min-severity", "info", "--output-format", "json", "."]
    env = {**os.environ, "PYTHONPATH": str(path_entry)}
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{project}: lintloader exited {done.returncode}: {done.stderr[-300:]}")
    parsed = PARSED.search(done.stderr)
    return Timing(seconds, len(json.loads(done.stdout or "[]")), int(parsed[1]) if parsed else -1)


def measure(project: Path, with_stubs: Path, without: Path, rounds: int) -> Pair:
    scan(with_stubs, project)  # warm the file system and the interpreter's caches once each
    scan(without, project)
    a: list[Timing] = []
    b: list[Timing] = []
    for index in range(rounds):
        if index % 2 == 0:
            a.append(scan(with_stubs, project))
            b.append(scan(without, project))
        else:
            b.append(scan(without, project))
            a.append(scan(with_stubs, project))
    return Pair(project, tuple(a), tuple(b))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="*", type=Path, default=[REPO / "fixtures"])
    parser.add_argument("--rounds", type=int, default=7, help="pairs per project")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.projects if not p.is_dir()]
    if missing:
        print(f"error: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    pairs: list[Pair] = []
    with tempfile.TemporaryDirectory(prefix="stub-speed-") as scratch:
        with_stubs, without = copies(Path(scratch))
        try:
            for project in args.projects:
                pairs.append(measure(project.resolve(), with_stubs, without, args.rounds))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 2
    for pair in pairs:
        print("\n".join(pair.lines()))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(pair.ratio <= BAR for pair in pairs) else 1


if __name__ == "__main__":
    sys.exit(main())
