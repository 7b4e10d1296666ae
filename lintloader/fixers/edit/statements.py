"""Removing one small statement of a function, found by the line a hop points at: shared by
remove-call and remove-sink."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from lintloader.finding.findings import Hop
from lintloader.fixers.base import Edits, FixError, FixRequest
from lintloader.fixers.edit.cst_edit import Edit, located_in, small_statement_at

Accept = Callable[[cst.BaseSmallStatement, cst.Module], bool]


def remove_statement_at(request: FixRequest, hop: Hop, accept: Accept, what: str) -> Edits:
    """Delete the small statement of ``hop.function`` on ``hop.line`` if ``accept`` says it is
    exactly the ``what`` to remove; a block left empty gets ``pass``."""
    path = request.path_of(hop)
    located = located_in(request, path)
    function = located.functions.get(hop.function)
    if function is None:
        raise FixError(f"cannot find `{hop.function}` in {hop.path}")
    found = small_statement_at(located, function, hop.line)
    if found is None or not accept(found[1], located.module):
        raise FixError(f"{hop.path}:{hop.line}: `{hop.action}` is not a {what} statement")
    return {path: Edit(remove={found[1]}).apply(located.module).bytes}
