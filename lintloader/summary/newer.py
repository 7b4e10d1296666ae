"""Reading a file the running ``ast`` rejects: libcst parses it, it is lowered and restored.

Imported only after ``ast.parse`` failed, so a run whose files all parse never imports libcst
here. The result is a :class:`ParsedSource` like any other: the original text and lines (the
summary cuts node text from those) with the tree a new enough interpreter would build.
"""

from __future__ import annotations

import ast
import re
import warnings

import libcst as cst

from lintloader.summary.grammar import (
    NewerGrammar,
    Unreadable,
    cannot_lower,
    stopped_earlier,
    too_new_for_libcst,
)
from lintloader.summary.limits import MAX_NESTING
from lintloader.summary.lowering import CannotLower, lower, parser_config
from lintloader.summary.restore import RestoreError, restore
from lintloader.summary.source_text import ParsedSource


def parse_newer(text: str, error: SyntaxError) -> ParsedSource:
    """``text``, which ``ast`` rejected with ``error``, read through libcst. Raises
    ``error`` when libcst cannot read it either (a mistake in the file; when libcst read past
    the place ``ast`` stopped at, an Unreadable at libcst's place instead), a SyntaxError the
    lowered text still has, or Unreadable (newer than lintloader reads, or a construct the
    lowering does not handle)."""
    if longest_statement(text) > MAX_NESTING:
        raise error  # libcst takes minutes on such chains; the ast path refuses them too
    try:
        return parse_lowered(text)
    except cst.ParserSyntaxError as exc:
        lines = (error.lineno or 0, exc.raw_line)
        hint: NewerGrammar | Unreadable | None = too_new_for_libcst(text, lines)
        if hint is None and exc.raw_line > (error.lineno or 0) and _valid_line(text, error):
            hint = stopped_earlier(error, exc.editor_line, exc.editor_column)
        raise hint or error from None
    except (IndexError, KeyError, ValueError, AssertionError) as exc:  # a bug: the run goes on
        raise cannot_lower(f"internal error {type(exc).__name__}: {exc}") from None


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


_OPERATORS = frozenset("+-*/%@&|^<>.([{~")
_WORD = re.compile(r"\w+")
_KEYWORD_OPERATORS = frozenset({"not", "and", "or", "if", "lambda", "await"})


def longest_statement(text: str) -> int:
    """The most operators and opening brackets in one statement, string literals and comments
    skipped (roughly: a nested f-string may end early). libcst's parser slows down steeply on
    long operator chains (2,000 ``+`` take seconds, 20,000 minutes); a chain longer than
    MAX_NESTING nests too deep for the summary anyway."""
    longest = count = depth = index = 0
    size = len(text)
    while index < size:
        char = text[index]
        if char in "\"'":
            index = _string_end(text, index)
            continue
        if char == "#":
            index = text.find("\n", index)
            index = size if index < 0 else index
            continue
        if char.isidentifier():
            end = _WORD.match(text, index).end()  # type: ignore[union-attr]
            count += text[index:end] in _KEYWORD_OPERATORS
            index = end
            continue
        if char in _OPERATORS:
            count += 1
            depth += char in "([{"
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char in "\r\n;" and depth == 0 and not text.endswith("\\", 0, index):
            longest, count = max(longest, count), 0
        index += 1
    return max(longest, count)


def _string_end(text: str, start: int) -> int:
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    index = start + len(quote)
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text.startswith(quote, index):
            return index + len(quote)
        elif len(quote) == 1 and text[index] in "\r\n":
            return index
        else:
            index += 1
    return index
