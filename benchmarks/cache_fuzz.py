"""Hostile cache entries, at random: every warm run must print what a run without cache prints,
and nothing planted may ever run.

A run fills a private cache directory; then, step after step, one entry picked at random is
overwritten with random bytes, truncated, replaced by a pickle that would create a file if it
were loaded (bare, or after the entry's own header line), or rewritten with one of its values
turned into a value of another JSON type. After each step ``check`` runs warm and its output
(JSON, every severity) is compared with the run without cache; its stderr must hold no internal
error, and no planted file may exist::

    .venv/bin/python benchmarks/cache_fuzz.py --steps 200
    .venv/bin/python benchmarks/cache_fuzz.py --project /path/to/project --steps 50

Without ``--project`` it checks a copy of the fix fixtures (files with findings and chains).
It exits non-zero at the first difference, naming the step, the entry and the damage.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


class Planted:
    """Pickled, it runs ``touch <marker>`` when loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.marker}",))


def check(tool: Path, project: Path, cache: Path | None) -> str:
    """``check``'s JSON output for ``project`` (``cache`` None: ``--no-cache``)."""
    extra = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    command = [str(tool), "check", ".", "--min-severity", "info", "--output-format", "json"]
    done = subprocess.run([*command, *extra], cwd=project, capture_output=True, check=False)
    stderr = done.stderr.decode(errors="replace")
    if done.returncode not in (0, 1) or "internal error" in stderr or "Traceback" in stderr:
        raise SystemExit(f"check failed ({done.returncode}): {stderr[-800:]}")
    return done.stdout.decode()


def sample_project(folder: Path) -> Path:
    """A package of the fix fixtures (``fixtures/fix/*.in.py``)."""
    package = folder / "project" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for index, source in enumerate(sorted((REPO / "fixtures" / "fix").glob("*.in.py"))):
        shutil.copyfile(source, package / f"m{index}.py")
    return package.parent


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG")


def retyped(data: bytes, rng: random.Random) -> bytes:
    """The entry with one value (a number, string, boolean or null) turned into a value of
    another JSON type: never what the entry's type allows there."""
    header, _, body = data.partition(b"\n")
    try:
        value = json.loads(body)
    except ValueError:
        return data[: len(data) // 2]
    places: list[tuple[list | dict, int | str]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        pairs = enumerate(item) if isinstance(item, list) else item.items()
        for key, child in pairs:
            if isinstance(child, (list, dict)):
                stack.append(child)
            else:
                places.append((item, key))
    if not places:
        return header + b"\n" + b'"nothing"'
    parent, key = rng.choice(places)
    old = parent[key]  # type: ignore[index]
    if isinstance(old, str):
        parent[key] = rng.choice([7, [old], {"k": old}])  # type: ignore[index]
    else:
        parent[key] = rng.choice(["text", [old], {"k": old}])  # type: ignore[index]
    return header + b"\n" + json.dumps(value).encode()


def damages(marker: Path) -> dict[str, Callable[[bytes, random.Random], bytes]]:
    payload = pickle.dumps(Planted(marker))
    return {
        "random bytes": lambda data, rng: rng.randbytes(rng.randint(0, 4096)),
        "truncated": lambda data, rng: data[: rng.randint(0, max(len(data) - 1, 0))],
        "a pickle": lambda data, rng: payload,
        "header + pickle": lambda data, rng: data.partition(b"\n")[0] + b"\n" + payload,
        "a value retyped": retyped,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, help="a project to check (default: fixtures)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tool", type=Path, default=BIN / "lintloader")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="lintloader-cache-fuzz-") as scratch:
        work = Path(scratch)
        project = args.project or sample_project(work)
        cache, marker = work / "cache", work / "PLANTED"
        reference = check(args.tool, project, None)
        check(args.tool, project, cache)
        kinds = damages(marker)
        done: collections.Counter[str] = collections.Counter()
        for step in range(1, args.steps + 1):
            stored = entries(cache)
            entry = rng.choice(stored)
            name = rng.choice(sorted(kinds))
            entry.write_bytes(kinds[name](entry.read_bytes(), rng))
            output = check(args.tool, project, cache)
            where = f"step {step}: {name} in {entry.relative_to(cache)}"
            if marker.exists():
                print(f"{where}: a planted pickle ran", file=sys.stderr)
                return 1
            if output != reference:
                print(f"{where}: the output differs from a run without cache", file=sys.stderr)
                return 1
            done[f"{name} / {entry.suffix or entry.name}"] += 1
        print(f"{args.steps} steps, every output equal to --no-cache, nothing planted ran:")
        for what, count in sorted(done.items()):
            print(f"  {count:4d}  {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
