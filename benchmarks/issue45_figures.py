#!/usr/bin/env python3
"""Every acceptance figure of issue 45 in one run, each paired with ruff, medians.

Meant to be run once, on a quiet machine, at the end of a round (it builds what it needs under
``--work`` the first time, and installs lintloader from this checkout as pre-commit does):

* ``project``: a cold scan (an empty cache) of transformers 4.55 unpacked as a git project
  (its wheel from ``pip download transformers==4.55.0 --no-deps``, or ``--transformers-wheel``),
  paired with ``ruff check --no-cache --select E,F`` on the same tree (goal: <= 1.0x ruff);
* ``precommit``: what the pre-commit hook runs after a commit that appends a comment to that
  project's 265 KB ``transformers/trainer.py``: ``check --project-root=auto FILE``, warm (the
  commit before filled the cache) (goal: <= 0.3 s);
* ``site_packages``: ``bench_site_packages.py`` (cold and warm ``check --site-packages``,
  each paired with ruff; goals: cold <= 0.5x, warm <= 0.05x ruff's wall);
* ``distinct_4x``: ``bench_scale.py``'s 4x tree of distinct bytes (a comment per copy), cold,
  paired with ruff (goals: <= 0.5x ruff's wall and <= 0.5x its memory);
* ``server``: ``bench_lsp.py``'s first diagnostics on the 5,400-file project (goal: <= 1 s).

The machine's load average is printed with every part (a figure taken under load says so).

Usage (from the repository root)::

    .venv/bin/python benchmarks/issue45_figures.py --repeats 5 --json /tmp/issue45.json
    .venv/bin/python benchmarks/issue45_figures.py --repeats 1 --only project precommit
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
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import build_tree, lintloader_on, median, ruff_on
from bench_site_packages import (
    BIN,
    REPO,
    Run,
    install_tool,
    purelib,
    py_files,
    report,
    rewrite,
    run_measured,
)

TRANSFORMERS = "transformers==4.55.0"
TRAINER = "transformers/trainer.py"  # 265 KB, on a chain of the analysis
PARTS = ("project", "precommit", "site_packages", "distinct_4x", "server")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def load() -> float:
    return round(os.getloadavg()[0], 2)


def ratio(mine: list[Run], theirs: list[Run], attribute: str = "wall_s") -> float:
    """The median of the paired ratios (runs alternate, so drift hits both alike)."""
    return statistics.median(
        getattr(m, attribute) / getattr(r, attribute) for m, r in zip(mine, theirs, strict=True)
    )


def med(runs: list[Run], attribute: str = "wall_s") -> float:
    return round(median(runs, attribute), 3)


def transformers_project(work: Path, wheel: Path | None) -> Path:
    """transformers 4.55's package, unpacked from its wheel into a git project (one commit)."""
    project = work / "transformers-4.55"
    if (project / ".git").is_dir():
        return project
    if wheel is None:
        wheels = work / "wheels"
        found = sorted(wheels.glob("transformers-4.55.0-*.whl"))
        if not found:
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d"]
            subprocess.run([*pip, str(wheels), TRANSFORMERS], check=True)
            found = sorted(wheels.glob("transformers-4.55.0-*.whl"))
        wheel = found[0]
    staging = project.with_name(project.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.startswith("transformers/")]
        archive.extractall(staging, members)
    env = {**os.environ, **GIT_IDENTITY}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "transformers 4.55"]):
        subprocess.run(["git", *command], cwd=staging, check=True, env=env)
    staging.rename(project)
    return project


def project_ruff(relative: str = ".") -> list[str]:
    return [str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F", "--exit-zero",
            "--quiet", "--output-format", "concise", relative]  # fmt: skip


def hook(tool: Path, cache: Path, relative: str) -> list[str]:
    return [str(tool), "check", "-v", "--project-root=auto", "--cache-dir", str(cache),
            "--exit-zero", relative]  # fmt: skip


def measure_project(tool: Path, project: Path, work: Path, repeats: int) -> dict[str, object]:
    """Cold project scans of transformers, each after a ruff run on the same tree."""
    mine, theirs = [], []
    for repeat in range(repeats):
        cache = work / f"cache-transformers-{repeat}"
        shutil.rmtree(cache, ignore_errors=True)
        theirs.append(run_measured(project_ruff(), project))
        mine.append(run_measured(lintloader_on(tool, Path("."), cache), project))
        print(f"  project run {repeat + 1}: lintloader {mine[-1].wall_s:.2f} s, "
              f"ruff {theirs[-1].wall_s:.2f} s", flush=True)  # fmt: skip
    return {
        "files": len(py_files(project)),
        "lintloader_s": med(mine),
        "lintloader_cpu_s": med(mine, "cpu_s"),
        "ruff_s": med(theirs),
        "ratio_to_ruff": round(ratio(mine, theirs), 3),
        "cpu_ratio_to_ruff": round(ratio(mine, theirs, "cpu_s"), 3),
        "goal": "<= 1.0x ruff (wall)",
        "load": load(),
    }


def measure_precommit(tool: Path, project: Path, work: Path, repeats: int) -> dict[str, object]:
    """A comment appended to trainer.py, one more each commit; the hook on that file, warm."""
    cache = work / "cache-transformers-precommit"
    shutil.rmtree(cache, ignore_errors=True)
    trainer = project / TRAINER
    original = trainer.read_bytes()
    run_measured(hook(tool, cache, TRAINER), project)  # the commit before: fills the cache
    mine, theirs = [], []
    try:
        for repeat in range(repeats):
            rewrite(trainer, original + f"\n# commit {repeat}\n".encode())
            theirs.append(run_measured(project_ruff(TRAINER), project))
            mine.append(run_measured(hook(tool, cache, TRAINER), project))
            print(f"  precommit run {repeat + 1}: lintloader {mine[-1].wall_s:.3f} s",
                  flush=True)  # fmt: skip
    finally:
        rewrite(trainer, original)
    return {
        "file": TRAINER,
        "file_kib": round(len(original) / 1024),
        "lintloader_s": med(mine),
        "lintloader_cpu_s": med(mine, "cpu_s"),
        "ruff_one_file_s": med(theirs),
        "goal": "<= 0.3 s",
        "load": load(),
    }


def measure_distinct(tool: Path, work: Path, repeats: int) -> dict[str, object]:
    """bench_scale.py's 4x tree of distinct bytes, cold, each run after ruff's."""
    tree = build_tree(purelib(BIN / "python"), work, 4, distinct=True)
    mine, theirs = [], []
    for repeat in range(repeats):
        cache = work / f"cache-4x-distinct-{repeat}"
        shutil.rmtree(cache, ignore_errors=True)
        theirs.append(run_measured(ruff_on(tree)))
        mine.append(run_measured(lintloader_on(tool, tree, cache)))
        print(f"  4x distinct run {repeat + 1}: lintloader {mine[-1].wall_s:.2f} s, "
              f"ruff {theirs[-1].wall_s:.2f} s", flush=True)  # fmt: skip
    return {
        "files": len(py_files(tree)),
        "lintloader_s": med(mine),
        "ruff_s": med(theirs),
        "ratio_to_ruff": round(ratio(mine, theirs), 3),
        "memory_ratio_to_ruff": round(ratio(mine, theirs, "peak_rss_mib"), 3),
        "goal": "<= 0.5x ruff (wall) and <= 0.5x its memory",
        "load": load(),
    }


def from_script(script: str, *args: str) -> dict[str, object]:
    """Run another benchmark of this folder; its ``--json`` results."""
    with tempfile.TemporaryDirectory(prefix="issue45-") as folder:
        output = Path(folder) / "results.json"
        command = [sys.executable, str(REPO / "benchmarks" / script), *args, "--json", str(output)]
        subprocess.run(command, check=True, stdout=sys.stderr)
        results: dict[str, object] = json.loads(output.read_text())
    results["load"] = load()
    return results


def site_packages_part(work: Path, repeats: int) -> dict[str, object]:
    found = from_script("bench_site_packages.py", "--skip-torchfix", "--repeats", str(repeats),
                        "--work", str(work / "site"))  # fmt: skip
    keep = ("files", "ruff_median_s", "cold_median_s", "cold_median_ratio_to_ruff",
            "warm_median_s", "warm_median_ratio_to_ruff", "load")  # fmt: skip
    return {
        **{key: found[key] for key in keep if key in found},
        "goal": "cold <= 0.5x, warm <= 0.05x ruff (wall)",
    }


def server_part(work: Path, repeats: int) -> dict[str, object]:
    found = from_script("bench_lsp.py", "--repeats", str(repeats), "--work", str(work / "site"))
    keep = ("project_files", "cold_s", "cold_final_s", "warm_s", "edit_s", "initialize_s",
            "cold_first_cpu_s", "load_before", "load_after")  # fmt: skip
    return {**{key: found[key] for key in keep if key in found}, "goal": "cold_s <= 1 s"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-issue45"))
    parser.add_argument("--only", nargs="+", choices=PARTS, help="measure these parts only")
    parser.add_argument("--transformers-wheel", type=Path, help="the wheel, if downloaded")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    wanted = args.only or PARTS
    started = time.monotonic()
    summary: dict[str, object] = {"cpus": os.cpu_count(), "load_at_start": load()}
    tool = install_tool(args.work)
    parts: dict[str, Callable[[], dict[str, object]]] = {
        "project": lambda: measure_project(tool, project(), args.work, args.repeats),
        "precommit": lambda: measure_precommit(tool, project(), args.work, args.repeats),
        "site_packages": lambda: site_packages_part(args.work, args.repeats),
        "distinct_4x": lambda: measure_distinct(tool, args.work, args.repeats),
        "server": lambda: server_part(args.work, args.repeats),
    }

    def project() -> Path:
        return transformers_project(args.work, args.transformers_wheel)

    for name in PARTS:
        if name in wanted:
            print(f"{name} (load {load()})", flush=True)
            summary[name] = parts[name]()
    summary["took_s"] = round(time.monotonic() - started)
    report(summary, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
