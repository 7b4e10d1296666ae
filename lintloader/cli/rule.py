"""``lintloader rule``: a rule's documentation, or the list of rules."""

from __future__ import annotations

from pathlib import Path

import click

from lintloader.cli.options import Failure


def write_readme_table(readme: Path) -> None:
    from lintloader.fixers.registry import all_strategies
    from lintloader.rules.docs import readme_table, with_readme_table
    from lintloader.rules.registry import all_rules

    safe = {strategy.name: strategy.safe for strategy in all_strategies()}
    try:
        text = readme.read_text(encoding="utf-8")
        updated = with_readme_table(text, readme_table(all_rules(), lambda name: safe[name]))
    except (OSError, ValueError) as exc:
        raise Failure(f"--readme {readme}: {exc}") from None
    if updated != text:
        readme.write_text(updated, encoding="utf-8", newline="\n")
        click.echo(f"updated {readme}")


@click.command("rule", short_help="Show a rule's documentation, or list the rules.")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
@click.option(
    "--write-docs",
    "docs_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the rule reference (LLNNN.md pages and README.md) into this directory.",
)
@click.option(
    "--readme",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --write-docs: also regenerate the rules table in this README.",
)
def rule_command(
    code: str | None, show_all: bool, docs_dir: Path | None, readme: Path | None
) -> None:
    """Show a rule's documentation (e.g. `lintloader rule LL101`), or list them all."""
    from lintloader.fixers.registry import fix_safety
    from lintloader.rules.registry import all_rules, rule_for

    if docs_dir is not None:
        from lintloader.rules.docs import rule_pages, write_pages

        for path in write_pages(docs_dir, rule_pages(all_rules(), fix_safety)):
            click.echo(f"updated {path}")
        if readme is not None:
            write_readme_table(readme)
        return
    if show_all or not code:
        for listed in all_rules():
            click.echo(
                f"{listed.code}\t{listed.severity.label:<8}\t{listed.name}\t{listed.summary}"
            )
        return
    rule = rule_for(code)
    if rule is None:
        raise Failure(f"unknown rule {code!r}; `lintloader rule --all` lists them")
    click.echo(f"{rule.doc.strip()}\n")
    click.echo(f"Default severity: {rule.severity.label}. Fix: {fix_safety(rule)}.")
