"""Hover on a finding: its message, the chain one hop a line (each a link to its place), the
other resets its root reaches, and the advisory line when the code is a known affected
release."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from lsprotocol import types

from lintloader.finding.findings import Finding, Hop, documentation_url
from lintloader.integrations.lsp.diagnostics import hop_text

PathOf = Callable[[str], str]


def at_position(findings: Sequence[Finding], line: int, character: int) -> list[Finding]:
    """The findings whose lines hold the 0-based ``line`` (the column is not compared: a
    hover anywhere on a finding's line shows it)."""
    return [f for f in findings if f.line - 1 <= line <= max(f.end_line, f.line) - 1]


def hop_link(hop: Hop, path_of: PathOf) -> str:
    uri = Path(path_of(hop.path)).as_uri()
    return f"[{hop.path}:{hop.line}:{hop.column}]({uri}#L{hop.line})"


def markdown(finding: Finding, path_of: PathOf) -> str:
    lines = [f"**[{finding.code}]({documentation_url(finding.code)})** {finding.message}"]
    last = len(finding.chain) - 1
    if finding.chain:
        lines += ["", "Chain:", ""]
        lines += [
            f"{index + 1}. {hop_link(hop, path_of)} `{hop_text(hop, index, last)}`"
            for index, hop in enumerate(finding.chain)
        ]
    if finding.also:
        lines += [""]
        lines += [
            f"- {hop.verb or 'also reaches'} {hop_link(hop, path_of)} `{hop.action}`"
            for hop in finding.also
        ]
    if finding.advisory:
        lines += ["", f"advisory: {finding.advisory.message}"]
    return "\n".join(lines)


def hover(findings: Sequence[Finding], path_of: PathOf) -> types.Hover | None:
    if not findings:
        return None
    text = "\n\n---\n\n".join(markdown(f, path_of) for f in findings)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
