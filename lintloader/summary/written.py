"""A value as the summary writes it: the one home for turning an expression of the tree into
the text a summary keeps for it, the same whichever Python made the summary."""

from __future__ import annotations

import ast
import sys
from typing import Any

from lintloader.summary.helpers import dotted


def _unparser() -> Any:
    """``ast.unparse``'s own writer (``ast._Unparser`` on 3.10-3.13), subclassed below so that an
    f-string is written as a call while the text is made, with no copy of the tree and no
    search of it beforehand. A Python that loads the writer on its first use (in a module of
    its own) has it once ``ast.unparse`` ran."""
    found = getattr(ast, "_Unparser", None)
    if found is None:
        ast.unparse(ast.Name("x", ast.Load()))
        found = getattr(ast, "_Unparser", None)
        found = found or getattr(sys.modules.get("_ast_unparse"), "Unparser", None)
    if found is None:
        raise ImportError("this Python's ast.unparse has no writer class to extend")
    return found


_Unparser: Any = _unparser()


def written(value: ast.expr) -> str:
    """``value`` as ``ast.unparse`` writes it (a plain name or attribute chain without it),
    an f-string as a call of ``f`` on the values it formats (see :class:`_Writer`)."""
    name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if name:
        return ".".join(name)
    text: str = _Writer().visit(value)
    return text


class _Writer(_Unparser):  # type: ignore[misc]
    """``ast.unparse`` with ``f"{a!r:>{w}} b"`` written as ``f(a, w)``: ``ast.unparse`` writes
    an f-string one way on Python 3.11 and another on 3.12+ (PEP 701's quotes), and a summary
    must not depend on the interpreter that made it; a call keeps every name the f-string
    reads (nested f-strings in those values are calls too)."""

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        formatted = [n.value for n in ast.walk(node) if isinstance(n, ast.FormattedValue)]
        self.traverse(ast.Call(ast.Name("f", ast.Load()), formatted, []))
