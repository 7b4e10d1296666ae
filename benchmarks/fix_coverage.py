"""Fix coverage on the fixtures' true findings: how many ``fix`` (safe) and ``fix --unsafe-fixes``
end, and how many ``check`` promised (its ``[*] N fixable`` line).

Every fixture file under ``fixtures/rules/<CODE>/`` is copied alone into a temporary directory
(so no fixture configuration applies) and run through the real CLI:

1. ``check --output-format json``: the findings at warning and above (the fixtures mark each of
   them ``# expect:``), and ``check``'s summary: how many it calls fixable with ``--fix`` and with
   ``--unsafe-fixes``;
2. ``fix`` then ``check`` on one copy, ``fix --unsafe-fixes`` then ``check`` on another: a finding
   is ended when no finding with its code and its chain's root is left.

Usage::

    python benchmarks/fix_coverage.py [--out benchmarks/results-fix-coverage.json]

Prints one line per fixture with findings and the totals.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "rules"
FIXABLE = re.compile(r"\[\*\] (\d+) fixable with `--fix`(?: \((\d+) more with `--unsafe-fixes`\))?")
UNSAFE_ONLY = re.compile(r"\[\*\] (\d+) fixable with `--fix --unsafe-fixes`")


@dataclass(frozen=True)
class Coverage:
    fixture: str
    findings: int
    claimed_safe: int
    claimed_any: int
    ended_safe: int
    ended_any: int


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lintloader", *args, "--no-cache"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def keys(directory: Path) -> Counter[tuple[str, str]]:
    """(code, chain root) of every finding at warning and above."""
    done = lintloader("check", ".", "--output-format", "json", cwd=directory)
    found = json.loads(done.stdout)
    return Counter((f["code"], f["chain"][0]["function"] if f["chain"] else "") for f in found)


def claimed(directory: Path) -> tuple[int, int]:
    """What ``check`` calls fixable: (with --fix, with --fix --unsafe-fixes)."""
    summary = lintloader("check", ".", cwd=directory).stderr
    if found := FIXABLE.search(summary):
        safe = int(found.group(1))
        return safe, safe + int(found.group(2) or 0)
    if found := UNSAFE_ONLY.search(summary):
        return 0, int(found.group(1))
    return 0, 0


def ended(fixture: Path, before: Counter[tuple[str, str]], *flags: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(fixture, tmp)
        lintloader("fix", ".", *flags, cwd=Path(tmp))
        after = keys(Path(tmp))
    return sum((before - after).values())


def measure(fixture: Path) -> Coverage:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(fixture, tmp)
        before = keys(Path(tmp))
        safe, unsafe = claimed(Path(tmp)) if before else (0, 0)
    if not before:
        return Coverage(str(fixture.relative_to(ROOT)), 0, 0, 0, 0, 0)
    return Coverage(
        str(fixture.relative_to(ROOT)),
        sum(before.values()),
        safe,
        unsafe,
        ended(fixture, before),
        ended(fixture, before, "--unsafe-fixes"),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = [measure(path) for path in sorted(FIXTURES.glob("*/*.py"))]
    rows = [row for row in rows if row.findings]
    for row in rows:
        print(
            f"{row.fixture}: {row.findings} findings; fixable claimed {row.claimed_safe} safe, "
            f"{row.claimed_any} any; ended {row.ended_safe} safe, {row.ended_any} any"
        )
    total = sum(row.findings for row in rows)
    totals = {
        "findings": total,
        **{
            name: sum(getattr(row, name) for row in rows)
            for name in ("claimed_safe", "claimed_any", "ended_safe", "ended_any")
        },
    }
    print(
        f"total: {total} findings in {len(rows)} fixtures; ended by safe fixes "
        f"{totals['ended_safe']} ({100 * totals['ended_safe'] / total:.0f} %), by any fix "
        f"{totals['ended_any']} ({100 * totals['ended_any'] / total:.0f} %); check claimed "
        f"{totals['claimed_safe']} safe, {totals['claimed_any']} any"
    )
    if args.out is not None:
        args.out.write_text(
            json.dumps({"totals": totals, "fixtures": [asdict(r) for r in rows]}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
