"""``lintloader rule``: a rule's documentation, or the list of rules."""

from __future__ import annotations

from pathlib import Path

import click

from lintloader.cli.options import Failure


@click.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
@click.option(
    "--write-docs",
    "docs_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the rule reference (LLNNN.md pages and README.md) into this directory.",
)
def rule_command(code: str | None, show_all: bool, docs_dir: Path | None) -> None:
    """Show a rule's documentation (e.g. `lintloader rule LL101`), or list them all."""
    from lintloader.fixers.registry import fix_safety
    from lintloader.rules.registry import all_rules, rule_for

    if docs_dir is not None:
        from lintloader.rules.docs import rule_pages, write_pages

        for path in write_pages(docs_dir, rule_pages(all_rules(), fix_safety)):
            click.echo(f"updated {path}")
        return
    if show_all or not code:
        for rule in all_rules():
            click.echo(f"{rule.code}\t{rule.severity.label:<8}\t{rule.name}\t{rule.summary}")
        return
    rule = rule_for(code)
    if rule is None:
        raise Failure(f"unknown rule {code!r}; `lintloader rule --all` lists them")
    click.echo(f"{rule.doc.strip()}\n")
    click.echo(f"Default severity: {rule.severity.label}. Fix: {fix_safety(rule)}.")
