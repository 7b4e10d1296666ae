"""``--output-format json``: a stable, documented list of findings (docs/output.md; its schema is
docs/output.schema.json).

Each item: code, severity, path, line, column, end_line, end_column, message, chain (hops:
path, line, column, function, action, confidence), also_reaches (hops), fixes (fixer names),
fix_safety (per fix: its applicability, safe or unsafe, and for an unsafe one why), url (the
rule's documentation page).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lintloader.finding.findings import Finding, documentation_url
from lintloader.finding.fix_safety import safety_of
from lintloader.report.context import ReportContext


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return json.dumps([item(f) for f in findings], indent=2) + "\n"


def item(finding: Finding) -> dict[str, Any]:
    return {
        **finding.to_json(),
        "fix_safety": [s.to_json() for s in safety_of(finding.fixes)],
        "url": documentation_url(finding.code),
    }
