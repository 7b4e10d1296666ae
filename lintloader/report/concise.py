"""One line a finding, no chain: ``path:line:col: CODE [severity] message`` (in a notebook,
``path:cell N:line:col``); coloured as ``text`` is with ``--color``."""

from __future__ import annotations

from collections.abc import Sequence

import click

from lintloader.finding.findings import Finding, Severity
from lintloader.report.context import ReportContext

_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(_line(f, context.color) for f in findings)


def _line(finding: Finding, color: bool) -> str:
    place, code = finding.place, finding.code
    if color:
        place = click.style(finding.path, bold=True) + finding.place[len(finding.path) :]
        code = click.style(code, fg=_COLORS[finding.severity], bold=True)
    return f"{place}: {code} [{finding.severity.label}] {finding.message}\n"
