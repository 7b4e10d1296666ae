"""Which findings are reported: rule selection, the severity threshold, ``per-file-ignores``
and ``# noqa`` comments (collected per file by :mod:`lintloader.summary.noqa`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from lintloader.finding.findings import PARSE_ERROR_CODE, Finding
from lintloader.settings.config import Config
from lintloader.summary.model import FileSummary
from lintloader.summary.noqa import Codes, suppresses
from lintloader.suppress.unused_noqa import CODE as UNUSED_NOQA
from lintloader.suppress.unused_noqa import SEVERITY as UNUSED_NOQA_SEVERITY


def filter_findings(
    findings: Iterable[Finding],
    config: Config,
    summaries: dict[str, FileSummary],
    displays: dict[str, str],
    read: Callable[[str], bytes | None] | None = None,
) -> tuple[list[Finding], dict[str, int], dict[str, int]]:
    """Apply select/ignore, per-file-ignores, ``# noqa`` and the severity threshold; dedupe.
    Returns the findings kept and, per file (display path), how many a suppression removed
    and how many fell below the threshold (the summary says they are hidden). ``read``: how
    a file with ``# noqa`` comments is read (``read_source`` unless given)."""
    noqa_by_display = {displays.get(p, p): s.noqa for p, s in summaries.items()}
    path_by_display = {d: p for p, d in displays.items()}
    kept: dict[tuple[str, int, int, int, str], Finding] = {}
    suppressed: Counter[str] = Counter()
    hidden: Counter[str] = Counter()
    by_noqa: list[Finding] = []
    for finding in findings:
        if finding.code != PARSE_ERROR_CODE and not config.enabled(finding.code):
            continue
        noqa = noqa_by_display.get(finding.path, {})
        by_directive = suppresses(noqa, finding.line, finding.code)
        if by_directive:
            by_noqa.append(finding)  # uses its directive, even when hidden or ignored below
        if config.hides(finding.code, finding.severity):
            hidden[finding.path] += 1
            continue
        absolute = path_by_display.get(finding.path, finding.path)
        if config.ignored_in(finding.code, absolute):
            suppressed[finding.path] += 1
            continue
        if by_directive:
            suppressed[finding.path] += 1
            continue
        kept.setdefault(finding.sort_key, finding)
    if config.enabled(UNUSED_NOQA) and not config.hides(UNUSED_NOQA, UNUSED_NOQA_SEVERITY):
        for finding in unused_noqa(by_noqa, config, noqa_by_display, path_by_display, read):
            kept.setdefault(finding.sort_key, finding)
    return sorted(kept.values(), key=lambda f: f.sort_key), dict(suppressed), dict(hidden)


def unused_noqa(
    by_noqa: list[Finding],
    config: Config,
    noqa_by_display: dict[str, dict[int, Codes]],
    path_by_display: dict[str, str],
    read: Callable[[str], bytes | None] | None = None,
) -> list[Finding]:
    """LL001 (on by default) for the files whose ``# noqa`` comments suppress less than they
    name. Only the codes of rules that ran are judged: a disabled rule found nothing to use."""
    from lintloader.scan.read.reading import read_source
    from lintloader.suppress.unused_noqa import unused

    paths = {
        display: path_by_display.get(display, display)
        for display, noqa in noqa_by_display.items()
        if noqa
    }
    found = unused(by_noqa, paths, read or read_source, config.enabled)
    return [f for f in found if not config.ignored_in(f.code, paths.get(f.path, f.path))]
