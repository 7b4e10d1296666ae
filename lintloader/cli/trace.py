"""``lintloader trace -- CMD ...``: run a training command unchanged and report which
DataLoader respawned its workers, how often, what it cost and which code did it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lintloader.runtime.exits import EXIT_CANNOT_RUN
from lintloader.trust.safe_file import write_atomic

_HELP = """Run a training command and report, per place that creates DataLoaders, how
many worker pools it started and how many the run needed.

COMMAND is any command that starts Python processes (`python train.py`,
`torchrun ...`); a start-up hook watches every torch DataLoader in them.
Per creation site (file:line and its caller): loaders created, worker pools
started, passes, the time spent starting pools (first batch minus the
steady first batch), the pools it did not need (a respawn, a loader rebuilt
per epoch or evaluation, a Lightning reload) and what to change.

\b
Put `--` before COMMAND. Its stdout and stderr pass through unchanged;
the report goes to stderr (and to --json FILE). SIGTERM and SIGINT are
passed on to COMMAND; the report of the run so far is printed.
Exit status: 1 when a persistent site started more pools than needed, 2
when COMMAND cannot start, else COMMAND's own exit status.
"""


@click.command(
    "trace",
    help=_HELP,
    short_help="Run a training command; count the worker pools it starts.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the report as JSON to this file.",
)
@click.option(
    "--max-passes",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Stop the command (exit 0 unless it failed) when a creation site is about to begin "
    "its full pass N+1; warm-up peeks do not count, and N below 2 acts as 2 (for CI).",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also draw first-batch latency per pass of each creation site, pool starts marked "
    "(.svg/.png/.pdf; needs lintloader[plot]).",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def trace_command(
    json_path: Path | None,
    max_passes: int | None,
    plot_path: Path | None,
    command: tuple[str, ...],
) -> None:
    from lintloader.fixers.catalog import strategy_safety
    from lintloader.runtime.trace.render import render_json, render_text
    from lintloader.runtime.trace.session import run_traced

    report = run_traced(command, max_passes, strategy_safety())
    sys.stdout.flush()
    click.echo(render_text(report), err=True, nl=False)
    if json_path is not None:
        try:
            write_atomic(json_path, render_json(report).encode("utf-8"))
        except OSError as exc:
            click.echo(f"lintloader: error: cannot write {json_path}: {exc}", err=True)
            sys.exit(EXIT_CANNOT_RUN)
    if plot_path is not None:
        from lintloader.runtime.plot import PlotError, panel_of, write_plot
        from lintloader.runtime.trace.render import report_dict

        try:
            write_plot([panel_of(report_dict(report), _title(command))], plot_path)
        except PlotError as exc:
            click.echo(f"lintloader: error: cannot plot: {exc}", err=True)
            sys.exit(EXIT_CANNOT_RUN)
    sys.exit(report.exit_code)


def _title(command: tuple[str, ...]) -> str:
    """The traced script's name (the first argument ending in .py), else the program's."""
    script = next((arg for arg in command if arg.endswith(".py")), command[0])
    return Path(script).name
