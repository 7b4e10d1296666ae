"""Output formats. Each module renders a list of findings; none knows about analysis.

To add a format: write ``report/<name>.py`` with ``render(findings, context) -> str`` and list it
in ``FORMATS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lintloader.findings import Finding
from lintloader.report import concise, github, json_format, sarif, text
from lintloader.report.context import ReportContext

Renderer = Callable[[Sequence[Finding], ReportContext], str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "concise": concise.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}

__all__ = ["FORMATS", "ReportContext", "render"]


def render(name: str, findings: Sequence[Finding], context: ReportContext) -> str:
    return FORMATS[name](findings, context)
