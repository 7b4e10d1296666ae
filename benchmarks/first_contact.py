#!/usr/bin/env python3
"""First contact (issue 42): lintloader on people's own training code, scored against labels.

``tests/corpus/first_contact.toml`` lists public training repositories, each at one commit, with
every waste site (a worker pool per step, evaluation or epoch, or a raise) and what the clean
ones do right, labelled by reading the code before lintloader was run on it. This script takes a
folder holding one tree per repository (``<owner>+<name>/``, the commit's ``*.py`` files) and
runs the real console script on each, as a project scan::

    lintloader check --output-format json --min-severity info --no-cache -j 2 .

then prints, per repository and in total: waste sites found at warning or above and at any
severity (recall), warning-or-error findings that land on a waste site (precision), files not
read (LL000), and the list of missed sites and false warnings with their file:line.

Usage (from the repository root)::

    .venv/bin/python benchmarks/first_contact.py /tmp/contact_trees
    .venv/bin/python benchmarks/first_contact.py /tmp/contact_trees --only NVIDIA/tacotron2
    .venv/bin/python benchmarks/first_contact.py /tmp/contact_trees --markdown   # docs table
    .venv/bin/python benchmarks/first_contact.py /tmp/contact_trees --rows out.json

The trees folder may also come from ``$LINTLOADER_FIRST_CONTACT_TREES``. Exit status 0 when
every listed tree was scanned, 2 when the folder is missing or no tree is in it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the benchmark runs on 3.11+
    import tomli as tomllib

BENCHMARKS = Path(__file__).resolve().parent
if str(BENCHMARKS) not in sys.path:  # imported by the tests rather than run as a script
    sys.path.insert(0, str(BENCHMARKS))
# One home for running the console script and reading its JSON rows: the ecosystem scan's.
from ecosystem_scan import WARNING_PLUS, Package, Row, Unavailable, check  # noqa: E402

REPO = BENCHMARKS.parent
LABELS = REPO / "tests" / "corpus" / "first_contact.toml"
TREES_ENV = "LINTLOADER_FIRST_CONTACT_TREES"
NOT_READ = "LL000"
# The severity a waste site's class calls for (issue 41's cost model): a defeated pool or a raise
# is a warning or above; an avoidable one (a non-persistent loader, one pool per pass) is advice,
# found at any severity.
CLASSES = ("defeated", "raise", "avoidable")
WARNING_DUE = frozenset({"defeated", "raise"})


@dataclass(frozen=True)
class Site:
    label: str  # "waste" | "clean"
    path: str
    line: int
    also: tuple[str, ...] = ()
    kind: str = ""
    frequency: str = ""
    confidence: str = ""
    shapes: tuple[int, ...] = ()
    reason: str = ""

    @property
    def anchors(self) -> frozenset[tuple[str, int]]:
        extra = (_anchor(text) for text in self.also)
        return frozenset({(self.path, self.line), *extra})

    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def warning_due(self) -> bool:
        """Whether its class calls for a warning or above (else any severity finds it)."""
        return self.kind in WARNING_DUE


@dataclass(frozen=True)
class Adjudication:
    """A warning+ finding on no waste anchor, read after the run and found true."""

    code: str
    path: str
    line: int
    reason: str


@dataclass(frozen=True)
class Repo:
    repo: str
    commit: str
    committed: str
    frameworks: tuple[str, ...]
    verdict: str
    sites: tuple[Site, ...]
    adjudicated: tuple[Adjudication, ...] = ()

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "+")

    @property
    def waste(self) -> tuple[Site, ...]:
        return tuple(site for site in self.sites if site.label == "waste")


def warning_plus(finding: Row) -> bool:
    return finding.severity in WARNING_PLUS and finding.code != NOT_READ


def where(finding: Row) -> str:
    return f"{finding.path}:{finding.line}"


@dataclass
class Score:
    repo: Repo
    findings: list[Row] = field(default_factory=list)
    error: str = ""

    def _lands(self, site: Site, strict: bool, shown: bool = True) -> bool:
        """A finding (at warning+ when ``strict``) names one of the site's anchors: at its own
        place, or (``shown``) at a hop of its chain or a place it is also reached from."""
        return any(
            not site.anchors.isdisjoint({(f.path, f.line), *(f.places if shown else ())})
            for f in self.findings
            if f.code != NOT_READ and (warning_plus(f) or not strict)
        )

    @property
    def found_warning(self) -> list[Site]:
        return [site for site in self.repo.waste if self._lands(site, True)]

    @property
    def found_any(self) -> list[Site]:
        return [site for site in self.repo.waste if self._lands(site, False)]

    @property
    def found_any_at_own_place(self) -> list[Site]:
        """Found at any severity by the round-5 rule: a finding at one of the site's anchors."""
        return [site for site in self.repo.waste if self._lands(site, False, shown=False)]

    @property
    def found_due(self) -> list[Site]:
        """Found at the severity its class calls for (:attr:`Site.warning_due`)."""
        return [site for site in self.repo.waste if self._lands(site, site.warning_due)]

    @property
    def missed(self) -> list[Site]:
        return [site for site in self.repo.waste if not self._lands(site, True)]

    @property
    def warnings(self) -> list[Row]:
        return [f for f in self.findings if warning_plus(f)]

    def is_true(self, finding: Row, adjudicated: bool = True) -> bool:
        spot = (finding.path, finding.line)
        if any(spot in site.anchors for site in self.repo.waste):
            return True
        return adjudicated and any(
            (a.code, a.path, a.line) == (finding.code, finding.path, finding.line)
            for a in self.repo.adjudicated
        )

    @property
    def true_warnings(self) -> list[Row]:
        return [f for f in self.warnings if self.is_true(f)]

    @property
    def labelled_true_warnings(self) -> list[Row]:
        """True by the labels written before the run alone (no adjudication)."""
        return [f for f in self.warnings if self.is_true(f, adjudicated=False)]

    @property
    def false_warnings(self) -> list[Row]:
        return [f for f in self.warnings if not self.is_true(f)]

    @property
    def not_read(self) -> list[Row]:
        return [f for f in self.findings if f.code == NOT_READ]


def _anchor(text: str) -> tuple[str, int]:
    path, _, line = text.rpartition(":")
    if not path or not line.isdigit():
        raise ValueError(f"anchor {text!r} is not path:line")
    return path, int(line)


def _site(table: dict[str, object]) -> Site:
    return Site(
        label=str(table["label"]),
        path=str(table["path"]),
        line=int(str(table["line"])),
        also=tuple(str(a) for a in _list(table.get("also"))),
        kind=str(table.get("kind", "")),
        frequency=str(table.get("frequency", "")),
        confidence=str(table.get("confidence", "")),
        shapes=tuple(int(str(s)) for s in _list(table.get("shapes"))),
        reason=str(table.get("reason", "")),
    )


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _adjudication(table: dict[str, object]) -> Adjudication:
    return Adjudication(
        code=str(table["code"]),
        path=str(table["path"]),
        line=int(str(table["line"])),
        reason=str(table["reason"]),
    )


def load_labels(path: Path = LABELS) -> tuple[Repo, ...]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Repo(
            repo=str(entry["repo"]),
            commit=str(entry["commit"]),
            committed=str(entry.get("committed", "")),
            frameworks=tuple(str(f) for f in entry.get("frameworks", [])),
            verdict=str(entry["verdict"]),
            sites=tuple(_site(site) for site in entry.get("site", [])),
            adjudicated=tuple(_adjudication(a) for a in entry.get("adjudicated", [])),
        )
        for entry in data["repo"]
    )


def scan(repo: Repo, tree: Path) -> list[Row]:
    """The real ``lintloader check`` on one tree, a project scan (the ecosystem scan's run)."""
    return check(Package(repo.repo, repo.commit, "first contact"), tree, ["."])


def rescore(repos: Iterable[Repo], saved: Path) -> list[Score]:
    """Scores from the findings an earlier run wrote with ``--rows`` (no scan): the same run
    scored again, e.g. by the severity each class calls for."""
    found: dict[str, list[Row]] = {}
    for item in json.loads(saved.read_text(encoding="utf-8")):
        row = Row(
            str(item["repo"]), "", str(item["code"]), str(item["severity"]),
            str(item["path"]), int(item["line"]), str(item["message"]),
            tuple((str(path), int(line)) for path, line in item.get("places", [])),
        )  # fmt: skip
        found.setdefault(row.distribution, []).append(row)
    return [Score(repo, found.get(repo.repo, [])) for repo in repos]


def score_all(repos: Iterable[Repo], trees: Path) -> tuple[list[Score], list[str]]:
    scores: list[Score] = []
    absent: list[str] = []
    for repo in repos:
        tree = trees / repo.folder
        if not tree.is_dir():
            absent.append(repo.repo)
            continue
        score = Score(repo)
        try:
            score.findings = scan(repo, tree)
        except (Unavailable, subprocess.TimeoutExpired, ValueError) as exc:
            score.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        scores.append(score)
    return scores, absent


@dataclass(frozen=True)
class Totals:
    repos: int
    waste_repos: int
    sites: int
    found_warning: int
    found_any: int
    found_any_at_own_place: int
    found_due: int
    warnings: int
    true_warnings: int
    labelled_true_warnings: int
    not_read_files: int
    repos_not_fully_read: int

    @staticmethod
    def of(scores: Sequence[Score]) -> Totals:
        return Totals(
            repos=len(scores),
            waste_repos=sum(1 for s in scores if s.repo.waste),
            sites=sum(len(s.repo.waste) for s in scores),
            found_warning=sum(len(s.found_warning) for s in scores),
            found_any=sum(len(s.found_any) for s in scores),
            found_any_at_own_place=sum(len(s.found_any_at_own_place) for s in scores),
            found_due=sum(len(s.found_due) for s in scores),
            warnings=sum(len(s.warnings) for s in scores),
            true_warnings=sum(len(s.true_warnings) for s in scores),
            labelled_true_warnings=sum(len(s.labelled_true_warnings) for s in scores),
            not_read_files=sum(len(s.not_read) for s in scores),
            repos_not_fully_read=sum(1 for s in scores if s.not_read),
        )

    @property
    def recall_warning(self) -> float:
        return self.found_warning / self.sites if self.sites else 1.0

    @property
    def recall_any(self) -> float:
        return self.found_any / self.sites if self.sites else 1.0

    @property
    def precision(self) -> float:
        return self.true_warnings / self.warnings if self.warnings else 1.0


@dataclass(frozen=True)
class ClassTotals:
    """The waste sites of one class (defeated, raise, avoidable), and how many were found."""

    kind: str
    sites: int
    found_warning: int
    found_any: int
    found_due: int

    @staticmethod
    def of(scores: Sequence[Score], kind: str) -> ClassTotals:
        def count(found: Callable[[Score], list[Site]]) -> int:
            return sum(1 for s in scores for site in found(s) if site.kind == kind)

        return ClassTotals(
            kind,
            count(lambda s: list(s.repo.waste)),
            count(lambda s: s.found_warning),
            count(lambda s: s.found_any),
            count(lambda s: s.found_due),
        )

    @property
    def due(self) -> str:
        return "warning+" if self.kind in WARNING_DUE else "any"


def by_class(scores: Sequence[Score]) -> list[ClassTotals]:
    return [ClassTotals.of(scores, kind) for kind in CLASSES]


def _percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


def markdown(scores: Sequence[Score]) -> list[str]:
    lines = [
        "| Repository | Imports | Verdict | Waste sites | Found (warning+) | Found (any) "
        "| Warning+ findings | True | Files not read |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in scores:
        sites = len(s.repo.waste)
        lines.append(
            f"| {s.repo.repo} | {', '.join(s.repo.frameworks) or 'torch'} | "
            f"{s.repo.verdict} | {sites} | "
            f"{len(s.found_warning) if sites else '-'} | {len(s.found_any) if sites else '-'} | "
            f"{len(s.warnings)} | {len(s.true_warnings)} | {len(s.not_read) or ''} |"
            + (f" error: {s.error}" if s.error else "")
        )
    return lines


def details(scores: Sequence[Score]) -> list[str]:
    lines: list[str] = []
    for s in scores:
        for site in s.missed:
            seen = "at info" if site in s.found_any else "not reported"
            if site in s.found_any and not site.warning_due:
                seen += ", as its class calls for"
            lines.append(f"MISSED {s.repo.repo} {site.where()} [{site.kind}] ({seen})")
        for f in s.false_warnings:
            lines.append(f"FALSE  {s.repo.repo} {f.code} {f.severity} {where(f)}: {f.message}")
        for f in s.not_read:
            lines.append(f"UNREAD {s.repo.repo} {where(f)}: {f.message}")
        if s.error:
            lines.append(f"ERROR  {s.repo.repo}: {s.error}")
    return lines


def class_table(scores: Sequence[Score]) -> list[str]:
    """Per class: sites, found at warning+, at any severity, at the severity it calls for."""
    lines = [
        "| Class | Severity it calls for | Sites | Found (warning+) | Found (any) "
        "| Found at its severity |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in by_class(scores):
        lines.append(
            f"| {row.kind} | {row.due} | {row.sites} | "
            f"{_percent(row.found_warning, row.sites)} | {_percent(row.found_any, row.sites)} | "
            f"{_percent(row.found_due, row.sites)} |"
        )
    return lines


def summary(totals: Totals, classes: Sequence[ClassTotals] = ()) -> list[str]:
    per_class = [
        f"  {row.kind} ({row.due}): {_percent(row.found_due, row.sites)}"
        for row in classes
        if row.sites
    ]
    return [
        f"repositories scanned: {totals.repos} ({totals.waste_repos} with waste)",
        f"recall, warning+:     {_percent(totals.found_warning, totals.sites)}",
        f"recall, any severity: {_percent(totals.found_any, totals.sites)}",
        f"  by the finding's own place alone: "
        f"{_percent(totals.found_any_at_own_place, totals.sites)}",
        f"recall, at the severity its class calls for: {_percent(totals.found_due, totals.sites)}",
        *per_class,
        f"precision, warning+:  {_percent(totals.true_warnings, totals.warnings)}",
        f"  by the pre-run labels alone: "
        f"{_percent(totals.labelled_true_warnings, totals.warnings)}",
        f"files not read:       {totals.not_read_files} "
        f"in {totals.repos_not_fully_read} repositories",
    ]


def rows(scores: Sequence[Score]) -> list[dict[str, object]]:
    return [
        {
            "repo": s.repo.repo,
            "code": f.code,
            "severity": f.severity,
            "path": f.path,
            "line": f.line,
            "true": s.is_true(f),
            "message": f.message,
            "places": [list(place) for place in f.places],
        }
        for s in scores
        for f in s.findings
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="?", default=os.environ.get(TREES_ENV, ""))
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--only", default="", help="comma-separated owner/name to scan")
    parser.add_argument("--markdown", action="store_true", help="print the docs table")
    parser.add_argument("--rows", type=Path, help="write every finding as JSON here")
    parser.add_argument(
        "--from-rows", type=Path, help="score the findings an earlier --rows wrote (no scan)"
    )
    args = parser.parse_args(argv)
    repos = load_labels(args.labels)
    only = {name for name in args.only.split(",") if name}
    chosen = [r for r in repos if not only or r.repo in only]
    if args.from_rows:
        scores, absent = rescore(chosen, args.from_rows), []
    else:
        trees = Path(args.trees) if args.trees else None
        if trees is None or not trees.is_dir():
            print(f"error: no trees folder (argument or ${TREES_ENV})", file=sys.stderr)
            return 2
        scores, absent = score_all(chosen, trees)
    if not scores:
        print(f"error: none of the labelled trees is under {trees}", file=sys.stderr)
        return 2
    shown = [*markdown(scores), "", *class_table(scores)] if args.markdown else details(scores)
    for line in shown:
        print(line)
    print()
    for line in summary(Totals.of(scores), by_class(scores)):
        print(line)
    if absent:
        print(f"absent ({len(absent)}): {', '.join(absent)}")
    if args.rows:
        args.rows.write_text(json.dumps(rows(scores), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
