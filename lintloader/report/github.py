"""``--output-format github``: GitHub Actions workflow commands, one annotation a finding.

``::error file=PATH,line=L,col=C,endLine=L,endColumn=C,title=LL101::message`` (``warning`` and
``notice`` for lower severities). The message carries the chain, one hop a line, so the
annotation shows every call down to the reset. Escaping follows GitHub's runner: in the message
``%``, CR and LF are percent-encoded; in properties also ``:`` and ``,``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from lintloader.finding.findings import Finding, Severity
from lintloader.report.context import ReportContext

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(annotation(f, context) + "\n" for f in findings)


def annotation(finding: Finding, context: ReportContext) -> str:
    properties = {
        "file": finding.path if os.sep == "/" else finding.path.replace(os.sep, "/"),
        "line": str(finding.line),
        "col": str(finding.column),
    }
    if finding.end_line > finding.line or (
        finding.end_line == finding.line and finding.end_column > finding.column
    ):
        properties["endLine"] = str(finding.end_line)
        properties["endColumn"] = str(finding.end_column)
    properties["title"] = finding.code
    head = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{COMMANDS[finding.severity]} {head}::{escape_data(message(finding, context))}"


def message(finding: Finding, context: ReportContext) -> str:
    lines = [finding.message]
    if context.show_chain and len(finding.chain) > 1:
        lines += [f"{h.path}:{h.line}:{h.column} {h.function}: {h.action}" for h in finding.chain]
    if finding.advisory:
        lines.append(f"advisory: {finding.advisory.message}")
    return "\n".join(lines)
