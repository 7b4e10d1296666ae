"""The ``lintloader`` command line: thin wrappers that parse options and call the library.

Exit codes (as ruff): 0 no finding at or above the threshold, 1 findings, 2 usage, configuration
or internal error.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from lintloader import __version__
from lintloader.cache.summaries import clean_cache, default_cache_dir
from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    SEVERITIES,
    Failure,
    guarded,
    prepare,
    project_root_option,
    project_scope,
    scan_options,
)
from lintloader.engine import CheckResult, run_check
from lintloader.findings import Finding
from lintloader.report import FORMATS, ReportContext, render

# Commands that live in their own packages, imported only when used (``verify`` needs torch).
LAZY_COMMANDS = {
    "fix": ("lintloader.cli.fix", "fix_command"),
    "verify": ("lintloader.cli.verify", "verify_command"),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS and name not in self.commands:
            module_name, attribute = LAZY_COMMANDS[name]
            module = importlib.import_module(module_name)
            self.add_command(getattr(module, attribute), name)
        return super().get_command(ctx, name)


class CheckDone(SystemExit):
    """How ``check`` ends (a ``SystemExit`` with its exit code): the console script leaves
    the process at once on it (see :func:`run`)."""


def run() -> None:
    """The console script: :func:`main`; for a ``check``, with the garbage collector off, and
    leaving without tearing the interpreter down. A check of a site-packages leaves hundreds
    of thousands of objects; freeing them one by one and a last garbage collection took
    40-70 ms of a one-changed-file run. Only ``check`` ends this way: it leaves no process
    and registers no exit handler (``verify``'s DataLoader workers, for one, are cleaned up
    by ``atexit``). In-process callers of :func:`main` keep the collector and the teardown."""
    if sys.argv[1:2] == ["check"]:
        # a short-lived process whose objects hold no cycles (see engine.collector_paused):
        # the collector stays off until it exits, rather than walking everything the run
        # allocated once when run_check re-enables it (45 ms after a one-file change in a
        # whole site-packages)
        gc.disable()
    try:
        main()
    except CheckDone as done:
        code = done.code if isinstance(done.code, int) else 1
        for stream in (sys.stdout, sys.stderr):
            # a closed pipe (`lintloader check | head`): nothing left to flush to
            with contextlib.suppress(OSError):
                stream.flush()
        os._exit(code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lintloader")
def main() -> None:
    """Find and fix code that throws away a PyTorch DataLoader's worker pool between epochs."""


@main.command()
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
    paths: tuple[str, ...],
    site_packages: bool,
    python: str | None,
    select: str | None,
    ignore: str | None,
    exclude: tuple[str, ...],
    config_path: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
    jobs: int | None,
    verbose: bool,
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
    scope, paths = project_scope(paths, project_root, site_packages)
    discovery, options = prepare(
        paths,
        site_packages,
        python,
        select,
        ignore,
        exclude,
        config_path,
        no_cache,
        cache_dir,
        jobs,
        min_severity,
    )
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


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_command(code: str | None, show_all: bool) -> None:
    """Show a rule's documentation (e.g. `lintloader rule LL101`), or list them all."""
    from lintloader.rules.registry import all_rules, rule_for

    if show_all or not code:
        for rule in all_rules():
            click.echo(f"{rule.code}\t{rule.severity.label:<8}\t{rule.name}\t{rule.summary}")
        return
    rule = rule_for(code)
    if rule is None:
        raise Failure(f"unknown rule {code!r}; `lintloader rule --all` lists them")
    click.echo(f"{rule.doc.strip()}\n")
    click.echo(f"Default severity: {rule.severity.label}. Fix: {rule.fix_safety}.")


@main.command("clean")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The cache to remove (default: $LINTLOADER_CACHE_DIR or ~/.cache/lintloader).",
)
@guarded
def clean_command(cache_dir: Path | None) -> None:
    """Remove the summary cache and stat index (only lintloader's own entries)."""
    directory = cache_dir or default_cache_dir()
    removed = clean_cache(directory)
    click.echo(f"Removed {removed} cache entr{'y' if removed == 1 else 'ies'} from {directory}.")


if __name__ == "__main__":  # pragma: no cover
    run()
