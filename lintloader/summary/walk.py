"""The walk both summarizers share: ``ast.NodeVisitor`` without the leaves, with a depth guard.

Names, constants, load/store contexts and operators hold nothing a summary records, and they
are most of a tree's nodes, so they are never dispatched. Depth is counted as libcst counts it
(``a and b and c`` is one level per operator): a file nested deeper than
:data:`~lintloader.limits.MAX_NESTING` raises :class:`TooDeep`, becomes an LL000 finding and is
never handed to the fixers' libcst, which could crash on it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

from lintloader.limits import MAX_NESTING

_LEAVES = (
    ast.Name,
    ast.Constant,
    ast.expr_context,
    ast.operator,
    ast.boolop,
    ast.unaryop,
    ast.cmpop,
)


# Fields that never hold a node the walk visits: names, flags, and the leaves' fields
# (operators, contexts); looked past without a getattr.
_SCALARS = frozenset(
    {"ctx", "op", "name", "id", "attr", "arg", "asname", "module", "level", "type_comment"}
    | {"kind", "conversion", "is_async", "simple"}
)


class TooDeep(Exception):
    """The tree nests deeper than MAX_NESTING."""


class Walker(ast.NodeVisitor):
    """Dispatches ``visit_<Class>`` like ``ast.NodeVisitor``; children in field order."""

    def __init__(self) -> None:
        self.depth = 0
        self.scope_nodes: list[ast.AST] = []  # the defs and classes around the node visited
        self._methods: dict[type, Callable[[Any], None]] = {}  # per node class: its visit_
        self._fields: dict[type, tuple[str, ...]] = {}  # per node class: fields that may hold one

    @property
    def scope_node(self) -> ast.AST | None:
        """The innermost def or class around the node visited (None: the module)."""
        return self.scope_nodes[-1] if self.scope_nodes else None

    def visit_body(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        """Visit a def's or a class's body, with ``node`` the innermost scope."""
        self.scope_nodes.append(node)
        self.visit_all(node.body)
        self.scope_nodes.pop()

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        levels = len(node.values) if kind is ast.BoolOp else 1  # type: ignore[attr-defined]
        self.depth += levels
        if self.depth > MAX_NESTING:
            raise TooDeep
        method = self._methods.get(kind)
        if method is None:
            method = getattr(self, "visit_" + kind.__name__, self.generic_visit)
            self._methods[kind] = method
        method(node)
        self.depth -= levels

    def generic_visit(self, node: ast.AST) -> None:
        kind = type(node)
        fields = self._fields.get(kind)
        if fields is None:
            fields = self._fields[kind] = tuple(f for f in kind._fields if f not in _SCALARS)
        for field in fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, _LEAVES):
                        self.visit(item)
            elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
                self.visit(value)

    def visit_all(self, nodes: Sequence[ast.AST]) -> None:
        for node in nodes:
            self.visit(node)

    def visit_signature(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """What a ``def`` evaluates where it stands: decorators, defaults, annotations."""
        self.visit_all(node.decorator_list)
        self.visit(node.args)
        if node.returns:
            self.visit(node.returns)
