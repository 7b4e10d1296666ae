"""``--output-format json``: a stable, documented list of findings (docs/output.md; its schema is
docs/output.schema.json).

Each item: code, severity, path, line, column, end_line, end_column, message, chain (hops:
path, line, column, function, action, confidence), also_reaches (hops), fixes (fixer names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from lintloader.findings import Finding
from lintloader.report.context import ReportContext


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2) + "\n"
