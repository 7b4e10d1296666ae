"""Findings as LSP diagnostics: code, severity, message, range, a link to the rule's page and
every hop of the chain as related information, so that an editor can walk along it.

lintloader's lines and columns are 1-based and count characters (code points), its end column
is exclusive; LSP's are 0-based and count the code units the session agreed on (UTF-16 unless
the client offered another), so each column is converted on its line's text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec

from lintloader import DOCS_URL
from lintloader.findings import PARSE_ERROR_CODE, Finding, Hop, Severity

SOURCE = "lintloader"
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
PARSE_ERROR_PAGE = f"{DOCS_URL}/guarantees.md#a-bad-file-never-stops-a-run"
Lines = Callable[[str], Sequence[str]]  # absolute path -> its lines, as the editor has them
PathOf = Callable[[str], str]  # a finding's display path -> its absolute path


def rule_page(code: str) -> str:
    return PARSE_ERROR_PAGE if code == PARSE_ERROR_CODE else f"{DOCS_URL}/rules/{code}.md"


def uri_of(path: str) -> str:
    return Path(path).as_uri()


class Converter:
    """Turns findings into diagnostics for one session's position encoding."""

    def __init__(self, codec: PositionCodec, lines: Lines, path_of: PathOf) -> None:
        self.codec = codec
        self.lines = lines
        self.path_of = path_of

    def position(self, path: str, line: int, column: int) -> types.Position:
        """A 1-based line and character column as an LSP position."""
        point = types.Position(line=max(line - 1, 0), character=max(column - 1, 0))
        text = self.lines(path)
        if point.line >= len(text):
            return point
        return self.codec.position_to_client_units(text, point)

    def finding_range(self, path: str, finding: Finding) -> types.Range:
        start = self.position(path, finding.line, finding.column)
        end_line = finding.end_line or finding.line
        end_column = finding.end_column or finding.column
        if (end_line, end_column) <= (finding.line, finding.column):
            end_line, end_column = finding.line, finding.column + 1
        return types.Range(start=start, end=self.position(path, end_line, end_column))

    def hop_location(self, hop: Hop) -> types.Location:
        """A hop's place, spanning its action where it is on one line."""
        path = self.path_of(hop.path)
        first_line = hop.action.splitlines()[0] if hop.action else ""
        start = self.position(path, hop.line, hop.column)
        end = self.position(path, hop.line, hop.column + max(len(first_line), 1))
        return types.Location(uri=uri_of(path), range=types.Range(start=start, end=end))

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
            code_description=types.CodeDescription(href=rule_page(finding.code)),
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
