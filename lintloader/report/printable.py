"""Findings made safe for a terminal: every text that comes from scanned code (a message, a
hop's function and quoted source, an advisory) with its control characters escaped, as display
paths already are (:func:`lintloader.scan.discover.escape.printable`). A string literal
holding ESC or BEL can then neither set the window title nor overwrite a line of the report.

The data formats (``json``, ``sarif``) keep the text as it is: JSON escapes control characters
itself, so no raw ESC reaches a terminal that shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lintloader.finding.findings import Finding, Hop
from lintloader.scan.discover.escape import printable

DATA_FORMATS = frozenset({"json", "sarif"})


def printable_findings(findings: Sequence[Finding]) -> list[Finding]:
    return [_finding(finding) for finding in findings]


def _finding(finding: Finding) -> Finding:
    fields = (finding.message, finding.path, *_texts(finding.chain), *_texts(finding.also))
    advisory = finding.advisory
    if all(text.isprintable() for text in fields) and (
        advisory is None or advisory.message.isprintable()
    ):
        return finding
    if advisory is not None:
        advisory = replace(
            advisory,
            distribution=printable(advisory.distribution),
            version=printable(advisory.version),
            fixed=None if advisory.fixed is None else printable(advisory.fixed),
        )
    return replace(
        finding,
        message=printable(finding.message),
        path=printable(finding.path),
        chain=tuple(_hop(hop) for hop in finding.chain),
        also=tuple(_hop(hop) for hop in finding.also),
        advisory=advisory,
    )


def _hop(hop: Hop) -> Hop:
    return replace(
        hop,
        path=printable(hop.path),
        function=printable(hop.function),
        action=printable(hop.action),
    )


def _texts(hops: Sequence[Hop]) -> list[str]:
    return [text for hop in hops for text in (hop.path, hop.function, hop.action)]
