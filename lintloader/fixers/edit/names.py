"""Which names a statement reads or binds: decides whether statements can move to another
function without changing what they mean (a conservative over-approximation)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from lintloader.fixers.edit.cst_edit import body_of


class _Names(cst.CSTVisitor):
    """Every ``Name`` used (not attribute names, not keyword-argument names) and every name bound
    by an assignment-like target, outside nested functions, classes and lambdas."""

    def __init__(self) -> None:
        super().__init__()
        self.used: set[str] = set()
        self.bound: set[str] = set()
        self.exits = False

    def visit_Name(self, node: cst.Name) -> None:
        self.used.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def _bind(self, target: cst.CSTNode | None) -> None:
        """Bare names only: ``self.x = ...`` and ``d[k] = ...`` bind nothing local."""
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        self._bind(node.asname.name if node.asname else node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bound.add(node.name.value)
        self.used.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bound.add(node.name.value)
        self.used.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.exits = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.exits = True


def collect(nodes: Iterable[cst.CSTNode]) -> _Names:
    names = _Names()
    for node in nodes:
        node.visit(names)
    return names


def has_flow_exit(statement: cst.CSTNode) -> bool:
    """A ``return`` or ``yield`` (outside nested functions): moving it changes control flow."""
    return collect([statement]).exits


def first_free(names: Sequence[str], taken: Callable[[str], bool], stem: str = "") -> str:
    """The first of ``names`` that is not ``taken``, then ``<stem>_2``, ``<stem>_3``, ...
    (``stem``: the last of ``names`` unless given): the one way a fix names what it adds."""
    stem = stem or names[-1]
    more = (f"{stem}_{i}" for i in range(2, 100))
    return next(n for n in (*names, *more) if not taken(n))


def parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def name_conflicts(
    function: cst.FunctionDef, moved: list[cst.BaseStatement], self_name: str
) -> set[str]:
    """Names that tie ``moved`` to the rest of ``function``: its parameters (other than
    ``self``), and local names bound anywhere in it that both the moved and the kept
    statements use."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    moved_ids = {id(s) for s in moved}
    kept = collect(s for s in body if id(s) not in moved_ids)
    taken = collect(moved)
    local = kept.bound | taken.bound
    conflicts = taken.used & (parameters(function) - {self_name})
    conflicts |= taken.used & kept.used & local
    return conflicts


def bound_at_each_call(function: cst.FunctionDef) -> set[str]:
    """The names the function binds (its locals but those declared ``global``)."""
    declared = {
        name.name.value
        for statement in body_of(function)
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
        if isinstance(small, cst.Global)
        for name in small.names
    }
    return collect([function.body]).bound - declared
