"""The formats CI systems read (gitlab, rdjson, junit), several reports from one run, and fix
safety in json/sarif/rdjson and ``--statistics``, all from real runs of the CLI.

rdjson is validated against reviewdog's published schema (downloaded at test time; the test
skips when it cannot be reached) and its suggestion is applied to the file and compared with
what ``lintloader fix`` writes; junit is read by junitparser, a real JUnit consumer; gitlab is
validated against GitLab's documented Code Quality format, written as a JSON schema here (GitLab
publishes none that can be downloaded from here).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
LIGHTNING = REPO / "fixtures" / "check" / "lightning150" / "minilight"
LL202 = REPO / "fixtures" / "rules" / "LL202" / "positive.py"
RDJSON_SCHEMA = (
    "https://raw.githubusercontent.com/reviewdog/reviewdog/master/"
    "proto/rdf/jsonschema/DiagnosticResult.json"
)
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ci") / "proj"
    shutil.copytree(LIGHTNING, root / "minilight")
    (root / "train.py").write_text(stateful(LL202.read_text()))
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    return root


STATE = (  # a statement setting per-epoch state on the dataset, after each loop's header
    ("    for epoch in range(epochs):\n", "        dataset.epoch = epoch\n"),
    ("    while step < epochs:\n", "        dataset.epoch = step\n"),
)


def stateful(source: str) -> str:
    """positive.py whose loops set per-epoch state on the dataset: the safe hoist-loader-call
    refuses both, so the loop-built loader has only the unsafe hoist-dataloader, and the one
    built through a helper has no fix."""
    for loop, state in STATE:
        assert loop in source
        source = source.replace(loop, loop + state, 1)
    return source


@pytest.fixture(scope="module")
def reports(project: Path) -> dict[str, str]:
    """One run, five reports: json on stdout, the others in files."""
    done = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "json",
        *("--output-format", "gitlab:gl.json"),
        *("--output-format", "rdjson:rd.json"),
        *("--output-format", "junit:report.xml"),
        *("--output-format", "sarif:out.sarif"),
        ".",
        cwd=project,
    )
    assert done.returncode == 1, done.stderr
    files = {"gitlab": "gl.json", "rdjson": "rd.json", "junit": "report.xml", "sarif": "out.sarif"}
    found = {name: (project / path).read_text() for name, path in files.items()}
    return {"json": done.stdout, **found}


def test_one_run_writes_every_report(reports: dict[str, str]) -> None:
    codes = [item["code"] for item in json.loads(reports["json"])]
    assert codes == ["LL101", "LL202", "LL202", "LL202"]
    assert len(json.loads(reports["gitlab"])) == 4
    assert len(json.loads(reports["rdjson"])["diagnostics"]) == 4
    assert len(json.loads(reports["sarif"])["runs"][0]["results"]) == 4


def test_at_most_one_report_on_stdout(project: Path) -> None:
    done = run_cli("check", "--output-format", "json", "--output-format", "text", ".", cwd=project)
    assert done.returncode == 2
    assert "at most one report goes to standard output (json, text)" in done.stderr
    bad = run_cli("check", "--output-format", "yaml", ".", cwd=project)
    assert bad.returncode == 2
    assert "--output-format: unknown format 'yaml'" in bad.stderr


def test_reports_from_the_configuration(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(LIGHTNING, root / "minilight")
    (root / "pyproject.toml").write_text(
        '[tool.lintloader]\noutput-format = ["concise", "gitlab:codequality.json"]\n'
    )
    done = run_cli("check", "--no-cache", ".", cwd=root)
    assert done.returncode == 1
    assert done.stdout.startswith("minilight/utilities/fetching.py:16:9: LL101 [error]")
    assert json.loads((root / "codequality.json").read_text())[0]["check_name"] == "LL101"
    (root / "pyproject.toml").write_text('[tool.lintloader]\noutput-format = ["csv"]\n')
    bad = run_cli("check", "--no-cache", ".", cwd=root)
    assert bad.returncode == 2
    assert "output-format (in " in bad.stderr and "unknown format 'csv'" in bad.stderr


def test_report_folders_are_made_and_config_paths_read_from_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(LIGHTNING, root / "minilight")
    given = run_cli(
        "check", "--no-cache", "--output-format", "sarif:reports/ci/out.sarif", ".", cwd=root
    )
    assert given.returncode == 1, given.stderr
    assert json.loads((root / "reports/ci/out.sarif").read_text())["version"] == "2.1.0"
    (root / "pyproject.toml").write_text(
        '[tool.lintloader]\noutput-format = ["concise", "gitlab:out/codequality.json"]\n'
    )
    (root / "minilight" / "deeper").mkdir()
    inner = run_cli("check", "--no-cache", "..", cwd=root / "minilight" / "deeper")
    assert inner.returncode == 1, inner.stderr
    written = root / "out" / "codequality.json"  # beside the pyproject.toml, not the cwd
    assert json.loads(written.read_text())[0]["check_name"] == "LL101"
    assert not (root / "minilight" / "deeper" / "out").exists()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)  # a configured folder through a link out: refused
    (root / "pyproject.toml").write_text(
        '[tool.lintloader]\noutput-format = ["concise", "gitlab:link/new/cq.json"]\n'
    )
    refused = run_cli("check", "--no-cache", ".", cwd=root)
    assert "not written" in refused.stderr
    assert list(outside.iterdir()) == []


# GitLab publishes no machine-readable schema for the Code Quality report that this machine or
# CI can reach (none on PyPI, npm or Debian), so this is its documented format, field by field
# (docs.gitlab.com/ci/testing/code_quality, "Code Quality report format": a JSON array of
# objects), written here as a JSON schema; the fields GitLab takes from the Code Climate spec
# that lintloader also writes (type, categories, lines.end) carry that spec's constraints.
CATEGORIES = ["Bug Risk", "Clarity", "Compatibility", "Complexity", "Duplication"]
CATEGORIES += ["Performance", "Security", "Style"]
GITLAB_CODE_QUALITY = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},  # shown in the MR widget
            "check_name": {"type": "string", "minLength": 1},  # the rule
            "fingerprint": {"type": "string", "minLength": 1},  # unique, stable across runs
            "severity": {"enum": sorted(GITLAB_SEVERITIES)},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    # relative to the repository root, not prefixed with ./
                    "path": {"type": "string", "pattern": r"^(?!/)(?!\./)(?![A-Za-z]:)"},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {
                            "begin": {"type": "integer", "minimum": 1},
                            "end": {"type": "integer", "minimum": 1},
                        },
                    },
                },
            },
            "type": {"const": "issue"},
            "categories": {"type": "array", "minItems": 1, "items": {"enum": CATEGORIES}},
        },
    },
}


def test_gitlab_code_quality(reports: dict[str, str], project: Path) -> None:
    """Read as GitLab reads it: the documented fields, a fingerprint per finding (GitLab
    shows one finding per fingerprint and compares reports by it), lines in the file."""
    issues = json.loads(reports["gitlab"])
    jsonschema.Draft7Validator(GITLAB_CODE_QUALITY).validate(issues)
    for issue in issues:
        lines = issue["location"]["lines"]
        source = (project / issue["location"]["path"]).read_text().splitlines()
        assert lines["begin"] <= lines.get("end", lines["begin"]) <= len(source)
    assert [i["severity"] for i in issues] == ["critical", "major", "major", "major"]
    prints = [issue["fingerprint"] for issue in issues]
    assert len(set(prints)) == len(prints)
    # the fingerprint is the baseline key
    done = run_cli("check", "--no-cache", "--write-baseline", "base.json", ".", cwd=project)
    assert done.returncode == 0, done.stderr
    recorded = json.loads((project / "base.json").read_text())["findings"]
    assert sorted(prints) == sorted(entry["fingerprint"] for entry in recorded)
    for broken in (  # the schema bites
        [{**issues[0], "severity": "error"}],
        [{**issues[0], "location": {**issues[0]["location"], "path": "./train.py"}}],
        [{key: value for key, value in issues[0].items() if key != "fingerprint"}],
        issues[0],
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft7Validator(GITLAB_CODE_QUALITY).validate(broken)


def test_gitlab_without_findings_is_an_empty_array(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("x = 1\n")
    done = run_cli("check", "--no-cache", "--output-format", "gitlab", "clean.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    jsonschema.Draft7Validator(GITLAB_CODE_QUALITY).validate(json.loads(done.stdout))


def rdjson_schema() -> dict:
    try:
        with urllib.request.urlopen(RDJSON_SCHEMA, timeout=20) as response:
            return json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError) as exc:
        pytest.skip(f"cannot download reviewdog's rdjson schema: {exc}")


def test_rdjson_validates_against_reviewdogs_schema(reports: dict[str, str]) -> None:
    schema = rdjson_schema()
    result = json.loads(reports["rdjson"])
    jsonschema.Draft4Validator(schema).validate(result)
    with pytest.raises(jsonschema.ValidationError):  # the schema does bite
        broken = {**result, "diagnostics": [{**result["diagnostics"][0], "severity": "FATAL"}]}
        jsonschema.Draft4Validator(schema).validate(broken)


def test_rdjson_diagnostics(reports: dict[str, str]) -> None:
    diagnostics = json.loads(reports["rdjson"])["diagnostics"]
    first = diagnostics[0]
    assert first["location"]["path"] == "minilight/utilities/fetching.py"
    assert first["location"]["range"]["start"] == {"line": 16, "column": 9}
    assert first["severity"] == "ERROR"
    assert first["code"]["value"] == "LL101"
    assert first["code"]["url"].endswith("/docs/rules/LL101.md")
    # only the fixes that apply, tried in memory (issue 43): relocate ends it, safely
    assert first["fixes"] == [{"fix": "relocate", "applicability": "safe"}]
    unsafe = diagnostics[1]["fixes"]  # LL202: the hoist, unsafe, with why
    assert unsafe[0]["applicability"] == "unsafe" and unsafe[0]["why"]
    assert all("suggestions" not in d for d in diagnostics[1:])  # LL202: no safe fix


def apply_suggestion(source: str, suggestion: dict) -> str:
    lines = source.splitlines(keepends=True)
    start = suggestion["range"]["start"]["line"] - 1
    end = suggestion["range"]["end"]["line"] - 1
    assert suggestion["range"]["start"]["column"] == suggestion["range"]["end"]["column"] == 1
    return "".join(lines[:start]) + suggestion["text"] + "".join(lines[end:])


def test_the_rdjson_suggestion_is_the_safe_fix(reports: dict[str, str], tmp_path: Path) -> None:
    (suggestion,) = json.loads(reports["rdjson"])["diagnostics"][0]["suggestions"]
    fetching = LIGHTNING / "utilities" / "fetching.py"
    suggested = apply_suggestion(fetching.read_text(), suggestion)
    fixed = tmp_path / "fixed"
    shutil.copytree(LIGHTNING, fixed / "minilight")
    done = run_cli("fix", "--no-cache", "--select", "LL101", ".", cwd=fixed)
    assert done.returncode == 0, done.stderr
    written = (fixed / "minilight" / "utilities" / "fetching.py").read_text()
    assert written != fetching.read_text()
    assert suggested == written


def test_junit_one_testcase_per_finding(reports: dict[str, str]) -> None:
    from junitparser import Failure, JUnitXml

    tree = ElementTree.fromstring(reports["junit"].encode())
    assert tree.tag == "testsuites" and tree.get("tests") == "4"
    assert [s.get("name") for s in tree] == ["minilight/utilities/fetching.py", "train.py"]
    xml = JUnitXml.fromstring(reports["junit"])
    cases = [case for suite in xml for case in suite]
    assert [case.name.split()[0] for case in cases] == ["LL101", "LL202", "LL202", "LL202"]
    assert all(isinstance(case.result[0], Failure) for case in cases)
    assert cases[0].classname == "minilight/utilities/fetching.py"
    assert "DataFetcher.reset: calls" in cases[0].result[0].text


def test_junit_without_findings_is_one_passing_case(tmp_path: Path) -> None:
    from junitparser import JUnitXml

    (tmp_path / "clean.py").write_text("x = 1\n")
    done = run_cli("check", "--no-cache", "--output-format", "junit", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cases = [case for suite in JUnitXml.fromstring(done.stdout) for case in suite]
    assert len(cases) == 1 and cases[0].is_passed


def test_fix_safety_in_json_and_sarif(reports: dict[str, str]) -> None:
    found = json.loads(reports["json"])
    first = found[0]
    assert first["fix_safety"] == [{"fix": "relocate", "applicability": "safe"}]
    [unsafe] = found[1]["fix_safety"]  # LL202's hoist: applies, unsafe
    assert unsafe["fix"] == "hoist-dataloader" and unsafe["applicability"] == "unsafe"
    assert "set_epoch" in unsafe["why"]
    results = json.loads(reports["sarif"])["runs"][0]["results"]
    assert [r["properties"]["fixSafety"] for r in results[:2]] == [
        first["fix_safety"],
        found[1]["fix_safety"],
    ]


def test_statistics_marks_unsafe_only_fixes(project: Path) -> None:
    # repeated --select adds up; LL202 named by its code also shows its info finding
    done = run_cli(
        "check", "--statistics", "--select", "LL101", "--select", "LL202", ".", cwd=project
    )
    lines = done.stdout.splitlines()
    assert lines == [
        "4\tLL202\t[-] dataloader-built-every-epoch",
        "1\tLL101\t[*] iter-resets-dataloader-iterator",
    ]


def test_a_selector_error_names_where_it_came_from(project: Path) -> None:
    done = run_cli("check", "--select", "LL1", "--extend-select", "LL9", ".", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("lintloader: error: --extend-select: 'LL9' matches no rule")
    assert "pyproject.toml" not in done.stderr


def test_an_unknown_ignored_code_warns_naming_where_it_came_from(tmp_path: Path) -> None:
    """An ignored code that matches no rule warns (the run goes on) and says whether it came
    from an option, the project's pyproject.toml or the file its ``extend`` names."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.lintloader]\nignore = ["LL991"]\nper-file-ignores = {"a.py" = ["LL992"]}\n'
    )
    project = tmp_path / "sub"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.lintloader]\nextend = "../pyproject.toml"\nextend-ignore = ["LL993"]\n'
    )
    (project / "a.py").write_text("x = 1\n")
    from_files = run_cli("check", "--no-cache", "a.py", cwd=project)
    assert from_files.returncode == 0, from_files.stderr
    warnings = [line for line in from_files.stderr.splitlines() if "warning" in line]
    assert [(w.split("'")[1], w.rsplit("(in ", 1)[1]) for w in warnings] == [
        ("LL991", f"{tmp_path / 'pyproject.toml'})"),
        ("LL993", "pyproject.toml)"),
        ("LL992", f"{tmp_path / 'pyproject.toml'})"),
    ]
    assert warnings[0].startswith("lintloader: warning: ignore: 'LL991' matches no rule")
    assert warnings[1].startswith("lintloader: warning: extend-ignore: 'LL993' matches no rule")
    assert warnings[2].startswith("lintloader: warning: per-file-ignores: 'LL992'")
    options = ("--ignore", "LL994", "--extend-ignore", "LL995", "--per-file-ignores", "a.py:LL996")
    from_cli = run_cli("check", "--no-cache", *options, "a.py", cwd=project)
    assert from_cli.returncode == 0, from_cli.stderr
    for option, code in (("--ignore", "LL994"), ("--extend-ignore", "LL995")):
        line = f"lintloader: warning: {option}: '{code}' matches no rule"
        assert line in from_cli.stderr
    assert "lintloader: warning: --per-file-ignores: 'LL996' matches no rule" in from_cli.stderr
    assert "LL996' matches no rule (`lintloader rule --all` lists them)\n" in from_cli.stderr


def test_a_select_error_from_an_extended_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text('[tool.lintloader]\nselect = ["LL19"]\n')
    (tmp_path / "pyproject.toml").write_text('[tool.lintloader]\nextend = "base.toml"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    done = run_cli("check", "--no-cache", "a.py", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("lintloader: error: select: 'LL19' matches no rule")
    assert done.stderr.rstrip().endswith("(in base.toml)")


@pytest.mark.enumerates_rules
def test_fix_safety_is_data_that_agrees_with_the_strategies() -> None:
    """SARIF's and the rule pages' fix safety come from finding/fix_safety.py, which imports no
    strategy (libcst); it says what the strategies' own ``safe`` says."""
    from lintloader.finding.fix_safety import fix_text
    from lintloader.fixers.registry import fix_safety
    from lintloader.rules.registry import all_rules

    for rule in all_rules():
        assert fix_text(rule.fixes) == fix_safety(rule)
    code = "import sys, lintloader.report.sarif; print('libcst' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_rdjson_columns_are_utf8_bytes(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(
        'class Fetcher:\n    def __iter__(self):\n        é = "ü"; self.loader._iterator = None\n'
        "        return iter(self.loader)\n",
        encoding="utf-8",
    )
    done = run_cli("check", "--no-cache", "--output-format", "rdjson", "f.py", cwd=tmp_path)
    (diagnostic,) = json.loads(done.stdout)["diagnostics"]
    concise = run_cli("check", "--no-cache", "--output-format", "concise", "f.py", cwd=tmp_path)
    assert concise.stdout.startswith("f.py:3:18: LL101")  # characters
    assert diagnostic["location"]["range"]["start"] == {"line": 3, "column": 20}  # bytes
