"""Defaults that live in configuration objects, per class: what ``self.<attr>`` holds when
nothing sets it otherwise (issue 29, shape 1).

* a class-level default: a dataclass / attrs / pydantic field (``persistent_workers: bool =
  True``, ``= field(default=True)``) or a plain class attribute;
* an ``__init__`` parameter default stored on ``self`` (``self.flag = flag``).

An attribute that ``__init__`` or ``__post_init__`` sets any other way (``if self.num_workers
== 0: self.persistent_workers = False``) has no proven default: the class may clear it.
"""

from __future__ import annotations

import ast

from lintloader.summary.helpers import dotted, parameter_defaults
from lintloader.summary.walk import walk_order

Literal = int | bool | str | None
REWRITTEN = "<set>"  # the class sets the attribute itself: no default is proven
_SETUP_METHODS = frozenset({"__init__", "__post_init__", "__attrs_post_init__", "model_post_init"})
_FIELD_CALLS = frozenset({"field", "Field", "attrib", "ib"})
Walked = dict[int, list[ast.AST]]  # a method's nodes in ast.walk's order, by id of the method


def class_stores(
    tree: ast.Module, walked: Walked | None = None
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Class qualname -> attribute -> the annotation of the ``__init__`` parameter stored in
    it (``def __init__(self, args: TrainingArguments): self.args = args``); ``walked``: the
    methods' nodes, shared with :func:`class_defaults` so that each method is walked once."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    walked = {} if walked is None else walked
    for qualname, node in _classes(tree):
        for method in node.body:
            if _is_init(method):
                stores = _annotated_stores(method, walked)  # type: ignore[arg-type]
                if stores:
                    found[qualname] = stores
    return found


def _is_init(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return node.name == "__init__" and bool(node.args.args)


def _classes(tree: ast.Module) -> list[tuple[str, ast.ClassDef]]:
    found: list[tuple[str, ast.ClassDef]] = []
    pending: list[tuple[str, ast.AST]] = [("", tree)]
    while pending:
        prefix, node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                found.append((f"{prefix}{child.name}", child))
                pending.append((f"{prefix}{child.name}.", child))
    return found


def _annotation(node: ast.expr | None) -> tuple[str, ...] | None:
    """``X``, ``mod.X``, ``Optional[X]``, ``X | None``, ``"X"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.Subscript) and dotted(node.value) in (
        ("Optional",),
        ("typing", "Optional"),
    ):
        return _annotation(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _annotation(node.left) or _annotation(node.right)
    if isinstance(node, ast.Constant):
        return None
    return dotted(node) if node is not None else None


def _nodes(method: ast.FunctionDef | ast.AsyncFunctionDef, walked: Walked) -> list[ast.AST]:
    """The assignments and calls of ``ast.walk(method)``, in its order (all that
    :func:`_self_targets` and :func:`_passed_to_base` read), walked once per method."""
    nodes = walked.get(id(method))
    if nodes is None:
        nodes = walked[id(method)] = [n for n in walk_order(method) if n.__class__ in _READ]
    return nodes


_READ = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call})


def _annotated_stores(
    method: ast.FunctionDef | ast.AsyncFunctionDef, walked: Walked
) -> dict[str, tuple[str, ...]]:
    self_name = method.args.args[0].arg
    arguments = method.args
    params = {
        a.arg: a.annotation
        for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        if a.annotation is not None
    }
    found: dict[str, tuple[str, ...]] = _passed_to_base(_nodes(method, walked), params)
    for statement in method.body:
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name)):
            continue
        annotation = _annotation(params.get(statement.value.id))
        for attribute in _self_targets(statement, self_name):
            if annotation:
                found[attribute] = annotation
    return found


def _passed_to_base(
    nodes: list[ast.AST], params: dict[str, ast.expr]
) -> dict[str, tuple[str, ...]]:
    """``super().__init__(args=args)`` with ``args: TrainingArguments`` among a method's
    ``nodes``: the base stores it under its own name, by the convention of keyword arguments
    named after attributes."""
    found: dict[str, tuple[str, ...]] = {}
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        is_super = isinstance(owner, ast.Call) and dotted(owner.func) == ("super",)
        if node.func.attr != "__init__" or not is_super:
            continue
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg and isinstance(value, ast.Name) and value.id == keyword.arg:
                annotation = _annotation(params.get(value.id))
                if annotation:
                    found[keyword.arg] = annotation
    return found


def class_defaults(tree: ast.Module, walked: Walked | None = None) -> dict[str, dict[str, Literal]]:
    """Class qualname -> attribute -> literal default (:data:`REWRITTEN`: set by the class
    itself), for every class of a module (``walked``: as :func:`class_stores` takes it)."""
    found: dict[str, dict[str, Literal]] = {}
    walked = {} if walked is None else walked
    for qualname, node in _classes(tree):
        defaults = _defaults_of(node, walked)
        if defaults:
            found[qualname] = defaults
    return found


def _literal(node: ast.expr | None) -> tuple[bool, Literal]:
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (int, bool)):
        return True, node.value  # type: ignore[return-value]  # None, an int or a bool
    if isinstance(node, ast.Call):  # `field(default=True)`, `Field(True)`
        func = dotted(node.func)
        if func and func[-1] in _FIELD_CALLS:
            for keyword in node.keywords:
                if keyword.arg == "default":
                    return _literal(keyword.value)
            if node.args:
                return _literal(node.args[0])
    return False, None


def _defaults_of(node: ast.ClassDef, walked: Walked) -> dict[str, Literal]:
    defaults: dict[str, Literal] = {}
    rewritten: set[str] = set()
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            known, value = _literal(statement.value)
            if known:
                defaults[statement.target.id] = value
        elif isinstance(statement, ast.Assign):
            known, value = _literal(statement.value)
            for target in statement.targets:
                if known and isinstance(target, ast.Name):
                    defaults[target.id] = value
        elif (
            isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
            and statement.name in _SETUP_METHODS
            and statement.args.args
        ):
            stored, others = _stored_params(statement, walked)
            defaults.update(stored)
            rewritten |= others
    return {**defaults, **dict.fromkeys(sorted(rewritten), REWRITTEN)}  # the same every process


def _stored_params(
    method: ast.FunctionDef | ast.AsyncFunctionDef, walked: Walked
) -> tuple[dict[str, Literal], set[str]]:
    """``self.x = x`` at the top of ``method`` for a parameter ``x`` with a literal default,
    and every other ``self.<attr>`` the method sets."""
    self_name = method.args.args[0].arg
    params = _param_defaults(method)
    stored: dict[str, Literal] = {}
    others: set[str] = set()
    top = set(map(id, method.body))
    for node in _nodes(method, walked):
        targets = _self_targets(node, self_name)
        for attribute in targets:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            plain = id(node) in top and isinstance(value, ast.Name) and value.id in params
            if plain and attribute not in others:
                stored[attribute] = params[value.id]  # type: ignore[union-attr]
            else:
                others.add(attribute)
                stored.pop(attribute, None)
    return stored, others


def _self_targets(node: ast.AST, self_name: str) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and dotted(node.func) in (
        ("setattr",),
        ("object", "__setattr__"),
    ):
        first = node.args[0] if node.args else None
        key = node.args[1] if len(node.args) > 1 else None
        if isinstance(first, ast.Name) and first.id == self_name and isinstance(key, ast.Constant):
            return [str(key.value)]
        return []
    else:
        return []
    found = []
    for target in targets:
        name = dotted(target)
        if name and len(name) == 2 and name[0] == self_name:
            found.append(name[1])
    return found


def _param_defaults(method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Literal]:
    found: dict[str, Literal] = {}
    for param, default in parameter_defaults(method):
        known, value = _literal(default)
        if known:
            found[param.arg] = value
    return found
