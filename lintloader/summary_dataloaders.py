"""Per-file facts about DataLoader construction and use, for the user-code rules (LL2xx).

A second, small libcst visitor that runs on the same :class:`MetadataWrapper` as the main
summarizer (positions are resolved once) and fills :class:`LoaderFacts`: plain, picklable data
per function (keyed by the same qualnames as ``FileSummary.functions``):

* ``loops``: every ``for``/``while`` loop, with the names it binds and assigns, what it iterates;
* ``loader_calls``: calls that may construct a DataLoader (the linker decides which really do),
  with their arguments as source text and literal values, and the loop/guard context;
* ``iter_calls``: ``iter(x)`` and ``next(iter(x))``;
* ``trainer_calls``: calls that may construct a Lightning ``Trainer``;
* ``returns``: dotted names returned.

Nothing here resolves names: that is the linker's job (``lintloader/program.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from lintloader.summary import MODULE_SCOPE, Dotted, Site, dotted

RETURNED: Dotted = ("<return>",)
_TEXT_LIMIT = 120
# Calls recorded as candidate DataLoader constructions: a keyword only a DataLoader-like call
# takes, a name that looks like a loader, or a local alias of an imported ``DataLoader``.
_LOADER_KEYWORDS = frozenset({"num_workers", "persistent_workers"})
_TRAINER_KEYWORDS = frozenset({"reload_dataloaders_every_n_epochs", "max_epochs"})
_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "islice", "cycle"})
_RELEVANT = (b"oader", b"iter(", b"Trainer", b"num_workers", b"persistent_workers")
_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property"})


@dataclass(frozen=True)
class Argument:
    """One argument of a call. ``keyword`` is None for a positional one; ``star`` is ``*``/``**``.

    ``literal`` holds the value of a literal (int, bool, None) when ``is_literal``; ``lower_bound``
    is a proven minimum for an int expression (``max(1, n)`` -> 1), ``names`` the dotted names the
    expression reads (``("args.workers", "args")``).
    """

    keyword: str | None
    text: str
    is_literal: bool = False
    literal: int | bool | None = None
    lower_bound: int | None = None
    names: tuple[str, ...] = ()
    star: str = ""


@dataclass(frozen=True)
class Condition:
    """An enclosing ``if`` (or ``except StopIteration``) of a call, inside the same function.

    ``negated``: the call is in the ``else`` branch. ``once``: the test looks like a one-shot
    check (``x is None``, ``not x``, ``hasattr``, a bare flag). ``loop_depth``: how many loops of
    the function enclose the ``if`` itself.
    """

    text: str
    negated: bool
    once: bool
    persistent: bool
    stop_iteration: bool
    loop_depth: int


@dataclass(frozen=True)
class LoopInfo:
    """A ``for``/``while`` loop. ``body_line``/``body_column``: where its body starts (a call
    at or after that position and not after ``end_line`` runs once per iteration)."""

    kind: str
    line: int
    column: int
    end_line: int
    body_line: int
    body_column: int
    header: str
    targets: tuple[str, ...] = ()
    iterable: Dotted | None = None
    assigned: frozenset[str] = frozenset()
    parent: int = -1  # index of the enclosing loop in the same function, -1 for none

    def contains(self, line: int, column: int) -> bool:
        return (line, column) >= (self.body_line, self.body_column) and line <= self.end_line

    @property
    def epoch_like(self) -> bool:
        return "epoch" in self.header.lower()


@dataclass(frozen=True)
class CallContext:
    """Where a call sits: innermost enclosing loop (index into ``FunctionFacts.loops``, -1 for
    none), enclosing conditions (outermost first), and whether the function caches its result."""

    loop: int = -1
    conditions: tuple[Condition, ...] = ()
    cached: bool = False


@dataclass(frozen=True)
class LoaderCall:
    """A call that may construct a DataLoader. ``bound_to``: the dotted target it is assigned to
    (``("self", "loader")``), ``RETURNED`` when returned, None otherwise."""

    target: Dotted
    site: Site
    arguments: tuple[Argument, ...]
    context: CallContext
    bound_to: Dotted | None = None

    def keyword(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.keyword == name), None)

    def positional(self, index: int) -> Argument | None:
        found = [a for a in self.arguments if a.keyword is None and not a.star]
        return found[index] if index < len(found) else None

    @property
    def has_star_kwargs(self) -> bool:
        return any(a.star == "**" for a in self.arguments)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n for a in self.arguments for n in a.names)


@dataclass(frozen=True)
class IterCall:
    """``iter(argument)``; ``in_next`` when it is ``next(iter(argument))``."""

    argument: Dotted | None
    site: Site
    context: CallContext
    in_next: bool = False
    bound_to: Dotted | None = None


@dataclass(frozen=True)
class TrainerCall:
    target: Dotted
    site: Site
    arguments: tuple[Argument, ...]
    context: CallContext

    def keyword(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.keyword == name), None)


@dataclass
class FunctionFacts:
    loops: list[LoopInfo] = field(default_factory=list)
    loader_calls: list[LoaderCall] = field(default_factory=list)
    iter_calls: list[IterCall] = field(default_factory=list)
    trainer_calls: list[TrainerCall] = field(default_factory=list)
    returns: list[Dotted] = field(default_factory=list)
    cached: bool = False

    def innermost_loop_at(self, line: int, column: int) -> int:
        """Index of the innermost loop whose body holds ``line:column``, -1 if none."""
        best = -1
        for index, loop in enumerate(self.loops):
            if loop.contains(line, column) and (
                best < 0 or (loop.body_line, loop.body_column) >= self._start(best)
            ):
                best = index
        return best

    def _start(self, index: int) -> tuple[int, int]:
        loop = self.loops[index]
        return (loop.body_line, loop.body_column)

    def loop_chain(self, index: int) -> list[LoopInfo]:
        """The loop at ``index`` and every loop around it, innermost first."""
        chain = []
        while index >= 0:
            chain.append(self.loops[index])
            index = self.loops[index].parent
        return chain


@dataclass
class LoaderFacts:
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    loader_aliases: frozenset[str] = frozenset()  # local names bound to an imported DataLoader

    def facts(self, qualname: str) -> FunctionFacts | None:
        return self.functions.get(qualname)


def summarize_loaders(
    wrapper: MetadataWrapper, tree: cst.Module, source: bytes
) -> LoaderFacts | None:
    """Walk ``tree`` once more (positions come from ``wrapper``'s cache); None, without a walk,
    for a file that mentions nothing these facts are about (a loader, ``iter(``, a Trainer)."""
    if not any(token in source for token in _RELEVANT):
        return None
    facts = LoaderFacts()
    wrapper.visit(_LoaderVisitor(facts, tree))
    return facts


# -- expression helpers ------------------------------------------------------------------------
def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."


def _literal(node: cst.BaseExpression) -> tuple[bool, int | bool | None]:
    if isinstance(node, cst.Integer):
        return True, int(node.evaluated_value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True, {"True": True, "False": False, "None": None}[node.value]
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return True, -int(node.expression.evaluated_value)
    return False, None


def _lower_bound(node: cst.BaseExpression) -> int | None:
    is_literal, value = _literal(node)
    if is_literal:
        return int(value) if isinstance(value, int) else None
    if isinstance(node, cst.Call) and dotted(node.func) in (("max",), ("builtins", "max")):
        bounds = [b for b in (_lower_bound(a.value) for a in node.args if not a.star) if b]
        return max(bounds) if bounds else None
    return None


class _Names(cst.CSTVisitor):
    """Every dotted name an expression reads: ``a.b.c`` gives ``a.b.c``, ``a.b`` and ``a``."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        name = dotted(node)
        if name:
            self.found.update(".".join(name[:cut]) for cut in range(1, len(name) + 1))
        return name is None  # `f(x).attr`: look inside for the names it reads


def _names(node: cst.CSTNode) -> tuple[str, ...]:
    visitor = _Names()
    node.visit(visitor)
    return tuple(sorted(visitor.found))


def _bound_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    name = dotted(target)
    return [".".join(name)] if name else []


def _iterated(node: cst.BaseExpression) -> Dotted | None:
    """What a ``for`` loop iterates, looking through ``enumerate``/``tqdm``/``iter``/``zip``."""
    name = dotted(node)
    if name:
        return name
    if isinstance(node, cst.Call) and node.args:
        func = dotted(node.func)
        if func and func[-1] in _WRAPPERS:
            return _iterated(node.args[0].value)
    return None


def _once_like(test: cst.BaseExpression) -> bool:
    """``x is None``, ``x is not None``, ``not x``, ``hasattr(...)``, a bare flag."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _once_like(test.expression)
    if isinstance(test, (cst.Name, cst.Attribute)):
        return True
    if isinstance(test, cst.Call):
        return dotted(test.func) in (("hasattr",), ("getattr",))
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        right = comparison.comparator
        none = isinstance(right, cst.Name) and right.value == "None"
        return none and isinstance(
            comparison.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)
        )
    return False


def _returns_only(body: cst.BaseSuite) -> bool:
    if isinstance(body, cst.SimpleStatementSuite):
        statements = list(body.body)
    elif isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
        line = body.body[0]
        statements = list(line.body) if isinstance(line, cst.SimpleStatementLine) else []
    else:
        return False
    return len(statements) == 1 and isinstance(statements[0], cst.Return)


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    name = dotted(node.func if isinstance(node, cst.Call) else node)
    return name[-1] if name else ""


_Pending = tuple[str, "cst.CSTNode | None", bool, int]  # kind ("if"/"except"), node, negated, depth


@dataclass
class _FunctionState:
    qualname: str
    facts: FunctionFacts
    open_loops: list[int] = field(default_factory=list)
    conditions: list[_Pending] = field(default_factory=list)
    assigned: list[set[str]] = field(default_factory=list)  # per open loop
    cached: bool = False


class _LoaderVisitor(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, facts: LoaderFacts, tree: cst.Module) -> None:
        super().__init__()
        self.facts = facts
        self.tree = tree
        self.scopes: list[tuple[str, str]] = []  # (kind, qualname) of classes and functions
        self.states: list[_FunctionState] = [self._state(MODULE_SCOPE, cached=False)]
        self.bindings: dict[int, Dotted] = {}  # id(call node) -> where its value goes
        self.aliases: set[str] = set()
        self.handled: set[int] = set()

    # -- scaffolding ---------------------------------------------------------------------------
    def _state(self, qualname: str, cached: bool) -> _FunctionState:
        facts = self.facts.functions.setdefault(qualname, FunctionFacts(cached=cached))
        return _FunctionState(qualname, facts, cached=cached)

    @property
    def state(self) -> _FunctionState:
        return self.states[-1]

    def _qualname(self, name: str) -> str:
        if not self.scopes:
            return name
        kind, parent = self.scopes[-1]
        return f"{parent}.<locals>.{name}" if kind == "function" else f"{parent}.{name}"

    def _site(self, node: cst.CSTNode) -> Site:
        position = self.get_metadata(PositionProvider, node)
        text = _one_line(self.tree.code_for_node(node))
        return Site(position.start.line, position.start.column + 1, text, position.end.line, 0)

    def _context(self) -> CallContext:
        state = self.state
        loop = state.open_loops[-1] if state.open_loops else -1
        conditions = tuple(self._condition(p) for p in state.conditions)
        return CallContext(loop, conditions, state.cached)

    def _argument(self, arg: cst.Arg) -> Argument:
        keyword = arg.keyword.value if arg.keyword else None
        is_literal, value = _literal(arg.value)
        return Argument(
            keyword,
            _one_line(self.tree.code_for_node(arg.value)),
            is_literal,
            value,
            _lower_bound(arg.value),
            _names(arg.value),
            str(arg.star),
        )

    # -- scopes --------------------------------------------------------------------------------
    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name) and alias.name.value == "DataLoader":
                local = alias.asname.name if alias.asname else alias.name
                if isinstance(local, cst.Name):
                    self.aliases.add(local.value)
        self.facts.loader_aliases = frozenset(self.aliases)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(("class", self._qualname(node.name.value)))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qualname = self._qualname(node.name.value)
        self.scopes.append(("function", qualname))
        cached = any(_decorator_name(d) in _CACHE_DECORATORS for d in node.decorators)
        self.states.append(self._state(qualname, cached))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.states.pop()

    # -- loops ---------------------------------------------------------------------------------
    def _open_loop(self, node: cst.For | cst.While) -> None:
        state = self.state
        position = self.get_metadata(PositionProvider, node)
        body = node.body
        first = body.body[0] if body.body else body
        start = self.get_metadata(PositionProvider, first).start
        if isinstance(node, cst.For):
            header = f"for {self.tree.code_for_node(node.target)} in " + self.tree.code_for_node(
                node.iter
            )
            targets = tuple(_bound_names(node.target))
            iterable = _iterated(node.iter)
            kind = "for"
        else:
            header = f"while {self.tree.code_for_node(node.test)}"
            targets, iterable, kind = (), None, "while"
        loop = LoopInfo(
            kind,
            position.start.line,
            position.start.column + 1,
            position.end.line,
            start.line,
            start.column + 1,
            _one_line(header),
            targets,
            iterable,
            frozenset(),
            state.open_loops[-1] if state.open_loops else -1,
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
        state.facts.loops[index] = LoopInfo(
            loop.kind,
            loop.line,
            loop.column,
            loop.end_line,
            loop.body_line,
            loop.body_column,
            loop.header,
            loop.targets,
            loop.iterable,
            frozenset(assigned),
            loop.parent,
        )

    def visit_For_body(self, node: cst.For) -> None:
        self._open_loop(node)

    def leave_For_body(self, node: cst.For) -> None:
        self._close_loop()

    def visit_While_body(self, node: cst.While) -> None:
        self._open_loop(node)

    def leave_While_body(self, node: cst.While) -> None:
        self._close_loop()

    # -- conditions (kept as nodes; turned into text only for a call that gets recorded) -------
    def _condition(self, pending: _Pending) -> Condition:
        kind, node, negated, depth = pending
        text = self.tree.code_for_node(node) if node is not None else ""
        if kind == "except":
            return Condition(
                _one_line(f"except {text}"), False, False, False, "StopIteration" in text, depth
            )
        assert isinstance(node, cst.BaseExpression)
        return Condition(
            _one_line(text), negated, _once_like(node), "persistent_workers" in text, False, depth
        )

    def _push(self, kind: str, node: cst.CSTNode | None, negated: bool) -> None:
        self.state.conditions.append((kind, node, negated, len(self.state.open_loops)))

    def visit_If(self, node: cst.If) -> None:
        state = self.state
        if not state.open_loops and _once_like(node.test) and _returns_only(node.body):
            state.cached = True  # `if self._loader is not None: return self._loader`

    def visit_If_body(self, node: cst.If) -> None:
        self._push("if", node.test, False)

    def leave_If_body(self, node: cst.If) -> None:
        self.state.conditions.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self._push("if", node.test, True)

    def leave_If_orelse(self, node: cst.If) -> None:
        self.state.conditions.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._push("except", node.type, False)

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self.state.conditions.pop()

    # -- bindings ------------------------------------------------------------------------------
    def _note_assigned(self, target: cst.BaseExpression) -> None:
        if self.state.assigned:
            self.state.assigned[-1].update(_bound_names(target))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._note_assigned(target.target)
        if len(node.targets) == 1:
            bound = dotted(node.targets[0].target)
            if bound:
                self._bind(node.value, bound)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._note_assigned(node.target)
        bound = dotted(node.target)
        if node.value is not None and bound:
            self._bind(node.value, bound)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_assigned(node.target)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is None:
            return
        name = dotted(node.value)
        if name:
            self.state.facts.returns.append(name)
        self._bind(node.value, RETURNED)

    def _bind(self, value: cst.BaseExpression, target: Dotted) -> None:
        if isinstance(value, cst.Call):
            self.bindings[id(value)] = target
            func = dotted(value.func)
            if func and func[-1] == "next" and value.args:
                inner = value.args[0].value
                if isinstance(inner, cst.Call):
                    self.bindings[id(inner)] = target
        elif isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
            # `self.loader = self.loader or DataLoader(...)`: built once.
            self._bind(value.right, target)

    # -- calls ---------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        name = dotted(node.func)
        if name is None:
            return
        if name == ("iter",) and node.args:
            self._record_iter(node, in_next=False)
        elif name == ("next",) and node.args and isinstance(node.args[0].value, cst.Call):
            inner = node.args[0].value
            if dotted(inner.func) == ("iter",) and inner.args:
                self._record_iter(inner, in_next=True, site_node=node)
        keywords = {a.keyword.value for a in node.args if a.keyword}
        if keywords & _TRAINER_KEYWORDS or name[-1] == "Trainer":
            self.state.facts.trainer_calls.append(
                TrainerCall(
                    name, self._site(node), tuple(map(self._argument, node.args)), self._context()
                )
            )
        if keywords & _LOADER_KEYWORDS or "loader" in name[-1].lower() or name[0] in self.aliases:
            self.state.facts.loader_calls.append(
                LoaderCall(
                    name,
                    self._site(node),
                    tuple(map(self._argument, node.args)),
                    self._context(),
                    self.bindings.get(id(node)),
                )
            )

    def _record_iter(
        self, node: cst.Call, in_next: bool, site_node: cst.CSTNode | None = None
    ) -> None:
        if id(node) in self.handled:  # the iter() inside next(iter(x)), already recorded
            return
        self.handled.add(id(node))
        self.state.facts.iter_calls.append(
            IterCall(
                dotted(node.args[0].value),
                self._site(site_node or node),
                self._context(),
                in_next,
                self.bindings.get(id(node)),
            )
        )
