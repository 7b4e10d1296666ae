"""reuse-iterator (unsafe), for LL203: ``target = next(iter(loader))`` in a loop body (``target``
a name or a tuple such as ``x, y``) becomes one iterator created before the loop, re-created only
on ``StopIteration``; the loader's construction gets persistent workers (as hoist-dataloader
does), so re-creating the iterator after a pass reuses the pool instead of starting a new one.

Refused, with the reason, when the loader's construction is not known (a parameter typed as a
DataLoader: its ``persistent_workers`` cannot be checked) or cannot be made persistent. Unsafe:
the loop now walks through the data instead of taking the first batch again every step.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import call_at, insert_before, next_of_iter, target_call
from lintloader.fixers.edit.persistence import made_persistent, site_at
from lintloader.fixers.edit.replace import replaced


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
    finding = request.finding
    edits = persistent_loader(request)
    target = target_call(request, edits.get(request.displays.get(finding.path, finding.path)))
    call = target.call
    loader = next_of_iter(call) if len(call.args) == 1 else None
    if loader is None:
        raise FixError("not a `next(iter(loader))` call")
    statement = target.statement()
    assignment = target.assignment(statement)
    if assignment is None:
        raise FixError("not a plain `target = next(iter(loader))` statement")
    loop = target.loop_of(statement)
    block = target.block_of(loop)
    module = target.module
    source = module.code_for_node(loader)
    assigned = module.code_for_node(assignment.targets[0].target)
    iterator = _iterator_name(module, loader)
    create = cst.parse_statement(f"{iterator} = iter({source})\n")
    retry = cst.parse_statement(
        f"try:\n"
        f"    {assigned} = next({iterator})\n"
        f"except StopIteration:\n"
        f"    {iterator} = iter({source})\n"
        f"    {assigned} = next({iterator})\n"
    )
    assert isinstance(retry, cst.Try)
    new_loop = loop.deep_replace(statement, _kept_comments(retry, statement))
    new_block = insert_before(block, loop, [create]).deep_replace(loop, new_loop)
    if not isinstance(block, cst.Module):
        new_block = module.deep_replace(block, new_block)
    return {**edits, **target.result(new_block)}  # type: ignore[arg-type]


def _kept_comments(
    retry: cst.Try, statement: cst.SimpleStatementLine | cst.BaseCompoundStatement
) -> cst.Try:
    """``retry`` with the comments of the ``statement`` it replaces: those on the lines above
    it, and its trailing comment on the assignment the ``try`` block makes first."""
    retry = retry.with_changes(leading_lines=statement.leading_lines)
    first, *rest = retry.body.body
    if not (
        isinstance(statement, cst.SimpleStatementLine)
        and statement.trailing_whitespace.comment is not None
        and isinstance(first, cst.SimpleStatementLine)
    ):
        return retry
    first = first.with_changes(trailing_whitespace=statement.trailing_whitespace)
    return retry.with_changes(body=retry.body.with_changes(body=(first, *rest)))


def persistent_loader(request: FixRequest) -> Edits:
    """The edit that gives the loader's construction persistent workers (none when it has
    them); refuses when the construction is unknown or cannot be changed."""
    chain = request.finding.chain
    why = "re-creating the iterator after each pass would start a new worker pool"
    if len(chain) < 2:
        raise FixError(f"the DataLoader is built where the analysis cannot see it: {why}")
    built = chain[0]
    path = request.path_of(built)
    site = site_at(request.program, path, built.line, built.column)
    if site is None:
        raise FixError(f"no DataLoader construction at {built.path}:{built.line}: {why}")
    target = call_at(request, path, built.line, built.column)
    try:
        new_call = made_persistent(target.call, site)
    except FixError as exc:
        raise FixError(f"the loader cannot be made persistent ({exc}): {why}") from None
    if new_call is target.call:
        return {}
    return target.result(replaced(target.module, target.call, new_call))


STRATEGY = FixStrategy(
    name="reuse-iterator",
    safe=False,
    description="create the iterator once before the loop; re-create it on StopIteration; "
    "make the loader persistent (LL203)",
    apply=apply,
)
