"""Findings as LSP diagnostics: code, severity, message, range, a link to the rule's page and
every hop of the chain as related information, so that an editor can walk along it.

lintloader's lines and columns are 1-based and count characters (code points), its end column
is exclusive; LSP's are 0-based and count the code units the session agreed on (UTF-16 unless
the client offered another), so each column is converted on its line's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec

from lintloader.finding.findings import Finding, Hop, Severity, documentation_url

SOURCE = "lintloader"
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # two letters at least: not a drive
Lines = Callable[[str], Sequence[str]]  # absolute path or URI -> its lines, as the editor has them
PathOf = Callable[[str], str]  # a finding's display path -> its absolute path
# (absolute path, line, column) of a finding -> where the editor shows it: the same place in
# a Python file; in a notebook, the place in a cell's document (its URI) or in the JSON text
Mover = Callable[[str, int, int], tuple[str, int, int]]


def unmoved(path: str, line: int, column: int) -> tuple[str, int, int]:
    return path, line, column


def uri_of(path: str) -> str:
    """The URI of an absolute path (a URI, a notebook cell's, is returned as it is)."""
    return path if _SCHEME.match(path) else Path(path).as_uri()


class Converter:
    """Turns findings into diagnostics for one session's position encoding."""

    def __init__(
        self, codec: PositionCodec, lines: Lines, path_of: PathOf, moved: Mover = unmoved
    ) -> None:
        self.codec = codec
        self.lines = lines
        self.path_of = path_of
        self.moved = moved

    def position(self, path: str, line: int, column: int) -> types.Position:
        """A 1-based line and character column as an LSP position (``path``: the document's
        absolute path or URI, as :attr:`moved` gives it)."""
        point = types.Position(line=max(line - 1, 0), character=max(column - 1, 0))
        text = self.lines(path)
        if point.line >= len(text):
            return point
        return self.codec.position_to_client_units(text, point)

    def span(self, path: str, start: tuple[int, int], end: tuple[int, int]) -> types.Location:
        """Where the 1-based (line, column) ``start`` to ``end`` of ``path`` is shown."""
        where, line, column = self.moved(path, *start)
        _, end_line, end_column = self.moved(path, *end)
        if (end_line, end_column) <= (line, column):
            end_line, end_column = line, column + 1
        first = self.position(where, line, column)
        last = self.position(where, end_line, end_column)
        return types.Location(uri=uri_of(where), range=types.Range(start=first, end=last))

    def finding_location(self, path: str, finding: Finding) -> types.Location:
        end = (finding.end_line or finding.line, finding.end_column or finding.column)
        return self.span(path, (finding.line, finding.column), end)

    def finding_range(self, path: str, finding: Finding) -> types.Range:
        return self.finding_location(path, finding).range

    def hop_location(self, hop: Hop) -> types.Location:
        """A hop's place, spanning its action where it is on one line."""
        first_line = hop.action.splitlines()[0] if hop.action else ""
        end = (hop.line, hop.column + max(len(first_line), 1))
        return self.span(self.path_of(hop.path), (hop.line, hop.column), end)

    def placed(
        self, path: str, findings: Sequence[Finding], documents: Sequence[str] = ()
    ) -> dict[str, list[types.Diagnostic]]:
        """The diagnostics of ``path``'s findings by the URI of the document that shows
        them (a notebook's by cell; ``documents``: URIs to report even when empty)."""
        found: dict[str, list[types.Diagnostic]] = {uri: [] for uri in documents}
        for finding in findings:
            uri = self.finding_location(path, finding).uri
            found.setdefault(uri, []).append(self.diagnostic(path, finding))
        return found

    def diagnostic(self, path: str, finding: Finding) -> types.Diagnostic:
        related = [
            types.DiagnosticRelatedInformation(self.hop_location(hop), hop_text(hop, index, last))
            for last in (len(finding.chain) - 1,)
            for index, hop in enumerate(finding.chain)
        ]
        related += [
            types.DiagnosticRelatedInformation(
                self.hop_location(hop), f"{hop.verb or 'also reaches'} {hop.action}"
            )
            for hop in finding.also
        ]
        return types.Diagnostic(
            range=self.finding_range(path, finding),
            message=finding.message,
            severity=SEVERITIES[finding.severity],
            code=finding.code,
            code_description=types.CodeDescription(href=documentation_url(finding.code)),
            source=SOURCE,
            related_information=related or None,
            data={"key": finding_key(finding)},
        )

    def diagnostics(self, path: str, findings: Sequence[Finding]) -> list[types.Diagnostic]:
        return [self.diagnostic(path, finding) for finding in findings]


def hop_text(hop: Hop, index: int, last: int) -> str:
    """What happens at a hop, as the text report says it: ``calls self.reset()`` ..."""
    verb = hop.verb or ("resets" if index == last else "calls")
    return f"{hop.function}: {verb} {hop.action}"


def finding_key(finding: Finding) -> list[object]:
    """What identifies a finding in a diagnostic's ``data`` (a code action names it back)."""
    return [finding.code, finding.line, finding.column, finding.message]
