"""None guards: code that runs only while a parameter is None (or false), never once a caller
fills it.

``def evaluate(model, dataloader=None): if dataloader is None: dataloader = make_loader()``
builds a loader only for a caller that passes none; ``evaluate(model, dataloader=val_loader)``
in an epoch loop builds nothing. The summary records, on each call, the parameters whose None
value its branch needs (``CallSite.none_guard``): the body of ``if p is None:``, the ``else`` of
``if p is not None:``, either side of a conditional expression, through ``and``/``or``/``not``,
and through a local bound once to such a test (``training = model is not None``, then ``if
training: ... else: build()``). A test of the parameter's truth (``if not p:``, the ``else`` of
``if p:``, ``p or make()``) counts only where the branch fills the parameter (``if not p: p =
make()``, ``p = p or make()``): a flag (``if stateful: ... else: build()``) is often passed
false. A parameter counts only if the function binds it nowhere but inside such a branch or as
``p = p or ...`` (a value that stays filled): ``if reset: dataloader = None`` elsewhere lets the
build run for any caller.

The summary also records which names of a function may hold None (``none_names``), so that
passing one of them (``evaluate(model, dataloader=loader)`` where ``loader = None`` earlier, or
a parameter that defaults to None) still counts as passing nothing.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lintloader.summary.helpers import parameter_defaults
from lintloader.summary.model import FunctionSummary
from lintloader.summary.walk import walk_order

Aliases = Mapping[str, ast.expr]  # a local bound once to a test (``training = model is not None``)
_NO_ALIASES: Aliases = {}
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def implied_none(
    test: ast.expr,
    holds: bool,
    aliases: Aliases = _NO_ALIASES,
    truthy: frozenset[str] | None = None,
) -> frozenset[str]:
    """The plain names that are None (or false) whenever ``test`` is ``holds``: ``p`` of
    ``p is None`` and of ``not p`` when it holds, of ``p is not None`` and of ``p`` when it
    does not; every side of ``and`` that holds (``or`` that fails), the names common to all
    sides otherwise. A name in ``aliases`` stands for the None test it was bound to. A test of
    a name's truth counts only for the names ``truthy`` (None: for all)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return implied_none(test.operand, not holds, aliases, truthy)
    if isinstance(test, ast.Name):
        if test.id in aliases:
            return implied_none(aliases[test.id], holds, truthy=frozenset())
        if holds or (truthy is not None and test.id not in truthy):
            return frozenset()
        return frozenset({test.id})
    if isinstance(test, ast.BoolOp):
        sides = [implied_none(value, holds, aliases, truthy) for value in test.values]
        if isinstance(test.op, ast.And) == holds:  # every side has the outcome
            return frozenset().union(*sides)
        return frozenset.intersection(*sides)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and _is_none(test.comparators[0])
    ):
        op = test.ops[0]
        if (isinstance(op, ast.Is) and holds) or (isinstance(op, ast.IsNot) and not holds):
            return frozenset({test.left.id})
    return frozenset()


def branch_guards(node: ast.BoolOp, aliases: Aliases = _NO_ALIASES) -> list[frozenset[str]]:
    """For each side of ``a or b or c`` (``and``), the names that are None whenever it runs:
    a side runs only when every side before it failed (held)."""
    holds = isinstance(node.op, ast.And)
    guards: list[frozenset[str]] = []
    seen: frozenset[str] = frozenset()
    for value in node.values:
        guards.append(seen)
        seen = seen | implied_none(value, holds, aliases)
    return guards


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_falsy_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return not node.value
    return isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and not (
        node.keys if isinstance(node, ast.Dict) else node.elts
    )


def may_be_none(value: ast.expr, falsy: bool = True) -> bool:
    """``None`` (with ``falsy``, another false literal too: ``0``, ``[]``), or a conditional
    expression with such a side (``loader if train else None``). The summary records only the
    names bound to None (``falsy`` off): ``count = 0`` and ``verbose=False`` are everywhere."""
    if isinstance(value, ast.IfExp):
        return may_be_none(value.body, falsy) or may_be_none(value.orelse, falsy)
    return _is_falsy_literal(value) if falsy else _is_none(value)


def none_defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """The parameters of ``function`` that default to None, sorted (the summary adds the locals
    bound to None as it walks the body)."""
    pairs = parameter_defaults(function)
    return tuple(sorted(p.arg for p, default in pairs if may_be_none(default, falsy=False)))


def zero_defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """The parameters of ``function`` that default to a literal 0 and that its body never binds
    again, sorted: left out by a call, such a parameter is 0 wherever the body passes it on."""
    zero = [
        p.arg
        for p, default in parameter_defaults(function)
        if isinstance(default, ast.Constant) and type(default.value) is int and default.value == 0
    ]
    if not zero:  # most functions: no walk of the body
        return ()
    bound = {
        node.id
        for node in walk_order(function)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    }
    return tuple(sorted(name for name in zero if name not in bound))


def guardable(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The parameters a caller can fill by position or by keyword (not positional-only ones,
    not ``*args``/``**kwargs``)."""
    arguments = function.args
    return frozenset(p.arg for p in (*arguments.args, *arguments.kwonlyargs))


def is_alias(value: ast.expr) -> bool:
    """A value a local may stand for in a test: one that says a name is None either way."""
    if value.__class__ not in _TESTS:  # nothing else implies a name is None
        return False
    none = frozenset[str]()
    return bool(implied_none(value, True, truthy=none) or implied_none(value, False, truthy=none))


# the tests :func:`implied_none` reads a name's None from, with no aliases and no truth test
_TESTS = frozenset({ast.UnaryOp, ast.BoolOp, ast.Compare})
_READ_TESTS = _TESTS | {ast.Name}  # and the test of a name's truth (or of an alias)


def aliases_in(test: ast.expr, aliases: Aliases) -> frozenset[str]:
    if not aliases:
        return frozenset()
    return frozenset(n.id for n in walk_order(test) if isinstance(n, ast.Name) and n.id in aliases)


def _cannot_bind(node: ast.AST, walrus: bool) -> bool:
    """An expression that binds nothing, nor holds anything that does: not a target (those
    have a store or delete context), and the function holds no ``:=`` (a comprehension's own
    names are its own)."""
    return (
        isinstance(node, ast.expr)
        and not walrus
        and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
    )


def bound_more_than_once(
    function: ast.FunctionDef | ast.AsyncFunctionDef, names: frozenset[str], walrus: bool = True
) -> set[str]:
    """Those of ``names`` that ``function`` binds more than once, or that a nested scope
    declares ``nonlocal``: such a local does not stand for the test it was first bound to.
    ``walrus``: the function may hold a ``:=``."""
    counts: Counter[str] = Counter()
    found: set[str] = set()
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, _NESTED):
            found |= _nonlocal(node, names)
            continue
        if _cannot_bind(node, walrus):
            continue
        counts.update(_bound(node, names))
        pending.extend(ast.iter_child_nodes(node))
    return found | {name for name, count in counts.items() if count > 1}


def unsettled(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    names: frozenset[str],
    aliases: Aliases = _NO_ALIASES,
    walrus: bool = True,
) -> set[str]:
    """Those of ``names`` that ``function`` binds (or deletes) outside a branch that runs only
    while they are None, other than ``p = p or ...``, or that a nested scope declares
    ``nonlocal``: a caller's value may be replaced by None there. ``walrus``: the function may
    hold a ``:=`` (else expressions other than targets are not walked)."""
    found: set[str] = set()
    pending: list[tuple[ast.AST, frozenset[str]]] = [(s, frozenset()) for s in function.body]
    while pending:
        node, none = pending.pop()
        if isinstance(node, _NESTED):
            found |= _nonlocal(node, names)
            continue
        if _cannot_bind(node, walrus):
            continue
        if isinstance(node, ast.Assign) and _keeps_filled(node):
            pending.append((node.value, none))
            continue
        found |= _bound(node, names) - none
        pending.extend(_children(node, none, aliases))
    return found


def _children(
    node: ast.AST, none: frozenset[str], aliases: Aliases
) -> list[tuple[ast.AST, frozenset[str]]]:
    """The children of ``node``, each with the names None wherever it runs."""
    if isinstance(node, (ast.If, ast.IfExp)):
        body = node.body if isinstance(node, ast.If) else [node.body]
        orelse = node.orelse if isinstance(node, ast.If) else [node.orelse]
        return [
            (node.test, none),
            *((child, none | implied_none(node.test, True, aliases)) for child in body),
            *((child, none | implied_none(node.test, False, aliases)) for child in orelse),
        ]
    if isinstance(node, ast.BoolOp):
        return [
            (v, none | g) for v, g in zip(node.values, branch_guards(node, aliases), strict=True)
        ]
    return [(child, none) for child in ast.iter_child_nodes(node)]


def _bound(node: ast.AST, names: frozenset[str]) -> set[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return {node.id} & names
    if isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name} & names
    if isinstance(node, ast.alias):
        return {node.asname or node.name.split(".")[0]} & names
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return {node.name} & names
    if isinstance(node, ast.MatchMapping) and node.rest:
        return {node.rest} & names
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return set(node.names) & names
    return set()


def _keeps_filled(node: ast.Assign) -> bool:
    """``p = p or make()``, ``p = p if p is not None else make()``: a filled ``p`` stays."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    name, value = node.targets[0].id, node.value
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        first = value.values[0]
        return isinstance(first, ast.Name) and first.id == name
    if isinstance(value, ast.IfExp):
        kept = value.body if name in implied_none(value.test, False) else value.orelse
        filled = name in implied_none(value.test, False) or name in implied_none(value.test, True)
        return filled and isinstance(kept, ast.Name) and kept.id == name
    return False


def _assigned(body: Sequence[ast.stmt]) -> frozenset[str]:
    """The plain names that statements ``body`` assign (``loader = make()``), nested
    statements included."""
    found: set[str] = set()
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.stmt) and not isinstance(node, _NESTED):
            pending.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return frozenset(found)


def _nonlocal(node: ast.AST, names: frozenset[str]) -> set[str]:
    found: set[str] = set()
    for inner in walk_order(node):
        if isinstance(inner, ast.Nonlocal):
            found |= set(inner.names) & names
    return found


@dataclass(eq=False, repr=False)
class GuardState:
    """What the summary walk keeps of None guards while it is in one function."""

    guardable: frozenset[str] = frozenset()  # parameters a caller can fill
    # one entry per enclosing branch: the names None wherever it runs, and the aliases that
    # says, each with those of the branches around it
    branches: list[tuple[frozenset[str], frozenset[str]]] = field(default_factory=list)
    opaque: int = 0  # enclosing lambdas and comprehensions: their names are their own
    aliases: dict[str, ast.expr] = field(default_factory=dict)
    # index of each guarded call in ``FunctionSummary.calls`` with the aliases its guard used
    through: list[tuple[int, frozenset[str]]] = field(default_factory=list)
    guarded: bool = False  # some call has a guard
    walrus: bool = False  # the function holds a ``:=`` (outside nested functions)

    def enter(self, test: ast.expr, holds: bool, body: Sequence[ast.stmt] = ()) -> None:
        """A branch ``body`` that runs when ``test`` is ``holds``."""
        self.enter_sides(self.sides(test, holds, lambda: _assigned(body)))

    def sides(
        self, test: ast.expr, holds: bool, filled: Callable[[], frozenset[str]] = frozenset
    ) -> tuple[frozenset[str], frozenset[str]]:
        """What a branch that runs when ``test`` is ``holds`` adds: the names None there, and
        the aliases that says. A test of a parameter's truth counts only where the branch fills
        it (``filled()``: ``if not loader: loader = make()``): a flag (``if stateful: ... else:``)
        is often passed false."""
        if self.opaque or not self.guardable or test.__class__ not in _READ_TESTS:
            return frozenset(), frozenset()  # nothing a caller fills, or no test of one
        none = implied_none(test, holds, self.aliases, frozenset()) & self.guardable
        loose = implied_none(test, holds, self.aliases, self.guardable) & self.guardable
        if loose - none:
            none |= loose & filled()
        return none, aliases_in(test, self.aliases) if none else frozenset()

    def enter_sides(self, sides: tuple[frozenset[str], frozenset[str]]) -> None:
        if self.branches:
            outer = self.branches[-1]
            sides = (outer[0] | sides[0], outer[1] | sides[1])
        self.branches.append(sides)

    def leave(self) -> None:
        self.branches.pop()

    def guard(self, index: int) -> tuple[str, ...]:
        """The guard of the call about to be recorded at ``index`` in the function's calls."""
        if not self.branches or not self.branches[-1][0]:
            return ()
        none, used = self.branches[-1]
        if used:
            self.through.append((index, used))
        self.guarded = True
        return tuple(sorted(none))

    def note_alias(self, target: ast.expr, value: ast.expr) -> None:
        """``training = model is not None``: a local that ``if training:`` may stand for."""
        if self.opaque or not isinstance(target, ast.Name) or target.id in self.guardable:
            return
        if target.id not in self.aliases and is_alias(value):
            self.aliases[target.id] = value

    def settle(
        self, function: FunctionSummary, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> None:
        """Drop the guards the function undoes itself: a guard that went through a local
        bound more than once, a parameter the function may set to None (:func:`unsettled`).
        The walks are paid only where a call has a guard."""
        if not self.guarded:
            return
        calls = function.calls
        broken: set[str] = set()
        if self.through:
            used = frozenset().union(*(u for _, u in self.through))
            broken = bound_more_than_once(node, used, self.walrus)
        if broken:
            for index, used in self.through:
                if used & broken:
                    calls[index] = calls[index]._replace(none_guard=())
        guarded = frozenset(p for call in calls for p in call.none_guard)
        if not guarded:
            return
        kept = {k: v for k, v in self.aliases.items() if k not in broken}
        dropped = unsettled(node, guarded, kept, self.walrus)
        if dropped:
            function.calls = [
                call._replace(none_guard=tuple(p for p in call.none_guard if p not in dropped))
                if call.none_guard
                else call
                for call in calls
            ]
