"""What every fix path (``fix``, ``check --fix``/``--diff``, the pre-commit fix hook) may act
on, the scope less the baseline, and the notes that say why a finding was left unfixed."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import click

from lintloader.finding.findings import Finding

if TYPE_CHECKING:
    from lintloader.fixers.runner import Note, Restrict
    from lintloader.integrations.project import ReportScope


def fix_restrict(
    scope: ReportScope | None, baseline: str | None, given: bool = False
) -> Restrict | None:
    """The findings a fix may act on: those located in ``scope``'s files (all without one),
    less those the baseline at ``baseline`` accepts (a one-line error when it cannot be read)."""
    from lintloader.cli.baselining import read_baseline
    from lintloader.fixers.scope import fix_scope

    recorded = (read_baseline(baseline, given) or []) if baseline is not None else []
    return fix_scope(scope.restrict if scope is not None else None, baseline, recorded)


def unfixed_notes(
    findings: Sequence[Finding],
    notes: Sequence[Note],
    offers: Callable[[Finding], tuple[str, ...]],
    failed: Collection[str],
    place: Callable[[Finding], str],
    refusal_place: Callable[[Finding], str] | None = None,
) -> None:
    """A ``note:`` for every finding left: each fix strategy that was tried on it and refused
    (``notes``, with the reason), the unsafe fixes that would apply (``offers``, without
    ``--unsafe-fixes``), or else why nothing was tried: its file was not written (``failed``:
    displays), or no fixer handles its shape. ``refusal_place`` places the refusals (default:
    ``place``)."""
    from lintloader.scan.discover.escape import printable
    from lintloader.suppress.baseline import key_parts

    refused: dict[tuple[str, ...], dict[str, str]] = {}
    for note in notes:
        refused.setdefault(key_parts(note.finding), {}).setdefault(note.strategy, note.reason)
    for finding in findings:
        where = f"note: {place(finding)}: {finding.code}"
        reasons = refused.get(key_parts(finding), {})
        at = (refusal_place or place)(finding)
        for strategy, reason in reasons.items():
            click.echo(
                f"note: {at}: {finding.code} {strategy} not applied: {printable(reason)}", err=True
            )
        offered = offers(finding)
        if finding.path in failed:
            click.echo(f"{where} not fixed: its file was not written (see above)", err=True)
        elif offered:
            click.echo(f"{where} not fixed: `--unsafe-fixes` offers {', '.join(offered)}", err=True)
        elif not reasons or _dependent(finding):  # the change is why, whatever was refused
            click.echo(f"{where} not fixed: {_no_fixer(finding)}", err=True)


def _dependent(finding: Finding) -> bool:
    """An LL202 whose loader is built from what its loop changes: no fix keeps one loader."""
    from lintloader.rules.ll202_dataloader_in_loop import DEPENDENT_NOTE

    return finding.code == "LL202" and finding.message.endswith(DEPENDENT_NOTE)


def _no_fixer(finding: Finding) -> str:
    """Why no strategy was tried: a loader built from what its loop changes has none to try."""
    if _dependent(finding):
        return (
            "its arguments change with the loop: a loader built once (or persistent) would not "
            "see the change, and a new loader may be intended"
        )
    return "no fixer for this shape"
