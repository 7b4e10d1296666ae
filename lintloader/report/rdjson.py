"""``--output-format rdjson``: reviewdog's Diagnostic JSON (``reviewdog -f=rdjson``), so a
review bot comments on the lines of a pull request.

One diagnostic per finding: ``message`` (with the chain, one hop a line), ``location.path``
(relative to the working directory) and ``range`` (1-based, the end exclusive; columns are
UTF-8 byte counts as reviewdog reads them, worked out from the file's line), ``severity``
(ERROR/WARNING/INFO), ``code.value``/``code.url`` (the rule's page), ``fixes`` (each fix's
applicability and, for an unsafe one, why) and ``suggestions``: the safe fix's replacement
text, which reviewdog offers as a one-click suggestion.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from lintloader import DOCS_URL
from lintloader.finding.findings import PARSE_ERROR_CODE, Finding, Severity, documentation_url
from lintloader.finding.fix_safety import safety_of
from lintloader.report.context import Replacement, ReportContext
from lintloader.report.locations import relative_to

SEVERITIES = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}
SOURCE = {"name": "lintloader", "url": f"{DOCS_URL}/README.md"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    relocate = relative_to(context.root)
    lines = _line_reader(context.root)
    result = {
        "source": SOURCE,
        "diagnostics": [diagnostic(f, relocate(f.path), context, lines) for f in findings],
    }
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


LineReader = Callable[[str, int], "str | None"]  # (display path, 1-based line) -> its text


def _line_reader(root: str) -> LineReader:
    @cache
    def lines_of(path: str) -> tuple[str, ...]:
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="surrogateescape") as f:
                return tuple(f.read().splitlines())
        except OSError:
            return ()

    def line(path: str, number: int) -> str | None:
        found = lines_of(path)
        return found[number - 1] if 0 < number <= len(found) else None

    return line


def diagnostic(
    finding: Finding, path: str, context: ReportContext, lines: LineReader | None = None
) -> dict[str, Any]:
    url = f"{DOCS_URL}/rules/README.md" if finding.code == PARSE_ERROR_CODE else None
    data: dict[str, Any] = {
        "message": message(finding, context),
        "location": {"path": path, "range": _range(finding, lines)},
        "severity": SEVERITIES[finding.severity],
        "source": SOURCE,
        "code": {"value": finding.code, "url": url or documentation_url(finding.code)},
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


def _range(finding: Finding, lines: LineReader | None) -> dict[str, Any]:
    def position(line: int, column: int) -> dict[str, int]:
        text = lines(finding.path, line) if lines is not None and not finding.cell else None
        if text is not None:  # characters -> UTF-8 bytes before the column, plus one
            column = len(text[: column - 1].encode("utf-8", "surrogateescape")) + 1
        return {"line": line, "column": column}

    start = position(finding.line, finding.column)
    if finding.end_line > finding.line or (
        finding.end_line == finding.line and finding.end_column > finding.column
    ):
        return {"start": start, "end": position(finding.end_line, finding.end_column)}
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
