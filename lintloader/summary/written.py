"""A value as the summary writes it: the one home for turning an expression of the tree into
the text a summary keeps for it, the same whichever Python made the summary."""

from __future__ import annotations

import ast
import copy
import math
import sys
from collections.abc import Callable
from typing import Any

from lintloader.summary.helpers import dotted
from lintloader.summary.walk import walk_order

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
    parts: list[str] = []
    return "".join(parts) if _plain(value, parts.append) else _WRITE(value)


# what ``ast.unparse`` writes without parentheses before ``.``, ``(`` and ``[``
_ATOMS = frozenset({ast.Name, ast.Attribute, ast.Call, ast.Subscript})


def _plain(node: Any, write: Callable[[str], None]) -> bool:
    """Write ``node`` as ``ast.unparse`` does (Python 3.10-3.13), when it is made of names,
    attributes, calls, subscripts and constants written as their ``repr``: most arguments
    (``f(x, k=y[0])``), written here without the writer's object, its precedence table and a
    method call per node. False (part written) for anything else: the caller writes it all
    with ``ast.unparse``'s own writer."""
    kind = node.__class__
    if kind is ast.Name:
        write(node.id)
        return True
    if kind is ast.Constant:
        value = node.value
        if node.kind is not None or not (
            value.__class__ in _AS_REPR or (value.__class__ is float and math.isfinite(value))
        ):
            return False  # ``u""``, ``...``, ``inf``, complex numbers
        write(repr(value))
        return True
    if kind is ast.Attribute:
        # a string's method (``", ".join``) too; not an int's (``1 .real``, with a space)
        inner = node.value
        if not (inner.__class__ in _ATOMS or _is_str(inner)) or not _plain(inner, write):
            return False
        write(".")
        write(node.attr)
        return True
    if kind is ast.Call:
        return _plain_call(node, write)
    if kind is ast.Tuple or kind is ast.List:  # a tuple in parentheses: not an index here
        write("(" if kind is ast.Tuple else "[")
        if not _plain_items(node.elts, write, starred=True):
            return False
        write(("," if len(node.elts) == 1 else "") + ")" if kind is ast.Tuple else "]")
        return True
    if kind is ast.Dict:
        write("{")
        for index, (key, value) in enumerate(zip(node.keys, node.values, strict=True)):
            if index:
                write(", ")
            if key is None:
                write("**")
            elif not _plain(key, write):
                return False
            else:
                write(": ")
            if not _plain(value, write):
                return False
        write("}")
        return True
    if kind is ast.UnaryOp:  # ``-1``: a sign on a number, no parentheses, no space
        sign = _SIGNS.get(node.op.__class__)
        if sign is None or node.operand.__class__ is not ast.Constant:
            return False
        write(sign)
        return _plain(node.operand, write)
    if kind is ast.BinOp:  # ``a + b``: never in parentheses where these are written
        operator = _OPERATORS[node.op.__class__]
        left, right = node.left, node.right
        if left.__class__ in _OPERATIONS or right.__class__ in _OPERATIONS:
            return False  # an operand that may need parentheses: the writer decides
        if not _plain(left, write):
            return False
        write(operator)
        return _plain(right, write)
    if kind is ast.Slice:  # ``a[1:n]``, ``a[::2]``
        return _plain_slice(node, write)
    if kind is ast.JoinedStr:  # as the writer below: a call of ``f`` on what it formats
        write("f(")
        if not _plain_items(formatted_values(node), write, starred=False):
            return False
        write(")")
        return True
    if kind is ast.Subscript:
        if node.value.__class__ not in _ATOMS or not _plain(node.value, write):
            return False
        write("[")
        index = node.slice
        if index.__class__ is ast.Tuple and index.elts:  # ``a[i, j]``, ``a[i,]``
            if not _plain_items(index.elts, write, starred=False):
                return False
            if len(index.elts) == 1:
                write(",")
        elif not _plain(index, write):
            return False
        write("]")
        return True
    return False


_SIGNS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_OPERATORS = {
    ast.Add: " + ", ast.Sub: " - ", ast.Mult: " * ", ast.MatMult: " @ ", ast.Div: " / ",
    ast.Mod: " % ", ast.LShift: " << ", ast.RShift: " >> ", ast.BitOr: " | ",
    ast.BitXor: " ^ ", ast.BitAnd: " & ", ast.FloorDiv: " // ", ast.Pow: " ** ",
}  # fmt: skip
_OPERATIONS = frozenset({ast.BinOp, ast.UnaryOp})


def _plain_slice(node: ast.Slice, write: Callable[[str], None]) -> bool:
    if node.lower is not None and not _plain(node.lower, write):
        return False
    write(":")
    if node.upper is not None and not _plain(node.upper, write):
        return False
    if node.step is not None:
        write(":")
        return _plain(node.step, write)
    return True


def _plain_call(node: ast.Call, write: Callable[[str], None]) -> bool:
    if node.func.__class__ not in _ATOMS or not _plain(node.func, write):
        return False
    write("(")
    if not _plain_items(node.args, write, starred=True):
        return False
    for index, keyword in enumerate(node.keywords):
        if index or node.args:
            write(", ")
        write("**" if keyword.arg is None else keyword.arg + "=")
        if not _plain(keyword.value, write):
            return False
    write(")")
    return True


def _plain_items(items: list[ast.expr], write: Callable[[str], None], starred: bool) -> bool:
    """``items`` separated by ``, ``; ``starred``: ``*args`` among them (a call's)."""
    for index, item in enumerate(items):
        if index:
            write(", ")
        if item.__class__ is ast.Starred:
            if not starred:
                return False
            write("*")
            item = item.value
        if not _plain(item, write):
            return False
    return True


def formatted_values(node: ast.JoinedStr) -> list[ast.expr]:
    """What an f-string formats, nested ones' (a format spec's) included, in ``ast.walk``'s
    order: the arguments of the call ``f(...)`` every writer here puts in its place."""
    return [n.value for n in walk_order(node) if isinstance(n, ast.FormattedValue)]


def _is_str(node: ast.expr) -> bool:
    return node.__class__ is ast.Constant and node.value.__class__ is str


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
            self.traverse(ast.Call(ast.Name("f", ast.Load()), formatted_values(node), []))

    def write(value: ast.expr) -> str:
        text: str = Writer().visit(value)
        return text

    return write


class _FStringsAsCalls(ast.NodeTransformer):
    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        values = [self.visit(value) for value in formatted_values(node)]
        return ast.Call(ast.Name("f", ast.Load()), values, [])


_BASE = _unparser()
_WRITE: Callable[[ast.expr], str] = _one_pass_writer(_BASE) if _BASE else written_by_copy
