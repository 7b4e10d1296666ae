"""docs/rules/ is generated from the rule modules: the committed pages must be exactly what
``lintloader rule --write-docs docs/rules`` writes today, with no page left for a removed rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lintloader.fixers.registry import fix_safety
from lintloader.rules.docs import COMMAND, INDEX, rule_pages, stale_pages
from lintloader.rules.registry import all_rules

REPO = Path(__file__).resolve().parents[1]
RULE_DOCS = REPO / "docs" / "rules"
PAGES = rule_pages(all_rules(), fix_safety)
STALE = f"docs/rules is out of date with the rule modules: run `{COMMAND}` and commit the result"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_committed_page_is_what_the_generator_writes(name: str) -> None:
    committed = RULE_DOCS / name
    assert committed.is_file(), f"docs/rules/{name} is missing. {STALE}"
    assert committed.read_text(encoding="utf-8") == PAGES[name], f"docs/rules/{name}: {STALE}"


def test_no_page_for_a_rule_that_does_not_exist() -> None:
    assert stale_pages(RULE_DOCS, PAGES) == [], STALE


def test_every_rule_has_a_page_with_its_docs_and_examples() -> None:
    for rule in all_rules():
        page = PAGES[f"{rule.code}.md"]
        assert page.splitlines()[2] == f"# {rule.code}: {rule.name}"
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert section in page, f"{rule.code}: {section}"
        for source in (*rule.valid, *rule.invalid):
            assert source.strip() in page
        assert f"[{rule.code}]({rule.code}.md)" in PAGES[INDEX]


def test_the_cli_writes_the_committed_pages_and_removes_stale_ones(tmp_path: Path) -> None:
    out = tmp_path / "rules"
    out.mkdir()
    (out / "LL999.md").write_text("a page for a rule that no longer exists\n")
    done = subprocess.run(
        [sys.executable, "-m", "lintloader", "rule", "--write-docs", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    assert written == PAGES
    committed = {p.name: p.read_text(encoding="utf-8") for p in RULE_DOCS.glob("*.md")}
    assert written == committed, STALE
    again = subprocess.run(
        [sys.executable, "-m", "lintloader", "rule", "--write-docs", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
