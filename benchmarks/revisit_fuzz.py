"""Random one-file commits to a real project, each checked warm against a run without cache.

A warm ``check`` after a commit replays, relinks or analyzes again
(``incremental/revisit.py``); each shortcut must print exactly what a run without cache prints.
``tests/test_revisit.py`` checks that on the fixtures; this script does it on a project of your
choice, editing the files the analysis takes (those on a chain, where the shortcuts are
decided) the way commits do: a comment, a line at the top, a helper, a call at the start of a
function (one that links nowhere, one named like a reset, a method call). Every file is
restored at the end::

    .venv/bin/python benchmarks/revisit_fuzz.py /tmp/lintloader-scale/project-5k --edits 30

It prints how many edits it made and exits non-zero at the first difference, naming the
edit, the file and the step.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent
DEF_LINE = re.compile(rb"^([ \t]*)def \w+\(.*\).*:[ \t]*$", re.MULTILINE)


def check(tool: Path, project: Path, *extra: str) -> str:
    """What ``check`` prints as JSON for ``project``, every severity."""
    command = [str(tool), "check", ".", "--min-severity", "info", "--output-format", "json"]
    done = subprocess.run([*command, *extra], cwd=project, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return done.stdout.decode()


def taken_files(cache: Path) -> list[Path]:
    """The files the stored run took (its selection trail), read with lintloader's reader."""
    from lintloader.incremental.replay import read_replay

    (stored,) = (read_replay(cache, path) for path in cache.glob("index-*/*.replay"))
    from lintloader.select.trail import as_trail

    trail = as_trail(stored.rounds) if stored is not None else None
    return sorted({Path(p) for round_ in trail or () for p in round_.taken})


def in_a_function(statement: str) -> Callable[[bytes, random.Random], bytes]:
    """An edit putting ``statement`` first in a function picked at random."""

    def edit(data: bytes, rng: random.Random) -> bytes:
        found = list(DEF_LINE.finditer(data))
        if not found:
            return data
        match = rng.choice(found)
        line = match.group(1) + b"    " + statement.encode() + b"\n"
        return data[: match.end() + 1] + line + data[match.end() + 1 :]

    return edit


def appended(function: bytes) -> Callable[[bytes, random.Random], bytes]:
    """An edit appending ``function`` (its ``%d`` numbered at random)."""
    return lambda data, rng: data + function % rng.randrange(999)


EDITS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "comment": lambda data, rng: data + b"\n# a comment\n",
    "top line": lambda data, rng: b"# a first line\n" + data,
    "helper": appended(b"\n\ndef helper_%d(x):\n    return x\n"),
    "calling helper": appended(b"\n\ndef calls_%d(x):\n    return len(x)\n"),
    "print": in_a_function("print(0)"),
    "reset call": in_a_function("reset()"),
    "reset-like call": in_a_function("reset_state()"),
    "method call": in_a_function("self.teardown()"),
    "logging call": in_a_function("log.info(0)"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path, help="a directory to check (a project)")
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tool", type=Path, default=BIN / "lintloader")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="revisit-fuzz-") as scratch:
        cache = Path(scratch)
        check(args.tool, args.project, "--cache-dir", str(cache))
        files = taken_files(cache)
        originals = {path: path.read_bytes() for path in files}
        try:
            for step in range(args.edits):
                path, name = rng.choice(files), rng.choice(sorted(EDITS))
                edited = EDITS[name](path.read_bytes(), rng)
                path.write_bytes(edited)
                warm = check(args.tool, args.project, "--cache-dir", str(cache))
                if warm != check(args.tool, args.project, "--no-cache"):
                    print(f"step {step}: {name} in {path}: the warm run differs")
                    return 1
        finally:
            for path, data in originals.items():
                path.write_bytes(data)
    print(f"{args.edits} edits of {len(files)} taken files: every warm run as without cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
