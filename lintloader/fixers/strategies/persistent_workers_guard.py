"""persistent-workers-guard (safe), for LL201: the value ``P`` that turns ``persistent_workers`` on
becomes ``P and <num_workers> > 0``, where it is written: in the DataLoader call, or in the dict
the same function fills and passes as ``**cfg`` (``{"persistent_workers": P}``, ``dict(...)``,
``cfg["persistent_workers"] = P``, ``cfg.update(persistent_workers=P)``). A literal ``True``
becomes ``<num_workers> > 0``, and the value is ``False`` when ``num_workers`` is missing or a
literal 0. Same behaviour whenever the loader has workers; no ValueError when it has none.

A builder's callers that keep its ``persistent_workers=True`` default are fixed in the builder
(the finding's chain ends at its DataLoader call). The worker count is read from the call or
from the same dict; refused, with the reason, when the value is written more than once or the
worker count is not known where the value is (a local name bound in the function).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import Target, call_at, keyword_arg
from lintloader.fixers.edit.names import collect, parameters
from lintloader.fixers.edit.persistence import has_workers_expression, workers_arg
from lintloader.fixers.edit.replace import replaced

PERSISTENT = "persistent_workers"
WORKERS = "num_workers"
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


@dataclass(frozen=True)
class Write:
    """Where a dict key gets its value: the node holding it, the value, and the dict display,
    ``dict(...)`` or ``update(...)`` call it is an entry of (None: ``cfg[key] = v``)."""

    node: cst.DictElement | cst.Arg | cst.Assign
    value: cst.BaseExpression
    display: cst.CSTNode | None = None


def apply(request: FixRequest) -> Edits | None:
    built = request.finding.chain[-1]  # the DataLoader call (in the builder, for a caller)
    target = call_at(request, request.path_of(built), built.line, built.column)
    persistent = keyword_arg(target.call, PERSISTENT)
    if persistent is not None:
        value = guarded(persistent.value, workers_at_call(target))
        return target.result(
            replaced(target.module, persistent, persistent.with_changes(value=value))
        )
    write = only_write(dict_writes(target, PERSISTENT), "`persistent_workers`")
    new = write.node.with_changes(value=guarded(write.value, workers_for_dict(target, write)))
    return target.result(replaced(target.module, write.node, new))


def guarded(value: cst.BaseExpression, workers: cst.BaseExpression | None) -> cst.BaseExpression:
    """``value and <workers> > 0``; ``<workers> > 0`` for ``True``; ``False`` without workers."""
    if workers is None:
        return cst.Name("False")
    if isinstance(value, cst.Name) and value.value == "True":
        return workers
    if not isinstance(value, _ATOMS):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(value.deep_clone(), cst.And(), workers)


def workers_at_call(target: Target) -> cst.BaseExpression | None:
    """``<num_workers> > 0`` of the call (from its ``**dict`` when not written in it); None
    when ``num_workers`` is missing or a literal 0."""
    found = workers_arg(target.call)
    if found is None and star_dict(target) is not None:
        writes = dict_writes(target, WORKERS)
        value = only_write(writes, "`num_workers`").value if writes else None
        return None if value is None or is_zero(value) else positive(value)
    if found is None or is_zero(found.value):
        return None
    return has_workers_expression(target.call)


def workers_for_dict(target: Target, write: Write) -> cst.BaseExpression | None:
    """The worker count as the dict write can read it: an entry of the same dict display or
    ``dict(...)``, else the call's or another write's, when it reads only parameters the
    function never rebinds (so it means the same where the value is written)."""
    if write.display is not None:
        siblings = [w for w in dict_writes(target, WORKERS) if w.display is write.display]
        if siblings:
            return None if is_zero(siblings[0].value) else positive(siblings[0].value)
    workers = workers_at_call(target)
    if workers is None:
        return None
    function = target.enclosing(cst.FunctionDef, "a function")
    read = collect([workers]).used
    rebound = collect([function.body]).bound
    if not read <= parameters(function) or read & rebound:
        names = ", ".join(f"`{n}`" for n in sorted(read - parameters(function) | read & rebound))
        raise FixError(f"the worker count reads {names}, which may differ where the dict is filled")
    return workers


def positive(value: cst.BaseExpression) -> cst.BaseExpression:
    if not isinstance(value, (*_ATOMS, cst.Integer)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Comparison(
        value.deep_clone(), [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))]
    )


def is_zero(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Integer) and value.evaluated_value == 0


def only_write(writes: list[Write], what: str) -> Write:
    if len(writes) != 1:
        raise FixError(
            f"{what} is not written once in the call or a dict passed with `**` "
            f"({len(writes)} places)"
        )
    return writes[0]


def star_dict(target: Target) -> cst.BaseExpression | None:
    return next((a.value for a in target.call.args if a.star == "**"), None)


def dict_writes(target: Target, key: str) -> list[Write]:
    """Every place the function gives ``key`` a value in the dict the call gets as ``**``."""
    passed = star_dict(target)
    if passed is None:
        return []
    if isinstance(passed, (cst.Dict, cst.Call)):
        return list(_display_writes(passed, key))
    if not isinstance(passed, cst.Name):
        return []
    found = _Writes(passed.value, key)
    target.enclosing(cst.FunctionDef, "a function").body.visit(found)
    return found.writes


def _display_writes(node: cst.BaseExpression, key: str) -> Iterator[Write]:
    """``{"key": v}`` or ``dict(key=v)``."""
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement) and _is_key(element.key, key):
                yield Write(element, element.value, node)
    elif _is_dict_call(node):
        assert isinstance(node, cst.Call)
        arg = keyword_arg(node, key)
        if arg is not None:
            yield Write(arg, arg.value, node)


def _is_key(node: cst.BaseExpression, key: str) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == key


def _is_dict_call(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict"
    )


class _Writes(cst.CSTVisitor):
    """``name = {...}``/``dict(...)``, ``name[key] = v``, ``name.update(key=v)``."""

    def __init__(self, name: str, key: str) -> None:
        super().__init__()
        self.name, self.key = name, key
        self.writes: list[Write] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            bound = target.target
            if isinstance(bound, cst.Name) and bound.value == self.name:
                self.writes.extend(_display_writes(node.value, self.key))
            elif (
                isinstance(bound, cst.Subscript)
                and isinstance(bound.value, cst.Name)
                and bound.value.value == self.name
                and len(bound.slice) == 1
                and isinstance(bound.slice[0].slice, cst.Index)
                and _is_key(bound.slice[0].slice.value, self.key)
            ):
                self.writes.append(Write(node, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == self.name
            and func.attr.value == "update"
        ):
            arg = keyword_arg(node, self.key)
            if arg is not None:
                self.writes.append(Write(arg, arg.value, node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's names are its own


STRATEGY = FixStrategy(
    name="persistent-workers-guard",
    safe=True,
    description="persistent_workers=P -> persistent_workers=P and <num_workers> > 0, in the call "
    "or the dict passed with ** (LL201)",
    apply=apply,
)
