"""Known affected releases, on the real released pytorch-lightning 1.5.0 and 1.5.1 wheels
(downloaded at test time): every finding in 1.5.0 that the bug explains carries the advisory
naming 1.5.1, in text, JSON and SARIF; 1.5.1 carries none; the data is well formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, unpacked_wheel

from lintloader.analysis.advisories import BUG_CLASSES, COST_CLASSES, known_advisories
from lintloader.cli.packages import upgrade_hint
from lintloader.finding.findings import Advisory
from lintloader.rules.registry import rules_by_code

UPGRADE = "pip install 'pytorch-lightning>=1.5.1'"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory):
    def unpack(version: str) -> Path:
        return unpacked_wheel(f"pytorch-lightning=={version}", tmp_path_factory.mktemp(version))

    return unpack


def check(site: Path, *args: str) -> str:
    done = run_cli("check", "--no-cache", *args, "pytorch_lightning", cwd=site)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_findings_in_an_affected_release_carry_the_advisory(release) -> None:
    site = release("1.5.0")
    findings = json.loads(check(site, "--output-format", "json"))
    assert {f["code"] for f in findings} >= {"LL101"}
    for finding in findings:
        advisory = finding["advisory"]
        assert advisory["distribution"] == "pytorch-lightning"
        assert (advisory["version"], advisory["fixed"]) == ("1.5.0", "1.5.1")
        assert UPGRADE in advisory["message"]
    text = check(site)
    assert text.count("advisory: pytorch-lightning 1.5.0 is affected; fixed in 1.5.1") == len(
        findings
    )
    results = json.loads(check(site, "--output-format", "sarif"))["runs"][0]["results"]
    assert all(r["properties"]["advisory"]["fixed"] == "1.5.1" for r in results)


def test_the_fixed_release_carries_no_advisory(release) -> None:
    findings = json.loads(check(release("1.5.1"), "--output-format", "json", "--min-severity",
                                "info"))  # fmt: skip
    assert all(f["advisory"] is None for f in findings)


@pytest.mark.enumerates_rules
def test_the_advisory_data_is_well_formed() -> None:
    entries = known_advisories()
    assert len({e.distribution for e in entries}) == len(entries) >= 6
    codes = set(rules_by_code())
    for entry in entries:
        assert entry.affected and entry.fixed not in entry.affected
        assert entry.rules <= codes, entry
        assert entry.reference.startswith("https://")
        assert entry.cost_class in COST_CLASSES, entry
        assert entry.kind == ("affected" if entry.cost_class in BUG_CLASSES else "advice")
    assert {entry.kind for entry in entries} == {"affected", "advice"}


def test_an_avoidable_cost_is_advice_not_affected() -> None:
    """issue 41: "affected" only for a defeated pool or a raise; an avoidable cost is advice,
    in the message every format prints and in the site-packages summary line."""
    advice = Advisory("torchio", "1.2.1", None, "one pool per epoch", "https://x.test/a", "advice")
    assert advice.message.startswith("torchio 1.2.1: advice, an avoidable cost, not a bug; ")
    assert "affected" not in advice.message and "one pool per epoch" in advice.message
    assert advice.to_json()["kind"] == "advice"
    assert upgrade_hint(advice, None) == "advice, not a bug, no fixed release yet"
    bug = Advisory("tsai", "1.0.1", None, "a pool per pass", "https://x.test/b", "affected")
    assert bug.message.startswith("tsai 1.0.1 is affected; no fixed release yet")
    assert upgrade_hint(bug, None) == "affected, no fixed release yet"


def test_every_buggy_corpus_release_has_its_advisory() -> None:
    """The advisories follow the regression corpus (tests/corpus/releases.toml): each buggy
    release is an affected version, with the corpus's fixed release and every rule it expects,
    and no advisory names a fixed release the corpus does not pair with its affected ones."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib (Python 3.11+) reads the corpus table")
    corpus = tomllib.loads((Path(__file__).parent / "corpus/releases.toml").read_text("utf-8"))
    by_id = {release["id"]: release for release in corpus["release"]}
    entries = {entry.distribution: entry for entry in known_advisories()}
    for release in corpus["release"]:
        if "fixed_by" not in release:
            continue
        entry = entries.get(release["distribution"])
        assert entry is not None, f"no advisory for {release['distribution']}"
        assert release["version"] in entry.affected, release["id"]
        assert entry.fixed == by_id[release["fixed_by"]]["version"], release["id"]
        assert {finding["rule"] for finding in release["expected"]} <= entry.rules, release["id"]
        assert entry.cost_class == release["cost_class"] and entry.kind == "affected", release["id"]
    for release in corpus["release"]:
        if release.get("verdict") == "not-a-bug":
            assert release["distribution"] not in entries, f"{release['id']} is not a bug"
    fixed_in_corpus = {(r["distribution"], r["version"]) for r in corpus["release"] if "fixes" in r}
    for entry in entries.values():
        if entry.fixed is not None:
            assert (entry.distribution, entry.fixed) in fixed_in_corpus, entry
