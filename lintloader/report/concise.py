"""One line a finding, no chain: ``path:line:col: CODE [severity] message``."""

from __future__ import annotations

from collections.abc import Sequence

from lintloader.findings import Finding
from lintloader.report.context import ReportContext


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(
        f"{f.path}:{f.line}:{f.column}: {f.code} [{f.severity.label}] {f.message}\n"
        for f in findings
    )
