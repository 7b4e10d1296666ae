"""``check --baseline FILE`` / ``--write-baseline FILE`` / ``--show-stale-baseline`` /
``--update-baseline``: the run's side of :mod:`lintloader.suppress.baseline` (which files,
which paths, what is printed). The fix paths read the baseline through :func:`read_baseline`
too, so that a fix never rewrites an accepted finding."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lintloader.cli.options import Failure
from lintloader.pipeline.engine import CheckResult
from lintloader.scan.discover.escape import printable
from lintloader.text.wording import counted

if TYPE_CHECKING:  # the baseline module is imported only by a run that uses a baseline
    from lintloader.suppress.baseline import Entry


@dataclass(frozen=True, eq=False)
class Baselined:
    """The result with the baselined findings taken out, and how many were."""

    result: CheckResult
    count: int = 0


def write_baseline(path: Path, result: CheckResult) -> None:
    """Record every finding of ``result`` in ``path``."""
    from lintloader.suppress.baseline import BaselineError, relocator, write

    try:
        count = write(str(path), result.findings, relocator(result.files, str(path)))
    except BaselineError as exc:
        raise Failure(str(exc)) from None
    shown = printable(str(path))
    click.echo(f"Wrote {counted(count, 'finding')} to the baseline {shown}.", err=True)


def read_baseline(path: str, given: bool = False) -> list[Entry] | None:
    """The entries of the baseline at ``path`` (a one-line error when it cannot be read);
    None for one the configuration names (not ``given`` on the command line) that another
    user owns: not used, said in one warning, as git's safe.directory."""
    from lintloader.suppress.baseline import BaselineError, ForeignBaseline, read

    try:
        return read(path, trusted=given)
    except ForeignBaseline as exc:
        click.echo(f"lintloader: warning: {printable(str(exc))}", err=True)
        return None
    except BaselineError as exc:
        raise Failure(str(exc)) from None


def shown(path: str) -> str:
    """A path as messages print it: relative to the working directory when it is inside,
    control characters escaped."""
    absolute = os.path.abspath(path)
    here = os.getcwd()
    inside = os.path.commonpath([absolute, here]) == here
    return printable(os.path.relpath(absolute, here) if inside else path)


def apply_baseline(
    result: CheckResult,
    path: str | None,
    show_stale: bool,
    given: bool = False,
    update: bool = False,
) -> Baselined:
    """Hide the findings the baseline at ``path`` holds; list its stale entries when asked;
    ``update``: write it back without its stale entries, moved files' entries under their
    new paths (no new finding is added: that is ``--write-baseline``)."""
    if path is None:
        if show_stale or update:
            flag = "--show-stale-baseline" if show_stale else "--update-baseline"
            raise Failure(f"{flag} needs a baseline (--baseline or `baseline =`)")
        return Baselined(result)
    from lintloader.suppress.baseline import BaselineError, entry_exists, match_files, save

    recorded = read_baseline(path, given)
    if recorded is None:
        return Baselined(result)
    matched = match_files(result.findings, result.files, recorded, path)
    exists = entry_exists(path)
    if show_stale:
        for entry in matched.stale:
            where = " -> ".join(part for part in (entry.root, entry.sink) if part)
            gone = "" if exists(entry.path) else " (file gone)"
            line = f"{entry.path}{gone}: {entry.code} {where} ({entry.fingerprint[:12]})"
            click.echo(f"stale baseline entry: {printable(line)}", err=True)
        count = len(matched.stale)
        click.echo(
            f"{counted(count, 'stale baseline entry', 'stale baseline entries')} in {shown(path)}.",
            err=True,
        )
    if update:
        try:
            count = save(path, matched.updated)
        except BaselineError as exc:
            raise Failure(str(exc)) from None
        dropped = len(recorded) - count
        click.echo(
            f"Updated the baseline {shown(path)}: {counted(count, 'entry', 'entries')} "
            f"kept, {dropped} stale dropped.",
            err=True,
        )
    return Baselined(replace(result, findings=matched.findings), matched.baselined)
