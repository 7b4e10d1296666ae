"""Reading a file the running ``ast`` rejects: libcst parses it, it is lowered and restored.

Imported only after ``ast.parse`` failed, so a run whose files all parse never imports libcst
here. The result is a :class:`ParsedSource` like any other: the original text and lines (the
summary cuts node text from those) with the tree a new enough interpreter would build.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst

from lintloader.summary.grammar import cannot_lower, too_new_for_libcst
from lintloader.summary.lowering import CannotLower, lower
from lintloader.summary.restore import RestoreError, restore
from lintloader.summary.source_text import ParsedSource


def parse_newer(text: str, error: SyntaxError) -> ParsedSource:
    """``text``, which ``ast`` rejected with ``error``, read through libcst. Raises
    ``error`` when libcst cannot read it either (a mistake in the file), a SyntaxError the
    lowered text still has (``f() = 1`` in a 3.12 file), or Unreadable (newer than
    lintloader reads, or a construct the lowering does not handle)."""
    try:
        return parse_lowered(text)
    except cst.ParserSyntaxError as exc:
        lines = (error.lineno or 0, exc.raw_line)
        raise too_new_for_libcst(text, lines) or error from None


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
