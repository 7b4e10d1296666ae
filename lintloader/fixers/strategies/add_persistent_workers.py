"""add-persistent-workers (unsafe), for LL204: add ``persistent_workers=True`` to the DataLoader
call (or turn a literal ``persistent_workers=False`` into ``True``). Unsafe: workers then keep
their copy of the dataset between epochs."""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import keyword_arg, target_call


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    call = target.call
    existing = keyword_arg(call, "persistent_workers")
    if existing is not None:
        if not (isinstance(existing.value, cst.Name) and existing.value.value == "False"):
            raise FixError("`persistent_workers` is already set to an expression")
        new_call = call.deep_replace(existing, existing.with_changes(value=cst.Name("True")))
    else:
        if any(a.star == "**" for a in call.args):
            raise FixError("the call passes `**kwargs`, which may set persistent_workers")
        added = cst.Arg(
            value=cst.Name("True"),
            keyword=cst.Name("persistent_workers"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        new_call = call.with_changes(args=[*call.args, added])
    return target.result(target.module.deep_replace(call, new_call))


STRATEGY = FixStrategy(
    name="add-persistent-workers",
    safe=False,
    description="add persistent_workers=True to a DataLoader used every epoch (LL204)",
    apply=apply,
)
