"""Which ``for`` loops of a file iterate a fixed set of items written out in their function:
a tuple, list or set display in the header (``for ds in (train_ds, val_ds):``), or a local
name that the function only ever binds to such displays
(``options = [False] if xla else [True, False]``, then ``for option in options:``).

Read from the tree, not from the header text a summary keeps: that text is cut at
``TEXT_LIMIT`` characters, and a name's assignments are elsewhere in the function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_DISPLAYS = (ast.Tuple, ast.List, ast.Set)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "remove", "pop", "clear"})


def fixed_loop_positions(tree: ast.Module) -> frozenset[tuple[int, int]]:
    """``(line, column offset)`` of every ``for`` loop over a fixed set, in every scope."""
    found: set[tuple[int, int]] = set()
    for scope in _scopes(tree):
        nodes = list(_own_nodes(scope))
        fixed = _fixed_names(nodes)
        for node in nodes:
            if isinstance(node, (ast.For, ast.AsyncFor)) and _fixed_iterable(node.iter, fixed):
                found.add((node.lineno, node.col_offset))
    return frozenset(found)


def _fixed_iterable(node: ast.expr, fixed: frozenset[str]) -> bool:
    return isinstance(node, _DISPLAYS) or (isinstance(node, ast.Name) and node.id in fixed)


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside the functions, classes and lambdas defined in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _fixed_names(nodes: list[ast.AST]) -> frozenset[str]:
    """Names whose every binding in the scope is ``name = <display>`` with items written in it
    (or a conditional expression choosing between such displays); any other binding (a loop
    target, ``+=``, an unpacking, a call's result), an empty display, or a change in place
    (``name.append(x)``, ``name[i] = x``) disqualifies the name."""
    good: set[str] = set()
    bad: set[str] = set()
    plain: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                plain.add(id(target))
                (good if _display_choice(node.value) else bad).add(target.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bad.update(node.names)
        elif (changed := _changed_in_place(node)) is not None:
            bad.add(changed)
    for node in nodes:
        if not isinstance(node, ast.Name) or id(node) in plain:
            continue
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            bad.add(node.id)
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
