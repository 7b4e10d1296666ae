"""The second summary visitor: per-file facts about DataLoader construction and use (LL2xx).

A second, small ``ast`` visitor that walks the same parsed file as the main summarizer and
fills :class:`LoaderFacts`: plain, picklable data per function (keyed by the same qualnames as
``FileSummary.functions``):

* ``loops``: every ``for``/``while`` loop, with the names it binds and assigns, what it iterates;
* ``loader_calls``: calls that may construct a DataLoader (the linker decides which really do),
  with their arguments as source text and literal values, and the loop/guard context;
* ``iter_calls``: ``iter(x)`` and ``next(iter(x))``;
* ``trainer_calls``: calls that may construct a Lightning ``Trainer``;
* ``returns``: dotted names returned.

Nothing here resolves names: that is the linker's job (``lintloader/link/``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from lintloader.summary.config_defaults import class_defaults, class_stores
from lintloader.summary.exhaustion import catches_exhaustion
from lintloader.summary.guards import Kept, kept, tested
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
from lintloader.summary.source_text import ParsedSource
from lintloader.summary.walk import Walker
from lintloader.torch_api import CPU_COUNT_CALLS as _CPU_COUNTS
from lintloader.torch_api import LOADER_FACT_TOKENS as _RELEVANT
from lintloader.torch_api import LOADER_KEYWORDS as _LOADER_KEYWORDS
from lintloader.torch_api import POOL_FACTORIES as _POOL_FACTORIES
from lintloader.torch_api import TRAINER_KEYWORDS as _TRAINER_KEYWORDS

RETURNED: Dotted = ("<return>",)
UNPACKED: Dotted = ("<unpack>",)  # assigned to a tuple or list of targets: ``x, y = ...``
# Calls recorded as candidate DataLoader constructions: a keyword only a DataLoader-like call
# takes, a name that looks like a loader, or a local alias of an imported ``DataLoader``.
_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "islice", "cycle"})
_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property"})


def summarize_loaders(parsed: ParsedSource, source: bytes) -> LoaderFacts | None:
    """Walk ``parsed`` once more; None, without a walk, for a file that mentions nothing these
    facts are about (a loader, ``iter(``, a Trainer)."""
    if not any(token in source for token in _RELEVANT):
        return None
    facts = LoaderFacts()
    _LoaderVisitor(facts, parsed).visit(parsed.tree)
    if isinstance(parsed.tree, ast.Module):
        facts.class_defaults = class_defaults(parsed.tree)
        facts.class_stores = class_stores(parsed.tree)
    return facts


# -- expression helpers ------------------------------------------------------------------------
def _literal(node: ast.expr) -> tuple[bool, int | bool | None]:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, int)):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return True, -node.operand.value
    return False, None


def _lower_bound(node: ast.expr) -> int | None:
    """A proven minimum: a literal, ``max(1, n)``, ``os.cpu_count()`` (at least 1), ``min`` of
    bounded values, ``len(os.sched_getaffinity(0))``."""
    is_literal, value = _literal(node)
    if is_literal:
        return int(value) if isinstance(value, int) else None
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return _lower_bound(node.values[-1])  # `n or os.cpu_count()`: the last when all are 0
    if not isinstance(node, ast.Call):
        return None
    func = dotted(node.func)
    if func in _CPU_COUNTS:
        return 1
    arguments = [a for a in node.args if not _starred(a)]
    if func == ("len",) and arguments and isinstance(arguments[0], ast.Call):
        inner = dotted(arguments[0].func)
        return 1 if inner and inner[-1] == "sched_getaffinity" else None
    bounds = [_lower_bound(a) for a in arguments]
    if func in (("max",), ("builtins", "max")):
        known = [b for b in bounds if b]
        return max(known) if known else None
    if func in (("min",), ("builtins", "min")) and bounds and None not in bounds:
        return min(b for b in bounds if b is not None)
    return None


def _zero_test(test: ast.expr) -> str | None:
    """The name a test checks for 0: ``not n``, ``n == 0``, ``n <= 0``, ``n < 1``, ``n is None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand.id if isinstance(test.operand, ast.Name) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Constant)):
        return None
    zero = {ast.Eq: 0, ast.LtE: 0, ast.Lt: 1}.get(type(op))
    none = isinstance(op, (ast.Is, ast.Eq)) and right.value is None
    return left.id if none or (zero is not None and right.value == zero) else None


def _positive_test(test: ast.expr) -> bool:
    """A test that a count is above 0: ``n > 0``, ``n >= 1``, ``n != 0`` (``n`` a name or an
    attribute such as ``args.workers``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (dotted(left) and isinstance(right, ast.Constant) and type(right.value) is int):
        return False
    above = {ast.Gt: 0, ast.GtE: 1, ast.NotEq: 0}.get(type(op))
    return above is not None and right.value == above


def _container_items(node: ast.expr) -> tuple[Dotted, ...]:
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


def _starred(node: ast.expr) -> bool:
    return isinstance(node, ast.Starred)


def _names(node: ast.expr) -> tuple[str, ...]:
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


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound_names(e)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    name = dotted(target)
    return [".".join(name)] if name else []


def _iterated(node: ast.expr) -> Dotted | None:
    """What a ``for`` loop iterates, looking through ``enumerate``/``tqdm``/``iter``/``zip``."""
    name = dotted(node)
    if name:
        return name
    if isinstance(node, ast.Call) and node.args:
        func = dotted(node.func)
        if func and func[-1] in _WRAPPERS:
            return _iterated(node.args[0])
    return None


def _once_like(test: ast.expr) -> bool:
    """``x is None``, ``x is not None``, ``not x``, ``hasattr(...)``, a bare flag, a cache
    lookup (``key not in self._cache``); ``a and b`` when one side is one of these."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _once_like(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_once_like(value) for value in test.values)
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


def _returns_only(body: list[ast.stmt], subjects: frozenset[str]) -> bool:
    """The body only returns something kept, the very value the test looked at
    (``return self._loader``, ``return self._cache[key]``, ``return prepare(self._loader)``),
    not a new object or a constant (``return DataLoader([])``, ``return None``)."""
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    value = body[0].value
    return value is not None and _kept_value(value) and bool(subjects & set(_names(value)))


def _kept_value(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    if isinstance(node, ast.Call):
        return any(_kept_value(a) for a in node.args if not _starred(a))
    return False


def _constructor_like(name: Dotted | None, aliases: set[str]) -> bool:
    """A dotted name that may be a DataLoader class passed as a value (the linker decides)."""
    if not name:
        return False
    return name[0] != "self" and (name[-1] in aliases or "Loader" in name[-1])


def _defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """Every parameter that has a default, with it."""
    arguments = node.args
    positional = (*arguments.posonlyargs, *arguments.args)
    with_default = positional[len(positional) - len(arguments.defaults) :]
    pairs = list(zip(with_default, arguments.defaults, strict=True))
    keyword_only = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    return pairs + [(p, d) for p, d in keyword_only if d is not None]


def _constructor_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, aliases: set[str]
) -> dict[str, Dotted]:
    """Parameters whose default is a class that may be a DataLoader (``loader_cls=DataLoader``)."""
    found: dict[str, Dotted] = {}
    for param, default in _defaults(node):
        name = dotted(default)
        if name and _constructor_like(name, aliases):
            found[param.arg] = name
    return found


def _literal_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int | bool | None]:
    found: dict[str, int | bool | None] = {}
    for param, default in _defaults(node):
        is_literal, value = _literal(default)
        if is_literal:
            found[param.arg] = value
    return found


def _rebound_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Every name the body binds or deletes (nested functions included: they may say
    ``nonlocal``)."""
    return {
        n.id
        for statement in node.body
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


def _forget_defaults(arguments: tuple[Argument, ...], rebound: set[str]) -> tuple[Argument, ...]:
    return tuple(
        a._replace(from_default=False, literal=None) if a.from_default and a.text in rebound else a
        for a in arguments
    )


def _class_constructors(node: ast.ClassDef, aliases: set[str]) -> dict[str, Dotted]:
    """``self.<attr>`` that a method sets to a possible DataLoader class, directly
    (``self.loader_cls = DataLoader``) or from a parameter defaulting to one."""
    found: dict[str, Dotted] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        params = _constructor_params(method, aliases)
        for statement in method.body:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target, value = dotted(statement.targets[0]), dotted(statement.value)
            if not target or len(target) != 2 or target[0] != self_name or not value:
                continue
            if len(value) == 1 and value[0] in params:
                found[target[1]] = params[value[0]]
            elif _constructor_like(value, aliases):
                found[target[1]] = value
    return found


def _dict_entries(node: ast.expr) -> tuple[list[tuple[str, ast.expr]], bool] | None:
    """Keys and values of ``{"k": v}`` / ``dict(k=v)``, and whether every key is known."""
    if isinstance(node, ast.Dict):
        entries, complete = [], True
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries.append((key.value, value))
            else:
                complete = False  # `**other` or a computed key
        return entries, complete
    if isinstance(node, ast.Call) and dotted(node.func) == ("dict",) and not node.args:
        entries = [(k.arg, k.value) for k in node.keywords if k.arg]
        return entries, all(k.arg for k in node.keywords)
    return None


@dataclass
class _DictFlow:
    """What a function has put into a dict by name so far (for ``**name`` at a call)."""

    entries: list[tuple[str, ast.expr]]
    complete: bool


def _decorator_name(decorator: ast.expr) -> str:
    name = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    return name[-1] if name else ""


# kind ("if"/"except"/"exhaustion"), node, negated, depth, whether the branch keeps the
# value it tests
_Pending = tuple[str, "ast.expr | None", bool, int, bool]


@dataclass
class _FunctionState:
    qualname: str
    facts: FunctionFacts
    open_loops: list[int] = field(default_factory=list)
    conditions: list[_Pending] = field(default_factory=list)
    assigned: list[set[str]] = field(default_factory=list)  # per open loop
    cached: bool = False
    defaults: dict[str, int | bool | None] = field(default_factory=dict)  # literal defaults
    constructors: dict[str, Dotted] = field(default_factory=dict)  # local name -> class
    dicts: dict[str, _DictFlow] = field(default_factory=dict)
    bounds: dict[str, int] = field(default_factory=dict)  # local name -> proven minimum > 0
    # keys dropped from `dicts` inside a branch: (condition depth, dict name, entry)
    dropped: list[tuple[int, str, tuple[str, ast.expr]]] = field(default_factory=list)


class _LoaderVisitor(Walker):
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
        text = one_line(self.parsed.segment(node))
        line: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno  # type: ignore[attr-defined]
        column, end_column = self.parsed.column(node), self.parsed.end_column(node)
        return Site(line, column, text, end, 0, end_column)

    def _context(self, node: ast.AST | None = None) -> CallContext:
        state = self.state
        loop = state.open_loops[-1] if state.open_loops else -1
        conditions = tuple(self._condition(p) for p in state.conditions)
        return CallContext(loop, conditions, state.cached or id(node) in self.once)

    def _argument(self, keyword: str | None, star: str, value: ast.expr, via: str = "") -> Argument:
        is_literal, literal = _literal(value)
        bound = _lower_bound(value)
        if bound is None and isinstance(value, ast.Name):
            bound = self.state.bounds.get(value.id)
        from_default = False
        if isinstance(value, ast.Name) and value.id in self.state.defaults:
            literal, from_default = self.state.defaults[value.id], True
        return Argument(
            keyword,
            one_line(self.parsed.segment(value)),
            is_literal,
            literal,
            bound,
            _names(value),
            star,
            from_default,
            via,
        )

    def _arguments(self, node: ast.Call) -> tuple[Argument, ...]:
        found: list[Argument] = []
        for keyword, star, value in call_arguments(node):
            flow = self._flow(value) if star == "**" else None
            if flow is None:
                found.append(self._argument(keyword, star, value))
                continue
            via, entries, complete = flow
            found.extend(self._argument(key, "", item, via) for key, item in entries)
            if not complete:
                found.append(self._argument(keyword, star, value))
        return tuple(found)

    def _flow(self, value: ast.expr) -> tuple[str, list[tuple[str, ast.expr]], bool] | None:
        """What ``**value`` passes, when the function built it: a dict literal, ``dict(...)``,
        or a name the function filled (``cfg = {...}``, ``kwargs["k"] = v``)."""
        literal = _dict_entries(value)
        if literal is not None:
            return "dict", *literal
        if isinstance(value, ast.Name) and value.id in self.state.dicts:
            flow = self.state.dicts[value.id]
            return value.id, list(flow.entries), flow.complete
        return None

    # -- scopes --------------------------------------------------------------------------------
    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "DataLoader":
                self.aliases.add(alias.asname or alias.name)
        self.facts.loader_aliases = frozenset(self.aliases)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all((*node.decorator_list, *node.bases, *node.keywords))
        self.scopes.append(("class", self._qualname(node.name)))
        self.class_constructors.append(_class_constructors(node, self.aliases))
        self.visit_all(node.body)
        self.class_constructors.pop()
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.visit_signature(node)
        in_class = bool(self.scopes) and self.scopes[-1][0] == "class"
        qualname = self._qualname(node.name)
        self.scopes.append(("function", qualname))
        cached = any(_decorator_name(d) in _CACHE_DECORATORS for d in node.decorator_list)
        state = self._state(qualname, cached)
        state.defaults = _literal_defaults(node)
        state.constructors = _constructor_params(node, self.aliases)
        if in_class and self.class_constructors and node.args.args:
            self_name = node.args.args[0].arg
            for attribute, name in self.class_constructors[-1].items():
                state.constructors[f"{self_name}.{attribute}"] = name
        self.states.append(state)
        self.self_names.append(node.args.args[0].arg if in_class and node.args.args else None)
        first = len(state.facts.loader_calls), len(state.facts.trainer_calls)
        self.visit_all(node.body)
        self._forget_rebound(node, state.facts, first)
        self.self_names.pop()
        self.scopes.pop()
        self.states.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

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
        rebound = _rebound_names(node)
        facts.loader_calls[first[0] :] = [
            c._replace(arguments=_forget_defaults(c.arguments, rebound)) for c in loaders
        ]
        facts.trainer_calls[first[1] :] = [
            c._replace(arguments=_forget_defaults(c.arguments, rebound)) for c in trainers
        ]

    # -- loops ---------------------------------------------------------------------------------
    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit_all((node.target, node.iter))
        header = f"for {self.parsed.segment(node.target)} in {self.parsed.segment(node.iter)}"
        self._open_loop(node, header, tuple(_bound_names(node.target)), _iterated(node.iter))
        self.visit_all(node.body)
        self._close_loop()
        self.visit_all(node.orelse)

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        self.visit(node.test)
        self._open_loop(node, f"while {self.parsed.segment(node.test)}", (), None)
        self.visit_all(node.body)
        self._close_loop()
        self.visit_all(node.orelse)

    def _open_loop(
        self,
        node: ast.For | ast.AsyncFor | ast.While,
        header: str,
        targets: tuple[str, ...],
        iterable: Dotted | None,
    ) -> None:
        state = self.state
        loop = loop_info(
            self.parsed,
            node,
            header,
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
        kind, node, negated, depth, once = pending
        text = self.parsed.segment(node) if node is not None else ""
        if kind in ("except", "exhaustion"):
            exhausted = kind == "exhaustion"
            return Condition(one_line(f"except {text}"), False, False, False, exhausted, depth)
        assert node is not None
        once = once and _once_like(node)
        return Condition(one_line(text), negated, once, "persistent_workers" in text, False, depth)

    def _push(self, kind: str, node: ast.expr | None, negated: bool, once: bool = False) -> None:
        self.state.conditions.append((kind, node, negated, len(self.state.open_loops), once))

    def visit_If(self, node: ast.If) -> None:
        state = self.state
        subjects = tested(node.test)
        if not state.open_loops and _once_like(node.test) and _returns_only(node.body, subjects):
            state.cached = True  # `if self._loader is not None: return self._loader`
            state.facts.cached_after = state.facts.cached_after or node.end_lineno or node.lineno
        self.visit(node.test)
        body = kept(node.body, subjects)
        if body.beyond_the_call and _once_like(node.test):
            last: int = node.body[-1].end_lineno or node.body[-1].lineno
            state.facts.kept_blocks.append((node.body[0].lineno, last))
        self._push("if", node.test, False, self._one_shot(body))
        self.visit_all(node.body)
        self._pop_condition()
        if node.orelse:
            self._push("if", node.test, True, self._one_shot(kept(node.orelse, subjects)))
            self.visit_all(node.orelse)
            self._pop_condition()
        self._zero_mapped(node)

    def _one_shot(self, branch: Kept) -> bool:
        """Inside a loop of this function, a branch that keeps the tested value runs once per
        loop; outside every loop it runs once per call, so only a value kept beyond the call
        (an attribute, an item) makes it one-shot for the callers' loops."""
        return branch.anywhere if self.state.open_loops else branch.beyond_the_call

    def visit_Try(self, node: ast.Try) -> None:
        self.exhaustion.update(id(h) for h in node.handlers if catches_exhaustion(node.body, h))
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._push("exhaustion" if id(node) in self.exhaustion else "except", node.type, False)
        self.generic_visit(node)
        self._pop_condition()

    def _pop_condition(self) -> None:
        """Leave a branch: keys it dropped from a dict (``cfg.pop("k")``) are back after it."""
        state = self.state
        state.conditions.pop()
        depth = len(state.conditions)
        for name, entry in [(n, e) for d, n, e in state.dropped if d > depth]:
            flow = state.dicts.get(name)
            if flow is not None and all(key != entry[0] for key, _ in flow.entries):
                flow.entries.append(entry)
        state.dropped = [item for item in state.dropped if item[0] <= depth]

    # -- bindings ------------------------------------------------------------------------------
    def _note_assigned(self, target: ast.expr) -> None:
        if self.state.assigned:
            self.state.assigned[-1].update(_bound_names(target))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._note_assigned(target)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self._track_bound(node.targets[0].id, node.value)
        if len(node.targets) == 1:
            target = node.targets[0]
            bound = UNPACKED if isinstance(target, (ast.Tuple, ast.List)) else dotted(target)
            if bound:
                self._bind(node.value, bound)
                self._track_value(bound, node.value)
                self._track_container(bound, node.value)
            elif isinstance(target, ast.Subscript):
                self._track_item(target, node.value)
        self.generic_visit(node)

    def _track_bound(self, name: str, value: ast.expr) -> None:
        """``n = n or os.cpu_count()``, ``n = max(1, n)``: ``n`` cannot be 0 after it (an
        assignment under an ``if`` proves nothing, unless the ``if`` tests ``n`` for 0)."""
        state = self.state
        bound = _lower_bound(value)
        if bound is not None and bound > 0 and not state.conditions:
            state.bounds[name] = bound
        else:
            state.bounds.pop(name, None)

    def _zero_mapped(self, node: ast.If) -> None:
        """``if not n: n = os.cpu_count()`` / ``if n == 0: n = 1`` (no ``else``): ``n`` cannot be
        0 after the ``if``."""
        name = _zero_test(node.test)
        if name is None or node.orelse:
            return
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id == name
            ):
                bound = _lower_bound(statement.value)
                if bound is not None and bound > 0 and not self.state.conditions:
                    self.state.bounds[name] = bound

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
        state.dicts.pop(name, None)
        state.constructors.pop(name, None)
        entries = _dict_entries(value)
        if entries is not None:
            state.dicts[name] = _DictFlow(*entries)
            return
        source = dotted(value)
        if source and ".".join(source) in state.constructors:
            state.constructors[name] = state.constructors[".".join(source)]
        elif source and _constructor_like(source, self.aliases):
            state.constructors[name] = source

    def _track_container(self, bound: Dotted, value: ast.expr) -> None:
        """``_iterators = (MultiProcessIter, SingleProcessIter)``, ``LOADERS = {"train":
        DataLoader}``: a subscript of it, called, calls one of these classes."""
        name = ".".join(bound)
        items = _container_items(value)
        if items:
            self.containers[name] = items
        else:
            self.containers.pop(name, None)

    def _picked(self, func: ast.expr) -> Dotted | None:
        """The class a call of ``container[key]`` may construct: a worker pool's iterator
        first, then a DataLoader-like class (the linker decides which is torch's)."""
        if not isinstance(func, ast.Subscript):
            return None
        holder = dotted(func.value)
        items = self.containers.get(".".join(holder)) if holder else None
        if not items:
            return None
        pools = [item for item in items if item[-1] in _POOL_FACTORIES]
        loaders = [item for item in items if _constructor_like(item, self.aliases)]
        found = pools or loaders
        return found[0] if found else None

    def _track_item(self, target: ast.Subscript, value: ast.expr) -> None:
        """``kwargs["persistent_workers"] = value``: a parameter dict gains a known key."""
        key = target.slice
        if not isinstance(target.value, ast.Name):
            return
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        flow = self.state.dicts.get(target.value.id)
        if flow is None:  # a `**kwargs` parameter or a dict from elsewhere: other keys unknown
            flow = self.state.dicts[target.value.id] = _DictFlow([], False)
        flow.entries = [(k, v) for k, v in flow.entries if k != key.value]
        flow.entries.append((key.value, self._guarded_true(value)))

    def _guarded_true(self, value: ast.expr) -> ast.expr:
        """``if n > 0: kwargs["k"] = True``: the dict holds ``k`` only where ``n > 0`` holds, so
        a later ``**kwargs`` passes ``k=n > 0`` (the test), not a literal True."""
        if not (isinstance(value, ast.Constant) and value.value is True):
            return value
        for kind, test, negated, _, _ in reversed(self.state.conditions):
            if kind == "if" and test is not None and not negated and _positive_test(test):
                return test
        return value

    def _drop_key(self, name: str, key: ast.expr) -> None:
        """``cfg.pop("k")`` / ``del cfg["k"]``: a later ``**cfg`` in the same branch no longer
        passes ``k``; after an ordinary ``if`` it does again (the other path kept it), after
        ``if n == 0:`` it does not (the other path has workers)."""
        state = self.state
        flow = state.dicts.get(name)
        if flow is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        removed = [(k, v) for k, v in flow.entries if k == key.value]
        flow.entries = [(k, v) for k, v in flow.entries if k != key.value]
        if not state.conditions:
            return
        kind, test, negated, _, _ = state.conditions[-1]
        if kind == "if" and test is not None and not negated and _zero_test(test) is not None:
            return
        state.dropped.extend((len(state.conditions), name, entry) for entry in removed)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                self._drop_key(target.value.id, target.slice)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._note_assigned(node.target)
        bound = dotted(node.target)
        if node.value is not None and bound:
            self._bind(node.value, bound)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._note_assigned(node.target)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            name = dotted(node.value)
            if name:
                self.state.facts.returns.append(name)
            self._bind(node.value, RETURNED)
        self.generic_visit(node)

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
        name = dotted(node.func) or self._picked(node.func)
        if name is not None:
            self._record_call(node, name)
        self.generic_visit(node)

    def _record_call(self, node: ast.Call, name: Dotted) -> None:
        if name[-1] == "setdefault" and len(node.args) == 2 and isinstance(node.args[1], ast.Call):
            self.once.add(id(node.args[1]))  # `cache.setdefault(key, DataLoader(...))`
        if name[-1] == "update" and len(name) == 2 and name[0] in self.state.dicts:
            self._track_update(self.state.dicts[name[0]], node)
        if name[-1] == "pop" and len(name) == 2 and node.args:
            self._drop_key(name[0], node.args[0])  # `cfg.pop("persistent_workers")`
        if name == ("iter",) and node.args:
            self._record_iter(node, in_next=False)
        elif name == ("next",) and node.args and isinstance(node.args[0], ast.Call):
            inner = node.args[0]
            if dotted(inner.func) == ("iter",) and inner.args:
                self._record_iter(inner, in_next=True, site_node=node)
        keywords = {k.arg for k in node.keywords if k.arg}
        if keywords & _TRAINER_KEYWORDS or name[-1] == "Trainer":
            self.state.facts.trainer_calls.append(
                TrainerCall(name, self._site(node), self._arguments(node), self._context())
            )
        constructor = self.state.constructors.get(".".join(name))
        if (
            constructor
            or keywords & _LOADER_KEYWORDS
            or "loader" in name[-1].lower()
            or name[0] in self.aliases
            or name[-1] in _POOL_FACTORIES
        ):
            self.state.facts.loader_calls.append(
                LoaderCall(
                    constructor or name,
                    self._site(node),
                    self._arguments(node),
                    self._context(node),
                    self.bindings.get(id(node)),
                )
            )

    def _track_update(self, flow: _DictFlow, node: ast.Call) -> None:
        """``cfg.update(k=v)`` / ``cfg.update({"k": v})``."""
        added = _dict_entries(node.args[0]) if len(node.args) == 1 else ([], not node.args)
        if added is None:
            flow.complete = False
            return
        entries, complete = added
        entries = entries + [(k.arg, k.value) for k in node.keywords if k.arg]
        keys = {key for key, _ in entries}
        flow.entries = [(k, v) for k, v in flow.entries if k not in keys] + entries
        flow.complete = flow.complete and complete and all(k.arg for k in node.keywords)

    def _record_iter(self, node: ast.Call, in_next: bool, site_node: ast.AST | None = None) -> None:
        if id(node) in self.handled:  # the iter() inside next(iter(x)), already recorded
            return
        self.handled.add(id(node))
        self.state.facts.iter_calls.append(
            IterCall(
                dotted(node.args[0]),
                self._site(site_node or node),
                self._context(),
                in_next,
                self.bindings.get(id(node)),
            )
        )


def lower_bound(node: ast.expr) -> int | None:
    """A proven minimum of an expression (a literal, ``max(1, n)``, ``n or os.cpu_count()``),
    for the analyses that read a call's text again."""
    return _lower_bound(node)
