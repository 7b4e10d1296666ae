"""``lintloader fix``: apply (or show) the fixes; patch installed packages with a backup; revert.

Exit codes, as ruff's ``--fix``: with ``--diff``, 1 when there is a diff, else 0. Otherwise 0
when no finding is left, 1 when some are (no fixer for their shape, refused, unsafe without
``--unsafe-fixes``) or when a fix was made but its loader still starts new worker pools
("changed but not fixed", docs/fixes.md), 2 for errors and for a ``--revert`` that refused to
overwrite a changed file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from lintloader.cli.fix_notes import fix_restrict, unfixed_notes
from lintloader.cli.fix_places import FixPlaces
from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    SEVERITIES,
    Failure,
    ScanArgs,
    StdinSource,
    emit,
    guarded,
    prepare,
    project_root_option,
    project_scope,
    read_stdin,
    scan_options,
    stdin_filename_option,
    stdin_scan,
)
from lintloader.finding.fix_safety import unsafe_names
from lintloader.fixers.backup import BackupStore, locked_store, sha256, site_of
from lintloader.fixers.edit.parsing import reparse_ok
from lintloader.fixers.installed import original_of
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import FixOutcome, FixRounds
from lintloader.fixers.trial import Tried, with_unsafe
from lintloader.fixers.writer import (
    FileChanged,
    Roots,
    WriteError,
    atomic_write,
    digest_of,
    notebook_diff,
    remove_stale_bytecode,
    unified_diff,
    why_not_writable,
)
from lintloader.scan.discover.escape import for_terminal, printable
from lintloader.scan.environment.interpreter import query_interpreter
from lintloader.scan.environment.site_packages import discover_site_packages
from lintloader.scan.model import Discovery
from lintloader.scan.read.notebooks import is_notebook, notebook_to_python, python_to_notebook
from lintloader.text.wording import counted, plural

if TYPE_CHECKING:
    from lintloader.integrations.project import ReportScope


@click.command("fix", short_help="Fix what check finds, as upstream did (safe fixes by default).")
@scan_options
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--unsafe-fixes", is_flag=True, help=f"Also apply unsafe fixes ({unsafe_names()}).")
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
@click.option(
    "--no-baseline",
    is_flag=True,
    help="Fix every finding, also those the configured baseline accepts.",
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
    no_baseline: bool,
    stdin_filename: str | None,
    project_root: str | None,
) -> None:
    """Fix code that throws a DataLoader's worker pool away (safe fixes by default; see
    `lintloader rule CODE` for what each fix does).

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
        sys.exit(fix_stdin(scan, stdin, project_root, min_severity, unsafe_fixes, no_baseline))
    scope, scan = project_scope(scan, project_root)
    discovery, options = prepare(scan, min_severity)
    baseline = None if no_baseline else options.config.baseline
    roots = Roots.of(discovery.roots)
    displays = {f.path: f.display for f in discovery.files}

    def guard(path: str) -> str | None:
        outside = not_given(scope, path)
        if outside or show_diff:
            return outside
        return why_not_writable(path, roots, scan.site_packages)

    restrict = fix_restrict(scope, baseline)
    rounds = FixRounds(discovery, options, load_registry(), guard, restrict)
    outcome = rounds.run(unsafe_fixes)
    report_advisories(outcome)
    tried = Tried(outcome) if unsafe_fixes else with_unsafe(rounds, outcome)
    if show_diff:
        report_notes(outcome, displays, dry_run=True)
        left_notes(tried, displays)
        sys.exit(print_diffs(outcome, displays))
    report = write_all(outcome, displays, discovery if scan.site_packages else None)
    report_notes(outcome, displays, written=report.written)
    left_notes(tried, displays, report.failed)
    click.echo(summary(tried, report), err=True)
    sys.exit(report.exit_code(bool(outcome.left or outcome.incomplete)))


def left_notes(tried: Tried, displays: dict[str, str], failed: Sequence[str] = ()) -> None:
    """One or more ``note:`` lines for every finding the fix leaves (see ``unfixed_notes``)."""
    outcome = tried.safe
    place = FixPlaces(outcome.originals, displays)
    offers = dict(zip(outcome.left, tried.unsafe_offered(outcome.left), strict=True))
    unfixed_notes(
        outcome.left,
        tried.notes,
        offers.__getitem__,
        {displays.get(path, path) for path in failed},
        lambda f: place(f.path, f.line),
    )


def not_given(scope: ReportScope | None, path: str) -> str | None:
    """With ``--project-root`` (or files given alone, in their project), a fix writes only the
    files given: why not ``path``, or None. The project is indexed so that chains through
    other files are seen; a fix that would edit one of those is refused with this reason."""
    if scope is None or scope.covers(os.path.abspath(path)):
        return None
    return "not among the files given, and the fix edits it (give it too, or fix the directory)"


def report_advisories(outcome: FixOutcome) -> None:
    """Before patching a release known to ship the bug: upgrading is the better fix."""
    findings = [a.finding for a in outcome.applied] + list(outcome.remaining)
    messages = dict.fromkeys(f.advisory.message for f in findings if f.advisory)
    for message in messages:
        click.echo(f"advisory: {message}", err=True)


@dataclass
class WriteReport:
    """What became of the changed files: written, refused because they changed on disk during
    the fix, or not written (an error: disk full, no verified backup, ...)."""

    written: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def exit_code(self, left: bool) -> int:
        if self.failed:
            return EXIT_ERROR
        return EXIT_FINDINGS if left or self.changed else EXIT_CLEAN


def summary(tried: Tried, report: WriteReport) -> str:
    """Each finding once: fixed, changed but not fixed (another finding still says the pool is
    rebuilt, named above), or left (each with its note above)."""
    outcome = tried.safe
    done = set(report.written)
    fixed = sum(1 for a in outcome.fixed if set(a.paths) <= done)
    partly = sum(1 for a in outcome.incomplete if set(a.paths) <= done)
    written, left = len(report.written), len(outcome.left)
    offered = sum(1 for names in tried.unsafe_offered(outcome.left) if names)
    line = (
        f"Fixed {counted(fixed, 'finding')} in {counted(written, 'file')}; "
        + (f"{partly} changed but not fixed; " if partly else "")
        + f"{counted(left, 'finding')} left"
        + (f" ({offered} fixable with --unsafe-fixes)" if offered else "")
    )
    for count, what in ((len(report.failed), "NOT WRITTEN"), (len(report.changed), "changed")):
        if count:
            detail = (
                "(errors above)" if what == "NOT WRITTEN" else "on disk during the fix, left alone"
            )
            line += f"; {counted(count, 'file')} {what} {detail}"
    return line + "."


def fix_stdin(
    scan: ScanArgs,
    stdin: StdinSource,
    project_root: str | None,
    min_severity: str | None,
    unsafe_fixes: bool,
    no_baseline: bool,
) -> int:
    """``fix -``: print the fixed source (or the source unchanged) to stdout; write nothing."""
    scope, scan, add_file = stdin_scan(scan, stdin, project_root)
    discovery, options = prepare(scan, min_severity, stdin, add_file)
    restrict = fix_restrict(scope, None if no_baseline else options.config.baseline)

    def guard(path: str) -> str | None:
        return None if path == stdin.path else "not the file on standard input"

    rounds = FixRounds(discovery, options, load_registry(), guard, restrict)
    outcome = rounds.run(unsafe_fixes)
    displays = {f.path: f.display for f in discovery.files}
    report_notes(outcome, displays)
    tried = Tried(outcome) if unsafe_fixes else with_unsafe(rounds, outcome)
    left_notes(tried, displays)
    stdout = click.get_binary_stream("stdout")  # type: ignore[operator]  # click 8.3: untyped
    stdout.write(outcome.sources.get(stdin.path, stdin.data))
    return EXIT_FINDINGS if outcome.left or outcome.incomplete else EXIT_CLEAN


def report_notes(
    outcome: FixOutcome,
    displays: dict[str, str],
    dry_run: bool = False,
    written: Collection[str] | None = None,
) -> None:
    """What was fixed (``dry_run``: what would be). With ``written`` (the files written), a
    fix in a file that was not written is not reported as made. A place in a notebook reads
    ``train.ipynb:cell N:L``. The findings left are noted by ``unfixed_notes``."""
    done = "would be fixed by" if dry_run else "fixed by"
    place = FixPlaces(outcome.originals, displays)
    for applied in outcome.findings_fixed:
        if written is not None and not set(applied.paths) <= set(written):
            continue  # its file was not written: said above, with why
        f = applied.finding
        files = ", ".join(displays.get(p, p) for p in applied.paths)
        name = ", ".join(applied.strategies)
        if applied.complete:
            click.echo(f"{place(f.path, f.line)}: {f.code} {done} {name} ({files})", err=True)
            continue
        left = applied.residual[0]
        changed = "would be changed" if dry_run else "changed"
        click.echo(
            f"{place(f.path, f.line)}: {f.code} {changed} by {name} ({files}) but not fixed: "
            f"{left.code} [{left.severity.label}] at {place(left.path, left.line)} still says "
            "the worker pool is rebuilt",
            err=True,
        )


def print_diffs(outcome: FixOutcome, displays: dict[str, str]) -> int:
    changed = outcome.changed
    for path in sorted(changed):
        display = displays.get(path, path)
        show = notebook_diff if is_notebook(path) else unified_diff
        diff = show(display, outcome.originals[path], changed[path])
        if sys.stdout and sys.stdout.isatty():
            emit(for_terminal(diff), nl=False)
        else:
            emit(diff, nl=False, color=True)  # a patch, byte for byte (click strips no ANSI)
    count = len(changed)
    fixed, partly = len(outcome.fixed), len(outcome.incomplete)
    more = f" (and change {partly} without fixing them)" if partly else ""
    findings, files = plural(fixed, "finding"), plural(count, "file")
    click.echo(f"Would fix {fixed} {findings} in {count} {files}{more}.", err=True)
    return EXIT_FINDINGS if changed else EXIT_CLEAN


def write_all(outcome: FixOutcome, displays: dict[str, str], site: Discovery | None) -> WriteReport:
    """Write every changed file (with a verified backup first for installed ones), each only
    if it still holds the analysed bytes; report what was not written, one line per file."""
    fixes_by_path: dict[str, set[str]] = {}
    for applied in outcome.applied:
        for path in applied.paths:
            fixes_by_path.setdefault(path, set()).add(applied.strategy.name)
    report = WriteReport()
    done: dict[str, bytes] = {}  # real path -> bytes written (a symlink and its target)
    for path, data in sorted(outcome.changed.items()):
        display = displays.get(path, path)
        if done.get(os.path.realpath(path)) == data:
            report.written.append(path)
            continue
        try:
            write_one(path, outcome.originals[path], data, fixes_by_path.get(path, set()), site)
        except FileChanged as exc:
            click.echo(f"note: {display}: {exc}", err=True)
            report.changed.append(path)
            continue
        except (WriteError, OSError) as exc:
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            click.echo(f"lintloader: {display}: not written: {printable(str(message))}", err=True)
            report.failed.append(path)
            continue
        report.written.append(path)
        done[os.path.realpath(path)] = data
        for problem in remove_stale_bytecode(path):
            click.echo(f"lintloader: warning: stale bytecode left: {problem}", err=True)
    return report


def write_notebook(path: str, analysed: bytes, python: bytes) -> None:
    """A fixed notebook: the edited Python must parse; each cell gets its new source back,
    outputs untouched; the notebook must validate (see lintloader.scan.read.notebooks). Written
    only if its code cells are still the Python that was analysed (``analysed``)."""
    problem = reparse_ok(python, path)
    if problem:
        raise WriteError(f"the fixed cells would not parse ({problem}); not written")
    with open(path, "rb") as handle:
        original = handle.read()
    try:
        unchanged = notebook_to_python(original) == analysed
    except Exception:  # no longer a notebook it can read: changed meanwhile
        unchanged = False
    if not unchanged:
        raise FileChanged("changed on disk while lintloader worked on it; not written")
    notebook = python_to_notebook(original, python)
    atomic_write(path, notebook, verify=False, expected_sha256=sha256(original))


def write_one(
    path: str, original: bytes, data: bytes, fixes: set[str], discovery: Discovery | None
) -> None:
    """Write ``data`` over ``path`` if it still holds ``original``; for an installed file, only
    after a verified backup, and with its manifest entry put back when the write fails."""
    if is_notebook(path):
        write_notebook(path, original, data)
        return
    expected = sha256(original)
    if digest_of(path) != expected:
        raise FileChanged("changed on disk while lintloader worked on it; not written")
    if discovery is None:
        atomic_write(path, data, expected_sha256=expected)
        return
    site = site_of(path, discovery.roots)
    if site is None:
        raise WriteError("is outside every site directory; not patching without a backup")
    with locked_store(site) as store:  # concurrent fixes of one environment: one at a time
        previous = store.record(path, original, data, fixes)
        try:
            atomic_write(path, data, expected_sha256=expected)
        except WriteError:
            store.undo(path, previous)
            raise


def manage_backups(
    paths: Sequence[str], python: str | None, exclude: Sequence[str], revert: bool
) -> int:
    """``--revert`` or ``--list-patched`` over every site directory of the interpreter. A
    manifest or entry that cannot be trusted is refused with one line (exit 2); the rest is
    still processed."""
    sites = query_interpreter(python, [])["sites"]
    wanted = None
    if paths:
        found = discover_site_packages(python, paths, exclude)
        wanted = {os.path.realpath(f.path) for f in found.files}
    status = EXIT_CLEAN
    listed = 0
    for site in sites:
        try:
            with locked_store(site, create=False) as store:
                site_status, site_listed = manage_site(store, wanted, revert)
        except WriteError as exc:
            click.echo(f"refused: {printable(str(exc))}", err=True)
            status = EXIT_ERROR
            continue
        status = max(status, site_status)
        listed += site_listed
    if not listed:
        click.echo("No files patched by lintloader.", err=True)
    return status


def manage_site(store: BackupStore, wanted: set[str] | None, revert: bool) -> tuple[int, int]:
    """``--revert`` or ``--list-patched`` of one site directory's store: (exit status, how
    many entries it listed or reverted)."""
    status, listed = EXIT_CLEAN, 0
    for key, (_, reason) in sorted(store.manifest.refused.items()):
        where = printable(f"{store.manifest_path}: entry {key!r}")
        click.echo(f"refused: {where}: {reason}", err=True)
        status = EXIT_ERROR
    for key in sorted(store.entries):
        absolute = store.absolute(key)
        if wanted is not None and os.path.realpath(absolute) not in wanted:
            continue
        listed += 1
        if revert:
            restored = store.revert(key)
            tag = "dropped" if restored.dropped else "reverted" if restored.ok else "refused"
            line = printable(f"{tag}: {restored.path}: {restored.message}")
            if restored.ok:
                emit(line)
            else:
                click.echo(line, err=True)
            status = status if restored.ok else EXIT_ERROR
        else:
            emit(describe(store, key))
    for backup in store.orphans():
        line, harmless = orphan_line(store, backup)
        if harmless and revert:
            store.drop_backup(backup)
        tag = ("dropped" if revert else "note") if harmless else "refused"
        click.echo(printable(f"{tag}: {line}"), err=True)
        status = status if harmless else EXIT_ERROR
    return status, listed


def orphan_line(store: BackupStore, backup: str) -> tuple[str, bool]:
    """What to say of a backup no manifest entry refers to, and whether it is harmless: its file
    holds the original bytes again (a fix interrupted after the backup and before its entry,
    which is written before the file is patched). Otherwise the entry was lost and the file
    may still be patched: refused, with the command that restores it."""
    saved = os.path.join(store.directory, backup)
    digest = os.path.basename(backup)
    key = original_of(store.site, digest)
    if key is None:
        return f"{saved}: a backup with no manifest entry (of no file here); kept", False
    path = store.absolute(key)
    if digest_of(path) == digest:
        return f"{saved}: a backup with no manifest entry; {path} is the original", True
    return (
        f"{path}: may still be patched but has no manifest entry; its original is "
        f"{saved} (restore it with: cp {saved} {path})"
    ), False


def describe(store: BackupStore, key: str) -> str:
    """One line of ``--list-patched``: the file, its state, who patched it, and its backup
    (saying when the backup is missing or cannot be trusted)."""
    entry = store.entries[key]
    problem = store.backup_problem(entry)
    backup = printable(store.backup_path(entry)) + (f" ({problem.upper()})" if problem else "")
    return (
        f"{printable(store.absolute(key))}\t{store.state(key)}\tpatched {entry.time} by "
        f"{entry.user} with lintloader {entry.tool_version} ({', '.join(entry.fixes)})\t"
        f"backup {backup}"
    )
