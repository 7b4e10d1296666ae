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

Nothing here resolves names: that is the linker's job (``lintloader/program.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from lintloader.summary.helpers import Scope, call_arguments, dotted, one_line, qualname_in
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
    LoopInfo,
    Site,
    TrainerCall,
)
from lintloader.summary.source_text import ParsedSource
from lintloader.summary.walk import Walker
from lintloader.torch_api import LOADER_FACT_TOKENS as _RELEVANT
from lintloader.torch_api import LOADER_KEYWORDS as _LOADER_KEYWORDS
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
    is_literal, value = _literal(node)
    if is_literal:
        return int(value) if isinstance(value, int) else None
    if isinstance(node, ast.Call) and dotted(node.func) in (("max",), ("builtins", "max")):
        bounds = [b for b in (_lower_bound(a) for a in node.args if not _starred(a)) if b]
        return max(bounds) if bounds else None
    return None


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
    """``x is None``, ``x is not None``, ``not x``, ``hasattr(...)``, a bare flag."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _once_like(test.operand)
    if isinstance(test, (ast.Name, ast.Attribute)):
        return True
    if isinstance(test, ast.Call):
        return dotted(test.func) in (("hasattr",), ("getattr",))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        right = test.comparators[0]
        none = isinstance(right, ast.Constant) and right.value is None
        return none and isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
    return False


def _returns_only(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Return)


def _decorator_name(decorator: ast.expr) -> str:
    name = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    return name[-1] if name else ""


_Pending = tuple[str, "ast.expr | None", bool, int]  # kind ("if"/"except"), node, negated, depth


@dataclass
class _FunctionState:
    qualname: str
    facts: FunctionFacts
    open_loops: list[int] = field(default_factory=list)
    conditions: list[_Pending] = field(default_factory=list)
    assigned: list[set[str]] = field(default_factory=list)  # per open loop
    cached: bool = False


class _LoaderVisitor(Walker):
    def __init__(self, facts: LoaderFacts, parsed: ParsedSource) -> None:
        self.facts = facts
        self.parsed = parsed
        self.scopes: list[Scope] = []  # enclosing classes and functions
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
        return qualname_in(self.scopes, name)

    def _site(self, node: ast.AST) -> Site:
        text = one_line(self.parsed.segment(node))
        line: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno  # type: ignore[attr-defined]
        column, end_column = self.parsed.column(node), self.parsed.end_column(node)
        return Site(line, column, text, end, 0, end_column)

    def _context(self) -> CallContext:
        state = self.state
        loop = state.open_loops[-1] if state.open_loops else -1
        conditions = tuple(self._condition(p) for p in state.conditions)
        return CallContext(loop, conditions, state.cached)

    def _arguments(self, node: ast.Call) -> tuple[Argument, ...]:
        return tuple(
            Argument(
                keyword,
                one_line(self.parsed.segment(value)),
                *_literal(value),
                _lower_bound(value),
                _names(value),
                star,
            )
            for keyword, star, value in call_arguments(node)
        )

    # -- scopes --------------------------------------------------------------------------------
    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "DataLoader":
                self.aliases.add(alias.asname or alias.name)
        self.facts.loader_aliases = frozenset(self.aliases)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all((*node.decorator_list, *node.bases, *node.keywords))
        self.scopes.append(("class", self._qualname(node.name)))
        self.visit_all(node.body)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.visit_signature(node)
        qualname = self._qualname(node.name)
        self.scopes.append(("function", qualname))
        cached = any(_decorator_name(d) in _CACHE_DECORATORS for d in node.decorator_list)
        self.states.append(self._state(qualname, cached))
        self.visit_all(node.body)
        self.scopes.pop()
        self.states.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

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
        first = node.body[0]
        loop = LoopInfo(
            "while" if isinstance(node, ast.While) else "for",
            node.lineno,
            self.parsed.column(node),
            node.end_lineno or node.lineno,
            first.lineno,
            self.parsed.column(first),
            one_line(header),
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
        state.facts.loops[index] = replace(loop, assigned=frozenset(assigned))

    # -- conditions (kept as nodes; turned into text only for a call that gets recorded) -------
    def _condition(self, pending: _Pending) -> Condition:
        kind, node, negated, depth = pending
        text = self.parsed.segment(node) if node is not None else ""
        if kind == "except":
            return Condition(
                one_line(f"except {text}"), False, False, False, "StopIteration" in text, depth
            )
        assert node is not None
        return Condition(
            one_line(text), negated, _once_like(node), "persistent_workers" in text, False, depth
        )

    def _push(self, kind: str, node: ast.expr | None, negated: bool) -> None:
        self.state.conditions.append((kind, node, negated, len(self.state.open_loops)))

    def visit_If(self, node: ast.If) -> None:
        state = self.state
        if not state.open_loops and _once_like(node.test) and _returns_only(node.body):
            state.cached = True  # `if self._loader is not None: return self._loader`
        self.visit(node.test)
        self._push("if", node.test, False)
        self.visit_all(node.body)
        self.state.conditions.pop()
        if node.orelse:
            self._push("if", node.test, True)
            self.visit_all(node.orelse)
            self.state.conditions.pop()

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._push("except", node.type, False)
        self.generic_visit(node)
        self.state.conditions.pop()

    # -- bindings ------------------------------------------------------------------------------
    def _note_assigned(self, target: ast.expr) -> None:
        if self.state.assigned:
            self.state.assigned[-1].update(_bound_names(target))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._note_assigned(target)
        if len(node.targets) == 1:
            target = node.targets[0]
            bound = UNPACKED if isinstance(target, (ast.Tuple, ast.List)) else dotted(target)
            if bound:
                self._bind(node.value, bound)
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
        name = dotted(node.func)
        if name is not None:
            self._record_call(node, name)
        self.generic_visit(node)

    def _record_call(self, node: ast.Call, name: Dotted) -> None:
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
        if keywords & _LOADER_KEYWORDS or "loader" in name[-1].lower() or name[0] in self.aliases:
            self.state.facts.loader_calls.append(
                LoaderCall(
                    name,
                    self._site(node),
                    self._arguments(node),
                    self._context(),
                    self.bindings.get(id(node)),
                )
            )

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
