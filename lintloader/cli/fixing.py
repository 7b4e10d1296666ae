"""``check --fix`` / ``check --diff``: the fix pipeline of ``lintloader fix``, run from ``check``
as ruff does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from lintloader.fixers.runner import FixOutcome, Restrict
from lintloader.pipeline.engine import CheckOptions
from lintloader.scan.model import Discovery
from lintloader.text.wording import counted

if TYPE_CHECKING:
    from lintloader.integrations.project import ReportScope


@dataclass(frozen=True)
class FixRun:
    outcome: FixOutcome
    failed: tuple[str, ...] = ()  # the files that were not written (an error: exit 2)


def run_fixes(
    discovery: Discovery,
    options: CheckOptions,
    unsafe: bool,
    dry_run: bool,
    scope: ReportScope | None = None,
    restrict: Restrict | None = None,
) -> FixRun:
    """Fix in memory, then write (or, ``dry_run``, print the diff); notes on stderr. With
    ``scope``, only its files are written; ``restrict`` narrows the findings fixed
    (:func:`fix_restrict`)."""
    from lintloader.cli.fix import not_given, print_diffs, report_notes, write_all
    from lintloader.fixers.registry import load_registry
    from lintloader.fixers.runner import fix_in_memory
    from lintloader.fixers.writer import Roots, why_not_writable

    roots = Roots.of(discovery.roots)
    displays = {f.path: f.display for f in discovery.files}

    def guard(path: str) -> str | None:
        outside = not_given(scope, path)
        if outside or dry_run:
            return outside
        return why_not_writable(path, roots, False)

    outcome = fix_in_memory(discovery, options, load_registry(), unsafe, guard, restrict)
    if dry_run:
        report_notes(outcome, displays, dry_run)
        print_diffs(outcome, displays)
        return FixRun(outcome)
    report = write_all(outcome, displays, None)
    report_notes(outcome, displays, written=report.written)
    return FixRun(outcome, tuple(displays.get(path, path) for path in report.failed))


def show_fixes(outcome: FixOutcome, displays: dict[str, str], failed: Sequence[str] = ()) -> None:
    """``--show-fixes``: what was fixed, per file and code (as ruff prints it); not a fix in
    a file of ``failed`` (displays of the files that were not written)."""
    counts = Counter(
        (displays.get(path, path), applied.finding.code, ", ".join(applied.strategies))
        for applied in outcome.fixed  # not those after which the loader still respawns
        if not any(displays.get(p, p) in failed for p in applied.paths)
        for path in applied.paths[:1]
    )
    partly = len(outcome.incomplete)
    if partly:
        click.echo(f"Changed {partly} without fixing them (see above).", err=True)
    if not counts:
        click.echo("No fixes applied.", err=True)
        return
    click.echo(f"Fixed {counted(sum(counts.values()), 'finding')}:", err=True)
    for (display, code, strategy), count in sorted(counts.items()):
        click.echo(f"- {display}:\n    {count} \u00d7 {code} ({strategy})", err=True)
