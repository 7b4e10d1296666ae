"""The regression corpus: released frameworks that shipped a worker-pool bug, and their fixes.

Each entry of tests/corpus/releases.toml is one released version. Its wheel (and those of its
``companions``) is downloaded at test time, unpacked into a directory of its own (kept in the
test cache, unpacked once) and checked with the real console script. The test pins today's
behaviour strictly in both directions:

- ``currently = "found"``: every expected finding is reported at exactly that path and line;
- ``currently = "missed"``: none of them is reported (flip the entry to "found" when it lands);
- ``currently = "clean"``: nothing at warning or above under the entry's package;
- ``currently = "flagged"``: exactly the listed false positives at warning or above (a fixed
  release, or one re-read as ``verdict = "not-a-bug"``).

Every entry carries its ``cost_class`` under the cost model (defeated, raise, avoidable, none)
and a ``class_reason``; buggy entries are defeated or raise.

Runs in parallel with ``pytest -n 2`` (one test per entry, no shared state but the wheel cache
and its unpacked trees).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import kept_unpacked, run_cli

tomllib = pytest.importorskip("tomllib", reason="tomllib (Python 3.11+) reads the corpus table")

CORPUS = Path(__file__).resolve().parent / "corpus" / "releases.toml"
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
COST_CLASSES = ("defeated", "raise", "avoidable", "none")  # issue 41's model, docs/concepts.md
BUG_CLASSES = ("defeated", "raise")  # "affected"; an avoidable cost is advice, not a bug


@dataclass(frozen=True)
class Expected:
    rule: str
    path: str
    line: int
    severity: str | None = None


@dataclass(frozen=True)
class Finding:
    rule: str
    path: str
    line: int
    severity: str

    def matches(self, expected: Expected) -> bool:
        return (self.rule, self.path, self.line) == (expected.rule, expected.path, expected.line)


def load_entries() -> list[dict]:
    with CORPUS.open("rb") as handle:
        return tomllib.load(handle)["release"]


def expectations(items: list[dict]) -> list[Expected]:
    return [Expected(**item) for item in items]


def scan(entry: dict) -> list[Finding]:
    """``lintloader check`` on the entry's packages, in its wheels' unpacked tree (kept in the
    test cache: unpacked once, not by every run)."""
    releases = [entry, *entry.get("companions", [])]
    into = kept_unpacked(*(f"{r['distribution']}=={r['version']}" for r in releases))
    packages = [release["package"] for release in releases]
    result = run_cli(
        "check",
        "--output-format",
        "json",
        "--min-severity",
        "info",
        "--no-cache",
        *packages,
        cwd=into,
    )
    assert result.returncode in (0, 1) and result.stdout.strip(), result.stderr
    return [
        Finding(item["code"], item["path"], item["line"], item["severity"])
        for item in json.loads(result.stdout)
    ]


def at_least_warning(findings: list[Finding], package: str) -> list[Finding]:
    return [
        finding
        for finding in findings
        if SEVERITY_RANK[finding.severity] >= SEVERITY_RANK["warning"]
        and finding.path.startswith(f"{package}/")
    ]


def check_buggy(entry: dict, findings: list[Finding]) -> None:
    wanted = expectations(entry["expected"])
    present = [item for item in wanted if any(finding.matches(item) for finding in findings)]
    if entry["currently"] == "missed":
        assert present == [], f'{entry["id"]} is found now: set currently = "found"'
        return
    assert present == wanted, f"{entry['id']}: missing {set(wanted) - set(present)}: {findings}"
    known = {(item.rule, item.path, item.line) for item in [*wanted, *expectations(
        entry.get("also_true", []))]}  # fmt: skip
    unexplained = {
        (f.rule, f.path, f.line) for f in at_least_warning(findings, entry["package"])
    } - known
    assert not unexplained, (
        f"{entry['id']}: warning+ findings neither expected nor also_true: {unexplained}"
    )
    for item in wanted:
        if item.severity is not None:
            severities = {finding.severity for finding in findings if finding.matches(item)}
            assert severities == {item.severity}, f"{entry['id']}: {item} reported as {severities}"


def check_clean(entry: dict, findings: list[Finding]) -> None:
    reported = {(f.rule, f.path, f.line) for f in at_least_warning(findings, entry["package"])}
    reported -= {
        (item.rule, item.path, item.line) for item in expectations(entry.get("also_true", []))
    }
    allowed = {(item.rule, item.path, item.line) for item in expectations(entry.get("flagged", []))}
    if entry["currently"] == "clean":
        assert reported == set(), f"{entry['id']} should be clean: {reported}"
    else:
        assert reported == allowed, f"{entry['id']}: false positives changed: {reported}"


ENTRIES = load_entries()


def test_corpus_table_is_complete() -> None:
    ids = {entry["id"] for entry in ENTRIES}
    buggy = [entry for entry in ENTRIES if entry["expected"] != "clean"]
    for entry in buggy:
        assert entry["fixed_by"] in ids, entry["id"]
        assert entry["currently"] in ("found", "missed"), entry["id"]
    for entry in ENTRIES:
        if entry["expected"] == "clean" and entry.get("verdict") != "not-a-bug":
            assert entry["fixes"] in ids, entry["id"]
            assert entry["currently"] in ("clean", "flagged"), entry["id"]
    assert len(buggy) >= 8
    assert len({entry["distribution"] for entry in buggy}) >= 6


def test_every_entry_has_its_cost_class() -> None:
    """Each release is classed under the cost model with a reason: a buggy release is a
    defeated pool or a raise; a fixed release starts nothing extra; a release re-read as not a
    bug is out of the buggy set, clean, with what lintloader still reports there as flagged
    (or nothing, ``currently = "clean"``)."""
    for entry in ENTRIES:
        assert entry["cost_class"] in COST_CLASSES, entry["id"]
        assert isinstance(entry["class_reason"], str) and entry["class_reason"].strip(), entry["id"]
        not_a_bug = entry.get("verdict") == "not-a-bug"
        assert entry.get("verdict", "not-a-bug") == "not-a-bug", entry["id"]
        if entry["expected"] != "clean":
            assert entry["cost_class"] in BUG_CLASSES, entry["id"]
        elif not_a_bug:
            assert entry["cost_class"] not in BUG_CLASSES and "fixed_by" not in entry, entry["id"]
            flagged = entry["currently"] == "flagged" and entry["flagged"]
            assert flagged or entry["currently"] == "clean", entry["id"]
        else:
            assert entry["cost_class"] == "none", entry["id"]


def test_the_docs_table_gives_every_entry_its_class() -> None:
    """docs/corpus.md "Cost classes (round 5)" has one row per entry, with the data's class."""
    docs = CORPUS.parents[2] / "docs" / "corpus.md"
    section = docs.read_text("utf-8").split("## Cost classes (round 5)")[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3:
            rows[cells[0].split(" (")[0]] = cells[1]
    for entry in ENTRIES:
        assert rows.get(entry["id"]) == entry["cost_class"], entry["id"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_release(entry: dict) -> None:
    findings = scan(entry)
    if entry["expected"] == "clean":
        check_clean(entry, findings)
    else:
        check_buggy(entry, findings)
