"""``check --add-noqa``: a ``# noqa: CODE`` comment for every finding, so that a team can switch
the hook on for an existing codebase today and fix the findings one by one.

The comment goes at the end of the statement that holds the finding's line (its last line; for
a compound statement, the end of its header), where ``# noqa`` covers every line of the
statement (see :mod:`lintloader.summary.noqa`). A statement that already has a ``# noqa``
keeps it, extended by the new codes; another comment is kept and the ``# noqa`` follows it.
The edit is made with libcst, so nothing else in the file changes.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from lintloader.fixers.base import FixError
from lintloader.fixers.edit.parsing import parse_module
from lintloader.summary.noqa import lex, noqa_lines


def add_noqa(source: bytes, codes_by_line: Mapping[int, set[str]]) -> tuple[bytes, int]:
    """``source`` with the comments added, and how many statements got one."""
    wrapper = MetadataWrapper(parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    targets = _targets(wrapper.module, positions, codes_by_line)
    if not targets:
        return source, 0
    module = wrapper.module.visit(_Commenter(targets))
    return module.bytes, len(targets)


def _targets(
    module: cst.Module,
    positions: Mapping[cst.CSTNode, CodeRange],
    codes_by_line: Mapping[int, set[str]],
) -> dict[cst.TrailingWhitespace, set[str]]:
    """The trailing whitespace (where a comment goes) of the innermost statement around each
    finding line, with the codes to put there."""
    spans: list[tuple[int, int, cst.TrailingWhitespace]] = []
    for node, position in positions.items():
        trailing = _trailing(node)
        if trailing is not None:
            start, end = position.start.line, position.end.line
            if isinstance(node, cst.BaseCompoundStatement):
                end = _header_end(node, positions, start)
            spans.append((start, end, trailing))
    targets: dict[cst.TrailingWhitespace, set[str]] = {}
    for line, codes in codes_by_line.items():
        around = [s for s in spans if s[0] <= line <= s[1]]
        if around:
            _, _, trailing = min(around, key=lambda s: s[1] - s[0])
            targets.setdefault(trailing, set()).update(codes)
    return targets


def _header_end(node: cst.CSTNode, positions: Mapping[cst.CSTNode, CodeRange], start: int) -> int:
    """The last line of a compound statement's header: the line before its first statement."""
    statements = getattr(getattr(node, "body", None), "body", ())
    if statements and statements[0] in positions:
        first = positions[statements[0]].start.line
        return max(start, first - 1)
    return start


def _trailing(node: cst.CSTNode) -> cst.TrailingWhitespace | None:
    if isinstance(node, cst.SimpleStatementLine):
        return node.trailing_whitespace
    body = getattr(node, "body", None)
    if isinstance(node, cst.BaseCompoundStatement) and isinstance(body, cst.IndentedBlock):
        return body.header
    return None


class _Commenter(cst.CSTTransformer):
    def __init__(self, targets: dict[cst.TrailingWhitespace, set[str]]) -> None:
        self.targets = targets

    def leave_TrailingWhitespace(
        self, original: cst.TrailingWhitespace, updated: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        codes = self.targets.get(original)
        if codes is None:
            return updated
        comment = updated.comment.value if updated.comment else ""
        return updated.with_changes(
            whitespace=updated.whitespace if comment else cst.SimpleWhitespace("  "),
            comment=cst.Comment(_with_codes(comment, codes)),
        )


def _with_codes(comment: str, codes: set[str]) -> str:
    noqa = lex(comment)
    if noqa is None or noqa.file_level:
        added = f"# noqa: {', '.join(sorted(codes))}"
        return f"{comment}  {added}" if comment else added
    if noqa.codes is None:
        return comment  # a bare `# noqa` suppresses everything already
    merged = f"# noqa: {', '.join(sorted({*noqa.codes, *codes}))}"
    return comment[: noqa.start] + merged + comment[noqa.end :]


def still_suppressed(source: bytes, codes_by_line: Mapping[int, set[str]]) -> bool:
    """Whether every (line, code) is suppressed in ``source`` (a check of the edit itself),
    decoded as Python reads it (a BOM, a coding cookie)."""
    import ast

    from lintloader.summary.noqa import suppresses
    from lintloader.summary.source_text import decode_source

    text = decode_source(source)
    noqa = noqa_lines(text, ast.parse(text))
    return all(suppresses(noqa, line, c) for line, codes in codes_by_line.items() for c in codes)


def file_with_noqa(
    path: str, data: bytes, codes_by_line: Mapping[int, set[str]]
) -> tuple[bytes, int]:
    """The new bytes of the file at ``path`` (now ``data``) and how many comments were added.
    A notebook gets the comments in its cells' sources (the cell mapping ``fix`` uses), and
    the written notebook must read back with every finding suppressed. Raises
    :class:`CannotComment` with the reason, never anything else the file's bytes can cause."""
    from lintloader.scan.read.notebooks import is_notebook, notebook_to_python, python_to_notebook

    try:
        if not is_notebook(path):
            edited, count = add_noqa(data, codes_by_line)
            checked = edited
        else:
            python = notebook_to_python(data)
            commented, count = add_noqa(python, codes_by_line)
            edited = python_to_notebook(data, commented) if count else data
            checked = notebook_to_python(edited)
        if not still_suppressed(checked, codes_by_line):
            raise CannotComment("a finding's line is not in a statement that can carry a comment")
    except CannotComment:
        raise
    except (
        cst.ParserSyntaxError,
        SyntaxError,
        ValueError,
        OSError,
        RecursionError,
        FixError,
    ) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CannotComment(f"no noqa comment added: {first}") from None
    return edited, count


class CannotComment(Exception):
    """A file ``--add-noqa`` leaves alone, with the reason (one line; the run goes on)."""
