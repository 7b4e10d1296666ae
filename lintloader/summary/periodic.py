"""Tests that let a branch run only every N-th pass of a loop (``if step % 500 == 0:``).

A call in such a branch runs once every N passes, not on every pass: the summary keeps the
test's text so that a rule can say how often the call runs. ``'%s' % name`` formats a string
and is no such test.
"""

from __future__ import annotations

import ast

from lintloader.summary.walk import walk_order


def is_periodic_test(test: ast.expr) -> bool:
    """``test`` compares a remainder (``step % n == 0``, ``not (i + 1) % k``)."""
    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _number_like(node.left)
        for node in walk_order(test)
    )


def remainder_test(test: ast.expr) -> ast.expr | None:
    """The comparison of a remainder inside ``test`` (``global_step % k == 0`` of
    ``args.evaluate and (k > 0 and global_step % k == 0)``), or None."""
    for node in walk_order(test):
        if isinstance(node, ast.Compare) and is_periodic_test(node):
            return node
    return None


def _number_like(node: ast.expr) -> bool:
    """Not a string being formatted (``'%s2%s' % (a, b)``)."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (str, bytes))
    return not isinstance(node, ast.JoinedStr)


def never_holds(test: ast.expr) -> bool:
    """A remainder test that no value passes: ``n % 30 == 220`` (a remainder of a positive
    modulus is below it); the summary keeps the answer as ``Condition.dead``."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = (test.left, test.comparators[0])
    for remainder, other in (sides, sides[::-1]):
        if not isinstance(remainder, ast.BinOp) or not _is_remainder(remainder):
            continue
        modulus, value = _int(remainder.right), _int(other)
        if modulus is not None and modulus > 0 and value is not None:
            return value >= modulus or value < 0
    return False


def _is_remainder(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Mod) and _number_like(node.left)


def _int(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
