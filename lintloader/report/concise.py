"""One line a finding, no chain: ``path:line:col: CODE [severity] message`` (in a notebook,
``path:cell N:line:col``)."""

from __future__ import annotations

from collections.abc import Sequence

from lintloader.findings import Finding
from lintloader.report.context import ReportContext


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(f"{f.place}: {f.code} [{f.severity.label}] {f.message}\n" for f in findings)
