"""The option tables of docs/ are generated from the click commands: every option of ``check``
and ``fix`` is in its table with its ``--help`` text, and the committed tables are current."""

from __future__ import annotations

import click
import pytest
from conftest import REPO

from lintloader.dev.option_docs import SCRIPT, TABLE, command, table, with_tables

DOCS = REPO / "docs"


@pytest.mark.enumerates_rules
def test_committed_tables_are_what_the_generator_makes() -> None:
    stale = [
        path.name
        for path in sorted(DOCS.glob("*.md"))
        if with_tables(text := path.read_text(encoding="utf-8")) != text
    ]
    assert not stale, f"run `{SCRIPT}` to regenerate the option tables of {stale}"


@pytest.mark.enumerates_rules
def test_check_and_fix_have_a_table_that_lists_every_option() -> None:
    named = {m["name"]: m[0] for p in DOCS.glob("*.md") for m in TABLE.finditer(p.read_text())}
    assert {"check", "fix"} <= set(named)
    for name in ("check", "fix"):
        for param in command(name).params:
            if isinstance(param, click.Option):
                assert f"`{param.opts[-1]}" in named[name], (name, param.opts)
    for flag in ("--fix", "--diff", "--unsafe-fixes", "--show-fixes", "--exit-non-zero-on-fix"):
        assert f"| `{flag}` |" in named["check"]


@pytest.mark.enumerates_rules
def test_the_table_says_what_help_says() -> None:
    help_text = " ".join(command("check").get_help(click.Context(command("check"))).split())
    assert "Where summaries are cached" in help_text
    assert "`--cache-dir DIR` | Where summaries are cached" in table("check")
