#!/usr/bin/env python3
"""What ``lintloader trace`` costs a training run in which nothing respawns.

A small training loop (persistent workers, a matrix product per batch) runs alternately
untraced (``python bench_train``) and traced (``lintloader trace -- python bench_train``), so
that drift of a shared machine hits both alike. Two times per run:

* wall: the whole command, as the user waits for it (for the traced run this includes starting
  ``lintloader trace`` itself and reading the records back);
* loop: the training loop alone, timed inside the script (DataLoader passes, batches and the
  per-batch hook);
* cpu: the CPU time (user + system) of the run and every process it waited for, which a
  machine shared with other jobs disturbs far less than the wall clock.

On a busy machine both swing by more than the 2 % they are meant to resolve, so it also
measures the hook's own cost per batch in one process: a ``num_workers=0`` loader over tiny
samples (the worst case: almost no work per batch) with torch's methods and the patched ones
swapped in turn, many pairs, the median paired difference per batch.

It prints the medians and the median of the paired ratios traced/untraced of each; the target
is an overhead under 2 % (ratio < 1.02). Usage (from the repository root)::

    .venv/bin/python benchmarks/trace_overhead.py --pairs 5 --epochs 3 --batches 300
    .venv/bin/python benchmarks/trace_overhead.py --replay benchmarks/results-trace-overhead.json

``--json FILE`` keeps the measurements and the lines the run printed; ``--replay FILE`` prints
those lines again (docs/trace.md shows a recorded run that way, and a test runs it).
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TRAIN = """
import sys, time
import torch
from torch.utils.data import DataLoader, TensorDataset

epochs, batches, width = (int(a) for a in sys.argv[1:4])
torch.set_num_threads(1)
data = TensorDataset(torch.randn(batches * 16, width))
loader = DataLoader(data, batch_size=16, num_workers=2, persistent_workers=True)
weight = torch.randn(width, width)
begin = time.perf_counter()
for _ in range(epochs):
    for (batch,) in loader:
        (batch @ weight).relu_().sum()
print(f"LOOP {time.perf_counter() - begin:.6f}")
"""


MICRO = """
import json, statistics, sys, tempfile, time
import torch
from torch.utils.data import DataLoader
import torch.utils.data.dataloader as module
from lintloader.runtime.trace import hook

pairs, batches = int(sys.argv[1]), int(sys.argv[2])
names = [(module.DataLoader, "__init__"), (module.DataLoader, "__iter__"),
         (module._BaseDataLoaderIter, "__next__"),
         (module._MultiProcessingDataLoaderIter, "__init__"),
         (module._MultiProcessingDataLoaderIter, "_shutdown_workers")]
plain = [getattr(cls, name) for cls, name in names]
hook.patch(module, hook.Recorder(tempfile.mkdtemp(), None))
patched = [getattr(cls, name) for cls, name in names]

def use(functions):
    for (cls, name), function in zip(names, functions):
        setattr(cls, name, function)

def one_pass(functions):
    use(functions)
    loader = DataLoader(list(range(batches)), batch_size=None)
    begin = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - begin

diffs = []
for number in range(pairs):
    order = [plain, patched] if number % 2 else [patched, plain]
    times = {id(f): one_pass(f) for f in order}
    diffs.append((times[id(patched)] - times[id(plain)]) / batches)
plain_per_batch = one_pass(plain) / batches
print(json.dumps({"added_us": statistics.median(diffs) * 1e6,
                  "plain_us": plain_per_batch * 1e6}))
"""


def per_batch_overhead(pairs: int, batches: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", MICRO, str(pairs), str(batches)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def fixed_cost(pairs: int) -> dict[str, float]:
    """CPU and wall time ``trace`` adds to a run whatever its length: starting lintloader,
    the hook in a Python process, reading the records back (``python -c pass``)."""
    plain = [sys.executable, "-c", "print('LOOP 0')"]
    traced = [sys.executable, "-m", "lintloader", "trace", "--", *plain]
    cpu, wall = [], []
    for _ in range(pairs):
        untraced, with_trace = run_once(plain), run_once(traced)
        wall.append(with_trace[0] - untraced[0])
        cpu.append(with_trace[2] - untraced[2])
    return {"added_cpu_s": statistics.median(cpu), "added_wall_s": statistics.median(wall)}


def run_once(command: list[str]) -> tuple[float, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    loop = next(line for line in done.stdout.splitlines() if line.startswith("LOOP "))
    return wall, float(loop.split()[1]), cpu


KINDS = ("wall", "loop", "cpu")


def _cells(measured: dict[str, tuple[float, ...]], name: str) -> str:
    return f"{name} " + " ".join(
        f"{kind} {value:.3f} s" for kind, value in zip(KINDS, measured[name], strict=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=300, help="batches per epoch")
    parser.add_argument("--width", type=int, default=256, help="matrix size of the work per batch")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--replay", type=Path, help="print what the run that wrote this printed")
    args = parser.parse_args()
    if args.replay:
        recorded = json.loads(args.replay.read_text(encoding="utf-8"))
        print(f"recorded: {recorded['command']}", *recorded["output"], sep="\n")
        return
    output: list[str] = []

    def say(line: str) -> None:
        output.append(line)
        print(line, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_train.py"
        script.write_text(TRAIN, encoding="utf-8")
        plain = [sys.executable, str(script), str(args.epochs), str(args.batches), str(args.width)]
        traced = [sys.executable, "-m", "lintloader", "trace", "--", *plain]
        pairs = []
        for number in range(args.pairs):
            order = [("plain", plain), ("traced", traced)]
            if number % 2:
                order.reverse()  # neither always runs first
            measured = {name: run_once(command) for name, command in order}
            pairs.append(measured)
            cells = " | ".join(_cells(measured, name) for name in measured)
            say(f"pair {number + 1}: {cells}")
    summary: dict[str, object] = {
        "cpus": os.cpu_count(),
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    for index, what in enumerate(KINDS):
        plain_s = [p["plain"][index] for p in pairs]
        traced_s = [p["traced"][index] for p in pairs]
        ratios = [t / p for p, t in zip(plain_s, traced_s, strict=True)]
        summary[what] = {
            "plain_median_s": statistics.median(plain_s),
            "traced_median_s": statistics.median(traced_s),
            "median_paired_ratio": statistics.median(ratios),
        }
        say(
            f"{what:4}: plain {statistics.median(plain_s):.3f} s, traced "
            f"{statistics.median(traced_s):.3f} s, median paired ratio "
            f"{statistics.median(ratios):.4f}"
        )
    fixed = fixed_cost(pairs=9)
    summary["fixed"] = fixed
    say(
        f"fixed cost per run: +{fixed['added_cpu_s']:.3f} s CPU, +{fixed['added_wall_s']:.3f} s "
        "wall (medians of 9 pairs of `python -c` with and without trace)"
    )
    micro = per_batch_overhead(pairs=31, batches=20000)
    summary["per_batch"] = micro
    say(
        f"hook per batch: +{micro['added_us']:.2f} us (a num_workers=0 batch of an int takes "
        f"{micro['plain_us']:.2f} us untraced)"
    )
    summary["command"] = " ".join(["python", "benchmarks/trace_overhead.py", *sys.argv[1:]])
    summary["output"] = output
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
