"""The main summary visitor: one pass over a module fills a :class:`FileSummary` with imports,
classes, functions, call sites, function references and DataLoader iterator resets (sinks)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from lintloader.domain.cost import every_k
from lintloader.domain.torch_api import (
    DEFERRED_REGISTRATIONS,
    INSPECTING_BUILTINS,
    SHUTDOWN_METHOD,
    SINK_ATTRIBUTE,
)
from lintloader.summary.guards import built_once, requires_persistent
from lintloader.summary.helpers import call_arguments, dotted, loop_info, one_line, qualname_in
from lintloader.summary.model import (
    MODULE_SCOPE,
    CallSite,
    ClassSummary,
    Comprehended,
    Dotted,
    FileSummary,
    FunctionSummary,
    ImportBinding,
    Passed,
    SinkSite,
    Site,
)
from lintloader.summary.none_guards import (
    GuardState,
    guardable,
    may_be_none,
    none_defaults,
    zero_defaults,
)
from lintloader.summary.passed import loop_reads, names_in, passed, receiver
from lintloader.summary.periodic import is_periodic_test, remainder_test
from lintloader.summary.source_text import ParsedSource
from lintloader.summary.walk import Rider, Walker, walk_order


def _annotation_type(node: ast.expr) -> Dotted | None:
    """The class an annotation names: ``Foo``, ``"Foo"``, ``Optional[Foo]``, ``Foo | None``."""
    if isinstance(node, ast.Constant):
        text = node.value
        if isinstance(text, str) and re.fullmatch(r"[A-Za-z_][\w.]*", text):
            return tuple(text.split("."))
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            if not _is_none(side):
                return _annotation_type(side)
        return None
    if isinstance(node, ast.Subscript):
        head = dotted(node.value)
        if head and head[-1] == "Optional" and not isinstance(node.slice, ast.Tuple):
            return _annotation_type(node.slice)
        return None
    return dotted(node)


def _constructed_type(node: ast.expr | None) -> Dotted | None:
    """``Foo(...)`` -> ("Foo",): the linker keeps it only if ``Foo`` resolves to a class."""
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return None


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _decorator_kind(decorators: Sequence[ast.expr]) -> str | None:
    for decorator in decorators:
        name = dotted(decorator)
        if name and name[-1] in ("staticmethod", "classmethod"):
            return name[-1]
        if name and name[-1] in ("property", "cached_property"):
            return "property"
    return None


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: max(0, len(parts) - (level - 1))]
    if target:
        parts.append(target)
    return ".".join(parts)


_Scope = FunctionSummary | ClassSummary
_LEAVES = (ast.Name, ast.Constant)  # expressions the walk never dispatches
# Statements that hold no other statements: a call's ``statement_line`` is the line of the
# innermost one of these (or of an enclosing ``if``) around it.
_SIMPLE_STATEMENTS = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Pass,
    ast.Break, ast.Continue, ast.Raise, ast.Assert, ast.Import, ast.ImportFrom, ast.Global,
    ast.Nonlocal,
)  # fmt: skip


_Comprehension = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp


class Summarizer(Walker):
    """Fills a :class:`FileSummary` in one pass over the module: the file's one walk, which
    ``rider`` (the loader facts) rides on."""

    STATEMENTS = _SIMPLE_STATEMENTS

    def __init__(
        self, summary: FileSummary, parsed: ParsedSource, rider: Rider | None = None
    ) -> None:
        super().__init__(rider)
        self.summary = summary
        self.parsed = parsed
        module_scope = FunctionSummary(MODULE_SCOPE, MODULE_SCOPE, None, "module", 1, 1, 1)
        summary.functions[MODULE_SCOPE] = module_scope
        self.scopes: list[_Scope] = [module_scope]
        self.functions: list[FunctionSummary] = [module_scope]  # the functions among scopes
        self.guards: list[bool] = []  # one entry per enclosing `if`: mentions persistent_workers
        self.persistent_bodies = 0  # enclosing `if` bodies that run only with persistent workers
        self.loops = 0
        # per enclosing `if` body: its test when it runs every N-th pass, and the loop depth
        self.periodic: list[tuple[str, int]] = []
        self.comprehended: list[Comprehended] = []  # ``for`` clauses around the visit
        self.binding: dict[int, str] = {}  # id(call node) -> the local its value is assigned to
        self.open_loops: list[int] = []  # indexes into the current function's loops
        self.none_guards = GuardState()  # the open function's (none_guards.py)
        self.filling: dict[int, frozenset[str]] = {}  # id(`p or make()`) of `p = p or make()`

    # -- helpers -----------------------------------------------------------------------------
    def _site(self, node: ast.AST) -> Site:
        text, column, end_column = self.parsed.placed(node)
        line: int = node.lineno  # type: ignore[attr-defined]
        statement = self.statements[-1] if self.statements else line
        end: int = node.end_lineno  # type: ignore[attr-defined]
        return _new(Site, (line, column, one_line(text), end, statement, end_column))

    @property
    def function(self) -> FunctionSummary:
        """The innermost function around the node visited (the module scope outside one)."""
        return self.functions[-1]

    @property
    def guarded(self) -> bool:
        return any(self.guards)

    def _qualname(self, name: str) -> str:
        parent = self.scopes[-1]
        if parent is self.scopes[0]:  # the module scope
            return name
        kind = "class" if isinstance(parent, ClassSummary) else "function"
        return qualname_in([(kind, parent.qualname)], name)

    # -- statements that carry context --------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        test = self.parsed.segment(node.test)
        mentions = "persistent_workers" in test
        self.guards.append(mentions)
        self.statements.append(node.lineno)
        self.visit(node.test)
        saved_bodies = self.persistent_bodies
        if built_once(node.test, node.body, self.parsed.stores, self.parsed.once).anywhere:
            self.persistent_bodies = 0  # built once and kept (`if self._it is None:`)
        elif mentions and requires_persistent(node.test):
            self.persistent_bodies += 1
        periodic = (
            self._periodic_text(node.test) if "%" in test and is_periodic_test(node.test) else ""
        )
        self.periodic.append((periodic, self.loops))
        self._branch(node, True)
        self.periodic.pop()
        self.persistent_bodies = saved_bodies
        self._branch(node, False)
        self.guards.pop()
        self.statements.pop()

    def _branch(self, node: ast.If, holds: bool) -> None:
        """Visit the branch of ``node`` that runs only when its test is ``holds``."""
        nodes = node.body if holds else node.orelse
        if not nodes:
            return
        self.none_guards.enter(node.test, holds, nodes)
        self.visit_branch(node, holds)
        self.none_guards.leave()

    def _side(self, node: ast.expr, test: ast.expr, holds: bool) -> None:
        """Visit ``node``, which runs only when ``test`` is ``holds``."""
        if not isinstance(node, _LEAVES):  # as generic_visit
            self.none_guards.enter(test, holds)
            self.visit(node)
            self.none_guards.leave()

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        self._side(node.body, node.test, True)
        self._side(node.orelse, node.test, False)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """A side of ``a or b or c`` runs only when every side before it failed (``and``: held);
        a name's truth counts only in ``loader = loader or make()`` (``filling``)."""
        guards, holds = self.none_guards, isinstance(node.op, ast.And)
        filled = self.filling.get(id(node), frozenset())
        none: frozenset[str] = frozenset()
        used: frozenset[str] = frozenset()
        for value in node.values:
            if not isinstance(value, _LEAVES):
                guards.enter_sides((none, used))
                self.visit(value)
                guards.leave()
            more, through = guards.sides(value, holds, lambda: filled)
            none, used = none | more, used | through

    def _opaque(self, node: ast.AST) -> None:
        self.none_guards.opaque += 1
        self.generic_visit(node)
        self.none_guards.opaque -= 1

    visit_Lambda = _opaque

    def _comprehension(self, node: _Comprehension) -> None:
        """Like :meth:`_opaque`, but a call in it knows what its ``for`` clauses bind."""
        self.none_guards.opaque += 1
        depth = len(self.comprehended)
        for clause in node.generators:
            self.visit(clause.iter)
            names = tuple(n.id for n in walk_order(clause.target) if isinstance(n, ast.Name))
            reads = names_in(self.parsed.segment(clause.iter))
            self.comprehended.append(Comprehended(names, reads))
            self.visit(clause.target)
            self.visit_all(clause.ifs)
        if isinstance(node, ast.DictComp):
            self.visit_all((node.key, node.value))
        else:
            self.visit(node.elt)
        del self.comprehended[depth:]
        self.none_guards.opaque -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.loops += 1
        self.visit_all((node.target, node.iter))
        header = f"for {self.parsed.segment(node.target)} in {self.parsed.segment(node.iter)}"
        self._loop_body(node, header, node.iter)
        self.visit_all(node.orelse)
        self.loops -= 1

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        self.loops += 1
        self.visit(node.test)
        self._loop_body(node, f"while {self.parsed.segment(node.test)}", node.test)
        self.visit_all(node.orelse)
        self.loops -= 1

    def _loop_body(
        self, node: ast.For | ast.AsyncFor | ast.While, header: str, last: ast.expr
    ) -> None:
        """Record the loop on its function and visit its body inside it (``last``: the
        header's last expression)."""
        loops = self.function.loops
        binds, reads = loop_reads(node)
        loops.append(
            loop_info(
                self.parsed,
                node,
                header,
                self.scope_node,
                parent=self.open_loops[-1] if self.open_loops else -1,
                header_end=(last.end_lineno or node.lineno, self.parsed.end_column(last)),
                binds=binds,
                reads=reads,
            )
        )
        self.open_loops.append(len(loops) - 1)
        self.visit_body(node)
        self.open_loops.pop()

    @property
    def loop(self) -> int:
        return self.open_loops[-1] if self.open_loops else -1

    # -- imports -----------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.summary.imports[alias.asname] = ImportBinding(alias.name)
            else:
                head = alias.name.split(".")[0]
                self.summary.imports[head] = ImportBinding(head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        target = node.module
        if node.level:
            source = _resolve_relative(
                self.summary.module, self.summary.is_package, node.level, target
            )
        else:
            source = target or ""
        for alias in node.names:
            if alias.name == "*":
                self.summary.star_imports.append(source)
                return
            self.summary.imports[alias.asname or alias.name] = ImportBinding(source, alias.name)

    # -- definitions -------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all((*node.decorator_list, *node.bases, *node.keywords))
        qualname = self._qualname(node.name)
        bases = [d for d in map(dotted, node.bases) if d]
        klass = ClassSummary(qualname, node.name, node.lineno, bases)
        self.summary.classes[qualname] = klass
        self.scopes.append(klass)
        self.visit_body(node)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.visit_signature(node)
        parent = self.scopes[-1]
        qualname = self._qualname(node.name)
        decorated = _decorator_kind(node.decorator_list)
        if isinstance(parent, ClassSummary):
            kind = decorated or "method"
            parent.methods.append(node.name)
            class_qualname: str | None = parent.qualname
        else:
            kind, class_qualname = "function", None
        arguments = node.args
        positional = (*arguments.posonlyargs, *arguments.args)
        function = FunctionSummary(
            qualname,
            node.name,
            class_qualname,
            kind,
            node.lineno,
            self.parsed.column(node),
            node.end_lineno or node.lineno,
            [p.arg for p in positional],
            keyword_only=[p.arg for p in arguments.kwonlyargs],
            star_args=arguments.vararg.arg if arguments.vararg else "",
            star_kwargs=arguments.kwarg.arg if arguments.kwarg else "",
        )
        for param in (*positional, *arguments.kwonlyargs):
            annotated = _annotation_type(param.annotation) if param.annotation else None
            if annotated:
                function.local_types[param.arg] = annotated
        function.none_names = none_defaults(node)
        function.zero_names = zero_defaults(node)
        self.summary.functions[qualname] = function
        self.scopes.append(function)
        self.functions.append(function)
        self.guards.append(False)
        saved_loops, self.loops = self.loops, 0
        saved_periodic, self.periodic = self.periodic, []
        saved_open, self.open_loops = self.open_loops, []
        saved_bodies, self.persistent_bodies = self.persistent_bodies, 0
        saved_guards, self.none_guards = self.none_guards, GuardState(guardable(node))
        self.visit_body(node)
        self.none_guards.settle(function, node)
        self.scopes.pop()
        self.functions.pop()
        self.guards.pop()
        self.loops, self.open_loops = saved_loops, saved_open
        self.periodic = saved_periodic
        self.persistent_bodies = saved_bodies
        self.none_guards = saved_guards

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- types of names and attributes --------------------------------------------------------
    def _record_type(self, target: ast.expr, type_: Dotted | None) -> None:
        if not type_:
            return
        function = self.function
        if isinstance(target, ast.Name):
            function.local_types[target.id] = type_
            return
        owner = dotted(target)
        if (
            owner
            and len(owner) == 2
            and function.self_name == owner[0]
            and function.class_qualname in self.summary.classes
        ):
            klass = self.summary.classes[function.class_qualname]
            klass.attr_types.setdefault(owner[1], type_)

    def _note_none(self, target: ast.expr, value: ast.expr | None) -> None:
        """A local or an attribute of the instance bound to None: passing it may pass nothing."""
        if value is None or not may_be_none(value, falsy=False):
            return
        scope, function = self.scopes[-1], self.function
        if isinstance(scope, ClassSummary):
            if isinstance(target, ast.Name):
                scope.none_attrs = _with(scope.none_attrs, target.id)
        elif isinstance(target, ast.Name):
            function.none_names = _with(function.none_names, target.id)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            klass = self.summary.classes.get(function.class_qualname or "")
            if klass is not None and target.value.id == function.self_name:
                klass.none_attrs = _with(klass.none_attrs, target.attr)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._note_none(node.target, node.value)
        self.none_guards.walrus = True
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._note_none(target, node.value)
            self._sink_from_assignment(target, node.value)
            self._record_type(target, _constructed_type(node.value))
        if len(node.targets) == 1:
            self._note_binding(node.targets[0], node.value)
            self.none_guards.note_alias(node.targets[0], node.value)
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.BoolOp):
                self.filling[id(value)] = frozenset({target.id})  # `p = p or make()`
        self.generic_visit(node)

    def _note_binding(self, target: ast.expr, value: ast.expr | None) -> None:
        """``name = call(...)``: the call's value is the local ``name``; ``name = a.b``: the
        local reads ``a.b``."""
        if not isinstance(target, ast.Name) or value is None:
            return
        if isinstance(value, ast.Call):
            self.binding[id(value)] = target.id
        elif isinstance(value, (ast.Attribute, ast.Subscript)):
            name = dotted(value)  # ``a.b``: its text is its own names when ASCII
            if name and name[0] != "super()":
                text = ".".join(name)
                reads = text if text.isascii() else names_in(text)
            elif name or any(isinstance(node, ast.Call) for node in walk_order(value)):
                return  # it calls something
            else:
                reads = names_in(ast.unparse(value))
            self.function.read_aliases[target.id] = reads

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._note_binding(node.target, node.value)
        self._note_none(node.target, node.value)
        if node.value is not None:
            self._sink_from_assignment(node.target, node.value)
        annotated = _annotation_type(node.annotation)
        constructed = _constructed_type(node.value)
        scope = self.scopes[-1]
        if isinstance(scope, ClassSummary) and isinstance(node.target, ast.Name):
            if annotated:
                scope.attr_types.setdefault(node.target.id, annotated)
        else:
            self._record_type(node.target, annotated or constructed)
        self.generic_visit(node)

    # -- sinks -------------------------------------------------------------------------------
    def _add_sink(self, kind: str, receiver: Dotted | None, node: ast.AST, text: str = "") -> None:
        site = self._site(node)
        if text:
            site = site._replace(text=text)
        self.function.sinks.append(SinkSite(kind, receiver, site, self.guarded, self.loop))

    def _sink_from_assignment(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Attribute) and target.attr == SINK_ATTRIBUTE:
            if _is_none(value):
                text = f"{self._site(target).text} = None"
                self._add_sink("assign-none", dotted(target.value), target, text)
        elif isinstance(target, (ast.Tuple, ast.List)):
            paired = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if paired is not None and len(paired) != len(target.elts):
                paired = None
            for index, element in enumerate(target.elts):  # `a._iterator, b = None, x`
                self._sink_from_assignment(element, paired[index] if paired is not None else value)
        elif isinstance(target, ast.Starred):
            self._sink_from_assignment(target.value, value)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for element in elements:
                if isinstance(element, ast.Attribute) and element.attr == SINK_ATTRIBUTE:
                    text = f"del {self._site(element).text}"
                    self._add_sink("delete", dotted(element.value), element, text)
        self.generic_visit(node)

    def _sink_from_call(self, node: ast.Call, name: Dotted | None) -> bool:
        if not name or name[-1] not in _SINK_CALLS:  # most calls
            return False
        if name[-1] == SHUTDOWN_METHOD and len(name) > 1:
            assert isinstance(node.func, ast.Attribute)
            self._add_sink("shutdown-workers", dotted(node.func.value), node)
            return True
        if name in (("setattr",), ("delattr",)) and len(node.args) >= 2:
            attribute = node.args[1]
            if (
                isinstance(attribute, ast.Constant)
                and attribute.value == SINK_ATTRIBUTE
                and (name == ("delattr",) or (len(node.args) >= 3 and _is_none(node.args[2])))
            ):
                kind = "setattr" if name == ("setattr",) else "delete"
                self._add_sink(kind, dotted(node.args[0]), node)
                return True
        return False

    # -- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self._record_call(node)
        self.generic_visit(node)

    def _periodic_text(self, test: ast.expr) -> str:
        """The text of a periodic test, or of its remainder comparison alone when the whole
        test's one-line text, cut at TEXT_LIMIT, would lose ``% K == 0``
        (``args.evaluate and (args.steps > 0 and global_step % args.steps == 0)``)."""
        text = self.parsed.segment(test)
        if every_k(one_line(text)) is not None:
            return text
        part = remainder_test(test)
        return self.parsed.segment(part) if part is not None else text

    def _periodic(self) -> str:
        """The test of an ``if`` inside the innermost loop that lets a call there run only
        every N-th pass, or empty."""
        for text, depth in reversed(self.periodic):
            if depth < self.loops:
                break
            if text:
                return one_line(text)
        return ""

    def _record_call(self, node: ast.Call) -> None:
        name = dotted(node.func)
        if self._sink_from_call(node, name):
            return
        function, guarded, in_loop = self.functions[-1], any(self.guards), self.loops > 0
        loop, calls = self.open_loops[-1] if self.open_loops else -1, function.calls
        if name:
            site = self._site(node)
            arguments, method = passed(node), receiver(node, name)
            none = self.none_guards.guard(len(calls))
            persistent, periodic = self.persistent_bodies > 0, self._periodic()
            comprehended, binds = tuple(self.comprehended), self.binding.pop(id(node), "")
            fields = (name, site, False, guarded, in_loop, loop, arguments, method, persistent)
            calls.append(_new(CallSite, (*fields, none, periodic, comprehended, binds)))
            if name[-2:] in DEFERRED_REGISTRATIONS:
                return  # a callback for interpreter exit or garbage collection, not a call now
            if name in INSPECTING_BUILTINS:
                return  # ``isinstance(module, ModelPT)`` looks at the class, builds nothing
        for value, reference in _references(node, arguments if name else None):
            if reference[0] != "super()":
                site = self._site(value)
                none = self.none_guards.guard(len(calls))
                head = (reference, site, True, guarded, in_loop, loop, (), "", False, none)
                calls.append(_new(CallSite, (*head, *_NO_CONTEXT)))


def _references(
    node: ast.Call, arguments: tuple[Passed, ...] | None
) -> list[tuple[ast.expr, Dotted]]:
    """The values ``node`` passes that are names or attribute chains, in source order (as
    :func:`call_arguments` gives them), each with its dotted name, read off ``arguments``
    (the call's :class:`Passed`, in their order) when there are any."""
    found: list[tuple[ast.expr, Dotted | None]]
    if arguments is None:
        found = [(value, dotted(value)) for _, _, value in call_arguments(node)]
        return [(value, name) for value, name in found if name]
    args, keywords = node.args, node.keywords
    if not keywords:  # most calls: the positional values alone, in order
        return [
            (a.value if a.__class__ is ast.Starred else a, p.name)
            for a, p in zip(args, arguments)  # noqa: B905 (one Passed per argument)
            if p.name
        ]
    if not args:
        return [(k.value, p.name) for k, p in zip(keywords, arguments) if p.name]  # noqa: B905
    values = [a.value if a.__class__ is ast.Starred else a for a in args]
    values += [k.value for k in keywords]
    found = [(v, p.name) for v, p in zip(values, arguments, strict=True) if p.name]
    found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))  # as they were written
    return found  # type: ignore[return-value]  # every name is set


_SINK_CALLS = frozenset({SHUTDOWN_METHOD, "setattr", "delattr"})  # the last names of sink calls
# a reference's last fields: not periodic, in no comprehension, bound to no local
_NO_CONTEXT = ("", (), "")
# a named tuple made from all its fields at once: its generated ``__new__`` takes keywords
# and defaults, a fifth of what recording a call site cost
_new = tuple.__new__


def _with(names: tuple[str, ...], name: str) -> tuple[str, ...]:
    return names if name in names else tuple(sorted((*names, name)))
