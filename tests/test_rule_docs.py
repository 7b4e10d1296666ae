"""docs/rules/ is generated from the rule modules: the committed pages must be exactly what
``python -m lintloader.dev regenerate`` writes today, with no page left for a removed rule."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from harness import run_python

from lintloader.dev.rule_docs import COMMAND, INDEX, rule_pages, stale_pages
from lintloader.fixers.registry import fix_safety
from lintloader.rules.registry import all_rules

REPO = Path(__file__).resolve().parents[1]
RULE_DOCS = REPO / "docs" / "rules"
PAGES = rule_pages(all_rules(), fix_safety)
STALE = f"docs/rules is out of date with the rule modules: run `{COMMAND}` and commit the result"


@pytest.mark.enumerates_rules
@pytest.mark.parametrize("name", sorted(PAGES))
def test_committed_page_is_what_the_generator_writes(name: str) -> None:
    committed = RULE_DOCS / name
    assert committed.is_file(), f"docs/rules/{name} is missing. {STALE}"
    assert committed.read_text(encoding="utf-8") == PAGES[name], f"docs/rules/{name}: {STALE}"


@pytest.mark.enumerates_rules
def test_no_page_for_a_rule_that_does_not_exist() -> None:
    assert stale_pages(RULE_DOCS, PAGES) == [], STALE


@pytest.mark.enumerates_rules
def test_every_rule_has_a_page_with_its_docs_and_examples() -> None:
    for rule in all_rules():
        page = PAGES[f"{rule.code}.md"]
        assert page.splitlines()[2] == f"# {rule.code}: {rule.name}"
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert section in page, f"{rule.code}: {section}"
        for source in (*rule.valid, *rule.invalid):
            assert source.strip() in page
        assert f"[{rule.code}]({rule.code}.md)" in PAGES[INDEX]


def regenerate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_python("-m", "lintloader.dev", "regenerate", "--root", str(root), *args)


@pytest.mark.enumerates_rules
def test_regenerate_writes_the_committed_files_and_removes_stale_pages(tmp_path: Path) -> None:
    """In a copy of the checkout's docs: a stale page and a stale option table are found by
    ``--check`` (exit 1, nothing written), then rewritten; a second run has nothing to do."""
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    (tmp_path / "docs" / "rules" / "LL999.md").write_text("a page for a rule that is gone\n")
    check_md = tmp_path / "docs" / "check.md"
    check_md.write_text(check_md.read_text().replace("| `--no-cache` |", "| `--no-cash` |"))
    checked = regenerate(tmp_path, "--check")
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout == "out of date: docs/rules/LL999.md\nout of date: docs/check.md\n"
    assert (tmp_path / "docs" / "rules" / "LL999.md").exists()
    done = regenerate(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "removed: docs/rules/LL999.md\nupdated: docs/check.md\n"
    written = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "docs/rules").iterdir()}
    assert written == PAGES
    assert check_md.read_bytes() == (REPO / "docs" / "check.md").read_bytes()
    again = regenerate(tmp_path, "--check")
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr


@pytest.mark.enumerates_rules
def test_regenerate_refuses_a_folder_that_is_not_a_checkout(tmp_path: Path) -> None:
    done = regenerate(tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"lintloader.dev: error: {tmp_path} is not a lintloader checkout\n"
