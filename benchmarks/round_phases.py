#!/usr/bin/env python3
"""The CPU of each sharded round in the parent and in its resident child: does one wait?

A cold ``check`` with two jobs runs each demand round in the parent and a resident child
(``select/rounds.py``); the round lasts as long as the slower of the two. Each run here is a
real ``python -m lintloader`` process with a phase timer installed: ``os.times`` around every
``RoundTaker.take`` in the parent and every request a child serves (``RoundTaker._serve``),
written per process as JSON lines. A child's requests count in the round whose ``take`` was
running when they ended. Per run it reports the parent's CPU, the child's, each round's pair,
the wall and the user + system CPU of the whole run, and the critical path: the parent's CPU
outside the rounds plus, each round, the slower side (about the wall on a quiet machine with
a core per process). Runs alternate between two
copies of lintloader (a ``git archive`` of each on ``PYTHONPATH``), so that the load of a
shared machine hits both alike; the medians are printed, and ``--json`` keeps every run.

Usage (from anywhere; the cwd of the runs is ``--cwd``)::

    git archive 5e1bca0 lintloader | tar -x -C /tmp/base
    .venv/bin/python benchmarks/round_phases.py --base /tmp/base --head . --pairs 10 \\
        --cwd /tmp/work/transformers-4.55 -- check --no-cache --exit-zero .
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROUNDS_SHOWN = 3


@dataclass
class RunPhases:
    """One run's CPU seconds: the parent's, the child's, and (parent, child) per round."""

    parent: float
    child: float
    rounds: list[tuple[float, float]] = field(default_factory=list)
    load: float = 0.0  # the load average (1 minute) as the run started
    wall: float = 0.0  # the whole run's, and its user + system CPU, children included
    cpu: float = 0.0

    @property
    def serial(self) -> float:
        return self.parent - sum(mine for mine, _ in self.rounds)

    @property
    def path(self) -> float:
        return self.serial + sum(max(pair) for pair in self.rounds)


def install_timer(log_dir: str) -> None:
    """In the measured process: wrap the round entry points, log each process's CPU."""
    from lintloader.select import rounds

    def cpu() -> float:
        times = os.times()
        return times.user + times.system

    def log(kind: str, **values: float) -> None:
        with open(os.path.join(log_dir, f"{os.getpid()}.jsonl"), "a") as out:
            out.write(json.dumps({"kind": kind, "t": time.time(), **values}) + "\n")

    def timed(kind: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started, wall = cpu(), time.perf_counter()
            result = method(*args, **kwargs)
            if isinstance(result, types.GeneratorType):  # a child's answers, sent as made
                return streamed(kind, result, started, wall)
            log(kind, cpu=cpu() - started, wall=time.perf_counter() - wall)
            return result

        return wrapper

    def streamed(kind: str, answers: Any, started: float, wall: float) -> Any:
        """The answers; their CPU logged once all are made (the time spent sending them
        between two is not counted)."""
        used, mark = cpu() - started, cpu()
        for answer in answers:
            used += cpu() - mark
            yield answer
            mark = cpu()
        used += cpu() - mark
        log(kind, cpu=used, wall=time.perf_counter() - wall)

    taker = rounds.RoundTaker
    taker.take = timed("take", taker.take)  # type: ignore[method-assign]
    taker._serve = timed("serve", taker._serve)  # type: ignore[method-assign]
    leave = os._exit

    def exit_logged(code: int) -> None:
        log("end", cpu=cpu())
        leave(code)

    os._exit = exit_logged  # type: ignore[assignment]
    log("start", cpu=cpu())


def phases(log_dir: Path) -> RunPhases:
    """What one run's logs say (see the module docstring)."""
    by_pid = {p.stem: [json.loads(line) for line in p.open()] for p in log_dir.glob("*.jsonl")}
    parent = next(rows for rows in by_pid.values() if rows[0]["kind"] == "start")
    serves = [
        r for rows in by_pid.values() if rows is not parent for r in rows if r["kind"] == "serve"
    ]
    takes = [r for r in parent if r["kind"] == "take"]
    end = next(r["cpu"] for r in parent if r["kind"] == "end")
    found = RunPhases(end, sum(r["cpu"] for r in serves))
    for take in takes:
        start = take["t"] - take["wall"]
        theirs = sum(r["cpu"] for r in serves if start <= r["t"] <= take["t"])
        if theirs or take["cpu"] >= 0.02:  # a round that searched (the last asks no token)
            found.rounds.append((take["cpu"], theirs))
    return found


def run_once(code: Path, cwd: Path, args: list[str]) -> RunPhases:
    env = {**os.environ, "PYTHONPATH": str(code.resolve())}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as logs:
        command = [sys.executable, str(Path(__file__).resolve()), "--timer", logs, "--", *args]
        load, before = os.getloadavg()[0], _children_cpu()
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
        wall = time.perf_counter() - started
        found = phases(Path(logs))
    found.load, found.wall, found.cpu = load, wall, _children_cpu() - before
    return found


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def medians(runs: list[RunPhases]) -> dict[str, object]:
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    shown = min(ROUNDS_SHOWN, min(len(r.rounds) for r in runs))
    return {
        "runs": len(runs),
        "load": [round(min(r.load for r in runs), 1), round(max(r.load for r in runs), 1)],
        "wall_s": med([r.wall for r in runs]),
        "cpu_s": med([r.cpu for r in runs]),
        "parent_s": med([r.parent for r in runs]),
        "child_s": med([r.child for r in runs]),
        "all_s": med([r.parent + r.child for r in runs]),
        "serial_s": med([r.serial for r in runs]),
        "path_s": med([r.path for r in runs]),
        "rounds": [
            {
                "parent_s": med([r.rounds[k][0] for r in runs]),
                "child_s": med([r.rounds[k][1] for r in runs]),
                "slower_s": med([max(r.rounds[k]) for r in runs]),
                "gap_s": med([abs(r.rounds[k][0] - r.rounds[k][1]) for r in runs]),
            }
            for k in range(shown)
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="a copy of lintloader to compare with")
    parser.add_argument("--head", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("--json", type=Path, help="where every run is written")
    parser.add_argument("--timer", help=argparse.SUPPRESS)  # in the measured process
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    if options.timer:
        install_timer(options.timer)
        from lintloader.cli.main import run

        sys.argv = ["lintloader", *args]
        run()
        return 0
    sides = {"base": options.base, "head": options.head} if options.base else {"head": options.head}
    runs: dict[str, list[RunPhases]] = {side: [] for side in sides}
    for pair in range(options.pairs):
        order = list(sides) if pair % 2 == 0 else list(reversed(sides))
        for side in order:
            runs[side].append(run_once(sides[side], options.cwd, args))
    summary = {side: medians(found) for side, found in runs.items()}
    print(json.dumps(summary, indent=1))
    if options.json:
        every = {side: [asdict(r) for r in found] for side, found in runs.items()}
        options.json.write_text(json.dumps({"medians": summary, "runs": every}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
