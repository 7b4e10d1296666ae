"""A value as the summary writes it: the one home for turning an expression of the tree into
the text a summary keeps for it, the same whichever Python made the summary."""

from __future__ import annotations

import ast
import copy
import sys
from collections.abc import Callable
from typing import Any

from lintloader.summary.helpers import dotted

# constants ``ast.unparse`` writes as their ``repr`` outside an f-string (Python 3.10-3.13)
_AS_REPR = frozenset({str, bytes, int, bool, type(None)})


def written(value: ast.expr) -> str:
    """``value`` as ``ast.unparse`` writes it (a plain name or attribute chain without it),
    an f-string as a call of ``f`` on the values it formats."""
    if isinstance(value, ast.Constant):
        if value.kind is None and value.value.__class__ in _AS_REPR:
            return repr(value.value)
        return _WRITE(value)
    name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if name:
        return ".".join(name)
    return _WRITE(value)


def written_by_copy(value: ast.expr) -> str:
    """The same text made the slower way, for a Python whose ``ast`` has no writer class to
    extend: a copy of the value with its f-strings replaced by calls, then ``ast.unparse``."""
    if any(isinstance(node, ast.JoinedStr) for node in ast.walk(value)):
        value = _FStringsAsCalls().visit(copy.deepcopy(value))
    return ast.unparse(value)


def _unparser() -> Any | None:
    """``ast.unparse``'s own writer (``ast._Unparser`` on 3.10-3.13), or None. A Python that
    loads the writer on its first use (in a module of its own) has it once ``ast.unparse`` ran."""
    found = getattr(ast, "_Unparser", None)
    if found is None:
        ast.unparse(ast.Name("x", ast.Load()))
        found = getattr(ast, "_Unparser", None)
        found = found or getattr(sys.modules.get("_ast_unparse"), "Unparser", None)
    return found if isinstance(found, type) else None


def _one_pass_writer(base: Any) -> Callable[[ast.expr], str]:
    """``ast.unparse`` with ``f"{a!r:>{w}} b"`` written as ``f(a, w)`` while the text is made:
    no copy of the tree and no search of it beforehand. ``ast.unparse`` writes an f-string one
    way on Python 3.11 and another on 3.12+ (PEP 701's quotes), and a summary must not depend on
    the interpreter that made it; a call keeps every name the f-string reads (nested f-strings in
    those values are calls too)."""

    class Writer(base):  # type: ignore[misc]
        def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
            formatted = [n.value for n in ast.walk(node) if isinstance(n, ast.FormattedValue)]
            self.traverse(ast.Call(ast.Name("f", ast.Load()), formatted, []))

    def write(value: ast.expr) -> str:
        text: str = Writer().visit(value)
        return text

    return write


class _FStringsAsCalls(ast.NodeTransformer):
    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        formatted = [n for n in ast.walk(node) if isinstance(n, ast.FormattedValue)]
        values = [self.visit(f.value) for f in formatted]
        return ast.Call(ast.Name("f", ast.Load()), values, [])


_BASE = _unparser()
_WRITE: Callable[[ast.expr], str] = _one_pass_writer(_BASE) if _BASE else written_by_copy
