"""``lintloader check``: report what the rules find, in the format asked for."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import click

from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    SEVERITIES,
    ScanArgs,
    guarded,
    prepare,
    project_root_option,
    project_scope,
    scan_options,
)
from lintloader.engine import CheckResult, run_check
from lintloader.findings import Finding
from lintloader.report.context import ReportContext
from lintloader.report.formats import FORMATS, render


class CheckDone(SystemExit):
    """How ``check`` ends (a ``SystemExit`` with its exit code): the console script leaves
    the process at once on it (see :func:`lintloader.cli.main.run`)."""


@click.command("check")
@scan_options
@click.option(
    "--output-format",
    type=click.Choice(sorted(FORMATS)),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option(
    "--min-severity",
    type=click.Choice(SEVERITIES),
    default=None,
    help="Lowest severity reported (default: warning, or min-severity in the config).",
)
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--color/--no-color", default=None, help="Colour text output (default: on a TTY).")
@project_root_option("report")
@guarded
def check(
    scan: ScanArgs,
    output_format: str,
    min_severity: str | None,
    statistics: bool,
    exit_zero: bool,
    color: bool | None,
    project_root: str | None,
) -> None:
    """Report DataLoader iterator resets reachable from __iter__ or per-epoch hooks.

    PATHS are files or directories (or, with --site-packages, distribution names).
    """
    scope, scan = project_scope(scan, project_root)
    discovery, options = prepare(scan, min_severity)
    result = run_check(discovery, replace(options, replay=True))
    if scope is not None:
        result = scope.restrict(result)
    if statistics:
        click.echo(render_statistics(result.findings), nl=False)
    else:
        use_color = sys.stdout.isatty() if color is None else color
        context = ReportContext(color=use_color, root=os.getcwd())
        click.echo(render(output_format, result.findings, context), nl=False)
    click.echo(summary_line(result), err=True)
    raise CheckDone(EXIT_CLEAN if exit_zero or not result.findings else EXIT_FINDINGS)


def render_statistics(findings: Sequence[Finding]) -> str:
    counts = Counter((f.code, f.severity.label) for f in findings)
    return "".join(f"{n:>5}\t{code}\t[{sev}]\n" for (code, sev), n in sorted(counts.items()))


def summary_line(result: CheckResult) -> str:
    by_severity = Counter(f.severity.label for f in result.findings)
    parts = ", ".join(f"{by_severity[s]} {s}" for s in reversed(SEVERITIES) if by_severity[s])
    found = f"Found {len(result.findings)} finding{'s' * (len(result.findings) != 1)}"
    details = f" ({parts})" if parts else ""
    stats = result.stats
    return (
        f"{found}{details} in {result.files_found} file{'s' * (result.files_found != 1)} "
        f"({stats.parsed} parsed, {stats.cached} from cache, {result.suppressed} suppressed)."
    )
