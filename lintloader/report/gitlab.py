"""``--output-format gitlab``: a GitLab Code Quality report (a JSON array of issues), as a
merge request's widget and diff annotations read it.

Each issue: ``description`` (the message), ``check_name`` (the rule code), ``fingerprint`` (the
baseline key of :mod:`lintloader.suppress.baseline`: unique per finding, stable when lines move),
``severity`` (``blocker`` for a file that cannot be analysed, ``critical`` for an error,
``major`` for a warning, ``minor`` for info), ``location.path`` (relative to the working
directory) and ``location.lines.begin``/``end``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lintloader.finding.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.report.context import ReportContext
from lintloader.report.locations import relative_to
from lintloader.suppress.baseline import fingerprints

SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "minor"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    relocate = relative_to(context.root)
    prints = fingerprints(findings, relocate)
    issues = [issue(f, relocate(f.path), fp) for f, fp in zip(findings, prints, strict=True)]
    return json.dumps(issues, indent=2) + "\n"


def issue(finding: Finding, path: str, fingerprint: str) -> dict[str, Any]:
    severity = "blocker" if finding.code == PARSE_ERROR_CODE else SEVERITIES[finding.severity]
    return {
        "type": "issue",
        "description": f"{finding.code} {finding.message}",
        "check_name": finding.code,
        "categories": ["Performance"] if finding.code != PARSE_ERROR_CODE else ["Bug Risk"],
        "fingerprint": fingerprint,
        "severity": severity,
        "location": {
            "path": path,
            "lines": {"begin": finding.line, "end": max(finding.end_line, finding.line)},
        },
    }
