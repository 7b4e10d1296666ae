"""The ``lintloader`` command line: thin wrappers that parse options and call the library.

Exit codes (as ruff): 0 no finding at or above the threshold, 1 findings, 2 usage, configuration
or internal error.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from lintloader import __version__
from lintloader.cache import default_cache_dir
from lintloader.config import Config, ConfigError, find_pyproject, load_config, split_codes
from lintloader.discover import Discovery, DiscoveryError, discover_paths, discover_site_packages
from lintloader.engine import CheckOptions, CheckResult, run_check
from lintloader.findings import Finding, Severity
from lintloader.parse import default_jobs
from lintloader.report import FORMATS, ReportContext, render
from lintloader.rules import ALL_RULES, rule_for
from lintloader.runtime.command import verify_command

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITIES = [s.label for s in Severity]
F = TypeVar("F", bound=Callable[..., Any])


class Failure(click.ClickException):
    """An operational error: one line on stderr, exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"lintloader: error: {self.format_message()}", err=True)


def guarded(command: F) -> F:
    """Turn unexpected exceptions into a one-line error (a traceback only with --verbose)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except (DiscoveryError, ConfigError) as exc:
            raise Failure(str(exc)) from None
        except Exception as exc:
            if kwargs.get("verbose"):
                traceback.print_exc()
            raise Failure(f"internal error: {type(exc).__name__}: {exc}") from None

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lintloader")
def main() -> None:
    """Find and fix code that throws away a PyTorch DataLoader's worker pool between epochs."""


def scan_options(command: F) -> F:
    """Options shared by ``check`` and ``fix``: what to scan and how."""
    options = [
        click.argument("paths", nargs=-1),
        click.option(
            "--site-packages",
            "site_packages",
            is_flag=True,
            help="Scan installed packages; PATHS are then distribution names (all if none).",
        ),
        click.option(
            "--python",
            "python",
            metavar="PATH",
            help="With --site-packages: the interpreter whose packages to scan (not imported).",
        ),
        click.option("--select", metavar="CODES", help="Comma-separated rule codes or prefixes."),
        click.option("--ignore", metavar="CODES", help="Comma-separated rule codes to skip."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching paths."),
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="pyproject.toml to read [tool.lintloader] from (default: the nearest one).",
        ),
        click.option("--no-cache", is_flag=True, help="Do not read or write the summary cache."),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Where summaries are cached (default: $LINTLOADER_CACHE_DIR or ~/.cache).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=1),
            default=None,
            help="Worker processes for parsing (default: CPU count, at most 8).",
        ),
        click.option("-v", "--verbose", is_flag=True, help="Show tracebacks for internal errors."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def discover(
    paths: Sequence[str], site_packages: bool, python: str | None, exclude: Sequence[str]
) -> Discovery:
    if python and not site_packages:
        raise Failure("--python only makes sense with --site-packages")
    if site_packages:
        return discover_site_packages(python, paths, exclude)
    if not paths:
        raise Failure("nothing to check: give PATHS or --site-packages")
    return discover_paths(paths, exclude)


def resolve_config(config_path: Path | None, paths: Sequence[str], site_packages: bool) -> Config:
    if config_path is not None:
        if not config_path.is_file():
            raise Failure(f"--config {config_path}: no such file")
        return load_config(config_path)
    start = paths[0] if paths and not site_packages else os.getcwd()
    return load_config(find_pyproject(start))


def prepare(
    paths: Sequence[str],
    site_packages: bool,
    python: str | None,
    select: str | None,
    ignore: str | None,
    exclude: Sequence[str],
    config_path: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
    jobs: int | None,
    min_severity: str | None = None,
) -> tuple[Discovery, CheckOptions]:
    config = resolve_config(config_path, paths, site_packages).with_options(
        select=split_codes(select),
        ignore=split_codes(ignore),
        min_severity=Severity.parse(min_severity) if min_severity else None,
    )
    discovery = discover(paths, site_packages, python, (*config.exclude, *exclude))
    options = CheckOptions(
        config=config,
        jobs=jobs or default_jobs(),
        cache_dir=None if no_cache else (cache_dir or default_cache_dir()),
    )
    return discovery, options


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
) -> None:
    """Report DataLoader iterator resets reachable from __iter__ or per-epoch hooks.

    PATHS are files or directories (or, with --site-packages, distribution names).
    """
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
    result = run_check(discovery, options)
    if statistics:
        click.echo(render_statistics(result.findings), nl=False)
    else:
        use_color = sys.stdout.isatty() if color is None else color
        context = ReportContext(color=use_color, root=os.getcwd())
        click.echo(render(output_format, result.findings, context), nl=False)
    click.echo(summary_line(result), err=True)
    sys.exit(EXIT_CLEAN if exit_zero or not result.findings else EXIT_FINDINGS)


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
        f"{found}{details} in {result.files_found} files "
        f"({stats.parsed} parsed, {stats.cached} from cache, {result.suppressed} suppressed)."
    )


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_command(code: str | None, show_all: bool) -> None:
    """Show a rule's documentation (e.g. `lintloader rule LL101`), or list them all."""
    if show_all or not code:
        for rule in ALL_RULES:
            click.echo(f"{rule.code}\t{rule.severity.label:<8}\t{rule.name}\t{rule.summary}")
        return
    rule = rule_for(code)
    if rule is None:
        raise Failure(f"unknown rule {code!r}; `lintloader rule --all` lists them")
    click.echo(f"{rule.doc.strip()}\n")
    click.echo(f"Default severity: {rule.severity.label}. Fix: {rule.fix_safety}.")


main.add_command(verify_command)


if __name__ == "__main__":  # pragma: no cover
    main()
