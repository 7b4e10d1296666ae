"""Every registered rule, driven by the registry and by fixture globs: inline examples, fixtures
with `# expect:` markers checked through the real CLI, fix before/after pairs through
`lintloader fix`; plus the LL2xx specifics (call graph, demand, fixture scripts run with real
torch workers). A new rule is one module plus `fixtures/rules/<CODE>/`: nothing here lists it
(tests/test_new_rule_copy.py adds one in a copy of the checkout and runs these tests there)."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from harness import run_cli, run_cli_forked, run_scripts_forked

from lintloader.analysis.context import AnalysisContext
from lintloader.fixers.registry import unknown_fixes
from lintloader.link.program import Program
from lintloader.rules.registry import rules_by_code
from lintloader.summary.summarize import summarize_source

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
CODES = tuple(rules_by_code())
FIXED_CODES = tuple(code for code, rule in rules_by_code().items() if rule.fixes)
EXPECT = re.compile(r"#\s*expect:\s*(?P<code>LL\d{3})\s+(?P<severity>error|warning|info)")


# the command fixtures/rules/README.md gives (test_the_fixtures_readme_gives_the_command)
FIXTURE_CHECK = (
    "check", "--no-cache", "-j", "1", "--min-severity", "info", "--output-format", "json",
    "--project-root", "none",
)  # fmt: skip


def check_json(*paths: str, cwd: Path = REPO) -> list[dict]:
    done = run_cli(*FIXTURE_CHECK, *paths, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def checks_json(checks: list[tuple[str, ...]]) -> list[list[dict]]:
    """The findings of ``check_json(*paths)`` for each ``paths`` of ``checks``, each its own
    cold run, forked from one process (harness.run_cli_forked): the oracle of a test about
    the findings, not about the command."""
    findings = []
    for done in run_cli_forked([((*FIXTURE_CHECK, *paths), REPO) for paths in checks]):
        assert done.returncode in (0, 1), done.stderr
        findings.append(json.loads(done.stdout))
    return findings


def selected(request: pytest.FixtureRequest, test: str, name: str) -> list:
    """The values of parameter ``name`` of the cases of ``test`` (in this module) that this
    session runs: those ``-k`` or ``-m`` leave out are not checked for nothing."""
    return [
        item.callspec.params[name]
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.module is request.module
        and item.originalname == test
    ]


def findings_of(source: str, code: str) -> list:
    summary = summarize_source(textwrap.dedent(source).encode(), "example.py", "example")
    assert summary.ok, summary.error
    rule = rules_by_code()[code]
    return [f for f in rule.check(AnalysisContext(Program([summary]))) if f.code == code]


# -- fixtures: every finding is expected, every expectation is found -------------------------------
FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*/*.py") if not p.name.startswith("fix_"))


def expected_markers(path: Path) -> set[tuple[int, str, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.add((number, match["code"], match["severity"]))
    return found


@pytest.fixture(scope="module")
def fixture_findings(request: pytest.FixtureRequest) -> dict[Path, list[dict]]:
    """The findings of each fixture file the session's cases below read, one check each."""
    paths = selected(request, "test_fixture_findings_match_markers", "path")
    return dict(zip(paths, checks_json([(str(p.relative_to(REPO)),) for p in paths]), strict=True))


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_match_markers(
    path: Path, fixture_findings: dict[Path, list[dict]]
) -> None:
    findings = fixture_findings[path]
    got = {(f["line"], f["code"], f["severity"]) for f in findings}
    assert got == expected_markers(path)
    if path.name == "positive.py":
        assert any(code == path.parent.name for _, code, _ in got)


@pytest.mark.enumerates_rules
def test_the_fixtures_readme_gives_the_command_the_tests_run() -> None:
    command = f"lintloader {' '.join(FIXTURE_CHECK)} fixtures/rules/LLNNN/positive.py"
    assert f"```bash\n{command}\n```" in (FIXTURES / "README.md").read_text(encoding="utf-8")


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("code", CODES)
def test_every_rule_has_fixtures_and_known_fixes(code: str) -> None:
    folder = FIXTURES / code
    assert folder.is_dir(), f"{code} has no fixtures folder {folder.relative_to(REPO)}"
    names = {p.name for p in folder.iterdir()}
    assert {"positive.py", "negative.py"} <= names, code
    rule = rules_by_code()[code]
    assert unknown_fixes(rule) == [], f"{code} declares unknown fix strategies"
    if rule.fixes:
        assert {"fix_before.py", "fix_after.py"} <= names, code


@pytest.mark.enumerates_rules
def test_every_fixtures_folder_belongs_to_a_rule() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders <= set(CODES), f"fixtures for unknown rules: {sorted(folders - set(CODES))}"


# -- fix pairs through the real `lintloader fix` ---------------------------------------------------
@pytest.mark.enumerates_rules
@pytest.mark.parametrize("code", FIXED_CODES)
def test_fix_pair(code: str, tmp_path: Path) -> None:
    target = tmp_path / "script.py"
    shutil.copy(FIXTURES / code / "fix_before.py", target)
    # LL204 is info: fix only acts on findings at or above the configured threshold.
    (tmp_path / "pyproject.toml").write_text('[tool.lintloader]\nmin-severity = "info"\n')
    args = ("fix", "--no-cache", "--unsafe-fixes", "--select", code, "script.py")
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert target.read_bytes() == (FIXTURES / code / "fix_after.py").read_bytes(), done.stderr
    again = check_json("--select", code, "script.py", cwd=tmp_path)
    assert [f for f in again if f["code"] == code] == []


@pytest.mark.enumerates_rules
def test_safe_fix_alone_keeps_what_the_loop_sees(tmp_path: Path) -> None:
    """Without --unsafe-fixes, LL203's loop keeps taking the first batch of a fresh pass each
    step (its loader made persistent), not the batches reuse-iterator would walk through."""
    for code in ("LL201", "LL203"):
        shutil.copy(FIXTURES / code / "fix_before.py", tmp_path / f"{code}.py")
    done = run_cli("fix", "--no-cache", "LL201.py", "LL203.py", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert (tmp_path / "LL201.py").read_bytes() == (FIXTURES / "LL201/fix_after.py").read_bytes()
    before = (FIXTURES / "LL203/fix_before.py").read_text()
    persistent = before.replace("num_workers=2)", "num_workers=2, persistent_workers=True)")
    assert persistent != before and (tmp_path / "LL203.py").read_text() == persistent


def test_findings_name_their_fixers() -> None:
    codes = ("LL201", "LL202", "LL203", "LL204")
    found = checks_json([(f"fixtures/rules/{code}/fix_before.py",) for code in codes])
    fixes = {
        f["code"]: f["fixes"]
        for code, findings in zip(codes, found, strict=True)
        for f in findings
        if f["code"] == code
    }
    assert fixes == {
        "LL201": ["persistent-workers-guard"],
        "LL202": ["hoist-loader-call"],  # safe: the loop sets nothing on the dataset
        "LL203": ["persistent-sample-loader"],  # safe: a persistent loader, the same batches
        "LL204": ["persistent-workers-stateless"],  # the loop sets no per-epoch state
    }


@pytest.fixture(scope="module")
def fixed_rule_findings(request: pytest.FixtureRequest) -> dict[str, list[dict]]:
    """The findings of each fixed rule's fixtures (its fix_before.py and folder) that the
    session's cases below read, one check each."""
    codes = selected(request, "test_findings_name_only_declared_fixes", "code")
    checks = [(f"fixtures/rules/{code}/fix_before.py", f"fixtures/rules/{code}") for code in codes]
    return dict(zip(codes, checks_json(checks), strict=True))


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("code", FIXED_CODES)
def test_findings_name_only_declared_fixes(
    code: str, fixed_rule_findings: dict[str, list[dict]]
) -> None:
    declared = set(rules_by_code()[code].fixes)
    findings = fixed_rule_findings[code]
    named = {name for f in findings if f["code"] == code for name in f["fixes"]}
    assert named, f"no {code} finding in its fixtures names a fix"
    assert named <= declared, f"{code} findings name undeclared fixes {named - declared}"


# -- resolution, call graph and demand -------------------------------------------------------------
def test_ll202_follows_calls_into_a_file_that_never_names_dataloader(tmp_path: Path) -> None:
    package = tmp_path / "proj"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "data.py").write_text(
        "from torch.utils.data import DataLoader\n\n"
        "def make_loader(ds):\n"
        "    return DataLoader(ds, num_workers=4, persistent_workers=True)\n"
    )
    (package / "train.py").write_text(
        "from proj.data import make_loader\n\n"
        "def fit(ds, epochs):\n"
        "    for epoch in range(epochs):\n"
        "        for batch in make_loader(ds):\n"
        "            pass\n"
    )
    findings = [f for f in check_json("proj", cwd=tmp_path) if f["code"] == "LL202"]
    assert [(f["path"], f["line"], f["severity"]) for f in findings] == [
        ("proj/train.py", 5, "warning")
    ]
    chain = findings[0]["chain"]
    assert [(h["path"], h["line"], h["verb"]) for h in chain] == [
        ("proj/train.py", 4, "loop"),
        ("proj/train.py", 5, "calls"),
        ("proj/data.py", 4, "builds"),
    ]


def test_ll202_ignores_calls_matched_by_method_name_only() -> None:
    source = """
        from torch.utils.data import DataLoader

        class Builder:
            def build(self):
                return DataLoader(range(4), num_workers=2)

        def fit(thing, epochs):
            for epoch in range(epochs):
                thing.build()
    """
    assert findings_of(source, "LL202") == []


def test_dataloader_subclass_in_scanned_code_is_a_dataloader() -> None:
    source = """
        from torch.utils.data import DataLoader

        class Fast(DataLoader):
            pass

        for epoch in range(3):
            loader = Fast(range(4), num_workers=2)
    """
    assert [f.line for f in findings_of(source, "LL202")] == [8]


@pytest.mark.enumerates_rules
def test_summary_facts_survive_pickling() -> None:
    source = (FIXTURES / "LL203" / "positive.py").read_bytes()
    summary = summarize_source(source, "positive.py", "positive")
    restored = pickle.loads(pickle.dumps(summary))
    assert restored.loaders == summary.loaders
    assert restored.loaders is not None
    assert len(restored.loaders.functions["probe"].iter_calls) == 1


# -- the fixture scripts with real torch workers ---------------------------------------------------
# They run one rule's fixture scripts with plain Python, no lintloader: a new rule cannot change
# them, so they do not carry `enumerates_rules` (the new-rule test's copy does not run them again).
def rule_folder(code: str) -> Path:
    """One rule's fixtures folder (not the set of rules, as :data:`FIXTURES` is)."""
    return REPO / "fixtures" / "rules" / code


# (fixtures folder, script, arguments) of each run the tests below read
WORKER_RUNS = {
    "LL201 before, 2 workers": ("LL201", "fix_before.py", ("--workers", "2")),
    "LL201 after, 0 workers": ("LL201", "fix_after.py", ("--workers", "0")),
    "LL201 after, 2 workers": ("LL201", "fix_after.py", ("--workers", "2")),
    "LL203 before": ("LL203", "fix_before.py", ()),
    "LL203 after": ("LL203", "fix_after.py", ()),
    "LL202 after": ("LL202", "fix_after.py", ()),
}


@pytest.fixture(scope="module")
def worker_runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every run of :data:`WORKER_RUNS`, each ``python SCRIPT ARGS`` in a child forked from
    one process that imported torch (harness.run_scripts_forked): torch imported once."""
    pytest.importorskip("torch", reason="torch is not installed (a runtime test dependency)")
    runs = [(rule_folder(code) / name, args) for code, name, args in WORKER_RUNS.values()]
    done = run_scripts_forked(runs, env={"OMP_NUM_THREADS": "1"}, timeout=180)
    return dict(zip(WORKER_RUNS, done, strict=True))


def test_ll201_before_raises_and_after_runs_with_real_workers(
    worker_runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    before = worker_runs["LL201 before, 2 workers"]
    assert before.returncode != 0
    assert "persistent_workers option needs num_workers > 0" in before.stderr
    for workers in ("0", "2"):
        after = worker_runs[f"LL201 after, {workers} workers"]
        assert after.returncode == 0, after.stderr
        assert after.stdout.strip() == "total 112"


def test_ll203_after_walks_the_data_with_real_workers(
    worker_runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    before, after = worker_runs["LL203 before"], worker_runs["LL203 after"]
    assert before.returncode == 0, before.stderr
    assert after.returncode == 0, after.stderr
    # A fresh iterator per step always yields the first batch; the fix walks through the data.
    assert before.stdout.strip() == "first items [0, 0, 0, 0, 0, 0]"
    assert after.stdout.strip() == "first items [0, 4, 0, 4, 0, 4]"


def test_ll202_after_runs_with_real_workers(
    worker_runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    after = worker_runs["LL202 after"]
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "seen 16"


def test_the_strategy_catalog_agrees_with_the_imported_strategies() -> None:
    """Reporting reads each strategy's safety from data (finding/fix_safety.py, no libcst import);
    the fixers import the modules: both must say the same, and every unsafe one says why."""
    from lintloader.finding.fix_safety import FIX_SAFETY
    from lintloader.fixers.catalog import strategy_safety
    from lintloader.fixers.registry import all_strategies

    assert strategy_safety() == {s.name: s.safe for s in all_strategies()}
    assert all(entry.why for entry in FIX_SAFETY.values() if not entry.safe)
