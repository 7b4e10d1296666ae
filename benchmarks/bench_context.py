#!/usr/bin/env python3
"""Environment context: a project scan that reads the frameworks its classes subclass, paired
against the same scan without them (issue 29's bar: at most 1.5x).

A user project of ``--files`` generated modules (helpers, a ``LightningModule`` whose loaders
are built in its hooks, a ``Callback``) is checked with ``--python`` set to an interpreter
whose site-packages holds pytorch_lightning (the scan reads the base classes it needs from
there as context) and to a bare virtual environment (the same look-ups find nothing). Runs
alternate between the two, each with a cache of its own: cold (an empty cache), warm (nothing
changed) and warm after one changed file, ``--repeats`` times. It prints the medians of wall
time and CPU, the paired ratios with/without context, and how many files each run parsed.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_context.py --files 100 --repeats 5
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_site_packages import BIN, Run, install_tool, report, rewrite, run_measured

KINDS = ("cold", "warm", "changed")
MODEL = '''"""The user's model: Lightning calls its hooks (lintloader reads when, as context)."""
import pytorch_lightning as pl
from torch.utils.data import DataLoader

from userproj.helpers_0 import make_dataset


class LitModel(pl.LightningModule):
    def __init__(self, size=64):
        super().__init__()
        self.size = size

    def train_dataloader(self):
        return DataLoader(make_dataset(self.size), batch_size=32, num_workers=4)

    def val_dataloader(self):
        return DataLoader(make_dataset(self.size // 4), batch_size=32, num_workers=4)

    def training_step(self, batch, batch_idx):
        return batch.sum()
'''
CALLBACK = '''"""A callback the trainer calls at the end of every epoch."""
import pytorch_lightning as pl


class Report(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
'''
HELPER = '''"""Helper module {n}: plain code, no loader."""
import math


def make_dataset(size):
    return [float(i) for i in range(size)]


class Scaler{n}:
    def __init__(self, factor={n}):
        self.factor = factor

    def scale(self, values):
        return [value * self.factor for value in values]

    def norm(self, values):
        return math.sqrt(sum(value * value for value in values))


def pipeline_{n}(values):
    scaler = Scaler{n}()
    return scaler.norm(scaler.scale(values))
'''


def make_project(work: Path, files: int) -> Path:
    """A git project ``userproj/`` of ``files`` modules (helpers, the model, the callback)."""
    project = work / f"context-project-{files}"
    package = project / "userproj"
    if package.is_dir():
        return project
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(MODEL)
    (package / "callbacks.py").write_text(CALLBACK)
    for n in range(max(files - 3, 1)):
        (package / f"helpers_{n}.py").write_text(HELPER.format(n=n))
    (project / "pyproject.toml").write_text("[project]\nname = 'userproj'\n")
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"],
    ):
        subprocess.run(command, cwd=project, check=True)
    return project


def bare_python(work: Path) -> Path:
    """An interpreter whose site-packages is empty: a scan with it reads no context."""
    venv = work / "bare-env"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin" / "python"


def parsed(run: Run) -> int:
    found = re.search(r"\((\d+) parsed", run.stderr)
    return int(found.group(1)) if found else -1


def check(tool: Path, python: Path, cache: Path) -> list[str]:
    return [str(tool), "check", "--python", str(python), "--cache-dir", str(cache),
            "--exit-zero", "userproj"]  # fmt: skip


def measure(
    tool: Path, project: Path, pythons: dict[str, Path], work: Path, repeats: int
) -> dict[tuple[str, str], list[Run]]:
    changed = project / "userproj" / "model.py"
    original = changed.read_bytes()
    runs: dict[tuple[str, str], list[Run]] = {(p, k): [] for p in pythons for k in KINDS}
    try:
        for repeat in range(repeats):
            caches = {name: work / f"context-cache-{name}" for name in pythons}
            for cache in caches.values():
                shutil.rmtree(cache, ignore_errors=True)
            for kind in KINDS:
                if kind == "changed":
                    rewrite(changed, original + f"\n# touched {repeat}\n".encode())
                order = list(pythons) if repeat % 2 == 0 else list(reversed(pythons))
                for name in order:
                    runs[name, kind].append(
                        run_measured(check(tool, pythons[name], caches[name]), project)
                    )
                rewrite(changed, original)
    finally:
        rewrite(changed, original)
    return runs


def summarize(runs: dict[tuple[str, str], list[Run]], files: int) -> dict[str, object]:
    summary: dict[str, object] = {"project_files": files}
    for kind in KINDS:
        mine, plain = runs["context", kind], runs["none", kind]
        summary[kind] = {
            "with_context_s": statistics.median(r.wall_s for r in mine),
            "without_context_s": statistics.median(r.wall_s for r in plain),
            "with_context_cpu_s": statistics.median(r.cpu_s for r in mine),
            "without_context_cpu_s": statistics.median(r.cpu_s for r in plain),
            "ratio": statistics.median(a.wall_s / b.wall_s for a, b in zip(mine, plain)),  # noqa: B905
            "cpu_ratio": statistics.median(a.cpu_s / b.cpu_s for a, b in zip(mine, plain)),  # noqa: B905
            "parsed_with_context": [parsed(r) for r in mine],
            "parsed_without_context": [parsed(r) for r in plain],
        }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=BIN / "python",
                        help="an interpreter with pytorch_lightning installed")  # fmt: skip
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-context"))
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    tool = install_tool(args.work)
    project = make_project(args.work, args.files)
    pythons = {"context": args.python.absolute(), "none": bare_python(args.work)}
    runs = measure(tool, project, pythons, args.work, args.repeats)
    report(summarize(runs, args.files), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
