"""Fault injection: kill ``lintloader fix --site-packages`` at random moments; nothing is lost.

On a real pytorch-lightning 1.5.0 install (pip installs the released wheel into a throwaway
virtual environment at run time), this runs ``fix --site-packages pytorch-lightning`` N times
(default 50), each time SIGKILLing its whole process group at a random moment: in even rounds
after a delay between 0 and 1.1 times the length of a complete run (mostly during the analysis),
in odd rounds 0-400 ms after the backup directory appears (the window of storing the backup,
checking the fixed file parses and replacing it, which a uniform delay rarely hits). After each
kill it checks that:

1. every file is either its original bytes or exactly what a complete fix writes;
2. every patched file has a manifest entry and a verified backup (a regular file whose sha256
   is the original's);
3. ``fix --site-packages --revert`` restores every file byte-identical;
4. no process of the run is left (its process group, and anything running the venv's Python).

Then the environment is reset to the originals for the next round. Usage::

    python benchmarks/fault_inject_fix.py [--runs 50] [--seed 12] [--out result.json]

Exit status 0 when every round held, 1 otherwise. Needs network access to the package index
(or a pip configured with a local one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REQUIREMENT = "pytorch-lightning==1.5.0"
DISTRIBUTION = "pytorch-lightning"
SKIP = {"__pycache__", ".lintloader-backups"}


@dataclass(frozen=True)
class Env:
    root: Path
    python: Path
    site: Path
    cache: Path

    def command(self, *args: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "lintloader",
            "fix",
            "--site-packages",
            *args,
            "--python",
            str(self.python),
            "--cache-dir",
            str(self.cache),
        ]


@dataclass
class Round:
    index: int
    aim: str  # "uniform" or "write" (killed just after the backup directory appeared)
    delay_s: float
    exit_status: int | None  # None: killed
    files_fixed: int
    leftover_temp_files: int
    problems: list[str] = field(default_factory=list)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_env(root: Path) -> Env:
    """A venv without pip, the wheel installed into its site directory by this Python's pip."""
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = Path(purelib)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile"]
    subprocess.run([*pip, "--target", str(site), REQUIREMENT], check=True)
    return Env(root, python, site, root / "cache")


def snapshot(site: Path) -> dict[str, bytes]:
    """Every file below the site (bytes by relative path), backups and bytecode aside."""
    found = {}
    for path in sorted(site.rglob("*")):
        relative = path.relative_to(site)
        if path.is_file() and not SKIP & set(relative.parts):
            found[str(relative)] = path.read_bytes()
    return found


def is_temp(relative: str) -> bool:
    """A temporary file of an atomic write that a kill interrupted (``.name.xxxx.tmp``)."""
    name = os.path.basename(relative)
    return name.startswith(".") and name.endswith(".tmp")


def restore(env: Env, original: dict[str, bytes]) -> None:
    current = snapshot(env.site)
    for relative, data in original.items():
        if current.get(relative) != data:
            (env.site / relative).write_bytes(data)
    for relative in set(current) - set(original):
        (env.site / relative).unlink()
    shutil.rmtree(env.site / ".lintloader-backups", ignore_errors=True)


def complete_run(env: Env) -> float:
    started = time.monotonic()
    result = subprocess.run(env.command(DISTRIBUTION), capture_output=True, text=True)
    if result.returncode not in (0, 1):
        raise SystemExit(f"a complete fix failed ({result.returncode}): {result.stderr}")
    return time.monotonic() - started


def lingering(group: int, env: Env) -> list[int]:
    """Processes of the killed group, or running the venv's interpreter, still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        state, pgid = stat[0], int(stat[2])
        alive = state not in ("Z", "X")
        if alive and (pgid == group or str(env.python).encode() in cmdline):
            found.append(int(entry.name))
    return found


def check_round(
    env: Env, original: dict[str, bytes], fixed: dict[str, bytes], report: Round
) -> None:
    from lintloader.fixers.backup import BackupStore

    current = snapshot(env.site)
    temps = [r for r in current if is_temp(r)]
    report.leftover_temp_files = len(temps)
    for relative, data in original.items():
        now = current.get(relative)
        if now == data:
            continue
        if relative in fixed and now == fixed[relative]:
            report.files_fixed += 1
            continue
        report.problems.append(f"{relative}: neither original nor fully fixed")
    try:
        store = BackupStore.load(str(env.site))
    except Exception as exc:  # any failure is a finding of this benchmark
        report.problems.append(f"manifest unusable: {exc}")
        return
    for relative in fixed:
        if current.get(relative) != fixed[relative] or fixed[relative] == original[relative]:
            continue
        entry = store.entries.get(relative)
        if entry is None or entry.patched_sha256 != sha256(fixed[relative]):
            report.problems.append(f"{relative}: patched without a manifest entry")
        elif entry.original_sha256 != sha256(original[relative]):
            report.problems.append(f"{relative}: manifest names another original")
        elif (problem := store.backup_problem(entry)) is not None:
            report.problems.append(f"{relative}: backup {problem}")
    reverted = subprocess.run(env.command("--revert"), capture_output=True, text=True)
    if reverted.returncode != 0:
        report.problems.append(f"revert exited {reverted.returncode}: {reverted.stderr.strip()}")
    after = {r: d for r, d in snapshot(env.site).items() if not is_temp(r)}
    if after != original:
        changed = sorted(r for r in set(after) | set(original) if after.get(r) != original.get(r))
        report.problems.append(f"revert left {len(changed)} files different: {changed[:5]}")


def one_round(
    env: Env,
    original: dict[str, bytes],
    fixed: dict[str, bytes],
    index: int,
    delay: float,
    at_write: bool,
) -> Round:
    """One run of the fix, killed after ``delay`` seconds (``at_write``: counted from the
    moment the backup directory appears)."""
    restore(env, original)
    process = subprocess.Popen(
        env.command(DISTRIBUTION),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started = time.monotonic()
    try:
        if at_write:
            backups = env.site / ".lintloader-backups"
            while not backups.exists() and process.poll() is None:
                time.sleep(0.001)
        time.sleep(delay)
        status = process.poll()
    finally:  # also when this script is interrupted: never leave the run behind
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    elapsed = time.monotonic() - started
    aim = "write" if at_write else "uniform"
    report = Round(index, aim, round(elapsed, 3), status, 0, 0)
    deadline = time.monotonic() + 5
    while (left := lingering(process.pid, env)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        report.problems.append(f"processes left: {left}")
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    check_round(env, original, fixed, report)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path, default=None, help="Write the result as JSON here.")
    args = parser.parse_args()
    chooser = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="lintloader-faults-") as temporary:
        env = make_env(Path(temporary))
        original = snapshot(env.site)
        complete_run(env)  # cold: fills the summary cache
        fixed = {r: d for r, d in snapshot(env.site).items() if original.get(r) != d}
        if not fixed:
            raise SystemExit("a complete fix changed nothing: nothing to inject faults into")
        restore(env, original)
        duration = complete_run(env)  # warm: the length of the runs that are killed
        rounds = []
        for index in range(args.runs):
            at_write = index % 2 == 1
            delay = chooser.uniform(0, 0.4) if at_write else chooser.uniform(0, 1.1 * duration)
            rounds.append(one_round(env, original, fixed, index, delay, at_write))
            last = rounds[-1]
            print(
                f"round {index:2d} ({last.aim:7s}): kill after {last.delay_s:6.3f}s "
                f"({'killed' if last.exit_status is None else f'exited {last.exit_status}'}), "
                f"{last.files_fixed}/{len(fixed)} files fixed, "
                f"{last.leftover_temp_files} temp files left, "
                f"{'OK' if not last.problems else '; '.join(last.problems)}",
                flush=True,
            )
    failed = [r for r in rounds if r.problems]
    summary = {
        "requirement": REQUIREMENT,
        "runs": len(rounds),
        "seed": args.seed,
        "complete_run_s": round(duration, 2),
        "files_a_complete_fix_changes": len(fixed),
        "killed": sum(r.exit_status is None for r in rounds),
        "killed_with_some_files_fixed": sum(
            r.exit_status is None and r.files_fixed > 0 for r in rounds
        ),
        "rounds_with_temp_files_left": sum(r.leftover_temp_files > 0 for r in rounds),
        "failed_rounds": len(failed),
        "rounds": [asdict(r) for r in rounds],
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rounds"}, indent=2))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
