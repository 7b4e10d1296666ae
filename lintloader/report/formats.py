"""The output formats. Each module of ``report/`` renders a list of findings; none knows about
analysis.

To add a format: write ``report/<name>.py`` with ``render(findings, context) -> str`` and list it
in ``FORMATS``. A format's module is imported only when it is used (SARIF describes every rule,
so importing it loads the whole analysis).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from lintloader.finding.findings import Finding
from lintloader.report.context import ReportContext
from lintloader.report.printable import DATA_FORMATS, printable_findings

Renderer = Callable[[Sequence[Finding], ReportContext], str]

FORMATS: dict[str, str] = {  # format name -> module of lintloader.report that renders it
    "text": "text",
    "concise": "concise",
    "json": "json_format",
    "sarif": "sarif",
    "github": "github",
    "markdown": "markdown",
    "dot": "dot",
    "gitlab": "gitlab",
    "rdjson": "rdjson",
    "junit": "junit",
}
EDITING_FORMATS = frozenset({"rdjson"})  # carry a safe fix's replacement text


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"lintloader.report.{FORMATS[name]}")
    return module.render  # type: ignore[no-any-return]


def render(name: str, findings: Sequence[Finding], context: ReportContext) -> str:
    """``findings`` in format ``name``; in a format for terminals and pages, every text from
    scanned code with its control characters escaped (``report/printable.py``)."""
    if name not in DATA_FORMATS:
        findings = printable_findings(findings)
    return renderer(name)(findings, context)
