"""Where a finding ends: the end of the call, reset or construction it is reported at.

Rules report where a finding starts; the summary knows, for every site it recorded, where that
site ends. This gives every finding located at a recorded site a real range (the same in the
JSON, SARIF and GitHub formats), in one place, whatever rule made it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence

from lintloader.finding.findings import Finding
from lintloader.summary.model import FileSummary, Site

Position = tuple[int, int]


def with_ranges(
    findings: Sequence[Finding], summaries: Mapping[str, FileSummary], displays: Mapping[str, str]
) -> list[Finding]:
    """``findings`` with ``end_line``/``end_column`` filled from the site each starts at."""
    by_display = {displays.get(path, path): summary for path, summary in summaries.items()}
    ends: dict[str, dict[Position, Position]] = {}
    ranged = []
    for finding in findings:
        if finding.end_column or finding.path not in by_display:
            ranged.append(finding)
            continue
        if finding.path not in ends:
            ends[finding.path] = site_ends(by_display[finding.path])
        end = ends[finding.path].get((finding.line, finding.column))
        if end is None:
            ranged.append(finding)
        else:
            ranged.append(dataclasses.replace(finding, end_line=end[0], end_column=end[1]))
    return ranged


def site_ends(summary: FileSummary) -> dict[Position, Position]:
    """Start -> end of every site of a file (the widest, when several start at one place)."""
    ends: dict[Position, Position] = {}
    for site in _sites(summary):
        if site.end_column:
            start, end = (site.line, site.column), (site.end_line or site.line, site.end_column)
            ends[start] = max(ends.get(start, end), end)
    return ends


def site_starts(summary: FileSummary) -> Iterator[Position]:
    """Where each site of a file starts (one place per site)."""
    return ((site.line, site.column) for site in _sites(summary))


def _sites(summary: FileSummary) -> Iterator[Site]:
    for function in summary.functions.values():
        yield from (call.site for call in function.calls)
        yield from (sink.site for sink in function.sinks)
    if summary.loaders is not None:
        for facts in summary.loaders.functions.values():
            for field in dataclasses.fields(facts):
                items = getattr(facts, field.name)
                for item in items if isinstance(items, list) else ():
                    site = getattr(item, "site", None)
                    if isinstance(site, Site):
                        yield site
