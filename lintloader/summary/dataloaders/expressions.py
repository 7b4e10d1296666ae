"""What the loader visitor reads off expressions and signatures: the names an expression
reads or a target binds, what a loop iterates, kept values, defaults (built-once guards:
``summary/guards.py``)."""

from __future__ import annotations

import ast

from lintloader.summary.dataloaders.bounds import literal
from lintloader.summary.helpers import dotted, parameter_defaults
from lintloader.summary.model import Argument, Dotted
from lintloader.summary.walk import walk_order

_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "islice", "cycle"})


def names(node: ast.expr) -> tuple[str, ...]:
    """Every dotted name an expression reads: ``a.b.c`` gives ``a.b.c``, ``a.b`` and ``a``."""
    found: set[str] = set()
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name):
            found.add(current.id)
            continue
        name = dotted(current) if isinstance(current, ast.Attribute) else None
        if name:
            found.update(".".join(name[:cut]) for cut in range(1, len(name) + 1))
            continue  # `f(x).attr`: look inside for the names it reads
        pending.extend(ast.iter_child_nodes(current))
    return tuple(sorted(found))


def bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in bound_names(e)]
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    name = dotted(target)
    return [".".join(name)] if name else []


def iterated(node: ast.expr) -> Dotted | None:
    """What a ``for`` loop iterates, looking through ``enumerate``/``tqdm``/``iter``/``zip``."""
    name = dotted(node)
    if name:
        return name
    if isinstance(node, ast.Call) and node.args:
        func = dotted(node.func)
        if func and func[-1] in _WRAPPERS:
            return iterated(node.args[0])
    return None


def returns_only(body: list[ast.stmt], subjects: frozenset[str]) -> bool:
    """The body only returns something kept, the very value the test looked at
    (``return self._loader``, ``return self._cache[key]``, ``return prepare(self._loader)``),
    not a new object or a constant (``return DataLoader([])``, ``return None``)."""
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    value = body[0].value
    return value is not None and kept_value(value) and bool(subjects & set(names(value)))


def kept_value(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    if isinstance(node, ast.Call):
        return any(kept_value(a) for a in node.args if not isinstance(a, ast.Starred))
    return False


def literal_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int | bool | None]:
    found: dict[str, int | bool | None] = {}
    for param, default in parameter_defaults(node):
        is_literal, value = literal(default)
        if is_literal:
            found[param.arg] = value
    return found


def rebound_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Every name the body binds or deletes (nested functions included: they may say
    ``nonlocal``)."""
    return {
        n.id
        for statement in node.body
        for n in walk_order(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


def forget_defaults(arguments: tuple[Argument, ...], rebound: set[str]) -> tuple[Argument, ...]:
    return tuple(
        a._replace(from_default=False, literal=None) if a.from_default and a.text in rebound else a
        for a in arguments
    )


def decorator_name(decorator: ast.expr) -> str:
    name = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    return name[-1] if name else ""
