#!/usr/bin/env python3
"""Paired timings of two revisions of lintloader on one site-packages: did a change slow it?

Each revision is exported from git (``git archive``) and installed the way pre-commit installs
it, in a venv of its own. On the same hard-linked copy of a site-packages (see
``bench_site_packages.py``), runs alternate between the two revisions, so that drift of a shared
machine hits both alike: cold (an empty cache), warm (nothing changed) and one changed file.
It prints the medians and the median of the paired ratios head/base per kind, and whether both
revisions printed the same findings.

Usage (from the repository root)::

    .venv/bin/python benchmarks/compare_revisions.py --base 018cb94 --head HEAD --repeats 5
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_site_packages import (
    BIN,
    CHANGED_FILE,
    REPO,
    Run,
    build_copy,
    lintloader,
    purelib,
    report,
    rewrite,
    run_measured,
)

KINDS = ("cold", "warm", "changed")


def install_revision(revision: str, work: Path) -> Path:
    """``revision`` exported and installed (a regular install) into ``work/<sha>``."""
    sha = subprocess.check_output(["git", "rev-parse", revision], cwd=REPO, text=True).strip()
    venv = work / f"rev-{sha[:12]}"
    tool = venv / "bin" / "lintloader"
    if tool.exists():
        return tool
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "src.tar"
        subprocess.run(["git", "archive", "-o", str(archive), sha], cwd=REPO, check=True)
        source = Path(scratch) / "src"
        with tarfile.open(archive) as tar:
            tar.extractall(source, filter="data")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "-q"]
        subprocess.run([*pip, "-c", str(REPO / "constraints.txt"), str(source)], check=True)
    return tool


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the revision measured against")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--python", type=Path, default=BIN / "python")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-compare"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    python = build_copy(args.python.absolute(), args.work)
    tools = {"base": install_revision(args.base, args.work)}
    tools["head"] = install_revision(args.head, args.work)
    changed = purelib(python) / CHANGED_FILE
    original = changed.read_bytes()
    runs: dict[tuple[str, str], list[Run]] = {(r, k): [] for r in tools for k in KINDS}
    ratios: dict[str, list[float]] = {k: [] for k in KINDS}
    outputs: dict[str, set[str]] = {r: set() for r in tools}
    try:
        for repeat in range(args.repeats):
            caches = {r: args.work / f"cache-{r}" for r in tools}
            for cache in caches.values():
                shutil.rmtree(cache, ignore_errors=True)
            for kind in KINDS:
                if kind == "changed":
                    rewrite(changed, original + f"\n# touched {repeat}\n".encode())
                order = ("base", "head") if repeat % 2 == 0 else ("head", "base")
                measured = {r: run_measured(lintloader(tools[r], python, caches[r])) for r in order}
                for revision, run in measured.items():
                    runs[revision, kind].append(run)
                    if kind == "warm":
                        outputs[revision].add(run.stdout)
                ratios[kind].append(measured["head"].wall_s / measured["base"].wall_s)
                print(
                    f"  run {repeat + 1} {kind:8} base {measured['base'].wall_s:7.3f} s  "
                    f"head {measured['head'].wall_s:7.3f} s  ratio {ratios[kind][-1]:.3f}",
                    flush=True,
                )
                if kind == "changed":
                    rewrite(changed, original)
    finally:
        rewrite(changed, original)
    summary = {
        "base": args.base,
        "head": args.head,
        "repeats": args.repeats,
        **{
            f"{kind}_{revision}_median_s": statistics.median(r.wall_s for r in runs[revision, kind])
            for kind in KINDS
            for revision in tools
        },
        **{f"{kind}_median_ratio_head_to_base": statistics.median(ratios[kind]) for kind in KINDS},
        **{  # CPU (user + system): what others running on the machine do not inflate
            f"{kind}_{revision}_median_cpu_s": statistics.median(
                r.cpu_s for r in runs[revision, kind]
            )
            for kind in KINDS
            for revision in tools
        },
        **{
            f"{kind}_median_cpu_ratio_head_to_base": statistics.median(
                h.cpu_s / b.cpu_s
                for h, b in zip(runs["head", kind], runs["base", kind], strict=True)
            )
            for kind in KINDS
        },
        "same_findings": outputs["base"] == outputs["head"] and len(outputs["base"]) == 1,
    }
    report(summary, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
