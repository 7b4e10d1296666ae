"""remove-call (unsafe): delete the call in ``__iter__`` (or the per-epoch hook) that starts the
chain, the quick patch many people apply.

Unsafe because the callee usually also resets per-iteration state: on Lightning 1.5.0, without
``self.reset()`` in ``__iter__`` a second iteration of the same fetcher starts with stale
``fetched``/``done`` and yields one batch: lost data, worse than the bug. Only with
``--unsafe-fixes``; ``relocate`` is preferred where it applies.
"""

from __future__ import annotations

import libcst as cst

from lintloader.fixers.base import Edits, FixRequest, FixStrategy
from lintloader.fixers.edit.statements import remove_statement_at


def is_bare_call(small: cst.BaseSmallStatement, module: cst.Module) -> bool:
    """``self.reset()`` on its own, not ``x = self.reset()`` (its value may be used)."""
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)


def apply(request: FixRequest) -> Edits | None:
    chain = request.finding.chain
    if len(chain) < 2:  # the reset itself sits in the root: remove-sink's case
        return None
    return remove_statement_at(request, chain[0], is_bare_call, "bare call")


STRATEGY = FixStrategy(
    name="remove-call",
    safe=False,
    description="delete the call in __iter__ that starts the chain (may leave stale state)",
    apply=apply,
    leaves=("LL103",),
)
