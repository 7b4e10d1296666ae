"""hoist-dataloader (unsafe), for LL202: move ``name = DataLoader(...)`` from a loop body to just
before the loop. The rule offers it only when no argument reads a name the loop binds or
assigns; unsafe because the arguments may still depend on state the loop mutates."""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import insert_before, target_call, without


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    statement = target.statement()
    assignment = target.assignment(statement)
    if assignment is None or not isinstance(assignment.targets[0].target, cst.Name):
        raise FixError("not a plain `name = DataLoader(...)` statement")
    loop = target.loop_of(statement)
    block = target.block_of(loop)
    moved = statement.with_changes(leading_lines=[])
    new_loop = loop.with_changes(body=without(loop.body, statement))
    new_block = insert_before(block, loop, [moved])
    new_block = new_block.deep_replace(loop, new_loop)
    if isinstance(block, cst.Module):
        return target.result(new_block)  # type: ignore[arg-type]
    return target.result(target.module.deep_replace(block, new_block))


STRATEGY = FixStrategy(
    name="hoist-dataloader",
    safe=False,
    description="move a DataLoader construction out of the loop that rebuilds it (LL202)",
    apply=apply,
)
