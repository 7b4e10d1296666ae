"""Which findings are reported: rule selection, the severity threshold, ``per-file-ignores``
and ``# noqa`` comments (collected per file by :mod:`lintloader.summary.noqa`)."""

from __future__ import annotations

from collections.abc import Iterable

from lintloader.config import Config
from lintloader.findings import PARSE_ERROR_CODE, Finding
from lintloader.summary.model import FileSummary
from lintloader.summary.noqa import suppresses


def filter_findings(
    findings: Iterable[Finding],
    config: Config,
    summaries: dict[str, FileSummary],
    displays: dict[str, str],
) -> tuple[list[Finding], int, int]:
    """Apply select/ignore, per-file-ignores, ``# noqa`` and the severity threshold; dedupe.
    Returns the findings kept, how many a suppression removed and how many fell below the
    threshold (the summary says they are hidden)."""
    noqa_by_display = {displays.get(p, p): s.noqa for p, s in summaries.items()}
    path_by_display = {d: p for p, d in displays.items()}
    kept: dict[tuple[str, int, int, int, str], Finding] = {}
    suppressed = hidden = 0
    for finding in findings:
        if finding.code != PARSE_ERROR_CODE and not config.enabled(finding.code):
            continue
        if config.hides(finding.code, finding.severity):
            hidden += 1
            continue
        absolute = path_by_display.get(finding.path, finding.path)
        noqa = noqa_by_display.get(finding.path, {})
        if config.ignored_in(finding.code, absolute) or suppresses(
            noqa, finding.line, finding.code
        ):
            suppressed += 1
            continue
        kept.setdefault(finding.sort_key, finding)
    return sorted(kept.values(), key=lambda f: f.sort_key), suppressed, hidden
