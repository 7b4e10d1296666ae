"""Precision in the wild (benchmarks/ecosystem_scan.py, benchmarks/ecosystem.toml).

- The table: at least 50 scanned packages, every skip with its reason, every label well formed;
  every false positive fixed in the analysis names its nearest-negative fixture.
- Five of the releases, downloaded at test time (skipped without the package index), are
  checked with the real console script: exactly the labelled warning+ findings are reported,
  and no fixed false positive comes back.
- A true positive in a current release carries its "affected, no fixed release yet" advisory.
- No per-project special case: the analysis names none of the scanned projects.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from conftest import WHEEL_CACHE, load_benchmark, run_cli

REPO = Path(__file__).resolve().parents[1]


scan = load_benchmark("ecosystem_scan")
TABLE = scan.load_table()
PACKAGES = {package.distribution: package for package in TABLE.packages}
# A true positive (flair, simpletransformers, torchio), fixed false positives of four shapes
# (scvi-tools, catalyst; flair's too), small wheels: about 5 MB in all.
PINNED = ("flair", "torchio", "simpletransformers", "scvi-tools", "catalyst")


def test_the_table_lists_fifty_packages_and_labels_every_finding_well() -> None:
    scanned = [p for p in TABLE.packages if not p.skip]
    assert len(scanned) >= 50
    assert all(p.version for p in scanned)
    assert len(PACKAGES) == len(TABLE.packages), "a distribution is listed twice"
    keys = [label.key for label in TABLE.labels]
    assert len(set(keys)) == len(keys), "a finding is labelled twice"
    for label in TABLE.labels:
        assert label.distribution in PACKAGES and not PACKAGES[label.distribution].skip, label
        assert label.why.strip(), label
        if label.verdict == "false-positive":
            fixture = REPO / label.fixture
            assert fixture.is_file() and fixture.parent.name == label.code, label
        else:
            assert label.fixture == "", label


def test_the_precision_over_the_labels_clears_the_bar() -> None:
    live = [label for label in TABLE.labels if not label.fixture]
    correct = [label for label in live if label.verdict in scan.CORRECT]
    assert live and len(correct) / len(live) >= scan.PRECISION_BAR


@pytest.fixture(scope="module")
def cache() -> Path:
    return WHEEL_CACHE / "ecosystem"


def released(distribution: str, cache: Path) -> Path:
    try:
        return scan.download(PACKAGES[distribution], cache)
    except scan.Unavailable as exc:
        pytest.skip(f"the package index is not reachable: {exc}")


@pytest.mark.parametrize("distribution", PINNED)
def test_a_release_reports_exactly_its_labelled_findings(
    distribution: str, cache: Path, tmp_path: Path
) -> None:
    package = PACKAGES[distribution]
    root, tops = scan.unpack(released(distribution, cache), tmp_path)
    rows = scan.check(package, root, tops)
    comparison = scan.compare(rows, TABLE.labels, {distribution})
    assert comparison.new == (), comparison.new
    assert comparison.gone == (), comparison.gone
    assert comparison.back == (), comparison.back


def test_a_true_positive_in_a_current_release_carries_its_advisory(
    cache: Path, tmp_path: Path
) -> None:
    root, _ = scan.unpack(released("torchio", cache), tmp_path)
    # a non-persistent loader rebuilt per pass: avoidable (lintloader/domain/cost.py), an info
    # finding
    info = ("--min-severity", "info")
    done = run_cli("check", "--no-cache", *info, "--output-format", "json", "torchio", cwd=root)
    assert done.returncode == 1, done.stderr
    (finding,) = json.loads(done.stdout)
    where = (finding["code"], finding["path"], finding["line"])
    assert where == ("LL202", "torchio/data/queue.py", 305)
    advisory = finding["advisory"]
    assert (advisory["distribution"], advisory["version"], advisory["fixed"]) == (
        "torchio",
        "1.2.1",
        None,
    )
    assert advisory["kind"] == "advice"  # a non-persistent pool per epoch: avoidable, no bug
    assert "torchio 1.2.1: advice, an avoidable cost, not a bug" in advisory["message"]
    assert finding["severity"] == "info"
    text = run_cli("check", "--no-cache", *info, "torchio", cwd=root).stdout
    assert "advisory: torchio 1.2.1: advice, an avoidable cost, not a bug; no release" in text
    assert "is affected" not in text


# The tool's own domain: PyTorch Lightning is what the LL1xx rules were written against (its
# loops, hooks, Trainer flags), and "lightning" names that framework in messages and in the
# Trainer paths of domain/torch_api.py. Rule examples (VALID/INVALID sources) may import any
# library: they are documentation of what is and is not reported, not a branch of the analysis.
DOMAIN_VOCABULARY = {"lightning", "pytorch_lightning", "pytorch-lightning", "pytorchlightning"}
EXAMPLES = {"VALID", "INVALID"}


def project_names() -> set[str]:
    names = set()
    for package in TABLE.packages:
        name = package.distribution.lower()
        names |= {name, name.replace("-", "_"), name.replace("-", "")}
    return names - DOMAIN_VOCABULARY


def code_strings(tree: ast.Module) -> list[tuple[int, str]]:
    """String constants and imported module names, without docstrings and rule examples."""
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in EXAMPLES for t in node.targets
        ):
            skipped |= {id(inner) for inner in ast.walk(node.value)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in skipped:
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
    return found


def test_the_analysis_names_none_of_the_scanned_projects() -> None:
    names = project_names()
    hits = []
    for path in sorted((REPO / "lintloader").rglob("*.py")):
        for line, text in code_strings(ast.parse(path.read_text(encoding="utf-8"))):
            words = {word.lower() for word in re.findall(r"[A-Za-z_][\w-]*", text)}
            hits += [f"{path.relative_to(REPO)}:{line}: {w}" for w in sorted(words & names)]
    assert hits == [], "per-project special cases:\n" + "\n".join(hits)
