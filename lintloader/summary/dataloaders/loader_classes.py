"""Names that hold a loader class: a class that may be a DataLoader passed as a value
(``loader_cls=DataLoader``, ``self.iterator = DataLoader``) and tuples, lists or dicts of
classes picked and called (``LOADERS[kind](...)``). The linker decides which is torch's."""

from __future__ import annotations

import ast

from lintloader.domain.torch_api import POOL_FACTORIES as _POOL_FACTORIES
from lintloader.summary.helpers import dotted, parameter_defaults
from lintloader.summary.model import Dotted


def constructor_like(name: Dotted | None, aliases: set[str]) -> bool:
    """A dotted name that may be a DataLoader class passed as a value (the linker decides)."""
    if not name:
        return False
    return name[0] != "self" and (name[-1] in aliases or "Loader" in name[-1])


def constructor_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, aliases: set[str]
) -> dict[str, Dotted]:
    """Parameters whose default is a class that may be a DataLoader (``loader_cls=DataLoader``)."""
    found: dict[str, Dotted] = {}
    for param, default in parameter_defaults(node):
        name = dotted(default)
        if name and constructor_like(name, aliases):
            found[param.arg] = name
    return found


def class_constructors(node: ast.ClassDef, aliases: set[str]) -> dict[str, Dotted]:
    """``self.<attr>`` that a method sets to a possible DataLoader class, directly
    (``self.loader_cls = DataLoader``) or from a parameter defaulting to one."""
    found: dict[str, Dotted] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        params = constructor_params(method, aliases)
        for statement in method.body:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target, value = dotted(statement.targets[0]), dotted(statement.value)
            if not target or len(target) != 2 or target[0] != self_name or not value:
                continue
            if len(value) == 1 and value[0] in params:
                found[target[1]] = params[value[0]]
            elif constructor_like(value, aliases):
                found[target[1]] = value
    return found


def container_items(node: ast.expr) -> tuple[Dotted, ...]:
    """The dotted names a tuple, list or dict literal holds, when every item is one."""
    if isinstance(node, (ast.Tuple, ast.List)):
        values = node.elts
    elif isinstance(node, ast.Dict):
        values = list(node.values)
    else:
        return ()
    names = [dotted(value) for value in values]
    if not names or any(not name for name in names):
        return ()
    return tuple(name for name in names if name)


def picked(
    func: ast.expr, containers: dict[str, tuple[Dotted, ...]], aliases: set[str]
) -> Dotted | None:
    """The class a call of ``container[key]`` may construct: a worker pool's iterator first,
    then a DataLoader-like class (the linker decides which is torch's)."""
    if not isinstance(func, ast.Subscript):
        return None
    holder = dotted(func.value)
    items = containers.get(".".join(holder)) if holder else None
    if not items:
        return None
    pools = [item for item in items if item[-1] in _POOL_FACTORIES]
    loaders = [item for item in items if constructor_like(item, aliases)]
    found = pools or loaders
    return found[0] if found else None
