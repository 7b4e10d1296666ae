"""Which ``for`` loops of a file iterate a fixed set of items written out in their function:
a tuple, list or set display in the header (``for ds in (train_ds, val_ds):``), or a local
name that the function only ever binds to such displays
(``options = [False] if xla else [True, False]``, then ``for option in options:``).

Read from the tree, not from the header text a summary keeps: that text is cut at
``TEXT_LIMIT`` characters, and a name's assignments are elsewhere in the function.
"""

from __future__ import annotations

import ast
from typing import Any

from lintloader.summary.walk import descendants

_DISPLAYS = (ast.Tuple, ast.List, ast.Set)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "remove", "pop", "clear"})


def fixed_loop(
    node: ast.For | ast.AsyncFor | ast.While, scope: ast.AST, memo: dict[int, frozenset[str]]
) -> bool:
    """Whether ``node`` is a ``for`` loop over a fixed set; ``scope``: the innermost function or
    class around it, or the module (a loop in a class body never counts). A display in the
    header needs nothing more; a name needs the scope's bindings, read once per scope and kept
    in ``memo`` (the parsed file's), so a file's other scopes are never walked."""
    if not isinstance(node, (ast.For, ast.AsyncFor)) or isinstance(scope, ast.ClassDef):
        return False
    iterable = node.iter
    if isinstance(iterable, _DISPLAYS):
        return True
    if not isinstance(iterable, ast.Name):
        return False
    fixed = memo.get(id(scope))
    if fixed is None:
        fixed = memo[id(scope)] = _fixed_names(scope)
    return iterable.id in fixed


def _fixed_names(scope: ast.AST) -> frozenset[str]:
    """Names whose every binding in the scope (outside the functions, classes and lambdas
    defined in it) is ``name = <display>`` with items written in it (or a conditional
    expression choosing between such displays); any other binding (a loop target, ``+=``, an
    unpacking, a call's result), an empty display, or a change in place (``name.append(x)``,
    ``name[i] = x``) disqualifies the name. One pass over the scope's nodes."""
    good: set[str] = set()
    bad: set[str] = set()
    plain: set[int] = set()
    stored: list[ast.Name] = []
    for node in descendants(scope, _SCOPES):
        kind: Any = node.__class__  # by class: every node of the scope is asked
        if kind is ast.Name:
            if node.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                stored.append(node)  # type: ignore[arg-type]
        elif kind is ast.Assign:
            target = node.targets[0]  # type: ignore[attr-defined]
            if len(node.targets) == 1 and target.__class__ is ast.Name:  # type: ignore[attr-defined]
                plain.add(id(target))
                (good if _display_choice(node.value) else bad).add(target.id)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            bad.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.Attribute or kind is ast.Subscript:
            changed = _changed_in_place(node)
            if changed is not None:
                bad.add(changed)
    bad.update(name.id for name in stored if id(name) not in plain)
    return frozenset(good - bad)


def _display_choice(node: ast.expr) -> bool:
    if isinstance(node, ast.IfExp):
        return _display_choice(node.body) and _display_choice(node.orelse)
    return isinstance(node, _DISPLAYS) and bool(node.elts)


def _changed_in_place(node: ast.AST) -> str | None:
    """The name ``node`` changes in place: ``name.append(...)`` (a mutating method looked up
    on it), ``name[i] = x``, ``del name[i]``."""
    if isinstance(node, ast.Attribute):
        changes = node.attr in _MUTATORS
    elif isinstance(node, ast.Subscript):
        changes = isinstance(node.ctx, (ast.Store, ast.Del))
    else:
        return None
    return node.value.id if changes and isinstance(node.value, ast.Name) else None
