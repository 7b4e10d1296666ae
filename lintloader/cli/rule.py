"""``lintloader rule``: a rule's documentation, or the list of rules. (The rule reference under
docs/rules/ is written by ``python -m lintloader.dev regenerate``, a contributor command.)"""

from __future__ import annotations

import click

from lintloader.cli.options import Failure


@click.command("rule", short_help="Show a rule's documentation, or list the rules.")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_command(code: str | None, show_all: bool) -> None:
    """Show a rule's documentation (e.g. `lintloader rule LL101`), or list them all."""
    from lintloader.fixers.registry import fix_safety
    from lintloader.rules.registry import all_rules, rule_for

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
