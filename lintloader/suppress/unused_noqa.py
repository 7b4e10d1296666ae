"""LL001: a ``# noqa: LLxxx`` that suppresses nothing, as ruff's RUF100.

On by default, as flake8-noqa's NQA102 (ruff's RUF100 is opt-in): a warning, shown at the
default threshold, for the ``LL`` codes of the rules that ran. A directive is unused for a code
when no finding of that code, on a line the directive covers (its line, or the lines of the
statement it sits in), was suppressed by it. Only ``LL`` codes are judged: a bare ``# noqa`` and
other tools' codes (``E501``) may be for another linter. ``check --fix`` removes the unused
codes (the whole comment when none is left).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lintloader.finding.findings import UNUSED_NOQA_CODE, Finding, Severity
from lintloader.summary.noqa import FILE_LEVEL, lex, noqa_lines

CODE = UNUSED_NOQA_CODE
SEVERITY = Severity.WARNING
PREFIX = "LL"

Reader = Callable[[str], "bytes | None"]


@dataclass(frozen=True, eq=False)
class Directive:
    line: int
    start: int  # 0-based column of the ``#``
    end: int  # 0-based column after the last code
    codes: tuple[str, ...]  # as written, upper-cased


def directives(source: str) -> list[Directive]:
    """Every ``# noqa: CODES`` comment of a file (file-level ones are not judged)."""
    found = []
    for number, line in enumerate(source.splitlines(), start=1):
        comment = lex(line)
        if comment is not None and comment.codes and not comment.file_level:
            found.append(Directive(number, comment.start, comment.end, comment.codes))
    return found


def covered_lines(directive: Directive, source: str, tree: ast.AST | None) -> set[int]:
    """The lines a directive suppresses findings on: its own, and its statement's."""
    text = "\n".join(
        line if number == directive.line else ""
        for number, line in enumerate(source.splitlines(), start=1)
    )
    lines = noqa_lines(text, tree)
    return {line for line in lines if line != FILE_LEVEL}


def unused(
    suppressed: Iterable[Finding],
    paths: dict[str, str],
    read: Reader,
    judged: Callable[[str], bool],
) -> list[Finding]:
    """LL001 findings for the files in ``paths`` (display -> path) holding a directive, for
    the ``LL`` codes ``judged`` accepts (the enabled rules)."""
    by_file: dict[str, set[tuple[int, str]]] = {}
    for finding in suppressed:
        by_file.setdefault(finding.path, set()).add((finding.line, finding.code))
    found = []
    for display, path in sorted(paths.items()):
        data = read(path)
        if data is None:
            continue
        source = data.decode("utf-8", "surrogateescape")
        if "noqa" not in source.lower():
            continue
        seen = by_file.get(display, set())
        trees: list[ast.AST | None] = []  # parsed once, for the first directive judged
        for directive in directives(source):
            codes = [code for code in directive.codes if code.startswith(PREFIX) and judged(code)]
            if not codes:
                continue  # it names no code of an enabled rule (only E501, say): nothing to judge
            if not trees:
                trees.append(_tree(source))
            lines = covered_lines(directive, source, trees[0])
            stale = [code for code in codes if not any((ln, code) in seen for ln in lines)]
            if stale:
                found.append(_finding(display, directive, stale))
    return found


def _tree(source: str) -> ast.AST | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _finding(display: str, directive: Directive, stale: list[str]) -> Finding:
    return Finding(
        code=CODE,
        severity=SEVERITY,
        path=display,
        line=directive.line,
        column=directive.start + 1,
        message=f"unused `noqa` directive (unused: {', '.join(stale)})",
        end_line=directive.line,
        end_column=directive.end + 1,
    )


def without_unused(line: str, stale: Iterable[str]) -> str:
    """``line`` with the unused codes taken out of its ``# noqa: ...`` (the comment gone when
    none is left)."""
    comment = lex(line)
    if comment is None or comment.written is None or comment.file_level:
        return line
    drop = {code.upper() for code in stale}
    kept = [code for code in comment.written if code.upper() not in drop]
    if kept:
        return f"{line[: comment.start]}# noqa: {', '.join(kept)}{line[comment.end :]}"
    return (line[: comment.start].rstrip() + line[comment.end :]).rstrip()


STALE_CODES = re.compile(r"\(unused: (?P<codes>[^)]*)\)")
