#!/usr/bin/env python3
"""The wall timeline of a cold ``check``: when the child is forked, what each process does,
how long each waits for the other, round by round.

Each run is a real ``python -m lintloader``-like process (``cli.main.run``) whose steps are
timed as their modules are imported (an import hook wraps them then, so the imports
themselves keep their order and cost): ``time.monotonic`` (one clock for every process) and
the process's CPU (``time.process_time``) at the start and end of each step, in the parent
and in its resident child, written per process as JSON lines (``STEPS``: the console
script's start, ``prepare`` and ``run_check``, ``SourceSet.load``, each ``RoundTaker.take``
(a round), the fork (``Resident.start``), the parent's searches and parses and its waits for
the child's answers (``Resident.answer``), the codec between them, each request the child
serves (``_serve``; an answer sent in parts counts until its last part), the children let
go and reaped, ``conclude`` and the exit; and the import of a few modules). Times are from
the moment the harness started the process.

It prints the first run's timeline of each copy (``--show``) and the medians over the runs
of: when ``run_check``, the fork and round 1 began, when the last round ended, the exit and
when the harness saw the process gone; each round's wall, the parent's CPU and its wait for
the child, the child's CPU, busy and idle time in it; each step's CPU per process; and the
critical path in CPU seconds, whatever the load (``path_cpu``): the parent's CPU to its
exit plus the child's CPU while the parent waited for it (``child_in_waits``; a request's
CPU spread evenly over its span). ``--base``/``--head`` alternate two copies of lintloader
(``git archive`` of each on ``PYTHONPATH``), as ``round_phases.py`` does.

Usage::

    cd /tmp && python $REPO/benchmarks/round_timeline.py --base /tmp/old --head /tmp/new \\
        --runs 8 --cwd /tmp/lintloader-issue45/transformers-4.55 -- check --no-cache .
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

# the steps timed, by the module that defines them: (module, class or "", attribute, label)
STEPS = [
    ("lintloader.cli.options", "", "prepare", "prepare"),
    ("lintloader.pipeline.engine", "", "run_check", "run_check"),
    ("lintloader.pipeline.engine", "", "analyze", "analyze"),
    ("lintloader.select.policy", "", "select", "select"),
    ("lintloader.pipeline.engine", "", "conclude", "conclude"),
    ("lintloader.scan.read.sources", "SourceSet", "load", "load"),
    ("lintloader.select.rounds", "RoundTaker", "take", "take"),
    ("lintloader.select.rounds", "RoundTaker", "_search", "search"),
    ("lintloader.select.rounds", "RoundTaker", "_parse", "parse"),
    ("lintloader.select.rounds", "RoundTaker", "_serve", "serve"),
    ("lintloader.select.rounds", "", "load_shard", "load_shard"),
    ("lintloader.select.rounds", "", "dump_shard", "dump_shard"),
    ("lintloader.select.rounds", "", "work_pieces", "work_pieces"),
    ("lintloader.select.rounds", "", "parse_pieces", "parse_pieces"),
    ("lintloader.select.rounds", "RoundTaker", "_request", "request"),
    ("lintloader.scan.read.sources", "SourceSet", "learn", "learn"),
    ("lintloader.scan.read.sources", "SourceSet", "remember_summaries", "remember"),
    ("lintloader.scan.read.sources", "SourceSet", "forget", "forget"),
    ("lintloader.scan.read.sources", "SourceSet", "save", "save"),
    ("lintloader.scan.read.sources", "SourceSet", "keep", "keep"),
    ("lintloader.workers.forked", "Resident", "start", "fork"),
    ("lintloader.workers.forked", "Resident", "close", "close child"),
    ("lintloader.select.rounds", "RoundTaker", "close", "close"),
    ("lintloader.workers.forked", "Resident", "answer", "wait"),
]

# the modules whose import is timed too (it includes what they import)
IMPORTS = {"lintloader.cli.group", "lintloader.cli.check", "lintloader.select.rounds"}


def install(log_dir: str, started: float) -> None:
    """In the measured process: wrap each step of ``STEPS`` as its module is imported."""
    import importlib.abc
    import importlib.machinery

    def cpu() -> float:
        return time.process_time()

    def write(row: dict[str, Any]) -> None:
        with open(os.path.join(log_dir, f"{os.getpid()}.jsonl"), "a") as out:
            out.write(json.dumps(row) + "\n")

    def log(label: str, t: float, c: float) -> None:
        """One step: its label, wall from the harness's start to now, CPU since ``c``."""
        now = time.monotonic() - started
        write({"step": label, "t0": t - started, "t1": now, "cpu": cpu() - c, "at": c})

    def mark(label: str) -> None:
        """A moment (the start, the exit): the wall and the CPU so far."""
        write({"step": label, "t0": time.monotonic() - started, "t1": 0.0, "cpu": cpu()})

    def timed(label: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t, c = time.monotonic(), cpu()
            result = None
            try:
                result = method(*args, **kwargs)
                if isinstance(result, types.GeneratorType):  # a child's answers, as made
                    return streamed(label, result, t, c)
                return result
            finally:
                if not isinstance(result, types.GeneratorType):
                    log(label, t, c)

        return wrapper

    def streamed(label: str, answers: Any, t: float, c: float) -> Any:
        """The answers, logged as one step once all are made and sent."""
        yield from answers
        log(label, t, c)

    wanted: dict[str, list[tuple[str, str, str]]] = {}
    for module, owner, attribute, label in STEPS:
        wanted.setdefault(module, []).append((owner, attribute, label))

    def patch(module: Any) -> None:
        for owner, attribute, label in wanted.get(module.__name__, []):
            holder = getattr(module, owner) if owner else module
            setattr(holder, attribute, timed(label, getattr(holder, attribute)))

    class Loader(importlib.abc.Loader):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def create_module(self, spec: Any) -> Any:
            return self.inner.create_module(spec)

        def exec_module(self, module: Any) -> None:
            t, c = time.monotonic(), cpu()
            self.inner.exec_module(module)
            patch(module)
            log(f"import {module.__name__}", t, c)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name not in wanted and name not in IMPORTS:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                spec.loader = Loader(spec.loader)
            return spec

    sys.meta_path.insert(0, Finder())
    leave = os._exit

    def exit_logged(code: int) -> None:
        mark("exit")
        leave(code)

    os._exit = exit_logged  # type: ignore[assignment]
    mark("start")


def run_once(code: Path, cwd: Path, args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code.resolve())}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as logs:
        started = time.monotonic()
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--timer",
            logs,
            str(started),
            "--",
            *args,
        ]
        load = os.getloadavg()[0]
        subprocess.run(command, cwd=cwd, env=env, check=False, capture_output=True)
        gone = time.monotonic() - started
        rows = {p.stem: [json.loads(line) for line in p.open()] for p in Path(logs).glob("*.jsonl")}
    parent = next(r for r in rows.values() if r[0]["step"] == "start")
    children = [r for r in rows.values() if r is not parent]
    return {"load": load, "gone": gone, "parent": parent, "children": children}


def step_cpu(run: dict[str, Any]) -> dict[str, float]:
    """Each step's CPU over the run, in the parent (``p:``) and the children (``c:``)."""
    found: dict[str, float] = {}
    rows = [("p", r) for r in run["parent"]] + [("c", r) for c in run["children"] for r in c]
    for who, row in rows:
        if row["t1"]:
            key = f"{who}:{row['step']}"
            found[key] = found.get(key, 0.0) + row["cpu"]
    return found


def figures(run: dict[str, Any]) -> dict[str, Any]:
    """A run's start, rounds (wall, the parent's wait, the child's idle) and end."""
    parent, children = run["parent"], run["children"]
    takes = [r for r in parent if r["step"] == "take"]
    serves = [r for rows in children for r in rows if r["step"] == "serve"]
    forks = [r for r in parent if r["step"] == "fork"]
    exit_at = next(r["t0"] for r in parent if r["step"] == "exit")
    found: dict[str, Any] = {
        "start": next(r["t0"] for r in parent if r["step"] == "start"),
        "run_check": next((r["t0"] for r in parent if r["step"] == "run_check"), 0.0),
        "round1": takes[0]["t0"] if takes else 0.0,
        "fork": forks[0]["t1"] if forks else 0.0,
        "last_round_end": takes[-1]["t1"] if takes else 0.0,
        "exit": exit_at,
        "gone": run["gone"],
        "rounds": [],
        "steps": step_cpu(run),
    }
    waits = [r for r in parent if r["step"] == "wait"]
    # the critical path in CPU seconds, whatever the load: the parent's CPU, and the child's
    # while the parent waited for it (a serve's CPU spread evenly over its span)
    waited = sum(
        s["cpu"] * _overlap(w, s) / (s["t1"] - s["t0"])
        for w in waits
        for s in serves
        if s["t1"] > s["t0"]
    )
    found["path_cpu"] = next(r["cpu"] for r in parent if r["step"] == "exit") + waited
    found["child_in_waits"] = waited
    for take in takes:
        inside = [s for s in serves if take["t0"] <= s["t0"] and s["t1"] <= take["t1"] + 1e-3]
        waited = sum(w["t1"] - w["t0"] for w in waits if take["t0"] <= w["t0"] <= take["t1"])
        wall = take["t1"] - take["t0"]
        served = sum(s["t1"] - s["t0"] for s in inside)
        found["rounds"].append(
            {
                "wall": wall,
                "parent_cpu": take["cpu"],
                "parent_wait": waited,
                "child_busy": served,
                "child_cpu": sum(s["cpu"] for s in inside),
                "child_idle": wall - served if inside else 0.0,
            }
        )
    return found


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    return max(0.0, min(a["t1"], b["t1"]) - max(a["t0"], b["t0"]))


def show(run: dict[str, Any]) -> None:
    rows = [("parent", r) for r in run["parent"]]
    rows += [(f"child{i}", r) for i, c in enumerate(run["children"]) for r in c]
    for who, row in sorted(rows, key=lambda pair: pair[1]["t0"]):
        end = f"-{row['t1']:.3f}" if row["t1"] else ""
        at = f" (at {row['at']:.3f})" if "at" in row else ""
        print(f"  {who:7} {row['t0']:.3f}{end:7} {row['step']:10} cpu {row['cpu']:.3f}{at}")
    print(f"  gone    {run['gone']:.3f}")


def medians(found: list[dict[str, Any]]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    keys = ["start", "run_check", "fork", "round1", "last_round_end", "exit", "gone"]
    keys += ["path_cpu", "child_in_waits"]
    summary: dict[str, Any] = {key: med([f[key] for f in found]) for key in keys}
    shown = min(len(f["rounds"]) for f in found)
    labels = sorted({key for f in found for key in f["steps"]})
    summary["steps"] = {k: med([f["steps"].get(k, 0.0) for f in found]) for k in labels}
    summary["rounds"] = [
        {key: med([f["rounds"][k][key] for f in found]) for key in found[0]["rounds"][k]}
        for k in range(shown)
    ]
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="a copy of lintloader to compare with")
    parser.add_argument("--head", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--runs", type=int, default=5, help="runs of each copy, interleaved")
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("--show", action="store_true", help="print each copy's first timeline")
    parser.add_argument("--json", type=Path, help="where every run's figures are written")
    parser.add_argument("--timer", nargs=2, help=argparse.SUPPRESS)  # in the measured process
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    if options.timer:
        install(options.timer[0], float(options.timer[1]))
        from lintloader.cli.main import run

        sys.argv = ["lintloader", *args]
        run()
        return 0
    sides = {"base": options.base, "head": options.head} if options.base else {"head": options.head}
    found: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    loads: list[float] = []
    for number in range(options.runs):
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for side in order:
            run = run_once(sides[side], options.cwd, args)
            loads.append(run["load"])
            if options.show and number == 0:
                print(f"{side}:")
                show(run)
            found[side].append(figures(run))
    summary = {side: medians(runs) for side, runs in found.items()}
    summary["load"] = [round(min(loads), 1), round(max(loads), 1)]
    print(json.dumps(summary, indent=1))
    if options.json:
        options.json.write_text(json.dumps({"medians": summary, "runs": found}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
