"""A value as the summary writes it: the one home for turning an expression of the tree into
the text a summary keeps for it, the same whichever Python made the summary."""

from __future__ import annotations

import ast
import copy

from lintloader.summary.helpers import dotted
from lintloader.summary.walk import descendants


def written(value: ast.expr) -> str:
    """``value`` as ``ast.unparse`` writes it (a plain name or attribute chain without it),
    an f-string as a call of ``f`` on the values it formats (see :class:`_FStringsAsCalls`)."""
    name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if name:
        return ".".join(name)
    if isinstance(value, ast.JoinedStr) or any(
        isinstance(node, ast.JoinedStr) for node in descendants(value)
    ):
        value = _FStringsAsCalls().visit(copy.deepcopy(value))
    return ast.unparse(value)


class _FStringsAsCalls(ast.NodeTransformer):
    """``f"{a!r:>{w}} b"`` as ``f(a, w)``: ``ast.unparse`` writes an f-string one way on
    Python 3.11 and another on 3.12+ (PEP 701's quotes), and a summary must not depend on the
    interpreter that made it; a call keeps every name the f-string reads."""

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        formatted = [n for n in ast.walk(node) if isinstance(n, ast.FormattedValue)]
        values = [self.visit(f.value) for f in formatted]
        return ast.Call(ast.Name("f", ast.Load()), values, [])
