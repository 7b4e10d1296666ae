"""Default output: ``path:line:col: CODE [severity] message`` and the chain, one hop a line."""

from __future__ import annotations

from collections.abc import Sequence

import click

from lintloader.finding.findings import Confidence, Finding, Severity
from lintloader.report.context import ReportContext

_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(_finding(f, context) for f in findings)


def _finding(finding: Finding, context: ReportContext) -> str:
    style = (lambda text, **kw: click.style(text, **kw)) if context.color else _plain
    head = (
        f"{style(finding.path, bold=True)}{finding.place[len(finding.path) :]}: "
        f"{style(finding.code, fg=_COLORS[finding.severity], bold=True)} "
        f"[{finding.severity.label}] {finding.message}\n"
    )
    advisory = f"    advisory: {finding.advisory.message}\n" if finding.advisory else ""
    if not context.show_chain or len(finding.chain) < 2:
        return head + advisory
    lines = [head]
    last = len(finding.chain) - 1
    for index, hop in enumerate(finding.chain):
        arrow = hop.verb or ("reset" if index == last else "calls")
        unsure = _UNSURE.get(hop.confidence, "")
        lines.append(
            f"    {hop.place} {hop.function}: {arrow} "
            f"{style(hop.action, bold=index == last)}{unsure}\n"
        )
    for hop in finding.also:
        lines.append(f"    {hop.verb or 'also reaches'} {hop.place} {hop.action}\n")
    lines.append(advisory)
    return "".join(lines)


_UNSURE = {Confidence.LOW: " (matched by name)", Confidence.MEDIUM: " (guessed by name)"}


def _plain(text: str, **_: object) -> str:
    return text
