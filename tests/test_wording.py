"""What a user reads, through the real CLI: the command list in ``lintloader --help`` is whole
(no summary cut at an abbreviation's full stop) and says what the commands find and fix (the
waste, not only resets), and every JSON finding links to the page that explains it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from conftest import FIXTURES, run_cli


def test_the_command_list_is_whole_and_names_the_waste() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    commands = done.stdout.split("Commands:", 1)[1]
    rows = dict(re.findall(r"^  (\w+)\s+(.+)$", commands, re.MULTILINE))
    assert set(rows) == {"check", "clean", "fix", "plot", "rule", "server", "trace", "verify"}
    assert not [name for name, text in rows.items() if text.endswith("...")], rows
    assert "worker pools" in rows["check"]
    assert "iterator resets" not in rows["check"] + rows["fix"]
    assert rows["rule"] == "Show a rule's documentation, or list the rules."


def test_a_json_finding_links_its_rule_page(tmp_path: Path) -> None:
    done = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "json",
        ".",
        cwd=FIXTURES / "check" / "lightning150",
    )
    [finding] = json.loads(done.stdout)
    assert finding["url"] == (
        "https://github.com/lintloader/lintloader/blob/main/docs/rules/LL101.md"
    )
    (tmp_path / "broken.py").write_text("loader = DataLoader(data, num_workers=2\n")
    broken = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    [parse_error] = json.loads(broken.stdout)
    assert parse_error["code"] == "LL000"
    assert parse_error["url"].endswith("/docs/guarantees.md#a-bad-file-never-stops-a-run")


def test_a_file_checked_in_its_project_counts_itself(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "check" / "lightning150" / "minilight", root / "minilight")
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    done = run_cli("check", "--no-cache", "minilight/utilities/fetching.py", cwd=root)
    assert done.returncode == 1
    assert done.stdout.startswith("minilight/utilities/fetching.py:16:9: LL101 [error]")
    assert "Found 1 finding (1 error) in 1 file, its project's 6 files read (" in done.stderr
    assert "no project holds" not in done.stderr


def test_a_file_in_no_project_is_said_to_be_checked_alone(tmp_path: Path) -> None:
    shutil.copy(
        FIXTURES / "check" / "lightning150" / "minilight" / "utilities" / "fetching.py", tmp_path
    )
    done = run_cli("check", "--no-cache", "fetching.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert done.stderr.splitlines()[-1] == (
        "note: no project holds fetching.py (no pyproject.toml, setup.cfg, setup.py or .git "
        "above it): checked alone, chains into other files are not followed "
        "(--project-root DIR names the project)."
    )
    quiet = run_cli("check", "--no-cache", "--quiet", "fetching.py", cwd=tmp_path)
    assert "note:" not in quiet.stderr


def test_files_of_two_projects_are_not_said_to_be_in_none(tmp_path: Path) -> None:
    fetching = FIXTURES / "check" / "lightning150" / "minilight" / "utilities" / "fetching.py"
    for project in ("first", "second"):
        (tmp_path / project).mkdir()
        (tmp_path / project / "pyproject.toml").write_text(f"[project]\nname = '{project}'\n")
        shutil.copy(fetching, tmp_path / project)
    done = run_cli("check", "--no-cache", "first/fetching.py", "second/fetching.py", cwd=tmp_path)
    assert "no project holds" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "note: first/fetching.py second/fetching.py lie in more than one project (first and "
        "second): checked as one set of files, chains into their projects' other files are "
        "not followed (check each project on its own, or name one with --project-root DIR)."
    )
