"""The ``LL`` flake8 plugin, run through the real ``flake8`` in a subprocess and compared with
``lintloader check --output-format json`` on the same trees."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import run_cli, run_cli_forked

from lintloader.rules.registry import all_rules

REPO = Path(__file__).resolve().parents[1]
LIGHTNING150 = REPO / "fixtures" / "check" / "lightning150"
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>LL\d{3}) ")

pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")


def flake8(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "LL", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def flake8_findings(*args: str, cwd: Path, stdin: str | None = None) -> set[tuple]:
    done = flake8(*args, cwd=cwd, stdin=stdin)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    found = set()
    for line in done.stdout.splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, f"not a flake8 LL line: {line!r}"
        path = match["path"].removeprefix("./")
        found.add((path, int(match["line"]), int(match["col"]), match["code"]))
    return found


def check_json(*args: str, cwd: Path) -> list[dict]:
    done = run_cli("check", "--output-format", "json", *args, cwd=cwd, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def keys(findings: list[dict]) -> set[tuple]:
    return {(f["path"], f["line"], f["column"], f["code"]) for f in findings}


def single_file(findings: list[dict]) -> list[dict]:
    return [f for f in findings if all(h["path"] == f["path"] for h in f["chain"])]


def build_project(root: Path) -> Path:
    """A project root (pyproject.toml) with the cross-file Lightning 1.5.0 shape and every rule's
    INVALID examples, one file each."""
    shutil.copytree(LIGHTNING150 / "minilight", root / "src" / "minilight")
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\n')
    examples = root / "src" / "examples"
    examples.mkdir()
    for rule in all_rules():
        for number, source in enumerate(rule.invalid):
            name = f"{rule.code.lower()}_{number}.py"
            (examples / name).write_text(textwrap.dedent(source).lstrip())
    return root


@dataclass(frozen=True)
class Shared:
    """The project, built once and never edited, with one ``check`` (JSON) and one ``flake8``
    of its ``src`` that the tests reading the project unchanged compare with."""

    root: Path
    checked: list[dict]
    flake8: set[tuple]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    root = build_project(tmp_path_factory.mktemp("flake8") / "proj")
    return Shared(root, check_json("src", cwd=root), flake8_findings("src", cwd=root))


@pytest.fixture
def project(tmp_path: Path, shared: Shared) -> Path:
    """A copy of the shared project, for a test that edits it."""
    return Path(shutil.copytree(shared.root, tmp_path / "proj"))


@pytest.mark.enumerates_rules
def test_flake8_reports_what_check_reports(shared: Shared) -> None:
    expected = keys(shared.checked)
    assert ("src/minilight/utilities/fetching.py", 16, 9, "LL101") in expected  # cross-file
    assert shared.flake8 == expected


@pytest.mark.enumerates_rules
def test_flake8_file_scope_sees_single_file_chains_only(shared: Shared) -> None:
    """--lintloader-scope=file analyzes each file alone, as `lintloader check --project-root
    none FILE` does: every chain that stays in one file is still found, the cross-file one is
    not (the limit)."""
    project = shared.root
    got = flake8_findings("--lintloader-scope=file", "src", cwd=project)
    files = [str(p.relative_to(project)) for p in sorted((project / "src").rglob("*.py"))]
    runs = [(("check", "--output-format", "json", "--project-root", "none", f), project)
            for f in files]  # fmt: skip
    alone = set()
    for done in run_cli_forked(runs):  # one check per file, each its own cold run
        assert done.returncode in (0, 1), done.stderr
        alone |= keys(json.loads(done.stdout))
    assert len(files) > 20 and got == alone
    assert keys(single_file(shared.checked)) <= got
    assert ("src/minilight/utilities/fetching.py", 16, 9, "LL101") not in got


@pytest.mark.enumerates_rules
def test_flake8_in_parallel_workers(shared: Shared) -> None:
    """flake8 -j2 runs the plugin in daemon worker processes (which cannot fork a pool)."""
    assert flake8_findings("--jobs", "2", "src", cwd=shared.root) == keys(shared.checked)


def test_flake8_columns_are_one_based_like_check(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "deep.py").write_text(
        "class Fetcher:\n"
        "    def __iter__(self):\n"
        "        if True:\n"
        "            self.loader._iterator = None\n"
        "        return self\n"
    )
    got = flake8_findings("deep.py", cwd=tmp_path)
    assert got == {("deep.py", 4, 13, "LL101")}
    assert got == keys(check_json("deep.py", cwd=tmp_path))


@pytest.mark.enumerates_rules
def test_noqa_through_flake8(project: Path) -> None:
    fetching = project / "src" / "minilight" / "utilities" / "fetching.py"
    lines = fetching.read_text().splitlines(keepends=True)
    assert lines[15].strip() == "self.reset()"
    lines[15] = lines[15].rstrip("\n") + "  # noqa: E501\n"  # another code: still reported
    fetching.write_text("".join(lines))
    assert ("src/minilight/utilities/fetching.py", 16, 9, "LL101") in flake8_findings(
        "src", cwd=project
    )
    lines[15] = lines[15].replace("# noqa: E501", "# noqa: LL101")
    fetching.write_text("".join(lines))
    got = flake8_findings("src", cwd=project)
    assert not any(path.endswith("fetching.py") for path, *_ in got)
    assert got == keys(check_json("src", cwd=project))


@pytest.mark.enumerates_rules
def test_flake8_stdin(shared: Shared) -> None:
    source = (shared.root / "src" / "examples" / "ll101_0.py").read_text()
    expected = {
        (line, col, code) for path, line, col, code in shared.flake8 if path.endswith("ll101_0.py")
    }
    assert expected
    done = flake8("--stdin-display-name", "piped.py", "-", cwd=shared.root, stdin=source)
    got = {
        (int(m["line"]), int(m["col"]), m["code"])
        for m in map(FLAKE8_LINE.match, done.stdout.splitlines())
        if m and m["path"] == "piped.py"
    }
    assert got == expected
