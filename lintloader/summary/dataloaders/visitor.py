"""The loader facts: a rider of the summary's one walk (``summary/walk.py``) that fills
:class:`LoaderFacts` per function (its loops, the calls that may construct a DataLoader or a
Trainer with their arguments and context, ``iter()`` calls, returns) from the hooks the walk
calls as it passes. What it reads off expressions, bounds, dicts and loader classes lives in
the modules beside it."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lintloader.domain.torch_api import LOADER_FACT_TOKENS as _RELEVANT
from lintloader.domain.torch_api import LOADER_KEYWORDS as _LOADER_KEYWORDS
from lintloader.domain.torch_api import POOL_FACTORIES as _POOL_FACTORIES
from lintloader.domain.torch_api import TRAINER_KEYWORDS as _TRAINER_KEYWORDS
from lintloader.summary.config_defaults import Walked, class_defaults, class_stores
from lintloader.summary.dataloaders.bounds import Bounds, literal, positive_test, zero_test
from lintloader.summary.dataloaders.dict_flow import DictFlows
from lintloader.summary.dataloaders.expressions import (
    bound_names,
    decorator_name,
    forget_defaults,
    iterated,
    literal_defaults,
    names,
    rebound_names,
    returns_only,
)
from lintloader.summary.dataloaders.loader_classes import (
    class_constructors,
    constructor_like,
    constructor_params,
    container_items,
    picked,
)
from lintloader.summary.exhaustion import catches_exhaustion
from lintloader.summary.guards import Kept, built_once, once_like, tested
from lintloader.summary.helpers import (
    Scope,
    call_arguments,
    dotted,
    loop_info,
    one_line,
    qualname_in,
)
from lintloader.summary.model import (
    MODULE_SCOPE,
    Argument,
    CallContext,
    Condition,
    Dotted,
    FunctionFacts,
    IterCall,
    LoaderCall,
    LoaderFacts,
    Site,
    TrainerCall,
)
from lintloader.summary.periodic import never_holds
from lintloader.summary.source_text import ParsedSource
from lintloader.summary.start_methods import context_branches
from lintloader.summary.walk import Body, Hooks, Rider

RETURNED: Dotted = ("<return>",)
UNPACKED: Dotted = ("<unpack>",)  # assigned to a tuple or list of targets: ``x, y = ...``
_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property"})
# the last names of the calls :meth:`LoaderRider._watched_call` reads
_WATCHED = frozenset({"setdefault", "update", "pop", "iter", "next"})
_NO_KEYWORDS: frozenset[str] = frozenset()


def loader_rider(parsed: ParsedSource, source: bytes) -> LoaderRider | None:
    """The rider that gathers ``parsed``'s loader facts on the summary's walk; None for a file
    that mentions nothing these facts are about (a loader, ``iter(``, a Trainer)."""
    if not any(token in source for token in _RELEVANT):
        return None
    return LoaderRider(LoaderFacts(), parsed)


class _Pending(NamedTuple):
    """An open ``if`` branch or ``except`` around the node being visited (turned into a
    :class:`Condition` only for a call that gets recorded)."""

    kind: str  # "if", "except" or "exhaustion" (an except catching an iterator running out)
    node: ast.expr | None  # the test (the exception type)
    negated: bool  # the ``else`` branch
    depth: int  # loops of the function open around it
    once: bool  # the branch keeps the value it tests


@dataclass(eq=False, repr=False)
class _FunctionState:
    qualname: str
    facts: FunctionFacts
    open_loops: list[int] = field(default_factory=list)
    conditions: list[_Pending] = field(default_factory=list)
    assigned: list[set[str]] = field(default_factory=list)  # per open loop
    cached: bool = False
    defaults: dict[str, int | bool | None] = field(default_factory=dict)  # literal defaults
    constructors: dict[str, Dotted] = field(default_factory=dict)  # local name -> class
    dicts: DictFlows = field(default_factory=DictFlows)
    bounds: Bounds = field(default_factory=Bounds)
    first: tuple[int, int] = (0, 0)  # loader and trainer calls recorded before its body


class LoaderRider(Rider):
    """What the walk tells it, by node class (:meth:`hooks`) and around bodies and branches."""

    def __init__(self, facts: LoaderFacts, parsed: ParsedSource) -> None:
        self.facts = facts
        self.parsed = parsed
        self.scopes: list[Scope] = []  # enclosing classes and functions
        self.states: list[_FunctionState] = [self._state(MODULE_SCOPE, cached=False)]
        self.bindings: dict[int, Dotted] = {}  # id(call node) -> where its value goes
        self.aliases: set[str] = set()
        self.handled: set[int] = set()
        self.once: set[int] = set()  # calls whose value is kept once (`cache.setdefault(k, ...)`)
        self.exhaustion: set[int] = set()  # id(handler) catching an iterator's exhaustion
        self.class_constructors: list[dict[str, Dotted]] = []
        self.self_names: list[str | None] = []  # per open function: its instance parameter
        # name -> the classes a tuple, list or dict of classes holds (``LOADERS[kind](...)``)
        self.containers: dict[str, tuple[Dotted, ...]] = {}

    def hooks(self) -> Hooks:
        before: dict[type, Callable[[Any], None]] = {
            ast.ImportFrom: self.visit_ImportFrom,
            ast.If: self.enter_if,
            ast.Try: self.visit_Try,
            ast.ExceptHandler: self.enter_handler,
            ast.Assign: self.visit_Assign,
            ast.Delete: self.visit_Delete,
            ast.AnnAssign: self.visit_AnnAssign,
            ast.AugAssign: self.visit_AugAssign,
            ast.Return: self.visit_Return,
            ast.Call: self.visit_Call,
        }
        after: dict[type, Callable[[Any], None]] = {
            ast.If: self.leave_if,
            ast.ExceptHandler: self.leave_handler,
        }
        return before, after

    def finish(self, tree: ast.Module) -> LoaderFacts:
        """The facts, once the walk is over."""
        if isinstance(tree, ast.Module):
            walked: Walked = {}  # each setup method walked once for both
            self.facts.class_defaults = class_defaults(tree, walked)
            self.facts.class_stores = class_stores(tree, walked)
        return self.facts

    def body_enter(self, node: Body, scope: ast.AST | None) -> None:
        if isinstance(node, ast.ClassDef):
            self.enter_class(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.enter_function(node)
        elif isinstance(node, ast.While):
            self._open_loop(node, f"while {self.parsed.segment(node.test)}", (), None, scope)
        else:
            header = f"for {self.parsed.segment(node.target)} in {self.parsed.segment(node.iter)}"
            targets, iterable = tuple(bound_names(node.target)), iterated(node.iter)
            self._open_loop(node, header, targets, iterable, scope)

    def body_leave(self, node: Body) -> None:
        if isinstance(node, ast.ClassDef):
            self.class_constructors.pop()
            self.scopes.pop()
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.leave_function(node)
        else:
            self._close_loop()

    # -- scaffolding ---------------------------------------------------------------------------
    def _state(self, qualname: str, cached: bool) -> _FunctionState:
        facts = self.facts.functions.setdefault(qualname, FunctionFacts(cached=cached))
        return _FunctionState(qualname, facts, cached=cached)

    @property
    def state(self) -> _FunctionState:
        return self.states[-1]

    def _self_name(self) -> str | None:
        """The first parameter of the method being visited (``self``), if it is one."""
        return self.self_names[-1] if self.self_names else None

    def _qualname(self, name: str) -> str:
        return qualname_in(self.scopes, name)

    def _site(self, node: ast.AST) -> Site:
        text, column, end_column = self.parsed.placed(node)
        line: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno  # type: ignore[attr-defined]
        return Site(line, column, one_line(text), end_line=end, end_column=end_column)

    def _context(self, node: ast.AST | None = None) -> CallContext:
        state = self.state
        loop = state.open_loops[-1] if state.open_loops else -1
        conditions = tuple(self._condition(p) for p in state.conditions)
        cached = state.cached or id(node) in self.once
        return CallContext(loop=loop, conditions=conditions, cached=cached)

    def _argument(self, keyword: str | None, star: str, value: ast.expr, via: str = "") -> Argument:
        is_literal, value_literal = literal(value)
        from_default = False
        if isinstance(value, ast.Name) and value.id in self.state.defaults:
            value_literal, from_default = self.state.defaults[value.id], True
        return Argument(
            keyword=keyword,
            text=one_line(self.parsed.segment(value)),
            is_literal=is_literal,
            literal=value_literal,
            lower_bound=self.state.bounds.of(value),
            names=names(value),
            star=star,
            from_default=from_default,
            via=via,
            methods=context_branches(value) if keyword == "multiprocessing_context" else (),
        )

    def _arguments(self, node: ast.Call) -> tuple[Argument, ...]:
        found: list[Argument] = []
        for keyword, star, value in call_arguments(node):
            flow = self.state.dicts.passed(value) if star == "**" else None
            if flow is None:
                found.append(self._argument(keyword, star, value))
                continue
            via, entries, complete = flow
            found.extend(self._argument(key, "", item, via) for key, item in entries)
            if not complete:
                found.append(self._argument(keyword, star, value))
        return tuple(found)

    # -- scopes --------------------------------------------------------------------------------
    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "DataLoader":
                self.aliases.add(alias.asname or alias.name)
        self.facts.loader_aliases = frozenset(self.aliases)

    def enter_class(self, node: ast.ClassDef) -> None:
        """Its body is next (its decorators, bases and keywords were visited outside it)."""
        self.scopes.append(("class", self._qualname(node.name)))
        self.class_constructors.append(class_constructors(node, self.aliases))

    def enter_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Its body is next (its signature was visited outside it)."""
        in_class = bool(self.scopes) and self.scopes[-1][0] == "class"
        qualname = self._qualname(node.name)
        self.scopes.append(("function", qualname))
        cached = any(decorator_name(d) in _CACHE_DECORATORS for d in node.decorator_list)
        state = self._state(qualname, cached)
        state.defaults = literal_defaults(node)
        state.constructors = constructor_params(node, self.aliases)
        if in_class and self.class_constructors and node.args.args:
            self_name = node.args.args[0].arg
            for attribute, name in self.class_constructors[-1].items():
                state.constructors[f"{self_name}.{attribute}"] = name
        self.states.append(state)
        self.self_names.append(node.args.args[0].arg if in_class and node.args.args else None)
        state.first = len(state.facts.loader_calls), len(state.facts.trainer_calls)

    def leave_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._forget_rebound(node, self.state.facts, self.state.first)
        self.self_names.pop()
        self.scopes.pop()
        self.states.pop()

    def _forget_rebound(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        facts: FunctionFacts,
        first: tuple[int, int],
    ) -> None:
        """A parameter the body binds again (``n = n or os.cpu_count()``, ``if not n: n = 4``)
        may hold anything else: the arguments ``node`` added that read it lose its literal
        default (the body is walked again only when one of them has one)."""
        loaders, trainers = facts.loader_calls[first[0] :], facts.trainer_calls[first[1] :]
        calls: list[LoaderCall | TrainerCall] = [*loaders, *trainers]
        if not any(a.from_default for c in calls for a in c.arguments):
            return
        rebound = rebound_names(node)
        facts.loader_calls[first[0] :] = [
            c._replace(arguments=forget_defaults(c.arguments, rebound)) for c in loaders
        ]
        facts.trainer_calls[first[1] :] = [
            c._replace(arguments=forget_defaults(c.arguments, rebound)) for c in trainers
        ]

    # -- loops (opened by body_enter once the header was visited) ------------------------------
    def _open_loop(
        self,
        node: ast.For | ast.AsyncFor | ast.While,
        header: str,
        targets: tuple[str, ...],
        iterable: Dotted | None,
        scope: ast.AST | None,
    ) -> None:
        state = self.state
        loop = loop_info(
            self.parsed,
            node,
            header,
            scope,
            targets=targets,
            iterable=iterable,
            parent=state.open_loops[-1] if state.open_loops else -1,
        )
        state.facts.loops.append(loop)
        state.open_loops.append(len(state.facts.loops) - 1)
        state.assigned.append(set(targets))

    def _close_loop(self) -> None:
        state = self.state
        index = state.open_loops.pop()
        assigned = state.assigned.pop()
        if state.assigned:
            state.assigned[-1] |= assigned
        loop = state.facts.loops[index]
        state.facts.loops[index] = loop._replace(assigned=frozenset(assigned))

    # -- conditions (kept as nodes; turned into text only for a call that gets recorded) -------
    def _condition(self, pending: _Pending) -> Condition:
        node = pending.node
        text = self.parsed.segment(node) if node is not None else ""
        if pending.kind in ("except", "exhaustion"):
            return Condition(
                text=one_line(f"except {text}"),
                negated=False,
                once=False,
                persistent=False,
                stop_iteration=pending.kind == "exhaustion",
                loop_depth=pending.depth,
            )
        assert node is not None
        return Condition(
            text=one_line(text),
            negated=pending.negated,
            once=pending.once,
            persistent="persistent_workers" in text,
            stop_iteration=False,
            loop_depth=pending.depth,
            dead=never_holds(node),
        )

    def _push(self, kind: str, node: ast.expr | None, negated: bool, once: bool = False) -> None:
        state = self.states[-1]
        state.conditions.append(_Pending(kind, node, negated, len(state.open_loops), once))

    def enter_if(self, node: ast.If) -> None:
        """Before its test: `if self._loader is not None: return self._loader` caches."""
        state = self.state
        if state.open_loops or not once_like(node.test):
            return
        if returns_only(node.body, tested(node.test)):
            state.cached = True
            state.facts.cached_after = state.facts.cached_after or node.end_lineno or node.lineno

    def branch_enter(self, node: ast.If, holds: bool) -> None:
        branch = node.body if holds else node.orelse
        kept_here = built_once(node.test, branch, self.parsed.stores, self.parsed.once)
        if holds and kept_here.beyond_the_call:
            last: int = node.body[-1].end_lineno or node.body[-1].lineno
            self.state.facts.kept_blocks.append((node.body[0].lineno, last))
        self._push("if", node.test, not holds, self._one_shot(kept_here))

    def branch_leave(self, node: ast.If) -> None:
        self._pop_condition()

    def leave_if(self, node: ast.If) -> None:
        state = self.state
        state.bounds.zero_mapped(node, conditional=bool(state.conditions))

    def _one_shot(self, branch: Kept) -> bool:
        """Inside a loop of this function, a branch that keeps the tested value runs once per
        loop; outside every loop it runs once per call, so only a value kept beyond the call
        (an attribute, an item) makes it one-shot for the callers' loops."""
        return branch.anywhere if self.state.open_loops else branch.beyond_the_call

    def visit_Try(self, node: ast.Try) -> None:
        self.exhaustion.update(id(h) for h in node.handlers if catches_exhaustion(node.body, h))

    def enter_handler(self, node: ast.ExceptHandler) -> None:
        kind = "exhaustion" if id(node) in self.exhaustion else "except"
        self._push(kind, node.type, False)

    def leave_handler(self, node: ast.ExceptHandler) -> None:
        self._pop_condition()

    def _pop_condition(self) -> None:
        """Leave a branch: keys it dropped from a dict (``cfg.pop("k")``) are back after it."""
        state = self.state
        state.conditions.pop()
        state.dicts.branch_left(len(state.conditions))

    # -- bindings ------------------------------------------------------------------------------
    def _note_assigned(self, target: ast.expr) -> None:
        if self.state.assigned:
            self.state.assigned[-1].update(bound_names(target))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._note_assigned(target)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            self.state.bounds.assigned(name, node.value, conditional=bool(self.state.conditions))
        if len(node.targets) == 1:
            target = node.targets[0]
            bound = UNPACKED if isinstance(target, (ast.Tuple, ast.List)) else dotted(target)
            if bound:
                self._bind(node.value, bound)
                self._track_value(bound, node.value)
                self._track_container(bound, node.value)
            elif isinstance(target, ast.Subscript):
                self.state.dicts.item_set(target, self._guarded_true(node.value))

    def _track_value(self, bound: Dotted, value: ast.expr) -> None:
        """Follow dicts (for ``**name``) and classes (``loader_cls = DataLoader``) by name."""
        state = self.state
        if len(bound) != 1:
            return
        name = bound[0]
        source = dotted(value)
        if source and len(source) >= 2 and source[0] != name and source[0] == self._self_name():
            state.facts.attribute_aliases[name] = source
        else:
            state.facts.attribute_aliases.pop(name, None)
        state.constructors.pop(name, None)
        if state.dicts.assigned(name, value):
            return
        source = dotted(value)
        if source and ".".join(source) in state.constructors:
            state.constructors[name] = state.constructors[".".join(source)]
        elif source and constructor_like(source, self.aliases):
            state.constructors[name] = source

    def _track_container(self, bound: Dotted, value: ast.expr) -> None:
        """``_iterators = (MultiProcessIter, SingleProcessIter)``, ``LOADERS = {"train":
        DataLoader}``: a subscript of it, called, calls one of these classes."""
        name = ".".join(bound)
        items = container_items(value)
        if items:
            self.containers[name] = items
        else:
            self.containers.pop(name, None)

    def _guarded_true(self, value: ast.expr) -> ast.expr:
        """``if n > 0: kwargs["k"] = True``: the dict holds ``k`` only where ``n > 0`` holds, so
        a later ``**kwargs`` passes ``k=n > 0`` (the test), not a literal True."""
        if not (isinstance(value, ast.Constant) and value.value is True):
            return value
        for pending in reversed(self.state.conditions):
            test = pending.node
            if pending.kind == "if" and not pending.negated and test and positive_test(test):
                return test
        return value

    def _drop_key(self, name: str, key: ast.expr) -> None:
        """``cfg.pop("k")`` / ``del cfg["k"]``: a later ``**cfg`` in the same branch no longer
        passes ``k``; after an ordinary ``if`` it does again (the other path kept it), after
        ``if n == 0:`` it does not (the other path has workers)."""
        conditions = self.state.conditions
        last = conditions[-1] if conditions else None
        zero = (
            last is not None
            and last.kind == "if"
            and last.node is not None
            and not last.negated
            and zero_test(last.node) is not None
        )
        self.state.dicts.key_dropped(name, key, len(conditions), back_after=not zero)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                self._drop_key(target.value.id, target.slice)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._note_assigned(node.target)
        bound = dotted(node.target)
        if node.value is not None and bound:
            self._bind(node.value, bound)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._note_assigned(node.target)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            name = dotted(node.value)
            if name:
                self.state.facts.returns.append(name)
            self._bind(node.value, RETURNED)

    def _bind(self, value: ast.expr, target: Dotted) -> None:
        if isinstance(value, ast.Call):
            self.bindings[id(value)] = target
            func = dotted(value.func)
            if func and func[-1] == "next" and value.args:
                inner = value.args[0]
                if isinstance(inner, ast.Call):
                    self.bindings[id(inner)] = target
        elif isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            # `self.loader = self.loader or DataLoader(...)`: built once.
            self._bind(value.values[-1], target)

    # -- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func) or picked(node.func, self.containers, self.aliases)
        if name is not None:
            self._record_call(node, name)

    def _record_call(self, node: ast.Call, name: Dotted) -> None:
        last = name[-1]
        if last in _WATCHED:
            self._watched_call(node, name)
        keywords = {k.arg for k in node.keywords if k.arg} if node.keywords else _NO_KEYWORDS
        if last == "Trainer" or keywords & _TRAINER_KEYWORDS:
            self.state.facts.trainer_calls.append(
                TrainerCall(
                    target=name,
                    site=self._site(node),
                    arguments=self._arguments(node),
                    context=self._context(),
                )
            )
        constructors = self.state.constructors
        constructor = constructors.get(".".join(name)) if constructors else None
        if (
            constructor
            or keywords & _LOADER_KEYWORDS
            or "loader" in last.lower()
            or name[0] in self.aliases
            or last in _POOL_FACTORIES
        ):
            self.state.facts.loader_calls.append(
                LoaderCall(
                    target=constructor or name,
                    site=self._site(node),
                    arguments=self._arguments(node),
                    context=self._context(node),
                    bound_to=self.bindings.get(id(node)),
                )
            )

    def _watched_call(self, node: ast.Call, name: Dotted) -> None:
        """A call named like one the facts follow: a cache's ``setdefault``, a dict's ``update``
        or ``pop``, ``iter()``, ``next(iter())``."""
        if name[-1] == "setdefault" and len(node.args) == 2 and isinstance(node.args[1], ast.Call):
            self.once.add(id(node.args[1]))  # `cache.setdefault(key, DataLoader(...))`
        if name[-1] == "update" and len(name) == 2:
            self.state.dicts.updated(name[0], node)
        if name[-1] == "pop" and len(name) == 2 and node.args:
            self._drop_key(name[0], node.args[0])  # `cfg.pop("persistent_workers")`
        if name == ("iter",) and node.args:
            self._record_iter(node, in_next=False)
        elif name == ("next",) and node.args and isinstance(node.args[0], ast.Call):
            inner = node.args[0]
            if dotted(inner.func) == ("iter",) and inner.args:
                self._record_iter(inner, in_next=True, site_node=node)

    def _record_iter(self, node: ast.Call, in_next: bool, site_node: ast.AST | None = None) -> None:
        if id(node) in self.handled:  # the iter() inside next(iter(x)), already recorded
            return
        self.handled.add(id(node))
        self.state.facts.iter_calls.append(
            IterCall(
                argument=dotted(node.args[0]),
                site=self._site(site_node or node),
                context=self._context(),
                in_next=in_next,
                bound_to=self.bindings.get(id(node)),
            )
        )
