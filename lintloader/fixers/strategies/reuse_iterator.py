"""reuse-iterator (unsafe), for LL203: ``name = next(iter(loader))`` in a loop body becomes one
iterator created before the loop, re-created only on ``StopIteration``. Unsafe: the loop now
walks through the data instead of taking the first batch again every step."""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import insert_before, target_call


def _iterator_name(module: cst.Module, source: cst.BaseExpression) -> str:
    base = source.attr.value if isinstance(source, cst.Attribute) else None
    if isinstance(source, cst.Name):
        base = source.value
    stem = f"{(base or 'data').lstrip('_')}_iterator"
    name, counter = stem, 2
    while name in module.code:
        name, counter = f"{stem}_{counter}", counter + 1
    return name


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    call = target.call
    inner = call.args[0].value if len(call.args) == 1 else None
    if not (
        isinstance(call.func, cst.Name)
        and call.func.value == "next"
        and isinstance(inner, cst.Call)
        and isinstance(inner.func, cst.Name)
        and inner.func.value == "iter"
        and len(inner.args) == 1
    ):
        raise FixError("not a `next(iter(loader))` call")
    statement = target.statement()
    assignment = target.assignment(statement)
    if assignment is None:
        raise FixError("not a plain `name = next(iter(loader))` statement")
    loop = target.loop_of(statement)
    block = target.block_of(loop)
    module = target.module
    source = module.code_for_node(inner.args[0].value)
    assigned = module.code_for_node(assignment.targets[0].target)
    iterator = _iterator_name(module, inner.args[0].value)
    create = cst.parse_statement(f"{iterator} = iter({source})\n")
    retry = cst.parse_statement(
        f"try:\n"
        f"    {assigned} = next({iterator})\n"
        f"except StopIteration:\n"
        f"    {iterator} = iter({source})\n"
        f"    {assigned} = next({iterator})\n"
    )
    retry = retry.with_changes(leading_lines=statement.leading_lines)
    new_loop = loop.deep_replace(statement, retry)
    new_block = insert_before(block, loop, [create]).deep_replace(loop, new_loop)
    if isinstance(block, cst.Module):
        return target.result(new_block)  # type: ignore[arg-type]
    return target.result(module.deep_replace(block, new_block))


STRATEGY = FixStrategy(
    name="reuse-iterator",
    safe=False,
    description="create the iterator once before the loop; re-create it on StopIteration (LL203)",
    apply=apply,
)
