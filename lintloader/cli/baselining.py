"""``check --baseline FILE`` / ``--write-baseline FILE`` / ``--show-stale-baseline``: the run's
side of :mod:`lintloader.suppress.baseline` (which files, which paths, what is printed)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lintloader.cli.options import Failure
from lintloader.engine import CheckResult
from lintloader.scan.escape import printable
from lintloader.scan.model import SourceFile

if TYPE_CHECKING:  # the baseline module is imported only by a run that uses a baseline
    from lintloader.suppress.baseline import Relocate


@dataclass(frozen=True)
class Baselined:
    """The result with the baselined findings taken out, and how many were."""

    result: CheckResult
    count: int = 0


def relocator(files: Sequence[SourceFile], baseline: str) -> Relocate:
    """A finding's display path -> its path relative to the baseline file's directory, so the
    same file is one entry whether the run was ``check .`` or ``check src/``."""
    base = os.path.dirname(os.path.abspath(baseline))
    absolute = {file.display: file.path for file in files}

    def relocate(display: str) -> str:
        path = absolute.get(display, display)
        if os.path.isabs(path) and os.path.commonpath([path, base]) == base:
            return os.path.relpath(path, base)
        return display

    return relocate


def write_baseline(path: Path, result: CheckResult) -> None:
    """Record every finding of ``result`` in ``path``."""
    from lintloader.suppress.baseline import BaselineError, write

    try:
        count = write(str(path), result.findings, relocator(result.files, str(path)))
    except BaselineError as exc:
        raise Failure(str(exc)) from None
    shown = printable(str(path))
    click.echo(f"Wrote {count} finding{'s' * (count != 1)} to the baseline {shown}.", err=True)


def apply_baseline(
    result: CheckResult, path: str | None, show_stale: bool, given: bool = False
) -> Baselined:
    """Hide the findings the baseline at ``path`` holds; list its stale entries when asked.
    A baseline the configuration names (not ``given`` on the command line) that another
    user owns is not used (one warning)."""
    if path is None:
        if show_stale:
            raise Failure("--show-stale-baseline needs a baseline (--baseline or `baseline =`)")
        return Baselined(result)
    from lintloader.suppress.baseline import BaselineError, ForeignBaseline, match, read

    try:
        recorded = read(path, trusted=given)
    except ForeignBaseline as exc:  # as git's safe.directory: said, and the run goes on
        click.echo(f"lintloader: warning: {printable(str(exc))}", err=True)
        return Baselined(result)
    except BaselineError as exc:
        raise Failure(str(exc)) from None
    relocate = relocator(result.files, path)
    scanned = [relocate(file.display) for file in result.files]
    matched = match(result.findings, recorded, relocate, scanned)
    if show_stale:
        for entry in matched.stale:
            where = " -> ".join(part for part in (entry.root, entry.sink) if part)
            line = f"{entry.path}: {entry.code} {where} ({entry.fingerprint[:12]})"
            click.echo(f"stale baseline entry: {printable(line)}", err=True)
        count = len(matched.stale)
        click.echo(
            f"{count} stale baseline entr{'ies' if count != 1 else 'y'} in {printable(path)}.",
            err=True,
        )
    return Baselined(replace(result, findings=matched.findings), matched.baselined)
