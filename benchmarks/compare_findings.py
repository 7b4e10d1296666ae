#!/usr/bin/env python3
"""Findings of two revisions of lintloader on the same inputs: which ones differ, and how.

The companion of ``compare_revisions.py`` (which compares timings): each revision is exported
from git (``git archive``) and run from that export with this checkout's interpreter and
dependencies (``python -P -m lintloader``: the export, not this checkout, on ``sys.path``; Python
3.11+), with no cache, on
the same inputs: this checkout's ``fixtures/`` and, with ``--site-packages``, the installed
packages of ``--python``. Both print JSON at ``--min-severity info``; findings are matched on
(code, path, line, column) and every one only one side has, or whose severity, message, chain
or fixes differ, is listed. Exit 0 when the outputs are byte-identical, 1 otherwise.

Usage (from the repository root)::

    .venv/bin/python benchmarks/compare_findings.py --base 57df594 --head HEAD --site-packages
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIELDS = ("severity", "message", "chain", "fixes", "end_line", "end_column", "also_reaches")
Key = tuple[str, str, int, int]


def export(revision: str, work: Path) -> Path:
    """``revision``'s tree, exported once into ``work/<sha>``."""
    sha = subprocess.check_output(["git", "rev-parse", revision], cwd=REPO, text=True).strip()
    tree = work / sha[:12]
    if not (tree / "lintloader").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha, "lintloader"], cwd=REPO, check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def findings(tree: Path, scan: list[str], python: Path) -> str:
    """The JSON that ``tree``'s lintloader prints for ``check <scan>``, run in this checkout."""
    command = [sys.executable, "-P", "-m", "lintloader", "check", "--no-cache", "--exit-zero", "-q"]
    command += ["--min-severity", "info", "--output-format", "json", "--python", str(python)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [*command, *scan], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree.name}: check {' '.join(scan)} exited {done.returncode}")
    return done.stdout


def keyed(output: str) -> dict[Key, dict[str, object]]:
    return {(f["code"], f["path"], f["line"], f["column"]): f for f in json.loads(output)}


def differences(base: str, head: str) -> list[str]:
    """One line per finding that differs: only in base (-), only in head (+), or changed (~)."""
    old, new = keyed(base), keyed(head)
    lines = [
        f"- {_where(k)} {old[k]['severity']}: {old[k]['message']}" for k in old if k not in new
    ]
    lines += [
        f"+ {_where(k)} {new[k]['severity']}: {new[k]['message']}" for k in new if k not in old
    ]
    for key in sorted(old.keys() & new.keys()):
        changed = [name for name in FIELDS if old[key].get(name) != new[key].get(name)]
        if changed:
            lines.append(f"~ {_where(key)} {', '.join(changed)}")
            lines += [f"    {n}: {old[key].get(n)!r} -> {new[key].get(n)!r}" for n in changed]
    return lines


def tally(lines: list[str]) -> str:
    """How many findings only base has (by code), only head has, and changed (by field)."""
    counts: Counter[str] = Counter()
    for line in lines:
        sign, code, *rest = line.split()
        if sign in "-+":
            counts[f"{'only base' if sign == '-' else 'only head'} {code}"] += 1
        elif sign == "~":
            counts.update(f"changed {field.strip(',')}" for field in rest[1:])
    return ", ".join(f"{what}: {n}" for what, n in sorted(counts.items())) or "none"


def _where(key: Key) -> str:
    code, path, line, column = key
    return f"{code} {path}:{line}:{column}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the revision compared against")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--python", type=Path, default=Path(sys.executable))
    parser.add_argument("--site-packages", action="store_true", help="also its installed packages")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ll-findings")
    args = parser.parse_args()

    scans = [["fixtures"]] + ([["--site-packages"]] if args.site_packages else [])
    trees = [export(revision, args.work) for revision in (args.base, args.head)]
    identical = True
    for scan in scans:
        base, head = (findings(tree, scan, args.python) for tree in trees)
        lines = differences(base, head)
        identical = identical and base == head
        count = len(json.loads(head))
        same = "byte-identical" if base == head else f"{len(lines)} lines of difference"
        print(f"check {' '.join(scan)}: {count} findings at head, {same}")
        print(f"  differences: {tally(lines)}")
        print("\n".join(lines))
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
