"""Calls that fill a parameter some code of the callee needs None: that code never runs for them.

``evaluate(model, dataloader=val_loader)`` in an epoch loop does not reach the
``make_loader()`` of ``if dataloader is None:`` in ``evaluate``; ``evaluate(model)``,
``evaluate(model, dataloader=None)`` and ``evaluate(model, dataloader=loader)`` where ``loader``
may be None in the caller (a local bound to None, a parameter that defaults to None) still do.
What runs only while a parameter is None is recorded by the summary
(``summary/none_guards.py``: ``CallSite.none_guard``, ``FunctionSummary.none_names``).

An argument counts as filled when it is written in the call, by keyword or by position (none
after a ``*args``), and is neither a false literal (``None``, ``0``, ``[]``), nor a conditional
expression with one, nor a name the caller may bind to None, nor an attribute of the caller's
instance that its class, a scanned base or subclass binds to None (``self.val_loader = None``).
(A name bound to another false value, ``n = 0``, counts as filled for ``if not p: p = ...``.)
A call whose text the summary cut counts the same: its arguments are read from the tree.
"""

from __future__ import annotations

from lintloader.link.arguments import binding
from lintloader.link.call_kinds import NONE_GUARDED
from lintloader.link.program import Edge, FunctionInfo, Program
from lintloader.summary.model import Passed, Site


def construction_guard(program: Program, key: str, site: Site) -> tuple[str, ...]:
    """The parameters of function ``key`` that must be None for its call at ``site`` (a
    construction) to run."""
    for call in program.calls_of(key, NONE_GUARDED):
        if (call.site.line, call.site.column) == (site.line, site.column):
            return call.none_guard
    return ()


def fills_guard(program: Program, guard: tuple[str, ...], edge: Edge) -> bool:
    """Whether the call ``edge`` makes passes a value for one of the callee's parameters
    ``guard`` (those a call on the way needs None): the way is closed to it."""
    if not guard:
        return False
    bound = binding(program, edge)
    caller = program.functions[edge.caller]
    written = [bound.written(p) for p in guard]
    return any(_filled(program, argument, caller) for argument in written if argument is not None)


def _filled(program: Program, argument: Passed, caller: FunctionInfo) -> bool:
    if argument.none:
        return False
    name = argument.name or ()
    if len(name) == 1:
        return name[0] not in caller.function.none_names
    if len(name) == 2 and name[0] != "super()":  # ``self.loader``
        class_key = caller.class_key
        if class_key is not None and name[0] == caller.function.self_name:
            return name[1] not in _none_attributes(program, class_key)
    return True


def _none_attributes(program: Program, class_key: str) -> set[str]:
    """The attributes that the class, a scanned base or a scanned subclass binds to None."""
    keys = {*program.mro(class_key), *program.subclasses.get(class_key, ())}
    return {
        name
        for key in keys
        if key in program.classes
        for name in program.classes[key].klass.none_attrs
    }
