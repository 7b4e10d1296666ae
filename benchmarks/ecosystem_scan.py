#!/usr/bin/env python3
"""Precision in the wild: check the current releases of popular ML packages, compare with labels.

Every package of ``benchmarks/ecosystem.toml`` is downloaded once (``pip download --no-deps``,
a wheel, else an sdist) into a cache folder that later runs reuse, unpacked into a temporary
directory and checked with the real console script::

    lintloader check --output-format json --min-severity info --no-cache -j 2 <its top levels>

One row per finding goes to ``--rows`` (JSON). Each warning-or-error finding is compared with
the ``[[label]]`` table, keyed by (distribution, code, path, line): the script prints the
precision (true and intended over all labelled warning+ findings), the findings no label
covers (new), the labels whose finding is gone, and the false positives fixed in the analysis
(labels with a ``fixture``) that are reported again. Exit status 0 when nothing is new or gone
and the precision is at least 95 %; 1 otherwise.

Usage (from the repository root; needs the package index, about 3 minutes on 2 cores once the
downloads are cached)::

    .venv/bin/python benchmarks/ecosystem_scan.py
    .venv/bin/python benchmarks/ecosystem_scan.py --only flair,torchio
    .venv/bin/python benchmarks/ecosystem_scan.py --latest   # which pins have a newer release
    .venv/bin/python benchmarks/ecosystem_scan.py --replay   # what the last run printed
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the benchmark runs on 3.11+
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "benchmarks" / "ecosystem.toml"
ROWS = REPO / "benchmarks" / "results-ecosystem.json"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lintloader-ecosystem"
VERDICTS = ("true-positive", "false-positive", "intended")
CORRECT = ("true-positive", "intended")
PRECISION_BAR = 0.95
WARNING_PLUS = ("warning", "error")
NOT_CODE = re.compile(r"\.(dist-info|data|libs|egg-info)$")


@dataclass(frozen=True)
class Package:
    distribution: str
    version: str
    domain: str
    skip: str = ""  # why it is not scanned (no downloadable release, too big...)


@dataclass(frozen=True)
class Label:
    distribution: str
    code: str
    path: str
    line: int
    verdict: str
    why: str
    fixture: str = ""  # a false positive fixed in the analysis: its nearest-negative fixture

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.distribution, self.code, self.path, self.line)


@dataclass(frozen=True)
class Row:
    distribution: str
    version: str
    code: str
    severity: str
    path: str
    line: int
    message: str
    # every path:line the finding names besides its own: its chain's hops and the places it is
    # also reached from (what a reader of the finding is shown)
    places: tuple[tuple[str, int], ...] = ()

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.distribution, self.code, self.path, self.line)


@dataclass(frozen=True)
class Table:
    packages: tuple[Package, ...]
    labels: tuple[Label, ...]


class Unavailable(Exception):
    """A release that cannot be downloaded or unpacked (the reason is the message)."""


def load_table(path: Path = TABLE) -> Table:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    packages = tuple(Package(**item) for item in data["package"])
    labels = tuple(Label(**item) for item in data.get("label", []))
    for label in labels:
        if label.verdict not in VERDICTS:
            raise ValueError(f"{label.key}: verdict {label.verdict!r} is not one of {VERDICTS}")
    return Table(packages, labels)


def download(package: Package, cache: Path = CACHE) -> Path:
    """The release's wheel (or sdist), downloaded once into ``cache``."""
    target = cache / f"{package.distribution}-{package.version}"
    found = _archives(target)
    if found:
        return found[0]
    target.mkdir(parents=True, exist_ok=True)
    requirement = f"{package.distribution}=={package.version}"
    reasons = []
    for binary in ("--only-binary=:all:", "--no-binary=:all:"):
        done = _pip_download(requirement, binary, target)
        found = _archives(target)
        if found:
            return found[0]
        reasons.append((done.strip().splitlines() or ["no archive"])[-1])
    raise Unavailable(f"cannot download {requirement}: {reasons[-1]}")


def _pip_download(requirement: str, binary: str, target: Path) -> str:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", binary, "-q"]
    try:
        done = subprocess.run(
            [*command, "-d", str(target), requirement],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return done.stderr


def _archives(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".whl" or p.name.endswith(".tar.gz"))


def unpack(archive: Path, into: Path) -> tuple[Path, list[str]]:
    """Unpack ``archive`` into ``into``: the directory to run in and the top levels to check."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(into)
        root = into
    else:
        with tarfile.open(archive) as handle:
            handle.extractall(into, filter="data")
        (folder,) = [p for p in into.iterdir() if p.is_dir()]
        root = folder / "src" if (folder / "src").is_dir() else folder
    tops = sorted(
        p.name
        for p in root.iterdir()
        if not NOT_CODE.search(p.name)
        and ((p.is_dir() and any(p.rglob("*.py"))) or p.suffix == ".py")
        and p.name not in ("setup.py", "docs")
    )
    if not tops:
        raise Unavailable(f"{archive.name} holds no Python package")
    return root, tops


def lintloader_command() -> list[str]:
    script = Path(sys.executable).parent / "lintloader"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lintloader"]


def check(package: Package, root: Path, tops: list[str]) -> list[Row]:
    """Run the real ``lintloader check`` on the unpacked release; one row per finding."""
    command = [*lintloader_command(), "check", "--output-format", "json", "--min-severity"]
    done = subprocess.run(
        [*command, "info", "--no-cache", "-j", "2", *tops],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise Unavailable(
            f"lintloader check exited {done.returncode}: {done.stderr.strip()[-300:]}"
        )
    return [
        Row(
            package.distribution,
            package.version,
            item["code"],
            item["severity"],
            item["path"],
            item["line"],
            item["message"],
            _places(item),
        )
        for item in json.loads(done.stdout or "[]")
    ]


def _places(item: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    hops = [*item.get("chain", []), *item.get("also_reaches", [])]
    return tuple((str(hop["path"]), int(hop["line"])) for hop in hops)


def scan_package(package: Package, cache: Path = CACHE) -> list[Row]:
    archive = download(package, cache)
    with tempfile.TemporaryDirectory(prefix="ecosystem-") as scratch:
        root, tops = unpack(archive, Path(scratch))
        return check(package, root, tops)


@dataclass(frozen=True)
class Comparison:
    labelled: int
    correct: int
    true_positives: int
    new: tuple[Row, ...]
    gone: tuple[Label, ...]
    back: tuple[Label, ...]  # fixed false positives reported again

    @property
    def precision(self) -> float:
        return self.correct / self.labelled if self.labelled else 1.0

    @property
    def passes(self) -> bool:
        fine = not self.new and not self.gone and not self.back
        return fine and self.precision >= PRECISION_BAR


def compare(rows: list[Row], labels: tuple[Label, ...], scanned: set[str]) -> Comparison:
    """Warning+ rows against the labels of the scanned distributions."""
    serious = [row for row in rows if row.severity in WARNING_PLUS]
    mine = [label for label in labels if label.distribution in scanned]
    by_key = {label.key: label for label in mine if not label.fixture}
    fixed = {label.key: label for label in mine if label.fixture}
    seen = {row.key for row in serious}
    matched = [by_key[row.key] for row in serious if row.key in by_key]
    return Comparison(
        labelled=len(matched),
        correct=sum(label.verdict in CORRECT for label in matched),
        true_positives=sum(label.verdict == "true-positive" for label in matched),
        new=tuple(row for row in serious if row.key not in by_key and row.key not in fixed),
        gone=tuple(label for key, label in by_key.items() if key not in seen),
        back=tuple(label for key, label in fixed.items() if key in seen),
    )


def latest_versions(packages: tuple[Package, ...]) -> None:
    """Print each pin that has a newer release on the index."""
    for package in packages:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", package.distribution],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        match = re.search(r"\((?P<version>[^)]+)\)", done.stdout)
        latest = match["version"] if match else "unknown"
        if latest != package.version:
            print(f"{package.distribution}: pinned {package.version}, latest {latest}")


def report(comparison: Comparison, rows: list[Row]) -> None:
    counts = {severity: sum(r.severity == severity for r in rows) for severity in ("info",)}
    serious = sum(r.severity in WARNING_PLUS for r in rows)
    print(f"findings: {serious} warning+, {counts['info']} info")
    print(
        f"precision: {comparison.correct}/{comparison.labelled} = {comparison.precision:.1%}"
        f" (true positives {comparison.true_positives},"
        f" intended {comparison.correct - comparison.true_positives})"
    )
    print(f"new findings (no label): {len(comparison.new)}")
    for row in comparison.new:
        print(f"  {row.distribution} {row.code} [{row.severity}] {row.path}:{row.line}")
    print(f"labelled findings gone: {len(comparison.gone)}")
    for label in comparison.gone:
        print(f"  {label.distribution} {label.code} {label.path}:{label.line} ({label.verdict})")
    print(f"fixed false positives reported again: {len(comparison.back)}")
    for label in comparison.back:
        print(f"  {label.distribution} {label.code} {label.path}:{label.line} ({label.fixture})")


def replay(table: Table, rows_path: Path) -> int:
    """Print what the run that wrote ``rows_path`` printed on stdout, from its rows (nothing is
    downloaded): docs/ecosystem.md shows it, and a test runs it."""
    data = json.loads(rows_path.read_text(encoding="utf-8"))
    rows = [Row(**row) for row in data["rows"]]
    packages = [package for package in table.packages if not package.skip]
    if len(packages) != data["packages"]:
        print(f"{rows_path}: {data['packages']} packages scanned, the table has {len(packages)}")
        return 2
    for package in packages:
        found = sum(row.distribution == package.distribution for row in rows)
        print(f"{package.distribution} {package.version}: {found} findings")
    scanned = {package.distribution for package in packages}
    comparison = compare(rows, table.labels, scanned)
    print(f"scanned {len(scanned)} packages in {data['wall_s']:.0f} s")
    report(comparison, rows)
    return 0 if comparison.passes else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--rows", type=Path, default=ROWS, help="where the rows are written")
    parser.add_argument("--only", default="", help="comma-separated distributions")
    parser.add_argument("--latest", action="store_true", help="list pins with a newer release")
    parser.add_argument("--replay", action="store_true", help="print the last run from --rows")
    args = parser.parse_args(argv)
    table = load_table(args.table)
    if args.replay:
        return replay(table, args.rows)
    wanted = {name for name in args.only.split(",") if name}
    packages = tuple(
        p for p in table.packages if not p.skip and (not wanted or p.distribution in wanted)
    )
    if args.latest:
        latest_versions(packages)
        return 0
    rows: list[Row] = []
    scanned: set[str] = set()
    started = time.perf_counter()
    for package in packages:
        try:
            found = scan_package(package, args.cache)
        except Unavailable as exc:
            print(f"skipped {package.distribution} {package.version}: {exc}", file=sys.stderr)
            continue
        scanned.add(package.distribution)
        rows.extend(found)
        print(f"{package.distribution} {package.version}: {len(found)} findings", flush=True)
    wall = time.perf_counter() - started
    args.rows.write_text(
        json.dumps(
            {"packages": len(scanned), "wall_s": round(wall, 1), "rows": [asdict(r) for r in rows]},
            indent=1,
        )
        + "\n"
    )
    comparison = compare(rows, table.labels, scanned)
    print(f"scanned {len(scanned)} packages in {wall:.0f} s")
    report(comparison, rows)
    return 0 if comparison.passes else 1


if __name__ == "__main__":
    sys.exit(main())
