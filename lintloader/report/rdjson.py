"""``--output-format rdjson``: reviewdog's Diagnostic JSON (``reviewdog -f=rdjson``), so a
review bot comments on the lines of a pull request.

One diagnostic per finding: ``message`` (with the chain, one hop a line), ``location.path``
(relative to the working directory) and ``range`` (1-based, the end exclusive; columns count
characters, which is reviewdog's byte count on ASCII lines), ``severity`` (ERROR/WARNING/INFO),
``code.value``/``code.url`` (the rule's page), ``fixes`` (each fix's applicability and, for
an unsafe one, why) and ``suggestions``: the safe fix's replacement text, which reviewdog offers
as a one-click suggestion.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lintloader import DOCS_URL
from lintloader.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.fixers.safety import safety_of
from lintloader.report.context import Replacement, ReportContext
from lintloader.report.locations import relative_to

SEVERITIES = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}
SOURCE = {"name": "lintloader", "url": f"{DOCS_URL}/README.md"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    relocate = relative_to(context.root)
    result = {
        "source": SOURCE,
        "diagnostics": [diagnostic(f, relocate(f.path), context) for f in findings],
    }
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def diagnostic(finding: Finding, path: str, context: ReportContext) -> dict[str, Any]:
    page = "README" if finding.code == PARSE_ERROR_CODE else finding.code
    data: dict[str, Any] = {
        "message": message(finding, context),
        "location": {"path": path, "range": _range(finding)},
        "severity": SEVERITIES[finding.severity],
        "source": SOURCE,
        "code": {"value": finding.code, "url": f"{DOCS_URL}/rules/{page}.md"},
    }
    fixes = [entry.to_json() for entry in safety_of(finding.fixes)]
    if fixes:
        data["fixes"] = fixes
    edits = context.replacements.get(finding.sort_key, ())
    if edits:
        data["suggestions"] = [_suggestion(edit) for edit in edits]
    return data


def message(finding: Finding, context: ReportContext) -> str:
    """The message, then the chain one hop a line, then the advisory."""
    lines = [finding.message]
    if context.show_chain and len(finding.chain) > 1:
        lines += [f"{h.place} {h.function}: {h.action}" for h in finding.chain]
    if finding.advisory:
        lines.append(f"advisory: {finding.advisory.message}")
    return "\n".join(lines)


def _range(finding: Finding) -> dict[str, Any]:
    start = {"line": finding.line, "column": finding.column}
    if finding.end_line > finding.line or (
        finding.end_line == finding.line and finding.end_column > finding.column
    ):
        return {"start": start, "end": {"line": finding.end_line, "column": finding.end_column}}
    return {"start": start}


def _suggestion(edit: Replacement) -> dict[str, Any]:
    """Whole lines: from the start of ``start`` to the start of ``end`` (exclusive)."""
    return {
        "range": {
            "start": {"line": edit.start, "column": 1},
            "end": {"line": edit.end, "column": 1},
        },
        "text": edit.text,
    }
