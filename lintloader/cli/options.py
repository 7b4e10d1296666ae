"""Pieces shared by the commands that scan code (``check``, ``fix``): options, discovery,
configuration, and the one-line error handling with exit code 2."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import click

from lintloader.cache.files import default_cache_dir
from lintloader.finding.findings import PARSE_ERROR_CODE, Severity
from lintloader.pipeline.engine import CheckOptions, collector_paused
from lintloader.pipeline.preparation import (
    discover_trees,
    nearest_config,
    usable_cache,
)
from lintloader.scan.discover.escape import printable
from lintloader.scan.model import Discovery, DiscoveryError
from lintloader.scan.read.memo import ReadMemo
from lintloader.settings.config import (
    Config,
    ConfigError,
    load_config,
    parse_per_file_ignores,
    selects,
    shown_path,
    split_codes,
    unknown_selector,
)
from lintloader.workers.progress import Progress

if TYPE_CHECKING:
    from lintloader.integrations.project import ReportScope

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT (and as ``verify`` does)
SEVERITIES = [s.label for s in Severity]
F = TypeVar("F", bound=Callable[..., Any])


class Failure(click.ClickException):
    """An operational error: one line on stderr, exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        # a message may quote a file's name or value: its control characters are escaped
        click.echo(f"lintloader: error: {printable(self.format_message())}", err=True)


class OutputError(Exception):
    """Standard output cannot be written: closed, a pipe whose reader left, or a full disk."""


def emit(text: str, nl: bool = True, color: bool | None = None) -> None:
    """Write ``text`` to standard output; :class:`OutputError` when it cannot be written."""
    if sys.stdout is None:
        raise OutputError("standard output is closed")
    try:
        click.echo(text, nl=nl, color=color)
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush at exit
    of what could not be written fails no more (it would print a second error)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def guarded(command: F) -> F:
    """Turn unexpected exceptions into a one-line error (a traceback only with --verbose);
    an interrupt (Ctrl-C) into exit 130; unwritable output into exit 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("lintloader: interrupted", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except OutputError as exc:
            silence_stdout()
            raise Failure(f"cannot write output: {exc}") from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (DiscoveryError, ConfigError) as exc:
            raise Failure(str(exc)) from None
        except Exception as exc:
            scan = kwargs.get("scan")
            if kwargs.get("verbose") or (scan is not None and scan.verbose):
                import traceback  # only with --verbose

                traceback.print_exc()
            raise Failure(f"internal error: {type(exc).__name__}: {exc}") from None

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True, eq=False, repr=False)
class ScanArgs:
    """The scan options of ``check`` and ``fix`` as one value (see :func:`scan_options`)."""

    paths: tuple[str, ...] = ()
    site_packages: bool = False
    python: str | None = None
    select: str | None = None
    extend_select: str | None = None
    ignore: str | None = None
    extend_ignore: str | None = None
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[str, ...] = ()
    config_path: Path | None = None
    no_cache: bool = False
    cache_dir: Path | None = None
    jobs: int | None = None
    verbose: bool = False


_SCAN_FIELDS = tuple(f.name for f in fields(ScanArgs))
_SELECTORS = ("select", "extend_select", "ignore", "extend_ignore")


def scan_options(command: F) -> F:
    """Options shared by ``check`` and ``fix``: what to scan and how. The command receives them
    as one ``scan: ScanArgs`` argument."""
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
            help=(
                "The interpreter whose packages to scan with --site-packages, or whose "
                "packages a project scan reads as context (never imported)."
            ),
        ),
        click.option(
            "--select",
            multiple=True,
            metavar="CODES",
            help="Comma-separated rule codes or prefixes; repeated ones add up.",
        ),
        click.option(
            "--extend-select",
            multiple=True,
            metavar="CODES",
            help="Rule codes or prefixes to add to select.",
        ),
        click.option(
            "--ignore",
            multiple=True,
            metavar="CODES",
            help="Comma-separated rule codes or prefixes to skip; repeated ones add up.",
        ),
        click.option(
            "--extend-ignore",
            multiple=True,
            metavar="CODES",
            help="Rule codes or prefixes to add to ignore.",
        ),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching paths."),
        click.option("--extend-exclude", multiple=True, metavar="GLOB", help="More paths to skip."),
        click.option(
            "--per-file-ignores",
            multiple=True,
            metavar="GLOB:CODES",
            help="Ignore CODES (comma-separated) in files matching GLOB; repeatable.",
        ),
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="pyproject.toml to read [tool.lintloader] from (default: the nearest one).",
        ),
        click.option("--no-cache", is_flag=True, help="Do not read or write the summary cache."),
        click.option(
            "--cache-dir",
            type=click.Path(path_type=Path),  # an unusable one is a warning (see usable_cache)
            metavar="DIR",
            help="Where summaries are cached (default: $LINTLOADER_CACHE_DIR, else "
            "$XDG_CACHE_HOME/lintloader, else ~/.cache/lintloader).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=1),
            metavar="N",
            default=None,
            help="Worker processes for parsing (default: CPU count, at most 8).",
        ),
        click.option(
            "-v",
            "--verbose",
            is_flag=True,
            help="Show tracebacks for internal errors; check's summary line also says how many "
            "files were parsed and how many came from the cache.",
        ),
    ]

    @functools.wraps(command)
    def bundled(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _SCAN_FIELDS}
        for name in _SELECTORS:  # repeated --select LL1 --select LL2: one list, as in ruff
            values[name] = ",".join(values[name]) or None
        scan = ScanArgs(**values)
        return command(*args, scan=scan, **kwargs)

    wrapped: Any = bundled
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped  # type: ignore[no-any-return]


def discover(
    paths: Sequence[str],
    site_packages: bool,
    python: str | None,
    exclude: Sequence[str],
    cache_dir: Path | None = None,
) -> Discovery:
    """The files to scan. What the walk stores for the next one is left to the check (its
    ``stores``, written by ``run_check``: ``cache/pending.py``)."""
    if not site_packages and not paths:
        raise Failure("nothing to check: give PATHS or --site-packages")
    with collector_paused():  # thousands of small records, no cycles (see pipeline/engine.py)
        if site_packages:  # imported when used: a project's check never asks an interpreter
            from lintloader.scan.environment.site_packages import discover_site_packages

            return discover_site_packages(
                python, paths, exclude, cache_dir=cache_dir, defer_stores=True
            )
        progress = Progress.for_stderr()  # a huge root (``--project-root=/``) takes a while
        try:
            on_found = progress.found_so_far if progress else None
            return discover_trees(paths, exclude, cache_dir, python, on_found=on_found, defer=True)
        finally:
            if progress:
                progress.close()


def resolve_config(config_path: Path | None, paths: Sequence[str], site_packages: bool) -> Config:
    if config_path is not None:
        if not config_path.exists():
            raise Failure(f"--config {config_path}: no such file")
        if not config_path.is_file():  # a FIFO, a device: never opened in a way that blocks
            raise Failure(f"--config {config_path}: not a regular file")
        return load_config(config_path)
    start = paths[0] if paths and not site_packages else os.getcwd()
    return nearest_config(start, _warn)


def prepare(
    scan: ScanArgs,
    min_severity: str | None = None,
    stdin: StdinSource | None = None,
    add_file: Callable[[Discovery], Discovery] | None = None,
) -> tuple[Discovery, CheckOptions]:
    """What to scan, and how: the files found and the options of the check (with ``stdin``,
    its bytes stand for its file, which ``add_file`` adds to the discovery)."""
    config = (
        resolve_config(scan.config_path, scan.paths, scan.site_packages)
        .with_options(
            select=split_codes(scan.select),
            ignore=split_codes(scan.ignore),
            min_severity=Severity.parse(min_severity) if min_severity else None,
        )
        .extended(
            select=split_codes(scan.extend_select),
            ignore=split_codes(scan.extend_ignore),
            exclude=scan.extend_exclude,
            per_file_ignores=parse_per_file_ignores(scan.per_file_ignores),
        )
    )
    check_selection(config, scan)
    cache = None if scan.no_cache else usable_cache(scan.cache_dir or default_cache_dir(), _warn)
    excludes = (*config.exclude, *scan.exclude)
    if stdin is not None and not scan.paths:
        discovery = Discovery()
    else:
        discovery = discover(scan.paths, scan.site_packages, scan.python, excludes, cache)
    if add_file is not None:
        discovery = add_file(discovery)
    options = CheckOptions(
        config=config,
        jobs=scan.jobs,
        cache_dir=cache,
        sources={stdin.path: stdin.data} if stdin is not None else {},
        progress=True,  # shown only when stderr is a terminal
        reads=ReadMemo(),  # the fix trial's and fix's checks read no file again
    )
    return discovery, options


def _warn(line: str) -> None:
    click.echo(line, err=True)


def check_selection(config: Config, scan: ScanArgs | None = None) -> None:
    """A selector that matches no rule stops the run (exit 2), an unknown ignored code warns;
    either message names where the selector came from: the option, or the configuration file
    (the one ``extend`` names, for a key taken from it)."""
    from lintloader.rules.codes import rule_codes
    from lintloader.suppress.unused_noqa import CODE as UNUSED_NOQA_CODE

    known = {*rule_codes(), PARSE_ERROR_CODE, UNUSED_NOQA_CODE}
    for selector in config.unknown_ignores(known):
        where = selector_source(selector, config, scan, "ignore")
        click.echo(f"lintloader: warning: {printable(where.message(selector, known))}", err=True)
    unknown = [s for s in config.select if not selects(s, known)]
    if unknown:
        where = selector_source(unknown[0], config, scan, "select")
        raise Failure(where.message(unknown[0], known))


class SelectorSource(NamedTuple):
    """Where a selector came from: an option (``--ignore``) or a key and its file."""

    key: str
    file: str | None = None

    def message(self, selector: str, known: Collection[str]) -> str:
        text = unknown_selector(self.key, selector, known)
        return f"{text} (in {shown_path(self.file)})" if self.file else text


_OPTIONS = {
    "select": (("--select", "select"), ("--extend-select", "extend_select")),
    "ignore": (("--ignore", "ignore"), ("--extend-ignore", "extend_ignore")),
}


def selector_source(
    selector: str, config: Config, scan: ScanArgs | None, kind: str
) -> SelectorSource:
    """The option that gave ``selector`` (of ``kind``, select or ignore), else its file."""
    if scan is not None:
        for option, name in _OPTIONS[kind]:
            if selector in split_codes(getattr(scan, name)):
                return SelectorSource(option)
        given = parse_per_file_ignores(scan.per_file_ignores)
        if kind == "ignore" and any(selector in codes for _, codes in given):
            return SelectorSource("--per-file-ignores")
    origin = config.origin(selector)
    if origin is not None:
        return SelectorSource(*origin)
    return SelectorSource(kind, config.source)


def project_root_option(what: str) -> Callable[[F], F]:
    """``--project-root`` for a command that reports or fixes ``what``."""
    return click.option(
        "--project-root",
        metavar="DIR|auto|none",
        help="Index the whole project at DIR (auto: the nearest dir with pyproject.toml, "
        f"setup.cfg, setup.py or .git) but {what} only findings located in PATHS. The default "
        "when every PATH is a file inside a project; none: analyse PATHS alone.",
    )


def project_scope(scan: ScanArgs, project_root: str | None) -> tuple[ReportScope | None, ScanArgs]:
    """The scope to restrict findings to, and the scan with the paths to index instead.

    Files given alone are seen in their project, as the flake8 plugin and the pre-commit hook
    see them: a chain that starts in ``feeder.py`` often ends in another file."""
    from lintloader.integrations.project import AUTO, NONE, ReportScope, find_project_root

    if project_root is None and _all_files_in_a_project(scan, find_project_root):
        project_root = AUTO
    if project_root is None or project_root == NONE:
        return None, scan
    if scan.site_packages:
        raise Failure("--project-root does not combine with --site-packages")
    scope = ReportScope.build(scan.paths, project_root)
    return scope, replace(scan, paths=tuple(scope.index_paths()))


def _all_files_in_a_project(
    scan: ScanArgs, find_project_root: Callable[[Sequence[str]], str | None]
) -> bool:
    if scan.site_packages or not scan.paths:
        return False
    if not all(os.path.isfile(path) for path in scan.paths):
        return False
    return find_project_root(scan.paths) is not None


# -- source on standard input ------------------------------------------------------------------
STDIN = "-"


@dataclass(frozen=True, eq=False, repr=False)
class StdinSource:
    """``check -`` / ``fix -``: the file's source comes from standard input; ``path`` names it
    (``--stdin-filename``; the file itself need not exist) and places it in its project."""

    path: str  # absolute
    display: str
    data: bytes


def stdin_filename_option(command: F) -> F:
    return click.option(
        "--stdin-filename",
        metavar="PATH",
        help="The name of the file read from standard input (PATHS '-' or none; its project "
        "is indexed around it).",
    )(command)


def read_stdin(scan: ScanArgs, stdin_filename: str | None) -> StdinSource | None:
    """The source on standard input when PATHS is ``-`` (or empty, with ``--stdin-filename``),
    else None."""
    if STDIN not in scan.paths:
        if stdin_filename is None:
            return None
        if scan.paths:
            raise Failure("--stdin-filename reads standard input: give no PATHS (or only '-')")
        scan = replace(scan, paths=(STDIN,))  # as ruff: the name alone means standard input
    if scan.paths != (STDIN,) or scan.site_packages:
        raise Failure("'-' (standard input) must be the only PATH, without --site-packages")
    display = stdin_filename or "stdin.py"
    stdin = click.get_binary_stream("stdin")  # type: ignore[operator]  # click 8.3: untyped
    data = stdin.read()
    return StdinSource(os.path.abspath(display), display, data)


def stdin_scan(
    scan: ScanArgs, stdin: StdinSource, project_root: str | None
) -> tuple[ReportScope, ScanArgs, Callable[[Discovery], Discovery]]:
    """Index the project around the stdin file (or its folder alone), report only that file;
    the returned function adds the file to a discovery when it is not on disk."""
    from lintloader.integrations.project import NONE, ReportScope, find_project_root
    from lintloader.scan.discover.module_names import module_name_for
    from lintloader.scan.model import SourceFile

    folder = os.path.dirname(stdin.path)
    root = project_root if project_root not in (None, NONE) else None
    if root is None and project_root != NONE:
        root = find_project_root([folder])
    scope = ReportScope(os.path.abspath(root or folder), (stdin.path,))
    indexed = replace(scan, paths=(scope.root,) if root else ())

    def add_file(discovery: Discovery) -> Discovery:
        if not any(f.path == stdin.path for f in discovery.files):
            module, is_package = module_name_for(stdin.path)
            discovery.files.append(SourceFile(stdin.path, module, is_package, stdin.display))
            discovery.roots.append(folder)
        return discovery

    return scope, indexed, add_file
