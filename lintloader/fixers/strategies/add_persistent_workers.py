"""add-persistent-workers (unsafe), for LL204: the DataLoader call gets ``persistent_workers=True``
when its ``num_workers`` is certainly positive, ``persistent_workers=<num_workers> > 0`` when it
may be 0 (a literal ``persistent_workers=False`` is replaced the same way). Unsafe: workers then
keep their copy of the dataset between epochs."""

from __future__ import annotations

from lintloader.fixers.base import Edits, FixError, FixRequest, FixStrategy
from lintloader.fixers.edit.loader_calls import target_call
from lintloader.fixers.edit.persistence import made_persistent, site_at
from lintloader.fixers.edit.replace import replaced


def apply(request: FixRequest) -> Edits | None:
    target = target_call(request)
    finding = request.finding
    site = site_at(request.program, target.path, finding.line, finding.column)
    if site is None:
        raise FixError("the call is not a DataLoader construction the analysis knows")
    new_call = made_persistent(target.call, site)
    if new_call is target.call:
        return None
    return target.result(replaced(target.module, target.call, new_call))


STRATEGY = FixStrategy(
    name="add-persistent-workers",
    safe=False,
    description="add persistent_workers=True to a DataLoader used every epoch (LL204)",
    apply=apply,
)
