#!/usr/bin/env python3
"""Time ``lintloader check --site-packages`` against ruff and TorchFix on one environment.

What it measures, on a hard-linked copy of the environment's site-packages (so that the "one
file changed" step never touches the real one):

* ruff ``check --no-cache --select E,F`` on the site-packages directory;
* lintloader cold (an empty cache directory), then warm (nothing changed), then with one file
  changed (rewritten with a trailing comment), each run alternating with ruff, as paired ratios;
* TorchFix 0.7 (from PyPI, installed once into its own venv so its dependencies never touch
  ours) on a fixed sample of the files (every k-th file of the sorted list), extrapolated to
  the whole tree;
* the peak RSS of every run (the largest process of the run's tree, from ``wait4``).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_site_packages.py --python .venv/bin/python --repeats 3

Needs: ``.venv/bin/ruff`` (in the dev environment) and network access to PyPI the first time:
lintloader is installed from this checkout into its own venv (``<work>/tool``, a regular
install as pre-commit makes it), TorchFix into another (``--skip-torchfix`` leaves it out).
Commands run with Python's defaults (``PYTHONDONTWRITEBYTECODE`` removed from the environment).
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
from dataclasses import dataclass, field
from pathlib import Path

from lintloader.scan.read.stamps import RACY_NS

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / ".venv" / "bin"
TORCHFIX_REQUIREMENT = "torchfix==0.7.*"
CHANGED_FILE = "pytorch_lightning/utilities/combined_loader.py"  # a file the analysis parses


@dataclass
class Run:
    wall_s: float
    peak_rss_mib: float
    returncode: int
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)
    # user + system CPU of the command and the processes it waited for: on a machine shared
    # with other work, the wall time also counts the time others held the CPUs
    cpu_s: float = 0.0


# Python's defaults for every measured command: a sandbox may set PYTHONDONTWRITEBYTECODE,
# which makes every run compile lintloader's modules again.
MEASURED_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


GNU_TIME = Path("/usr/bin/time")


def run_measured(command: list[str], cwd: Path = REPO) -> Run:
    """Run ``command``: its wall time, output and the peak RSS of its process tree (the
    largest process). The peak comes from GNU time where it is installed: ``wait4`` on a child
    of this script counts this script's own memory too (a vfork'ed child's peak includes the
    parent's before ``exec``), which grows with every run kept in memory."""
    report = Path(tempfile.mkstemp(prefix="bench-rss-")[1])
    wrapped = [str(GNU_TIME), "-f", "%M", "-o", str(report), *command]
    use_time = GNU_TIME.exists()
    start = time.perf_counter()
    process = subprocess.Popen(
        wrapped if use_time else command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=MEASURED_ENV,
    )
    out_chunks, err_chunks = _drain(process)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = usage.ru_maxrss
    if use_time:
        text = report.read_text().strip().splitlines()
        peak_kib = int(text[-1]) if text and text[-1].isdigit() else peak_kib
    report.unlink(missing_ok=True)
    return Run(
        wall,
        peak_kib / 1024,
        process.returncode,
        b"".join(out_chunks).decode(errors="replace"),
        b"".join(err_chunks).decode(errors="replace"),
        usage.ru_utime + usage.ru_stime,
    )


def _drain(process: subprocess.Popen[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Read stdout and stderr to the end without deadlocking (and without reaping)."""
    import selectors

    chunks: dict[int, list[bytes]] = {1: [], 2: []}
    selector = selectors.DefaultSelector()
    assert process.stdout is not None and process.stderr is not None
    selector.register(process.stdout, selectors.EVENT_READ, 1)
    selector.register(process.stderr, selectors.EVENT_READ, 2)
    while selector.get_map():
        for key, _ in selector.select():
            data = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if data:
                chunks[key.data].append(data)
            else:
                selector.unregister(key.fileobj)
    return chunks[1], chunks[2]


def purelib(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.check_output([str(python), "-c", code], text=True).strip())


def build_copy(python: Path, work: Path) -> Path:
    """A venv under ``work`` whose site-packages hard-links every file of ``python``'s."""
    venv = work / "env"
    copy_python = venv / "bin" / "python"
    if not copy_python.exists():
        subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True)
    source, target = purelib(python), purelib(copy_python)
    if not any(target.glob("*.dist-info")):
        subprocess.run(["cp", "-al", f"{source}/.", str(target)], check=True)
    return copy_python


def py_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.py") if p.is_file())


def rewrite(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically (a new inode: the hard link to the original is broken)."""
    temporary = path.with_name(f".{path.name}.bench")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def report(summary: dict[str, object], json_path: Path | None) -> None:
    """Print a benchmark's results as JSON, and write them to ``json_path`` too if given."""
    text = json.dumps(summary, indent=2)
    print(text)
    if json_path:
        json_path.write_text(text + "\n")


def install_tool(work: Path) -> Path:
    """lintloader installed from this checkout the way pre-commit and ``pip install .`` do it
    (a regular install in its own venv, with the constraints file), not the dev venv's
    editable one, whose import hook costs every run ~10 ms. Reinstalled on every benchmark run
    so that it measures the code as it is now."""
    venv = work / "tool"
    pip = venv / "bin" / "pip"
    if not pip.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(pip), "install", "-q", "-c", str(REPO / "constraints.txt"), str(REPO)], check=True
    )
    subprocess.run(
        [str(pip), "install", "-q", "--no-deps", "--force-reinstall", str(REPO)], check=True
    )
    return venv / "bin" / "lintloader"


def lintloader(tool: Path, python: Path, cache: Path) -> list[str]:
    return [
        str(tool),
        "check",
        "-v",  # the summary line's parse counts
        "--site-packages",
        "--python",
        str(python),
        "--cache-dir",
        str(cache),
        "--exit-zero",
        "--output-format",
        "concise",
    ]


def ruff(site: Path) -> list[str]:
    return [
        str(BIN / "ruff"),
        "check",
        "--no-cache",
        "--select",
        "E,F",
        "--exit-zero",
        "--quiet",
        "--output-format",
        "concise",
        str(site),
    ]


def parsed_count(stderr: str) -> str:
    match = re.search(r"\((\d+) parsed, (\d+) from cache", stderr)
    return f"{match.group(1)} parsed/{match.group(2)} cached" if match else "?"


def found_line(stderr: str) -> str:
    """``check``'s summary line (findings by severity, those hidden below warning)."""
    return next((line for line in stderr.splitlines() if line.startswith("Found ")), "?")


def torchfix(work: Path, site: Path, sample: int) -> dict[str, float] | None:
    """TorchFix on every k-th file (a fixed sample), extrapolated to all files."""
    venv = work / "torchfix-venv"
    executable = venv / "bin" / "torchfix"
    if not executable.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", TORCHFIX_REQUIREMENT],
            capture_output=True,
            text=True,
        )
        if install.returncode != 0 or not executable.exists():
            print(f"TorchFix not installed: {install.stderr.strip()[-300:]}", file=sys.stderr)
            return None
    files = py_files(site)
    step = max(1, len(files) // sample)
    chosen = [str(p) for p in files[::step]][:sample]
    result = run_measured([str(executable), *chosen], cwd=work)
    return {
        "sample_files": len(chosen),
        "total_files": len(files),
        "sample_wall_s": result.wall_s,
        "extrapolated_s": result.wall_s * len(files) / len(chosen),
        "peak_rss_mib": result.peak_rss_mib,
    }


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--python",
        type=Path,
        default=BIN / "python",
        help="interpreter whose site-packages is scanned (copied, hard-linked)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/lintloader-bench"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torchfix-files", type=int, default=200)
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    python = build_copy(args.python.absolute(), args.work)
    tool = install_tool(args.work)
    site = purelib(python)
    changed = site / CHANGED_FILE
    original = changed.read_bytes()
    print(f"tree: {site} ({len(py_files(site))} .py files); {os.cpu_count()} CPUs", flush=True)

    rows: dict[str, list[Run]] = {"ruff": [], "cold": [], "warm": [], "changed": []}
    ratios: dict[str, list[float]] = {"cold": [], "warm": [], "changed": []}
    outputs: set[str] = set()
    try:
        for repeat in range(args.repeats):
            cache = args.work / f"cache-{repeat}"
            shutil.rmtree(cache, ignore_errors=True)
            # no cold run within the racy window of a change to what its answer depends on
            # (the tool just installed, the last repeat's file put back): its answer would
            # not be stored (git's racy rule, lintloader/scan/read/stamps.py), and the warm
            # run after it would measure a run just after an edit, not a warm one
            time.sleep(RACY_NS / 1e9 + 0.1)
            for kind in ("cold", "warm", "changed"):
                if kind == "changed":
                    rewrite(changed, original + b"\n# touched by the benchmark\n")
                reference = run_measured(ruff(site))
                mine = run_measured(lintloader(tool, python, cache))
                rows["ruff"].append(reference)
                rows[kind].append(mine)
                ratios[kind].append(mine.wall_s / reference.wall_s)
                if kind != "changed":
                    outputs.add(mine.stdout)
                print(
                    f"  run {repeat + 1} {kind:8} lintloader {mine.wall_s:8.2f} s "
                    f"({parsed_count(mine.stderr)}, {mine.peak_rss_mib:.0f} MiB)   "
                    f"ruff {reference.wall_s:6.2f} s   ratio {ratios[kind][-1]:.3f}",
                    flush=True,
                )
                if kind == "changed":
                    rewrite(changed, original)
    finally:
        rewrite(changed, original)

    summary = {
        "files": len(py_files(site)),
        "cpus": os.cpu_count(),
        "ruff_median_s": median([r.wall_s for r in rows["ruff"]]),
        "ruff_peak_rss_mib": max(r.peak_rss_mib for r in rows["ruff"]),
        **{f"{k}_median_s": median([r.wall_s for r in rows[k]]) for k in ratios},
        **{f"{k}_median_ratio_to_ruff": median(ratios[k]) for k in ratios},
        "lintloader_peak_rss_mib": max(r.peak_rss_mib for k in ratios for r in rows[k]),
        "findings_identical_cold_warm": len(outputs) == 1,
        "findings_cold": found_line(rows["cold"][-1].stderr),
    }
    if not args.skip_torchfix:
        measured = torchfix(args.work, site, args.torchfix_files)
        if measured:
            summary["torchfix"] = measured
            summary["torchfix_over_lintloader_cold"] = (
                measured["extrapolated_s"] / summary["cold_median_s"]
            )
    report(summary, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
