"""Built-once guards: an ``if`` counts as one only when it tests the very value its branch keeps.

``if self._loader is None: self._loader = DataLoader(...)``, ``if key not in self._cache:
self._cache[key] = ...``, ``if not hasattr(self, "_loader"): self._loader = ...`` and a flag the
branch sets (``if not self._built: ...; self._built = True``) build once. An ordinary branch
(``if self.collate_fn is None: DataLoader(...) else: DataLoader(...)``, ``if self.curriculum:``)
builds a pool on either side, every time the function runs.

The one home of "built once": :func:`built_once` is the test every summarizer asks (the loader
facts' ``Condition.once`` and ``kept_blocks``, the call summary's ``persistent_only``), and
``analysis/built_once.py`` is where every analysis reads what it recorded.
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from lintloader.summary.helpers import dotted
from lintloader.summary.walk import LEAVES, NODE_FIELDS

_LOOKUPS = frozenset({"hasattr", "getattr"})
_KEEPERS = frozenset({"setdefault", "update", "__setitem__"})


def tested(test: ast.expr) -> frozenset[str]:
    """The values a condition looks at, as dotted text: ``x`` of ``x is None``, ``not x``,
    ``x``; ``obj.name`` of ``hasattr(obj, "name")``; ``cache`` of ``key in cache`` and of
    ``cache.get(key) is None``; every side of ``and``/``or``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return tested(test.operand)
    if isinstance(test, ast.BoolOp):
        return frozenset().union(*(tested(value) for value in test.values))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], (ast.In, ast.NotIn)):
            return _subject(test.comparators[0])
        return _subject(test.left)
    return _subject(test)


def _subject(node: ast.expr) -> frozenset[str]:
    if isinstance(node, ast.Call):
        func = dotted(node.func)
        if func is not None and func in {(name,) for name in _LOOKUPS} and len(node.args) >= 2:
            owner, attribute = dotted(node.args[0]), node.args[1]
            if owner and isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                return frozenset({".".join((*owner, attribute.value))})
            return frozenset()
        if func and len(func) > 1:  # `cache.get(key)`: the container
            return frozenset({".".join(func[:-1])})
        return frozenset()
    if isinstance(node, ast.Subscript):
        return _subject(node.value)
    name = dotted(node)
    return frozenset({".".join(name)}) if name else frozenset()


class Kept(NamedTuple):
    """What a branch does to the values its test looked at."""

    anywhere: bool  # stores into one of them, so the test is false the next time it runs here
    beyond_the_call: bool  # into one that outlives the call (an attribute, an object's item)


Stores = frozenset[tuple[str, bool]]  # (dotted name, into an object): what a statement stores
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_PAST = (*_SCOPES, *LEAVES)  # stores nothing, and holds nothing that does


def kept(body: list[ast.stmt], subjects: frozenset[str], memo: dict[int, Stores]) -> Kept:
    """Whether a branch stores into one of the tested values (an assignment, an item, a
    ``setattr``, ``cache.setdefault``/``update``), and whether into one that outlives the call
    (``self._loader = ...``, ``self._cache[key] = ...``, ``_CACHE[key] = ...``); a local name
    (``dataloader = make()`` under ``if dataloader is None:``) is None again on the next call.
    ``memo``: what each statement of the file stores, read once (the parsed file's)."""
    if not subjects:
        return Kept(False, False)
    stored = set().union(*(_statement_stores(statement, memo) for statement in body))
    covered = [(target, into) for target, into in stored if _covers(target, subjects)]
    return Kept(bool(covered), any(into or "." in target for target, into in covered))


def _covers(target: str, subjects: frozenset[str]) -> bool:
    return any(target == s or s.startswith(target + ".") for s in subjects)


def _statement_stores(statement: ast.stmt, memo: dict[int, Stores]) -> Stores:
    """The names a statement stores into (defs, classes and lambdas in it aside), each with
    whether the store went into an object (an item, a ``setattr``, a ``setdefault``/``update``)
    rather than rebinding the name; the statements inside it are read once per file."""
    if isinstance(statement, _SCOPES):
        return frozenset()
    known = memo.get(id(statement))
    if known is not None:
        return known
    found: set[tuple[str, bool]] = set()
    pending: list[ast.AST] = [statement]
    roles = _ROLES
    while pending:
        node: Any = pending.pop()
        kind = node.__class__
        if kind is ast.Call:
            found.update((name, True) for name in _call_stores(node))
        elif kind in _ASSIGNMENTS:
            for target in node.targets if kind is ast.Assign else (node.target,):
                into_object = target.__class__ is ast.Subscript
                found.update((name, into_object) for name in _target_names(target))
        for field in NODE_FIELDS[kind]:
            value: Any = getattr(node, field, None)
            for child in value if value.__class__ is list else (value,):
                role = roles[child.__class__]
                if role is _STATEMENT:
                    found |= _statement_stores(child, memo)
                elif role is _ENTERED:
                    pending.append(child)
    stores = memo[id(statement)] = frozenset(found)
    return stores


_STATEMENT, _ENTERED, _PASSED = "statement", "entered", "passed"
_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})


class _Roles(dict[type, str]):
    """Per class of a field's value, what :func:`_statement_stores` does with it: read a
    statement's stores (through the memo), enter a node that may hold a store, or pass it
    (a def, class or lambda, a leaf, a name, anything that is no node): decided once per
    class, not by three ``isinstance`` tests per child."""

    def __missing__(self, kind: type) -> str:
        if not issubclass(kind, ast.AST) or issubclass(kind, _PAST):
            role = _PASSED
        else:
            role = _STATEMENT if issubclass(kind, ast.stmt) else _ENTERED
        self[kind] = role
        return role


_ROLES = _Roles()


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return {name for item in target.elts for name in _target_names(item)}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, ast.Subscript):
        return _target_names(target.value)
    name = dotted(target)
    return {".".join(name)} if name else set()


def _call_stores(node: ast.Call) -> set[str]:
    func = dotted(node.func)
    if not func:
        return set()
    if func == ("setattr",) and len(node.args) >= 2:
        owner, attribute = dotted(node.args[0]), node.args[1]
        if owner and isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
            return {".".join((*owner, attribute.value))}
        return set()
    if len(func) > 1 and func[-1] in _KEEPERS:
        return {".".join(func[:-1])}
    return set()


def once_like(test: ast.expr) -> bool:
    """``x is None``, ``x is not None``, ``not x``, ``hasattr(...)``, a bare flag, a cache
    lookup (``key not in self._cache``); ``a and b`` when one side is one of these."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return once_like(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(once_like(value) for value in test.values)
    if isinstance(test, (ast.Name, ast.Attribute)):
        return True
    if isinstance(test, ast.Call):
        return dotted(test.func) in (("hasattr",), ("getattr",))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], (ast.In, ast.NotIn)):
            return True
        right = test.comparators[0]
        none = isinstance(right, ast.Constant) and right.value is None
        return none and isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
    return False


def built_once(
    test: ast.expr, body: list[ast.stmt], memo: dict[int, Stores], known: dict[int, Kept]
) -> Kept:
    """The one test of a built-once guard, for a branch ``body`` under ``test``: a one-shot
    test (:func:`once_like`) of a value the branch keeps (:func:`kept`). Any other branch runs
    every time its function does (``Kept(False, False)``). ``memo``: as :func:`kept`'s;
    ``known``: the answer for each branch asked (the id of its list of statements), as the
    call summary and the loader facts both ask it of an ``if``'s body."""
    answer = known.get(id(body))
    if answer is None:
        answer = known[id(body)] = kept(body, tested(test), memo) if once_like(test) else _NOT
    return answer


_NOT = Kept(False, False)


def requires_persistent(test: ast.expr) -> bool:
    """Whether a condition holds only with persistent workers on: a flag named like
    ``persistent_workers`` (``self.args.dataloader_persistent_workers``), alone or as one side
    of ``and``. Its body runs only when the workers are kept, so a new loader built there keeps
    one more pool alive instead of starting the ordinary per-pass one."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(requires_persistent(value) for value in test.values)
    name = dotted(test)
    if not name:
        return False
    return "persistent_workers" in name[-1]
