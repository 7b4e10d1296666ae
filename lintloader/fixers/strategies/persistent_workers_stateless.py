"""persistent-workers-stateless (safe), for LL204: ``add-persistent-workers``'s edit, made only
when nothing in the epoch loop sets per-epoch state on the dataset, the sampler or the loader.

Persistence has a price: the workers keep the copy of the dataset they started with, so state
the main process sets between epochs (``sampler.set_epoch(epoch)``,
``dataset.difficulty = ...``) no longer reaches them. Where the loop that runs the epochs sets
none (no ``set_epoch`` call, no attribute assigned on the dataset, the loader or anything else
the DataLoader call is given), a persistent loader yields what it did before. Otherwise it is
refused, naming the statement; ``add-persistent-workers`` (unsafe) still offers the edit.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import Target, target_call
from lintloader.fixers.edit.names import collect
from lintloader.fixers.edit.parsing import parse_module
from lintloader.fixers.strategies.add_persistent_workers import apply as add_persistent

Loop = cst.For | cst.While


def apply(request: FixRequest) -> Edits | None:
    state = per_epoch_state(request)
    if state:
        raise FixError(
            f"the epoch loop sets per-epoch state ({state}), which persistent workers would not see"
        )
    return add_persistent(request)


def per_epoch_state(request: FixRequest) -> str | None:
    """A statement of the loop around the iterating one that sets state the workers read."""
    uses = [hop for hop in request.finding.chain if hop.verb == "loop"]
    if not uses:
        raise FixError("the loader is not iterated by a loop the fix can read")
    path = request.path_of(uses[0])
    wrapper = MetadataWrapper(parse_module(request.sources[path]))
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    line = uses[0].line
    loops = (
        n for n, where in positions.items() if isinstance(n, Loop) and where.start.line == line
    )
    inner = next(loops, None)
    outer = _enclosing_loop(inner, parents) if inner is not None else None
    if outer is None:
        raise FixError("no loop around the one that iterates the loader: cannot see the epochs")
    target = target_call(request)
    watched = collect([a.value for a in target.call.args]).used | _bound_to(target)
    finder = _StateFinder(watched)
    outer.visit(finder)
    if finder.found is None:
        return None
    code = wrapper.module.code_for_node(finder.found).strip()
    return f"line {positions[finder.found].start.line}: `{code}`"


def _enclosing_loop(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> Loop | None:
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, Loop):
        parent = parents.get(parent)
    return parent


def _bound_to(target: Target) -> set[str]:
    """The name the loader is assigned to (``loader = DataLoader(...)``), if any."""
    statement = target.statement()
    assignment = target.assignment(statement)
    if assignment is not None and isinstance(assignment.targets[0].target, cst.Name):
        return {assignment.targets[0].target.value}
    return set()


class _StateFinder(cst.CSTVisitor):
    """The first ``x.set_epoch(...)`` call, or assignment to an attribute of a watched name."""

    def __init__(self, watched: set[str]) -> None:
        super().__init__()
        self.watched = watched
        self.found: cst.CSTNode | None = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "set_epoch":
            self.found = self.found or node

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, node)

    def _target(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        base = target
        while isinstance(base, (cst.Attribute, cst.Subscript)):
            base = base.value
        if base is not target and isinstance(base, cst.Name) and base.value in self.watched:
            self.found = self.found or node


STRATEGY = FixStrategy(
    name="persistent-workers-stateless",
    safe=True,
    description="add persistent_workers to a DataLoader used every epoch when the epoch loop "
    "sets no per-epoch state on what it is given (LL204)",
    apply=apply,
)
