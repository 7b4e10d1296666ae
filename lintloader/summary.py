"""Per-file summaries: the libcst visitor and the plain data it produces.

A :class:`FileSummary` depends only on a file's bytes and its module name, holds no CST nodes and
pickles cleanly, so summaries are what worker processes return and what the cache stores.
Everything the linker and the rules need from a file is in here; nothing downstream reparses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from lintloader.limits import nesting_problem

if TYPE_CHECKING:  # summary_dataloaders imports this module
    from lintloader.summary_dataloaders import LoaderFacts

Dotted = tuple[str, ...]  # ("self", "dataloader", "reset"); ("super()", "reset") for super calls

MODULE_SCOPE = "<module>"
SUMMARY_SCHEMA = 3  # part of the cache key: bump when FileSummary gains or changes fields
SINK_ATTRIBUTE = "_iterator"
SHUTDOWN_METHOD = "_shutdown_workers"
_TEXT_LIMIT = 120
# Functions passed to these run at exit, collection or on a signal: never per epoch.
DEFERRED_REGISTRATIONS = frozenset(
    {("atexit", "register"), ("weakref", "finalize"), ("signal", "signal")}
)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


@dataclass(frozen=True)
class ImportBinding:
    """What a local name refers to: ``module`` (absolute) and, for ``from`` imports, ``name``."""

    module: str
    name: str | None = None


@dataclass(frozen=True)
class Site:
    """Where something happens: 1-based line and column, plus the source text (shortened)."""

    line: int
    column: int
    text: str
    end_line: int = 0
    statement_line: int = 0  # first line of the enclosing simple statement


@dataclass(frozen=True)
class CallSite:
    """A call (``is_reference`` false) or a function passed as a value (``is_reference`` true)."""

    target: Dotted
    site: Site
    is_reference: bool = False
    persistent_guard: bool = False
    in_loop: bool = False


@dataclass(frozen=True)
class SinkSite:
    """A candidate DataLoader iterator reset.

    ``kind`` is one of ``assign-none``, ``delete``, ``setattr``, ``shutdown-workers``; ``receiver``
    is the dotted object whose ``_iterator`` is reset (``("dataloader",)``), if it is a plain name.
    """

    kind: str
    receiver: Dotted | None
    site: Site
    persistent_guard: bool = False


@dataclass
class FunctionSummary:
    qualname: str  # "AbstractDataFetcher.__iter__", "outer.<locals>.inner", "<module>"
    name: str
    class_qualname: str | None
    kind: str  # "function", "method", "staticmethod", "classmethod", "property", "module"
    line: int
    column: int
    end_line: int
    params: list[str] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    sinks: list[SinkSite] = field(default_factory=list)
    local_types: dict[str, Dotted] = field(default_factory=dict)

    @property
    def self_name(self) -> str | None:
        """The name bound to the instance (or class) inside a method, if any."""
        if self.kind in ("method", "classmethod", "property") and self.params:
            return self.params[0]
        return None


@dataclass
class ClassSummary:
    qualname: str
    name: str
    line: int
    bases: list[Dotted] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    attr_types: dict[str, Dotted] = field(default_factory=dict)


@dataclass
class FileSummary:
    path: str
    module: str
    is_package: bool = False
    imports: dict[str, ImportBinding] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)
    error: str | None = None
    error_line: int = 1
    error_column: int = 1
    loaders: LoaderFacts | None = None  # DataLoader facts for LL2xx (summary_dataloaders.py)

    @property
    def ok(self) -> bool:
        return self.error is None


def summarize_source(
    source: bytes, path: str, module: str, is_package: bool = False
) -> FileSummary:
    """Parse ``source`` with libcst and summarize it; parse errors become ``summary.error``."""
    summary = FileSummary(path=path, module=module, is_package=is_package)
    summary.error = nesting_problem(source)  # before libcst: it can crash on deep nesting
    if summary.error:
        return summary
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        summary.error, summary.error_line, summary.error_column = _syntax_error(source, exc)
        return summary
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as exc:
        summary.error = f"cannot decode: {_one_line(str(exc))}"
        return summary
    except RecursionError:
        summary.error = "too deeply nested for the parser (recursion limit)"
        return summary
    try:
        summary.noqa = _noqa_lines(tree.code)
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        wrapper.visit(_Summarizer(summary, tree))
        from lintloader.summary_dataloaders import summarize_loaders  # import cycle

        summary.loaders = summarize_loaders(wrapper, tree, source)
    except RecursionError:
        summary.error = "too deeply nested to analyze (recursion limit)"
    return summary


def _syntax_error(source: bytes, exc: cst.ParserSyntaxError) -> tuple[str, int, int]:
    """Python's own message and position where it has one (clearer than the CST parser's)."""
    try:
        ast.parse(source)
    except SyntaxError as python_error:
        line = python_error.lineno or 1
        column = python_error.offset or 1
        return f"syntax error: {python_error.msg}", line, column
    except (ValueError, RecursionError, MemoryError):
        pass
    return f"syntax error: {_one_line(exc.message)}", exc.raw_line, exc.raw_column + 1


def _noqa_lines(code: str) -> dict[int, frozenset[str] | None]:
    found: dict[int, frozenset[str] | None] = {}
    if "noqa" not in code.lower():
        return found
    for number, line in enumerate(code.splitlines(), start=1):
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            found[number] = (
                frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
            )
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split())


def dotted(node: cst.BaseExpression) -> Dotted | None:
    """``a.b.c`` -> ("a", "b", "c"); ``super().m`` -> ("super()", "m"); anything else -> None."""
    if isinstance(node, cst.Name):
        return (node.value,)
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return None if head is None else (*head, node.attr.value)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "super"
    ):
        return ("super()",)
    return None


def _annotation_type(node: cst.BaseExpression) -> Dotted | None:
    """The class an annotation names: ``Foo``, ``"Foo"``, ``Optional[Foo]``, ``Foo | None``."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        if isinstance(text, str) and re.fullmatch(r"[A-Za-z_][\w.]*", text):
            return tuple(text.split("."))
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, cst.Name) and side.value == "None"):
                return _annotation_type(side)
        return None
    if isinstance(node, cst.Subscript):
        head = dotted(node.value)
        if head and head[-1] == "Optional" and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                return _annotation_type(element.value)
        return None
    return dotted(node)


def _constructed_type(node: cst.BaseExpression | None) -> Dotted | None:
    """``Foo(...)`` -> ("Foo",): the linker keeps it only if ``Foo`` resolves to a class."""
    if isinstance(node, cst.Call):
        return dotted(node.func)
    return None


def _is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _decorator_kind(decorators: Sequence[cst.Decorator]) -> str | None:
    for decorator in decorators:
        name = dotted(decorator.decorator)
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


class _Summarizer(cst.CSTVisitor):
    """Fills a :class:`FileSummary` in one pass over the module."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, summary: FileSummary, tree: cst.Module) -> None:
        super().__init__()
        self.summary = summary
        self.tree = tree
        module_scope = FunctionSummary(MODULE_SCOPE, MODULE_SCOPE, None, "module", 1, 1, 1)
        summary.functions[MODULE_SCOPE] = module_scope
        self.scopes: list[_Scope] = [module_scope]
        self.guards: list[bool] = []  # one entry per enclosing `if`: mentions persistent_workers
        self.loops = 0
        self.statements: list[int] = []
        self.saved_loops: list[int] = []

    # -- helpers -----------------------------------------------------------------------------
    def _site(self, node: cst.CSTNode) -> Site:
        position = self.get_metadata(PositionProvider, node)
        text = _one_line(self.tree.code_for_node(node))
        if len(text) > _TEXT_LIMIT:
            text = text[: _TEXT_LIMIT - 3] + "..."
        statement = self.statements[-1] if self.statements else position.start.line
        return Site(
            position.start.line,
            position.start.column + 1,
            text,
            position.end.line,
            statement,
        )

    @property
    def function(self) -> FunctionSummary:
        for scope in reversed(self.scopes):
            if isinstance(scope, FunctionSummary):
                return scope
        raise AssertionError("module scope is always present")

    @property
    def guarded(self) -> bool:
        return any(self.guards)

    def _qualname(self, name: str) -> str:
        parent = self.scopes[-1]
        if isinstance(parent, FunctionSummary):
            if parent.qualname == MODULE_SCOPE:
                return name
            return f"{parent.qualname}.<locals>.{name}"
        return f"{parent.qualname}.{name}"

    # -- statements that carry position context ----------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statements.append(self.get_metadata(PositionProvider, node).start.line)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.statements.pop()

    def visit_If(self, node: cst.If) -> None:
        test = self.tree.code_for_node(node.test)
        self.guards.append("persistent_workers" in test)
        self.statements.append(self.get_metadata(PositionProvider, node).start.line)

    def leave_If(self, original_node: cst.If) -> None:
        self.guards.pop()
        self.statements.pop()

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        self.loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self.loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.loops -= 1

    # -- imports -----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            full = ".".join(name)
            if alias.asname and isinstance(alias.asname.name, cst.Name):
                self.summary.imports[alias.asname.name.value] = ImportBinding(full)
            else:
                self.summary.imports[name[0]] = ImportBinding(name[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        target = ".".join(dotted(node.module) or ()) if node.module else None
        level = len(node.relative)
        if level:
            source = _resolve_relative(self.summary.module, self.summary.is_package, level, target)
        else:
            source = target or ""
        if isinstance(node.names, cst.ImportStar):
            self.summary.star_imports.append(source)
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.summary.imports[local] = ImportBinding(source, alias.name.value)

    # -- definitions -------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qualname = self._qualname(node.name.value)
        bases = [d for d in (dotted(arg.value) for arg in node.bases if arg.keyword is None) if d]
        line = self.get_metadata(PositionProvider, node).start.line
        klass = ClassSummary(qualname, node.name.value, line, bases)
        self.summary.classes[qualname] = klass
        self.scopes.append(klass)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.scopes[-1]
        qualname = self._qualname(node.name.value)
        decorated = _decorator_kind(node.decorators)
        if isinstance(parent, ClassSummary):
            kind = decorated or "method"
            parent.methods.append(node.name.value)
            class_qualname: str | None = parent.qualname
        else:
            kind, class_qualname = "function", None
        position = self.get_metadata(PositionProvider, node)
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        function = FunctionSummary(
            qualname,
            node.name.value,
            class_qualname,
            kind,
            position.start.line,
            position.start.column + 1,
            position.end.line,
            params,
        )
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if param.annotation is not None:
                annotated = _annotation_type(param.annotation.annotation)
                if annotated:
                    function.local_types[param.name.value] = annotated
        self.summary.functions[qualname] = function
        self.scopes.append(function)
        self.guards.append(False)
        self.saved_loops.append(self.loops)
        self.loops = 0

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.guards.pop()
        self.loops = self.saved_loops.pop()

    # -- types of names and attributes --------------------------------------------------------
    def _record_type(self, target: cst.BaseExpression, type_: Dotted | None) -> None:
        if not type_:
            return
        function = self.function
        if isinstance(target, cst.Name):
            function.local_types[target.value] = type_
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

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._sink_from_assignment(target.target, node.value)
            self._record_type(target.target, _constructed_type(node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._sink_from_assignment(node.target, node.value)
        annotated = _annotation_type(node.annotation.annotation)
        constructed = _constructed_type(node.value)
        scope = self.scopes[-1]
        if isinstance(scope, ClassSummary) and isinstance(node.target, cst.Name):
            if annotated:
                scope.attr_types.setdefault(node.target.value, annotated)
            return
        self._record_type(node.target, annotated or constructed)

    # -- sinks -------------------------------------------------------------------------------
    def _add_sink(
        self, kind: str, receiver: Dotted | None, node: cst.CSTNode, text: str = ""
    ) -> None:
        site = self._site(node)
        if text:
            site = Site(site.line, site.column, text, site.end_line, site.statement_line)
        self.function.sinks.append(SinkSite(kind, receiver, site, self.guarded))

    def _sink_from_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute) and target.attr.value == SINK_ATTRIBUTE:
            if _is_none(value):
                text = f"{self._site(target).text} = None"
                self._add_sink("assign-none", dotted(target.value), target, text)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._sink_from_assignment(element.value, value)

    def visit_Del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else None
        for target in [e.value for e in targets] if targets else [node.target]:
            if isinstance(target, cst.Attribute) and target.attr.value == SINK_ATTRIBUTE:
                self._add_sink(
                    "delete", dotted(target.value), target, f"del {self._site(target).text}"
                )

    def _sink_from_call(self, node: cst.Call, name: Dotted | None) -> bool:
        if name and name[-1] == SHUTDOWN_METHOD and len(name) > 1:
            assert isinstance(node.func, cst.Attribute)
            self._add_sink("shutdown-workers", dotted(node.func.value), node)
            return True
        if name in (("setattr",), ("delattr",)) and len(node.args) >= 2:
            attribute = node.args[1].value
            if (
                isinstance(attribute, cst.SimpleString)
                and attribute.evaluated_value == SINK_ATTRIBUTE
                and (name == ("delattr",) or (len(node.args) >= 3 and _is_none(node.args[2].value)))
            ):
                kind = "setattr" if name == ("setattr",) else "delete"
                self._add_sink(kind, dotted(node.args[0].value), node)
                return True
        return False

    # -- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        name = dotted(node.func)
        if self._sink_from_call(node, name):
            return
        if name:
            self.function.calls.append(
                CallSite(name, self._site(node), False, self.guarded, self.loops > 0)
            )
        if name and name[-2:] in DEFERRED_REGISTRATIONS:
            return  # a callback for interpreter exit or garbage collection, not a call now
        for arg in node.args:
            reference = dotted(arg.value)
            if reference and reference[0] != "super()":
                self.function.calls.append(
                    CallSite(reference, self._site(arg.value), True, self.guarded, self.loops > 0)
                )
