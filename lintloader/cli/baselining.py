"""``check --baseline FILE`` / ``--write-baseline FILE`` / ``--show-stale-baseline``: the run's
side of :mod:`lintloader.suppress.baseline` (which files, which paths, what is printed)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lintloader.cli.options import Failure
from lintloader.engine import CheckResult

if TYPE_CHECKING:  # the baseline module is imported only by a run that uses a baseline
    from lintloader.suppress.baseline import Entry


@dataclass(frozen=True)
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
    click.echo(f"Wrote {count} finding{'s' * (count != 1)} to the baseline {path}.", err=True)


def read_baseline(path: str) -> list[Entry]:
    """The entries of the baseline at ``path`` (a one-line error when it cannot be read)."""
    from lintloader.suppress.baseline import BaselineError, read

    try:
        return read(path)
    except BaselineError as exc:
        raise Failure(str(exc)) from None


def apply_baseline(result: CheckResult, path: str | None, show_stale: bool) -> Baselined:
    """Hide the findings the baseline at ``path`` holds; list its stale entries when asked."""
    if path is None:
        if show_stale:
            raise Failure("--show-stale-baseline needs a baseline (--baseline or `baseline =`)")
        return Baselined(result)
    from lintloader.suppress.baseline import match_files

    matched = match_files(result.findings, result.files, read_baseline(path), path)
    if show_stale:
        for entry in matched.stale:
            where = " -> ".join(part for part in (entry.root, entry.sink) if part)
            click.echo(
                f"stale baseline entry: {entry.path}: {entry.code} {where} "
                f"({entry.fingerprint[:12]})",
                err=True,
            )
        count = len(matched.stale)
        click.echo(
            f"{count} stale baseline entr{'ies' if count != 1 else 'y'} in {path}.", err=True
        )
    return Baselined(replace(result, findings=matched.findings), matched.baselined)
