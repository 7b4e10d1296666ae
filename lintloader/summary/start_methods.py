"""What a ``multiprocessing_context`` argument names on each of its branches, read from the tree
while the summarizer walks it (``summary/dataloaders/visitor.py``), so that the cost model
(``lintloader/domain/cost.py``) prices a loader's start method without parsing its text again.

``"spawn"`` -> ``(("spawn", None),)``; ``"spawn" if flag else None`` -> ``(("spawn", "flag"),
(None, "not flag"))``. Only a string, or ``get_context`` of one, names a method: a config value
(``cfg.spawn``), a variable or ``None`` is the default (None).
"""

from __future__ import annotations

import ast

from lintloader.domain.cost import METHODS, Branch
from lintloader.summary.written import written


def context_branches(value: ast.expr) -> tuple[Branch, ...]:
    """The method ``value`` names on each branch, with the condition of that branch."""
    return tuple(_branches(value, None))


def _branches(node: ast.expr, condition: str | None) -> list[Branch]:
    if isinstance(node, ast.IfExp):
        test = written(node.test)
        return _branches(node.body, _both(condition, test)) + _branches(
            node.orelse, _both(condition, f"not {_grouped(node.test)}")
        )
    return [(_named(node), condition)]


def _named(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value in METHODS else None
    if isinstance(node, ast.Call) and _callee(node.func) == "get_context":
        argument = node.args[0] if node.args else None
        argument = next((k.value for k in node.keywords if k.arg == "method"), argument)
        return _named(argument) if argument is not None else None
    return None


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _grouped(test: ast.expr) -> str:
    text = written(test)
    return f"({text})" if isinstance(test, (ast.BoolOp, ast.Compare, ast.IfExp)) else text


def _both(first: str | None, second: str) -> str:
    return second if first is None else f"{first} and {second}"
