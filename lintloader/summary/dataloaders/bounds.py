"""Bounds and zero tests: what a worker count is proven to be at least (``max(1, n)``,
``n or os.cpu_count()``, ``if not n: n = 4``), and the tests that check a count for 0 or
for more than 0."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from lintloader.domain.torch_api import CPU_COUNT_CALLS as _CPU_COUNTS
from lintloader.summary.helpers import dotted


def literal(node: ast.expr) -> tuple[bool, int | bool | None]:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, int)):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return True, -node.operand.value
    return False, None


def lower_bound(node: ast.expr) -> int | None:
    """A proven minimum: a literal, ``max(1, n)``, ``os.cpu_count()`` (at least 1), ``min`` of
    bounded values, ``len(os.sched_getaffinity(0))``."""
    is_literal, value = literal(node)
    if is_literal:
        return int(value) if isinstance(value, int) else None
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return lower_bound(node.values[-1])  # `n or os.cpu_count()`: the last when all are 0
    if not isinstance(node, ast.Call):
        return None
    func = dotted(node.func)
    if func in _CPU_COUNTS:
        return 1
    arguments = [a for a in node.args if not isinstance(a, ast.Starred)]
    if func == ("len",) and arguments and isinstance(arguments[0], ast.Call):
        inner = dotted(arguments[0].func)
        return 1 if inner and inner[-1] == "sched_getaffinity" else None
    bounds = [lower_bound(a) for a in arguments]
    if func in (("max",), ("builtins", "max")):
        known = [b for b in bounds if b]
        return max(known) if known else None
    if func in (("min",), ("builtins", "min")) and bounds and None not in bounds:
        return min(b for b in bounds if b is not None)
    return None


def zero_test(test: ast.expr) -> str | None:
    """The name a test checks for 0: ``not n``, ``n == 0``, ``n <= 0``, ``n < 1``, ``n is None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand.id if isinstance(test.operand, ast.Name) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Constant)):
        return None
    zero = {ast.Eq: 0, ast.LtE: 0, ast.Lt: 1}.get(type(op))
    none = isinstance(op, (ast.Is, ast.Eq)) and right.value is None
    return left.id if none or (zero is not None and right.value == zero) else None


def positive_test(test: ast.expr) -> bool:
    """A test that a count is above 0: ``n > 0``, ``n >= 1``, ``n != 0`` (``n`` a name or an
    attribute such as ``args.workers``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (dotted(left) and isinstance(right, ast.Constant) and type(right.value) is int):
        return False
    above = {ast.Gt: 0, ast.GtE: 1, ast.NotEq: 0}.get(type(op))
    return above is not None and right.value == above


@dataclass(eq=False, repr=False)
class Bounds:
    """What a function's locals are proven to be at least, as its body is walked: local name
    -> a proven minimum above 0."""

    known: dict[str, int] = field(default_factory=dict)

    def of(self, value: ast.expr) -> int | None:
        """A proven minimum of ``value``: from the expression, else from what the local holds."""
        bound = lower_bound(value)
        if bound is None and isinstance(value, ast.Name):
            bound = self.known.get(value.id)
        return bound

    def assigned(self, name: str, value: ast.expr, conditional: bool) -> None:
        """``n = n or os.cpu_count()``, ``n = max(1, n)``: ``n`` cannot be 0 after it (an
        assignment under an ``if`` proves nothing, unless the ``if`` tests ``n`` for 0)."""
        bound = lower_bound(value)
        if bound is not None and bound > 0 and not conditional:
            self.known[name] = bound
        else:
            self.known.pop(name, None)

    def zero_mapped(self, node: ast.If, conditional: bool) -> None:
        """``if not n: n = os.cpu_count()`` / ``if n == 0: n = 1`` (no ``else``): ``n`` cannot be
        0 after the ``if``."""
        name = zero_test(node.test)
        if name is None or node.orelse:
            return
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id == name
            ):
                bound = lower_bound(statement.value)
                if bound is not None and bound > 0 and not conditional:
                    self.known[name] = bound
