"""Reading a file the running ``ast`` rejects: libcst parses it, it is lowered and restored.

Imported only after ``ast.parse`` failed, so a run whose files all parse never imports libcst
here. The result is a :class:`ParsedSource` like any other: the original text and lines (the
summary cuts node text from those) with the tree a new enough interpreter would build.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst

from lintloader.summary.grammar import cannot_lower, stopped_earlier, too_new_for_libcst
from lintloader.summary.lowering import CannotLower, lower, parser_config
from lintloader.summary.restore import RestoreError, restore
from lintloader.summary.source_text import ParsedSource


def parse_newer(text: str, error: SyntaxError) -> ParsedSource:
    """``text``, which ``ast`` rejected with ``error``, read through libcst. Raises
    ``error`` when libcst cannot read it either (a mistake in the file; when libcst read past
    the place ``ast`` stopped at, an Unreadable at libcst's place instead), a SyntaxError the
    lowered text still has, or Unreadable (newer than lintloader reads, or a construct the
    lowering does not handle)."""
    try:
        return parse_lowered(text)
    except cst.ParserSyntaxError as exc:
        lines = (error.lineno or 0, exc.raw_line)
        hint = too_new_for_libcst(text, lines)
        if hint is None and exc.raw_line > (error.lineno or 0) and _valid_line(text, error):
            hint = stopped_earlier(error, exc.editor_line, exc.editor_column)
        raise hint or error from None


def _valid_line(text: str, error: SyntaxError) -> bool:
    """Whether the line ``ast`` stopped at is, on its own, a statement libcst reads (a
    ``type`` statement, a ``def f[T]():`` header): then ``ast`` stopped on newer syntax."""
    lines = text.splitlines()
    if not 0 < (error.lineno or 0) <= len(lines):
        return False
    statement = lines[error.lineno - 1].strip()  # type: ignore[operator]
    if statement.endswith(":"):
        statement += " pass"
    try:
        cst.parse_statement(statement + "\n", parser_config())
    except cst.ParserSyntaxError:
        return False
    return True


def parse_lowered(text: str) -> ParsedSource:
    """``text`` read through libcst, lowered and restored, whether or not ``ast`` reads it
    as it is (the tests compare the two). Raises ``cst.ParserSyntaxError``, SyntaxError and
    Unreadable."""
    try:
        lowered = lower(text)
    except CannotLower as exc:
        raise cannot_lower(str(exc)) from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        tree = ast.parse(lowered.text)
    parsed = ParsedSource.of(text, tree)
    try:
        parsed.tree = restore(tree, lowered, parsed.lines)
    except RestoreError as exc:
        raise cannot_lower(str(exc)) from None
    return parsed
