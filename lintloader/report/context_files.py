"""Findings and context files (see :mod:`lintloader.scan.locate`): code that was parsed only
because a scanned distribution builds on it is never reported on itself.

A finding located in a context file moves to the first hop of its chain that lies in a scanned
file (``--site-packages B``: A's loop calls B's override, the finding goes to B's override,
its chain still shows A's loop); a finding with no hop in a scanned file is dropped. A moved
finding offers no fix: its fixers would edit the context file its chain starts in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from lintloader.findings import Finding


def located_in_scanned(findings: Iterable[Finding], context: set[str]) -> Iterator[Finding]:
    """``findings`` with those in ``context`` (display paths) moved or dropped."""
    for finding in findings:
        if finding.path not in context:
            yield finding
            continue
        hop = next((h for h in finding.chain if h.path not in context), None)
        if hop is not None:
            yield replace(
                finding,
                path=hop.path,
                line=hop.line,
                column=hop.column,
                end_line=0,
                end_column=0,
                fixes=(),
            )
