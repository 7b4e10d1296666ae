"""``lintloader fix``: apply (or show) the fixes; patch installed packages with a backup; revert.

Exit codes: with ``--diff``, 1 when there is a diff, else 0. Otherwise 0 when no fixable finding
is left, 1 when some are (not fixable safely, refused, or skipped), 2 for errors and for a
``--revert`` that refused to overwrite a changed file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    SEVERITIES,
    Failure,
    ScanArgs,
    StdinSource,
    guarded,
    prepare,
    project_root_option,
    project_scope,
    read_stdin,
    scan_options,
    stdin_filename_option,
    stdin_scan,
)
from lintloader.fixers.backup import BackupStore, site_of
from lintloader.fixers.edit.parsing import reparse_ok
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import FixOutcome, fix_in_memory
from lintloader.fixers.writer import (
    Roots,
    WriteError,
    atomic_write,
    remove_stale_bytecode,
    unified_diff,
    why_not_writable,
)
from lintloader.scan.interpreter import query_interpreter
from lintloader.scan.model import Discovery
from lintloader.scan.notebooks import is_notebook, python_to_notebook
from lintloader.scan.site_packages import discover_site_packages


@click.command("fix")
@scan_options
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Also apply unsafe fixes (remove-call, remove-sink)."
)
@click.option(
    "--revert",
    is_flag=True,
    help="With --site-packages: restore every file lintloader patched (or those of PATHS).",
)
@click.option(
    "--list-patched", is_flag=True, help="With --site-packages: list the files patched now."
)
@click.option(
    "--min-severity",
    type=click.Choice(SEVERITIES),
    default=None,
    help="Lowest severity fixed (default: warning, or min-severity in the config).",
)
@stdin_filename_option
@project_root_option("fix")
@guarded
def fix_command(
    scan: ScanArgs,
    show_diff: bool,
    unsafe_fixes: bool,
    revert: bool,
    list_patched: bool,
    min_severity: str | None,
    stdin_filename: str | None,
    project_root: str | None,
) -> None:
    """Move DataLoader iterator resets off the per-epoch path (safe fixes by default).

    PATHS are files or directories (or, with --site-packages, distribution names). Installed
    packages are written only with --site-packages, which first stores a backup in
    <site-packages>/.lintloader-backups/ (see --list-patched and --revert).
    """
    if (revert or list_patched) and not scan.site_packages:
        raise Failure("--revert and --list-patched work on installed packages: add --site-packages")
    if revert and list_patched:
        raise Failure("--revert and --list-patched are exclusive")
    if revert or list_patched:
        sys.exit(manage_backups(scan.paths, scan.python, scan.exclude, revert))
    stdin = read_stdin(scan, stdin_filename)
    if stdin is not None:
        sys.exit(fix_stdin(scan, stdin, project_root, min_severity, unsafe_fixes))
    scope, scan = project_scope(scan, project_root)
    discovery, options = prepare(scan, min_severity)
    roots = Roots.of(discovery.roots)

    def guard(path: str) -> str | None:
        return None if show_diff else why_not_writable(path, roots, scan.site_packages)

    restrict = scope.restrict if scope is not None else None
    outcome = fix_in_memory(discovery, options, load_registry(), unsafe_fixes, guard, restrict)
    displays = {f.path: f.display for f in discovery.files}
    report_notes(outcome, displays, show_diff)
    if show_diff:
        sys.exit(print_diffs(outcome, displays))
    written = write_all(outcome, displays, discovery if scan.site_packages else None)
    left = len(outcome.remaining)
    fixed = len(outcome.applied)
    click.echo(
        f"Fixed {fixed} finding{'s' * (fixed != 1)} in {written} file{'s' * (written != 1)}; "
        f"{left} fixable finding{'s' * (left != 1)} left"
        f"{'' if unsafe_fixes or not left else ' (--unsafe-fixes may fix more)'}.",
        err=True,
    )
    sys.exit(EXIT_FINDINGS if left else EXIT_CLEAN)


def fix_stdin(
    scan: ScanArgs,
    stdin: StdinSource,
    project_root: str | None,
    min_severity: str | None,
    unsafe_fixes: bool,
) -> int:
    """``fix -``: print the fixed source (or the source unchanged) to stdout; write nothing."""
    scope, scan, add_file = stdin_scan(scan, stdin, project_root)
    discovery, options = prepare(scan, min_severity, stdin, add_file)
    outcome = fix_in_memory(
        discovery,
        options,
        load_registry(),
        unsafe_fixes,
        guard=lambda path: None if path == stdin.path else "not the file on standard input",
        restrict=scope.restrict,
    )
    report_notes(outcome, {f.path: f.display for f in discovery.files})
    click.get_binary_stream("stdout").write(outcome.sources.get(stdin.path, stdin.data))
    return EXIT_FINDINGS if outcome.remaining else EXIT_CLEAN


def report_notes(outcome: FixOutcome, displays: dict[str, str], dry_run: bool = False) -> None:
    """What was fixed (``dry_run``: what would be) and the fixes that were refused."""
    done = "would be fixed by" if dry_run else "fixed by"
    for note in outcome.notes:
        f = note.finding
        click.echo(
            f"note: {f.path}:{f.line}: {f.code} {note.strategy} not applied: {note.reason}",
            err=True,
        )
    for applied in outcome.applied:
        f = applied.finding
        files = ", ".join(displays.get(p, p) for p in applied.paths)
        click.echo(
            f"{f.path}:{f.line}: {f.code} {done} {applied.strategy.name} ({files})", err=True
        )


def print_diffs(outcome: FixOutcome, displays: dict[str, str]) -> int:
    changed = outcome.changed
    for path in sorted(changed):
        display = displays.get(path, path)
        click.echo(unified_diff(display, outcome.originals[path], changed[path]), nl=False)
    count = len(changed)
    click.echo(f"Would fix {len(outcome.applied)} findings in {count} files.", err=True)
    return EXIT_FINDINGS if changed else EXIT_CLEAN


def write_all(outcome: FixOutcome, displays: dict[str, str], site: Discovery | None) -> int:
    """Write every changed file (with a backup first for installed ones); report failures."""
    fixes_by_path: dict[str, set[str]] = {}
    for applied in outcome.applied:
        for path in applied.paths:
            fixes_by_path.setdefault(path, set()).add(applied.strategy.name)
    written = 0
    for path, data in sorted(outcome.changed.items()):
        display = displays.get(path, path)
        try:
            if site is not None:
                backup_first(path, outcome.originals[path], data, fixes_by_path[path], site)
            if is_notebook(path):
                write_notebook(path, data)
            else:
                atomic_write(path, data)
        except (WriteError, OSError) as exc:
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            click.echo(f"lintloader: {display}: not written: {message}", err=True)
            continue
        written += 1
        for problem in remove_stale_bytecode(path):
            click.echo(f"lintloader: warning: stale bytecode left: {problem}", err=True)
    return written


def write_notebook(path: str, python: bytes) -> None:
    """A fixed notebook: the edited Python must parse; each cell gets its new source back,
    outputs untouched; the notebook must validate (see lintloader.scan.notebooks)."""
    problem = reparse_ok(python, path)
    if problem:
        raise WriteError(f"the fixed cells would not parse ({problem}); not written")
    with open(path, "rb") as handle:
        original = handle.read()
    atomic_write(path, python_to_notebook(original, python), verify=False)


def backup_first(
    path: str, original: bytes, patched: bytes, fixes: set[str], discovery: Discovery
) -> None:
    site = site_of(path, discovery.roots)
    if site is None:
        raise WriteError("is outside every site directory; not patching without a backup")
    BackupStore.load(site).record(path, original, patched, fixes)


def manage_backups(
    paths: Sequence[str], python: str | None, exclude: Sequence[str], revert: bool
) -> int:
    sites = query_interpreter(python, [])["sites"]
    wanted = None
    if paths:
        found = discover_site_packages(python, paths, exclude)
        wanted = {os.path.realpath(f.path) for f in found.files}
    status = EXIT_CLEAN
    listed = 0
    for site in sites:
        store = BackupStore.load(site)
        for key in sorted(store.entries):
            absolute = store.absolute(key)
            if wanted is not None and os.path.realpath(absolute) not in wanted:
                continue
            listed += 1
            if revert:
                restored = store.revert(key)
                tag = "reverted" if restored.ok else "refused"
                click.echo(f"{tag}: {restored.path}: {restored.message}", err=not restored.ok)
                status = status if restored.ok else EXIT_ERROR
            else:
                click.echo(describe(store, key))
    if not listed:
        click.echo("No files patched by lintloader.", err=True)
    return status


def describe(store: BackupStore, key: str) -> str:
    entry = store.entries[key]
    backup = os.path.join(store.directory, entry.backup)
    return (
        f"{store.absolute(key)}\t{store.state(key)}\tpatched {entry.time} by {entry.user} "
        f"with lintloader {entry.tool_version} ({', '.join(entry.fixes)})\tbackup {backup}"
    )
