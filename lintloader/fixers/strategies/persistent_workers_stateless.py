"""persistent-workers-stateless (safe), for LL204: ``add-persistent-workers``'s edit, made only
when nothing in the epoch loop sets per-epoch state on the dataset, the sampler or the loader.

Persistence has a price (:mod:`lintloader.fixers.edit.epoch_state`): state the main process sets
between epochs no longer reaches the workers. Where the loop that runs the epochs sets none on
the dataset, the loader or anything else the DataLoader call is given, a persistent loader
yields what it did before. Otherwise it is
refused, naming the statement; ``add-persistent-workers`` (unsafe) still offers the edit.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.epoch_state import state_set
from lintloader.fixers.edit.loader_calls import Target, target_call
from lintloader.fixers.edit.names import collect
from lintloader.fixers.edit.shared_parse import parsed
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
    read = parsed(request, path, request.sources[path])
    positions, parents = read.positions, read.parents
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
    found = state_set(outer, watched)
    if found is None:
        return None
    code = read.module.code_for_node(found).strip()
    return f"line {positions[found].start.line}: `{code}`"


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


STRATEGY = FixStrategy(
    name="persistent-workers-stateless",
    safe=True,
    description="add persistent_workers to a DataLoader used every epoch when the epoch loop "
    "sets no per-epoch state on what it is given (LL204)",
    apply=apply,
)
