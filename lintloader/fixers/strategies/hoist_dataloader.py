"""hoist-dataloader (unsafe), for LL202: move ``name = DataLoader(...)`` from a loop body to just
before the loop, with the comment lines above it, and make the loader persistent when the loop
still uses it: one loader, iterated every iteration, must keep one worker pool.

``persistent_workers`` becomes ``True`` when ``num_workers`` is certainly positive and
``<num_workers> > 0`` when it may be 0 (see :mod:`lintloader.fixers.edit.persistence`); the fix
is refused, with the reason, when that cannot be written (``**kwargs``, an expression already
given for ``persistent_workers``). The rule offers it only when no argument reads a name the
loop binds or assigns; unsafe because the arguments may still depend on state the loop mutates.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.cst_edit import comment_lines
from lintloader.fixers.edit.draws import refuse_draws
from lintloader.fixers.edit.loader_calls import Target, insert_before, target_call, without
from lintloader.fixers.edit.names import collect
from lintloader.fixers.edit.persistence import made_persistent, site_at
from lintloader.fixers.edit.replace import replaced


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    statement = target.statement()
    assignment = target.assignment(statement)
    if assignment is None or not isinstance(assignment.targets[0].target, cst.Name):
        raise FixError("not a plain `name = DataLoader(...)` statement")
    name = assignment.targets[0].target.value
    loop = target.loop_of(statement)
    refuse_draws(request, target.path, [statement])
    block = target.block_of(loop)
    rest = without(loop.body, statement)
    moved = statement
    if name in collect([rest]).used:  # the loop uses (iterates) the one loader again
        moved = replaced(statement, target.call, persistent_call(request, target))
    moved = moved.with_changes(leading_lines=comment_lines(statement.leading_lines))
    new_loop = loop.with_changes(body=rest)
    new_block = insert_before(block, loop, [moved])
    new_block = replaced(new_block, loop, new_loop)
    if isinstance(block, cst.Module):
        return target.result(new_block)  # type: ignore[arg-type]
    return target.result(replaced(target.module, block, new_block))


def persistent_call(request: FixRequest, target: Target) -> cst.Call:
    finding = request.finding
    site = site_at(request.program, target.path, finding.line, finding.column)
    if site is None:
        raise FixError("the call is not a DataLoader construction the analysis knows")
    try:
        return made_persistent(target.call, site)
    except FixError as exc:
        raise FixError(
            f"the loop iterates the hoisted loader again, which needs persistent workers: {exc}"
        ) from None


STRATEGY = FixStrategy(
    name="hoist-dataloader",
    safe=False,
    description="move a DataLoader construction out of the loop that rebuilds it, persistent "
    "when the loop iterates it again (LL202)",
    apply=apply,
)
