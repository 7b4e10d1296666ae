"""Statement-level CST edits shared by the strategies: find a function by qualified name, find
statements by line, remove/insert whole statements, put ``pass`` into a block left empty.

Everything works on one parsed module; nodes are matched by identity, so an edit never touches
code it was not pointed at, and ``module.bytes`` round-trips everything else byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from lintloader.fixers.base import FixRequest
from lintloader.fixers.edit.shared_parse import parsed
from lintloader.summary.helpers import Scope, qualname_in

Statement = cst.BaseStatement  # a SimpleStatementLine or a compound statement


Node = TypeVar("Node", bound=cst.CSTNode)


class _NodesOf(cst.CSTVisitor):
    def __init__(self, kind: type[cst.CSTNode]) -> None:
        self.kind = kind
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found.append(node)
        return True


def nodes_of(node: cst.CSTNode, kind: type[Node]) -> list[Node]:
    """The nodes of ``kind`` in ``node`` (itself included), in source order: what
    ``libcst.matchers.findall`` gives, without importing ``libcst.matchers`` (building its
    thousands of classes costs a fix run 0.3-0.8 s of CPU)."""
    visitor = _NodesOf(kind)
    node.visit(visitor)
    return [found for found in visitor.found if isinstance(found, kind)]


@dataclass
class Located:
    """A parsed module with positions: ``module`` is the tree that edits must start from."""

    module: cst.Module
    positions: Mapping[cst.CSTNode, CodeRange]
    functions: dict[str, cst.FunctionDef]  # qualname (as the summarizer builds it) -> node
    classes: dict[str, cst.ClassDef]

    def start(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def end(self, node: cst.CSTNode) -> int:
        return self.positions[node].end.line


def located_in(request: FixRequest, path: str) -> Located:
    """:func:`locate` of ``path``'s current text, on the parse the trial's strategies share."""
    read = parsed(request, path, request.sources[path])
    return _located(read.module, read.positions)


def _located(module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange]) -> Located:
    finder = _FunctionFinder()
    module.visit(finder)
    return Located(module, positions, finder.found, finder.classes)


# what holds no def or class statement (the finder does not walk into it)
_NO_DEFINITIONS = (cst.SimpleStatementLine, cst.BaseExpression, cst.Decorator, cst.Parameters)


class _FunctionFinder(cst.CSTVisitor):
    """Qualified names the way ``lintloader.summary.calls`` builds them."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[Scope] = []  # enclosing classes and functions
        self.found: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}

    def _qualname(self, name: str) -> str:
        return qualname_in(self.scopes, name)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _NO_DEFINITIONS):
            return False  # a def or a class is a compound statement: none is inside these
        return super().on_visit(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qualname = self._qualname(node.name.value)
        self.classes.setdefault(qualname, node)
        self.scopes.append(("class", qualname))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qualname = self._qualname(node.name.value)
        self.found.setdefault(qualname, node)
        self.scopes.append(("function", qualname))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()


def body_of(node: cst.CSTNode) -> Sequence[Statement]:
    """The statements of a function, class, ``if`` or ``for`` written as an indented block."""
    body = getattr(node, "body", None)
    return body.body if isinstance(body, cst.IndentedBlock) else ()


def top_statement_at(located: Located, function: cst.FunctionDef, line: int) -> Statement | None:
    """The statement directly in ``function``'s body that spans ``line``."""
    for statement in body_of(function):
        if located.start(statement) <= line <= located.end(statement):
            return statement
    return None


def walk_statements(node: cst.CSTNode) -> Iterator[Statement]:
    """Every statement inside ``node`` (not descending into nested functions or classes)."""
    for child in node.children:
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(child, cst.BaseStatement):
            yield child
        yield from walk_statements(child)


def small_statement_at(
    located: Located, function: cst.FunctionDef, line: int
) -> tuple[cst.SimpleStatementLine, cst.BaseSmallStatement] | None:
    """The small statement (``x = 1`` in ``x = 1; y = 2``) of ``function`` starting on ``line``."""
    for statement in walk_statements(function.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if located.start(small) == line:
                return statement, small
    return None


@dataclass
class Edit:
    """What to do to one module: statements or small statements to drop, statements to insert
    after a statement (by identity), statements to append to a class body."""

    remove: set[cst.CSTNode] = field(default_factory=set)
    insert_after: dict[cst.CSTNode, list[Statement]] = field(default_factory=dict)

    def apply(self, module: cst.Module) -> cst.Module:
        return module.visit(_Editor(self))


def comment_lines(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The lines above a statement that move with it: from its first comment on (blank lines
    before that stay behind)."""
    kept = list(lines)
    while kept and kept[0].comment is None:
        kept.pop(0)
    return kept


def pass_line() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Pass()])


def _drop_semicolon(small: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
    """The last small statement of a line loses a trailing ``;`` left by a removed neighbour."""
    if getattr(small, "semicolon", cst.MaybeSentinel.DEFAULT) is cst.MaybeSentinel.DEFAULT:
        return small
    return small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)


class _Editor(cst.CSTTransformer):
    def __init__(self, edit: Edit) -> None:
        super().__init__()
        self.edit = edit

    def _kept(
        self,
        original: Sequence[cst.BaseSmallStatement],
        updated: Sequence[cst.BaseSmallStatement],
    ) -> list[cst.BaseSmallStatement]:
        """The small statements of one line that the edit does not remove (updated nodes)."""
        return [
            new for old, new in zip(original, updated, strict=True) if old not in self.edit.remove
        ]

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        if original_node in self.edit.remove:
            return updated_node  # the enclosing block drops it (and keeps its comments)
        kept = self._kept(original_node.body, updated_node.body)
        if len(kept) == len(updated_node.body):
            return updated_node
        if not kept:
            self.edit.remove.add(original_node)
            return updated_node
        kept[-1] = _drop_semicolon(kept[-1])
        return updated_node.with_changes(body=kept)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        kept = self._kept(original_node.body, updated_node.body)
        if len(kept) == len(updated_node.body):
            return updated_node
        if not kept:
            return updated_node.with_changes(body=[cst.Pass()])
        kept[-1] = _drop_semicolon(kept[-1])
        return updated_node.with_changes(body=kept)

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body = self._rebuild(original_node.body, updated_node.body)
        return updated_node.with_changes(body=body or [pass_line()])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._rebuild(original_node.body, updated_node.body))

    def _rebuild(
        self, originals: Sequence[Statement], updated: Sequence[Statement]
    ) -> list[Statement]:
        body: list[Statement] = []
        orphaned: list[cst.EmptyLine] = []  # comments above a removed statement
        for old, new in zip(originals, updated, strict=True):
            if old in self.edit.remove:
                orphaned.extend(getattr(new, "leading_lines", ()))
                continue
            if orphaned:
                new = new.with_changes(
                    leading_lines=[*orphaned, *getattr(new, "leading_lines", ())]
                )
                orphaned = []
            body.append(new)
            body.extend(self.edit.insert_after.get(old, ()))
        if orphaned and not body:
            body.append(pass_line().with_changes(leading_lines=orphaned))
        return body
