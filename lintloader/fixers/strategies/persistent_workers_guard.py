"""persistent-workers-guard (safe), for LL201: ``persistent_workers=True`` becomes
``persistent_workers=<num_workers expression> > 0``, or ``False`` when ``num_workers`` is missing
or a literal 0. Same behaviour whenever the loader has workers; no ValueError when it has none.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import keyword_arg, target_call
from lintloader.fixers.edit.persistence import has_workers_expression, is_true, workers_arg
from lintloader.fixers.edit.replace import replaced


def guard_value(call: cst.Call) -> cst.BaseExpression:
    workers = workers_arg(call)
    if workers is None or (
        isinstance(workers.value, cst.Integer) and workers.value.evaluated_value == 0
    ):
        return cst.Name("False")
    return has_workers_expression(call)


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    persistent = keyword_arg(target.call, "persistent_workers")
    if persistent is None or not is_true(persistent):
        raise FixError("`persistent_workers=True` not found in the call")
    new_arg = persistent.with_changes(value=guard_value(target.call))
    return target.result(replaced(target.module, persistent, new_arg))


STRATEGY = FixStrategy(
    name="persistent-workers-guard",
    safe=True,
    description="persistent_workers=True -> persistent_workers=<num_workers> > 0 (LL201)",
    apply=apply,
)
