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
That rule (``ended_safe``, ``ended_any``) also holds a fixed finding against another finding of
the same function; a second count judges each true finding at its own site (``site_safe``,
``site_any``, with the strategy that ended each in ``sites``): ended when, after the fix, no
finding with its code is left at its file:line (followed through the edit by a line diff), no
finding that was not there before is on its loader (the same construction, or the same code,
file and chain root), and every file the fix changed parses. A third count (``fix_safe``,
``fix_any``) takes of those only the ones ``fix`` itself called fixed, not "changed ... but not
fixed" (its own judgement of what the fix left, ``lintloader/fixers/residual.py``), so that no
rule of this script's own decides the figure. What runs after a fix is proven
per strategy by tests/test_fix_proof.py (one pool, real workers), not here.

Usage::

    python benchmarks/fix_coverage.py [--out benchmarks/results-fix-coverage.json]
    python benchmarks/fix_coverage.py --contact /tmp/contact_trees --work /tmp/fixes_x

Prints one line per fixture (and per repository) with findings and the totals.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from ecosystem_scan import WARNING_PLUS, Row  # noqa: E402
from first_contact import Repo, Score, load_labels  # noqa: E402

from lintloader.finding.findings import Severity  # noqa: E402
from lintloader.rules.ll202_dataloader_in_loop import DEPENDENT_NOTE  # noqa: E402
from lintloader.rules.registry import rules_by_code  # noqa: E402
from lintloader.summary.older import parse_older  # noqa: E402

FIXTURES = ROOT / "fixtures" / "rules"
FIXABLE = re.compile(r"\[\*\] (\d+) fixable with `--fix`(?: \((\d+) more with `--unsafe-fixes`\))?")
UNSAFE_ONLY = re.compile(r"\[\*\] (\d+) fixable with `--fix --unsafe-fixes`")
REPORTED = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): (?P<code>LL\d{3}) (?P<status>fixed|changed) by "
    r"(?P<names>[\w, -]+) \("
)


@dataclass(frozen=True)
class Coverage:
    fixture: str
    findings: int
    claimed_safe: int
    claimed_any: int
    ended_safe: int
    ended_any: int
    # first contact: each true finding judged at its own site (``ended_at_site``); None elsewhere
    site_safe: int | None = None
    site_any: int | None = None
    sites: list[dict[str, object]] = field(default_factory=list)
    # of those, the ones `fix` itself called fixed (not "changed ... but not fixed")
    fix_safe: int | None = None
    fix_any: int | None = None


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


def still_wasting(directory: Path, *flags: str) -> list[dict[str, Any]]:
    """The findings that still say a worker pool is started again (``says_rebuilt``; any
    finding of a rule that names no such severity): LL203 on a persistent loader is info, each
    ``iter()`` restarting the pass, but its workers survive."""
    rules = rules_by_code()
    left = []
    for found in findings(directory, *flags):
        threshold = rules[found["code"]].rebuilds_from if found["code"] in rules else None
        if threshold is None or Severity.parse(found["severity"]) >= threshold:
            left.append(found)
    return left


def wasting(directory: Path, *flags: str) -> Counter[Key]:
    """``keys`` of :func:`still_wasting`."""
    return Counter(key(found) for found in still_wasting(directory, *flags))


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


def true_findings(repo: Repo, tree: Path) -> list[dict[str, Any]]:
    """The findings of a first-contact tree (at every severity) that its labels call true."""
    score = Score(repo)
    found = []
    for f in findings(tree, *INFO):
        row = Row(repo.repo, repo.commit, f["code"], f["severity"], f["path"], f["line"], "")
        if score.is_true(row):
            found.append(f)
    return found


def true_keys(true: list[dict[str, Any]]) -> tuple[Counter[Key], Counter[Key]]:
    """``keys`` of the true findings: at warning and above, and at every severity."""
    every = Counter(key(f) for f in true)
    return Counter(key(f) for f in true if f["severity"] in WARNING_PLUS), every


Place = tuple[str, int]
Moved = Callable[[str, int], range]


def loader_of(finding: dict[str, Any]) -> Place | None:
    """Where the finding's loader is built: the last ``builds`` hop of its chain."""
    built = [hop for hop in finding["chain"] if hop.get("verb") == "builds"]
    return (built[-1]["path"], built[-1]["line"]) if built else None


def parses(text: str) -> bool:
    """Python reads it: as this interpreter does, or as Python 3.6 does (``async`` a name)."""
    try:
        ast.parse(text)
        return True
    except SyntaxError:
        pass
    try:
        return parse_older(text) is not None
    except SyntaxError:
        return False


def changed_files(before: Path, after: Path) -> list[str]:
    """The ``*.py`` files of ``before`` whose bytes differ in ``after``, relative, with ``/``."""
    changed = []
    for folder, _, names in os.walk(before):
        for name in names:
            if name.endswith(".py"):
                path = Path(folder, name).relative_to(before)
                if (before / path).read_bytes() != (after / path).read_bytes():
                    changed.append(path.as_posix())
    return changed


def line_moves(before: Path, after: Path) -> tuple[Moved, list[str]]:
    """Where each line of a file of ``before`` is in ``after``, the same tree fixed (one line
    where the line is unchanged; the new lines of its block where a line diff says it was
    edited; none where it was deleted), and the changed files that no longer parse."""
    blocks: dict[str, list[tuple[str, int, int, int, int]]] = {}
    broken = []
    for path in changed_files(before, after):
        fixed = (after / path).read_text(errors="replace")
        if not parses(fixed):
            broken.append(path)
        old = (before / path).read_text(errors="replace").splitlines()
        matcher = difflib.SequenceMatcher(None, old, fixed.splitlines(), autojunk=False)
        blocks[path] = matcher.get_opcodes()

    def moved(path: str, line: int) -> range:
        index = line - 1
        for tag, i1, i2, j1, j2 in blocks.get(path, ()):
            if i1 <= index < i2:
                start = j1 + index - i1 if tag == "equal" else j1
                end = start + 1 if tag == "equal" else j2
                return range(start + 1, end + 1)
        return range(line, line + 1)

    return moved, broken


def at(finding: dict[str, Any], code: str, place: Place, moved: Moved) -> bool:
    return (
        finding["code"] == code and finding["path"] == place[0] and finding["line"] in moved(*place)
    )


def ended_at_site(
    true: list[dict[str, Any]],
    before: list[dict[str, Any]],
    left: list[dict[str, Any]],
    moved: Moved,
) -> list[dict[str, Any]]:
    """The ``true`` findings a fix ended, each judged at its own site: no finding of ``left``
    (what still says a pool is started again after the fix) with its code at its file:line,
    and none that no finding of ``before`` was at on its loader: built at the same (moved)
    place, or with its code, file and chain root (a construction moved into an outer loop).
    A new finding that says its loader reads what its loop changes (``intended``) is not held
    against a true finding that does not: a loader per pass over other data (a new random
    sample per evaluation, one per task of a test loop, one per image size) is not the
    rebuild over the same data that was fixed."""
    new = [
        f for f in left if not any(at(f, b["code"], (b["path"], b["line"]), moved) for b in before)
    ]
    ended = []
    for finding in true:
        if any(at(f, finding["code"], (finding["path"], finding["line"]), moved) for f in left):
            continue
        loader = loader_of(finding)
        held = [f for f in new if intended(finding) or not intended(f)]
        if any(key(f) == key(finding) or same_loader(f, loader, moved) for f in held):
            continue
        ended.append(finding)
    return ended


def intended(finding: dict[str, Any]) -> bool:
    """An LL202 whose loader is built from what its loop changes (a new loader may be
    intended)."""
    return finding["code"] == "LL202" and DEPENDENT_NOTE in finding["message"]


def same_loader(finding: dict[str, Any], loader: Place | None, moved: Moved) -> bool:
    built = loader_of(finding)
    if built is None or loader is None:
        return False
    return built[0] == loader[0] and built[1] in moved(*loader)


@dataclass
class FixRun:
    """One ``fix --min-severity info`` of a copy of a tree, and what it left."""

    left: Counter[Key]  # ``wasting`` afterwards (the chain-root rule)
    # the true findings ended at their own site (by their index), each with the strategies that
    # `fix` said fixed it (at its line then: an earlier round's edit may have moved it)
    at_site: dict[int, str]


def fix_run(
    tree: Path, work: Path, true: list[dict[str, Any]], before: list[dict[str, Any]], *flags: str
) -> FixRun:
    """A ``fix --min-severity info`` of a copy of ``tree``, judged both ways."""
    copy = work / "fixing"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    done = lintloader("fix", ".", *INFO, *flags, cwd=copy)
    left = still_wasting(copy, *INFO)
    moved, broken = line_moves(tree, copy)
    shutil.rmtree(copy)
    said = [m for m in map(REPORTED.match, done.stderr.splitlines()) if m]
    ended = [] if broken else ended_at_site(true, before, left, moved)
    at_site = {
        number: named(finding, said, moved)
        for number, finding in enumerate(true)
        if any(finding is e for e in ended)
    }
    return FixRun(Counter(key(f) for f in left), at_site)


def named(finding: dict[str, Any], said: list[re.Match[str]], moved: Moved) -> str:
    """The strategies ``fix`` said fixed ``finding`` (or changed, and did not call it fixed): at
    its line, or where the edit moved it (a round's line: an earlier round may have moved it
    again), else the one set it named for its code in its file; else it was ended by the fix
    of another finding."""
    place = (finding["path"], finding["line"])
    mine = [m for m in said if (m["code"], m["path"]) == (finding["code"], place[0])]
    at = [strategies(m) for m in mine if int(m["line"]) in (place[1], *moved(*place))]
    if at:
        return at[0]
    names = {strategies(m) for m in mine}
    return str(names.pop()) if len(names) == 1 else "not named at its line by `fix`"


# how `strategies` marks a site `fix` did not call fixed
CHANGED_ONLY = "(`fix`: changed but not fixed)"


def strategies(said: re.Match[str]) -> str:
    """The strategies of a ``fixed by``/``changed by`` line, the latter marked so."""
    names = str(said["names"])
    return names if said["status"] == "fixed" else f"{names} {CHANGED_ONLY}"


def said_fixed(strategies: object) -> bool:
    """A site ended (its strategies named) that `fix` did not call changed but not fixed."""
    return bool(strategies) and CHANGED_ONLY not in str(strategies)


def measure_contact(repo: Repo, tree: Path, work: Path) -> list[Coverage]:
    """Two rows: the tree's true findings at warning and above, and at every severity, and
    how many of them one safe and one unsafe ``fix --min-severity info`` end (by the
    chain-root rule; the every-severity row also each at its own site)."""
    copy = work / "scanned"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    before = findings(copy, *INFO)
    true = true_findings(repo, copy)
    warning, every = true_keys(true)
    if not every:
        shutil.rmtree(copy)
        return [Coverage(repo.repo, 0, 0, 0, 0, 0)]
    safe = fix_run(copy, work, true, before)
    unsafe = fix_run(copy, work, true, before, "--unsafe-fixes")
    shutil.rmtree(copy)
    ended_safe, ended_any = every - safe.left, every - unsafe.left
    sites = [site_row(n, f, safe, unsafe) for n, f in enumerate(true)]
    warning_row = Coverage(
        repo.repo, total(warning), 0, 0, total(ended_safe & warning), total(ended_any & warning)
    )
    site_safe = sum(bool(site["safe"]) for site in sites)
    site_any = sum(bool(site["any"]) for site in sites)
    fix_safe = sum(said_fixed(site["safe"]) for site in sites)
    fix_any = sum(said_fixed(site["any"]) for site in sites)
    every_row = Coverage(
        f"{repo.repo} (any severity)", total(every), 0, 0, total(ended_safe), total(ended_any),
        site_safe, site_any, sites, fix_safe, fix_any,
    )  # fmt: skip
    return [warning_row, every_row]


def site_row(
    number: int, finding: dict[str, Any], safe: FixRun, unsafe: FixRun
) -> dict[str, object]:
    """A true finding and, for each mode, the strategies that ended it at its site ("" if none)."""
    return {
        "code": finding["code"],
        "path": finding["path"],
        "line": finding["line"],
        "safe": safe.at_site.get(number, ""),
        "any": unsafe.at_site.get(number, ""),
    }


def total(counts: Counter[Key]) -> int:
    return sum(counts.values())


def contact_rows(trees: Path, work: Path, only: list[str]) -> list[Coverage]:
    """Every labelled repository with waste (or an adjudicated finding) whose tree is there
    (those named in ``only``, if any)."""
    rows: list[Coverage] = []
    for repo in load_labels():
        tree = trees / repo.folder
        if only and repo.repo not in only:
            continue
        if tree.is_dir() and (repo.waste or repo.adjudicated):
            rows += measure_contact(repo, tree, work)
    return rows


def totals_of(rows: list[Coverage]) -> dict[str, int]:
    names = ["claimed_safe", "claimed_any", "ended_safe", "ended_any"]
    if rows and all(row.site_safe is not None for row in rows):
        names += ["site_safe", "site_any", "fix_safe", "fix_any"]
    return {
        "findings": sum(row.findings for row in rows),
        **{name: sum(getattr(row, name) for row in rows) for name in names},
    }


def show(rows: list[Coverage], what: str) -> None:
    for row in rows:
        at_site = (
            ""
            if row.site_safe is None
            else f"; at its site {row.site_safe} safe, {row.site_any} any"
        )
        print(
            f"{row.fixture}: {row.findings} findings; fixable claimed {row.claimed_safe} safe, "
            f"{row.claimed_any} any; ended {row.ended_safe} safe, {row.ended_any} any{at_site}"
        )
    totals = totals_of(rows)
    total = totals["findings"] or 1
    print(
        f"total, {what}: {totals['findings']} findings; ended by safe fixes "
        f"{totals['ended_safe']} ({100 * totals['ended_safe'] / total:.0f} %), by any fix "
        f"{totals['ended_any']} ({100 * totals['ended_any'] / total:.0f} %)"
    )
    if "site_safe" in totals:
        print(
            f"total, {what}, each at its own site: ended by safe fixes {totals['site_safe']} "
            f"({100 * totals['site_safe'] / total:.0f} %), by any fix {totals['site_any']} "
            f"({100 * totals['site_any'] / total:.0f} %)"
        )
        print(
            f"total, {what}, at its own site and called fixed by `fix`: ended by safe fixes "
            f"{totals['fix_safe']} ({100 * totals['fix_safe'] / total:.0f} %), by any fix "
            f"{totals['fix_any']} ({100 * totals['fix_any'] / total:.0f} %)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--contact", type=Path, default=None, help="first-contact trees")
    parser.add_argument("--work", type=Path, default=None, help="where trees are copied")
    parser.add_argument("--no-fixtures", action="store_true", help="the first-contact set only")
    parser.add_argument("--rules", default="*", help="the fixtures of these codes (a glob)")
    parser.add_argument("--only", action="append", default=[], help="this repository (owner/name)")
    args = parser.parse_args()
    result: dict[str, object] = {}
    if not args.no_fixtures:
        result.update(fixture_result(args.rules))
    if args.contact is not None:
        with tempfile.TemporaryDirectory() as scratch:
            work = args.work or Path(scratch)
            work.mkdir(parents=True, exist_ok=True)
            rows = [row for row in contact_rows(args.contact, work, args.only) if row.findings]
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
