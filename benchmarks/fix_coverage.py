"""Fix coverage on the fixtures' true findings: how many ``fix`` (safe) and ``fix --unsafe-fixes``
end, and how many ``check`` promised (its ``[*] N fixable`` line).

Every fixture file under ``fixtures/rules/<CODE>/`` is copied alone into a temporary directory
(so no fixture configuration applies) and run through the real CLI:

1. ``check --output-format json``: the findings at warning and above (the fixtures mark each of
   them ``# expect:``), and ``check``'s summary: how many it calls fixable with ``--fix`` and with
   ``--unsafe-fixes``;
2. ``fix`` then ``check`` on one copy, ``fix --unsafe-fixes`` then ``check`` on another: a finding
   is ended when no finding with its code and its chain's root is left that still says a worker
   pool is started again (the rule's ``rebuilds_from``: LL203 on a loader made persistent is
   left at info, its workers surviving each ``iter()``).

With ``--contact TREES`` it also measures the first-contact set (issue 42's labelled training
repositories, ``tests/corpus/first_contact.toml``; TREES holds one ``<owner>+<name>/`` tree per
repository, as ``benchmarks/first_contact.py`` reads them). Each tree is copied (into
``--work``, a temporary directory by default: the trees are never written) and scanned as a
project; its true findings are those the labels call true (a waste site's anchor, or an
adjudicated finding), counted at warning and above and at every severity (most first-contact
waste is an avoidable pool per evaluation or epoch, reported as info). One ``fix --min-severity
info`` (safe) and one with ``--unsafe-fixes`` run on copies; a true finding is ended when no
finding with its code, file and chain root is left that still says a pool is started again.

Usage::

    python benchmarks/fix_coverage.py [--out benchmarks/results-fix-coverage.json]
    python benchmarks/fix_coverage.py --contact /tmp/contact_trees --work /tmp/fixes_x

Prints one line per fixture (and per repository) with findings and the totals.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from ecosystem_scan import WARNING_PLUS, Row  # noqa: E402
from first_contact import Repo, Score, load_labels  # noqa: E402

from lintloader.finding.findings import Severity  # noqa: E402
from lintloader.rules.registry import rules_by_code  # noqa: E402

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


Key = tuple[str, str, str]  # code, path, chain root
INFO = ("--min-severity", "info")


def findings(directory: Path, *flags: str) -> list[dict[str, Any]]:
    done = lintloader("check", ".", "--output-format", "json", *flags, cwd=directory)
    return list(json.loads(done.stdout or "[]"))


def key(finding: dict[str, Any]) -> Key:
    chain = finding["chain"]
    return (finding["code"], finding["path"], chain[0]["function"] if chain else "")


def keys(directory: Path, *flags: str) -> Counter[Key]:
    """(code, path, chain root) of every finding at warning and above (``flags`` may lower it)."""
    return Counter(key(f) for f in findings(directory, *flags))


def wasting(directory: Path, *flags: str) -> Counter[Key]:
    """``keys`` of the findings that still say a worker pool is started again (``says_rebuilt``;
    any finding of a rule that names no such severity): LL203 on a persistent loader is info,
    each ``iter()`` restarting the pass, but its workers survive."""
    rules = rules_by_code()
    left = Counter[Key]()
    for found in findings(directory, *flags):
        threshold = rules[found["code"]].rebuilds_from if found["code"] in rules else None
        severity = Severity.parse(found["severity"])
        left[key(found)] += threshold is None or severity >= threshold
    return +left


def claimed(directory: Path) -> tuple[int, int]:
    """What ``check`` calls fixable: (with --fix, with --fix --unsafe-fixes)."""
    summary = lintloader("check", ".", cwd=directory).stderr
    if found := FIXABLE.search(summary):
        safe = int(found.group(1))
        return safe, safe + int(found.group(2) or 0)
    if found := UNSAFE_ONLY.search(summary):
        return 0, int(found.group(1))
    return 0, 0


def ended(fixture: Path, before: Counter[Key], *flags: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(fixture, tmp)
        lintloader("fix", ".", *flags, cwd=Path(tmp))
        after = wasting(Path(tmp))
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


def true_keys(repo: Repo, tree: Path) -> tuple[Counter[Key], Counter[Key]]:
    """The findings of a first-contact tree that its labels call true: at warning and above,
    and at every severity."""
    score = Score(repo)
    warning: Counter[Key] = Counter()
    every: Counter[Key] = Counter()
    for f in findings(tree, *INFO):
        row = Row(repo.repo, repo.commit, f["code"], f["severity"], f["path"], f["line"], "")
        if score.is_true(row):
            every[key(f)] += 1
            warning[key(f)] += f["severity"] in WARNING_PLUS
    return +warning, every


def ended_in_tree(tree: Path, work: Path, before: Counter[Key], *flags: str) -> Counter[Key]:
    """Which of ``before`` a ``fix --min-severity info`` of a copy of ``tree`` ends."""
    copy = work / "fixing"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    lintloader("fix", ".", *INFO, *flags, cwd=copy)
    after = wasting(copy, *INFO)
    shutil.rmtree(copy)
    return before - after


def measure_contact(repo: Repo, tree: Path, work: Path) -> list[Coverage]:
    """Two rows: the tree's true findings at warning and above, and at every severity, and
    how many of them one safe and one unsafe ``fix --min-severity info`` end."""
    copy = work / "scanned"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    warning, every = true_keys(repo, copy)
    safe = ended_in_tree(copy, work, every) if every else Counter()
    unsafe = ended_in_tree(copy, work, every, "--unsafe-fixes") if every else Counter()
    shutil.rmtree(copy)
    return [
        Coverage(repo.repo, total(warning), 0, 0, total(safe & warning), total(unsafe & warning)),
        Coverage(f"{repo.repo} (any severity)", total(every), 0, 0, total(safe), total(unsafe)),
    ]


def total(counts: Counter[Key]) -> int:
    return sum(counts.values())


def contact_rows(trees: Path, work: Path) -> list[Coverage]:
    """Every labelled repository with waste (or an adjudicated finding) whose tree is there."""
    rows: list[Coverage] = []
    for repo in load_labels():
        tree = trees / repo.folder
        if tree.is_dir() and (repo.waste or repo.adjudicated):
            rows += measure_contact(repo, tree, work)
    return rows


def totals_of(rows: list[Coverage]) -> dict[str, int]:
    return {
        "findings": sum(row.findings for row in rows),
        **{
            name: sum(getattr(row, name) for row in rows)
            for name in ("claimed_safe", "claimed_any", "ended_safe", "ended_any")
        },
    }


def show(rows: list[Coverage], what: str) -> None:
    for row in rows:
        print(
            f"{row.fixture}: {row.findings} findings; fixable claimed {row.claimed_safe} safe, "
            f"{row.claimed_any} any; ended {row.ended_safe} safe, {row.ended_any} any"
        )
    totals = totals_of(rows)
    total = totals["findings"] or 1
    print(
        f"total, {what}: {totals['findings']} findings; ended by safe fixes "
        f"{totals['ended_safe']} ({100 * totals['ended_safe'] / total:.0f} %), by any fix "
        f"{totals['ended_any']} ({100 * totals['ended_any'] / total:.0f} %)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--contact", type=Path, default=None, help="first-contact trees")
    parser.add_argument("--work", type=Path, default=None, help="where trees are copied")
    parser.add_argument("--no-fixtures", action="store_true", help="the first-contact set only")
    parser.add_argument("--rules", default="*", help="the fixtures of these codes (a glob)")
    args = parser.parse_args()
    result: dict[str, object] = {}
    if not args.no_fixtures:
        result.update(fixture_result(args.rules))
    if args.contact is not None:
        with tempfile.TemporaryDirectory() as scratch:
            work = args.work or Path(scratch)
            work.mkdir(parents=True, exist_ok=True)
            rows = [row for row in contact_rows(args.contact, work) if row.findings]
        warning = [row for row in rows if not row.fixture.endswith("(any severity)")]
        every = [row for row in rows if row.fixture.endswith("(any severity)")]
        show(warning, "first contact, warning and above")
        show(every, "first contact, any severity")
        result["first_contact"] = {
            "warning_plus": totals_of(warning),
            "any_severity": totals_of(every),
            "repositories": [asdict(r) for r in rows],
        }
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def fixture_result(rules: str = "*") -> dict[str, object]:
    rows = [measure(path) for path in sorted(FIXTURES.glob(f"{rules}/*.py"))]
    rows = [row for row in rows if row.findings]
    show(rows, f"{len(rows)} rule fixtures")
    return {"totals": totals_of(rows), "fixtures": [asdict(r) for r in rows]}


if __name__ == "__main__":
    sys.exit(main())
