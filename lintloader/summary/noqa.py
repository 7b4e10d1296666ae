"""``# noqa`` comments of a file: which lines suppress which codes (all codes: ``None``).

* ``# noqa`` / ``# noqa: LL201`` on a line suppresses findings on that line, and on every
  line of the statement it ends or sits in: a finding on the ``persistent_workers=True`` line of
  a call written over five lines is suppressed by a ``# noqa`` after the closing parenthesis,
  and the other way round (for a compound statement, the lines of its header);
* ``# lintloader: noqa`` / ``# lintloader: noqa: LL201`` on a line of its own suppresses
  findings in the whole file (stored under line :data:`FILE_LEVEL`), as ``# ruff: noqa`` does.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

Codes = frozenset[str] | None  # None: every code
FILE_LEVEL = 0  # the key of a file-wide suppression

_CODES = r"(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?"
_NOQA = re.compile(r"#\s*noqa" + _CODES, re.I)
_FILE_NOQA = re.compile(r"^\s*#\s*lintloader:\s*noqa" + _CODES + r"\s*$", re.I)
_SEPARATOR = re.compile(r"[\s,]+")


class NoqaComment(NamedTuple):
    """One ``# noqa`` comment of a line, as :func:`lex` reads it: the one grammar of the
    suppressions, the LL001 judge, ``--add-noqa`` and the editor's noqa action."""

    start: int  # column of its ``#``
    end: int  # column after its last code (after ``noqa`` when it names none)
    written: tuple[str, ...] | None  # its codes as written; None: none named (every code)
    file_level: bool  # ``# lintloader: noqa`` on a line of its own: the whole file

    @property
    def codes(self) -> tuple[str, ...] | None:
        """Its codes, upper-cased (None: every code)."""
        return None if self.written is None else tuple(c.upper() for c in self.written)


def lex(line: str) -> NoqaComment | None:
    """The ``# noqa`` comment of ``line`` (its first), or None."""
    match = _FILE_NOQA.match(line)
    file_level = match is not None
    match = match or _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    written = tuple(c for c in _SEPARATOR.split(codes) if c) if codes else None
    end = match.end("codes") if codes else match.end()
    start = line.index("#") if file_level else match.start()
    return NoqaComment(start, end, written, file_level)


def noqa_lines(code: str, tree: ast.AST | None = None) -> dict[int, Codes]:
    """Suppressions by line (``FILE_LEVEL`` for the file); with ``tree``, spread over the
    lines of each multi-line statement that holds one."""
    found: dict[int, Codes] = {}
    lowered = code.lower()
    if "noqa" not in lowered:
        return found
    lines = code.splitlines()  # lowering moves no line break: the same lines, lowered
    mentions = [n for n, line in enumerate(lowered.splitlines()) if "noqa" in line]
    for number, line in ((n + 1, lines[n]) for n in mentions):
        comment = lex(line)
        if comment is None:
            continue
        codes = None if comment.codes is None else frozenset(comment.codes)
        if comment.file_level:
            found[FILE_LEVEL] = _merge(found.get(FILE_LEVEL, frozenset()), codes)
        else:
            found[number] = codes
    if tree is not None and any(line != FILE_LEVEL for line in found):
        _spread_over_statements(found, tree)
    return found


def suppresses(noqa: dict[int, Codes], line: int, code: str) -> bool:
    for key in (FILE_LEVEL, line):
        if key in noqa and (noqa[key] is None or code in noqa[key]):  # type: ignore[operator]
            return True
    return False


def _merge(first: Codes, second: Codes) -> Codes:
    return None if first is None or second is None else first | second


def _spread_over_statements(found: dict[int, Codes], tree: ast.AST) -> None:
    for first, last in _statement_spans(tree, sorted(found)):
        lines = [line for line in range(first, last + 1) if line in found]
        if not lines:
            continue
        merged: Codes = frozenset()
        for line in lines:
            merged = _merge(merged, found[line])
        for line in range(first, last + 1):
            found[line] = _merge(found.get(line, frozenset()), merged)


def _statement_spans(tree: ast.AST, lines: list[int]) -> list[tuple[int, int]]:
    """(first, last) line of every statement over several lines that may hold one of
    ``lines`` (sorted); a compound statement's span is its header (up to the line before its
    body)."""
    spans = []
    for node in _statements(tree, lines):
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(first, body[0].lineno - 1)
        else:
            last = node.end_lineno or node.lineno
        if last > first:
            spans.append((first, last))
    return spans


_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)  # what a statement may sit in


def _statements(tree: ast.AST, lines: list[int]) -> Iterator[ast.stmt]:
    """The statements of ``tree`` in ``ast.walk``'s order, without a visit of the expressions
    (statements sit only in statement lists, of statements, handlers and cases), and without
    entering a statement or handler none of whose lines is one of ``lines`` (sorted): no span
    inside it can hold one (statements share lines only through ``;``, and a simple statement
    holds no other)."""
    pending = deque([tree])
    while pending:
        node = pending.popleft()
        if isinstance(node, ast.stmt):
            yield node
        if not _holds_one(node, lines):
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                pending.extend(item for item in value if isinstance(item, _HOLDERS))


def _holds_one(node: ast.AST, lines: list[int]) -> bool:
    """Whether one of ``lines`` (sorted) falls within ``node``'s lines (a node without lines,
    the module or a ``case``: True). What sits in a statement sits within its lines."""
    end = getattr(node, "end_lineno", None)
    if end is None:
        return True
    index = bisect_left(lines, node.lineno)  # type: ignore[attr-defined]
    return index < len(lines) and lines[index] <= end
