"""Tests that let a branch run only every N-th pass of a loop (``if step % 500 == 0:``).

A call in such a branch runs once every N passes, not on every pass: the summary keeps the
test's text so that a rule can say how often the call runs. ``'%s' % name`` formats a string
and is no such test.
"""

from __future__ import annotations

import ast


def is_periodic_test(test: ast.expr) -> bool:
    """``test`` compares a remainder (``step % n == 0``, ``not (i + 1) % k``)."""
    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _number_like(node.left)
        for node in ast.walk(test)
    )


def _number_like(node: ast.expr) -> bool:
    """Not a string being formatted (``'%s2%s' % (a, b)``)."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (str, bytes))
    return not isinstance(node, ast.JoinedStr)
