"""What a run's analysis read of each function's calls, and the view of a summary without what
it did not read.

The demand hooks and the rules read a function's calls only through the program
(``Program.edges_from``, ``calls_named``, ``calls_of``; ``tests/test_rule_contract.py`` checks
that nothing in ``analysis/`` or ``rules/`` reads them otherwise), which records whose calls
were read and which call names the callers of were looked up (``Program.read_calls``,
``asked_names``). A stored run keeps both (:class:`DemandReads`). A function whose calls the
analysis did not read, and none of whose calls, before or after an edit, bears a name it looked
up (or a name an import gives one), is never linked: each round and each rule does what it
did, whatever those calls are. So an edit that changes only such calls (``print(x)`` added to
a helper of a file on a chain) keeps the stored selection and findings (``select/revisit.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lintloader.program import Program
    from lintloader.summary.model import CallSite, FileSummary


class DemandReads(NamedTuple):
    """Whose calls the analysis of a run (its rounds and its rules) read, and the call names
    it looked the callers of up, with every local name an import gives one of them (``from
    m import f as g``: callers of ``f`` include those of ``g``)."""

    functions: frozenset[str]
    names: frozenset[str]


def recorded(program: Program, before: DemandReads | None = None) -> DemandReads:
    """What ``program``'s analysis read, with what ``before`` (the stored run the program
    was linked again for) had read."""
    names = program.looked_up_names()
    functions = set(program.read_calls)
    if before is not None:
        functions |= before.functions
        names |= before.names
    return DemandReads(frozenset(functions), frozenset(names))


def stored_reads(value: object) -> DemandReads | None:
    """``value``, read back from the cache, if it is a :class:`DemandReads` of strings; else
    None (what was read is unknown)."""
    valid = (
        isinstance(value, DemandReads)
        and all(isinstance(part, frozenset) for part in value)
        and all(isinstance(item, str) for part in value for item in part)
    )
    return value if valid else None  # type: ignore[return-value]


def unread_view(summary: FileSummary, reads: DemandReads) -> FileSummary | None:
    """``summary`` with the calls of every function whose calls ``reads`` says were not read
    left out; None when such a function makes a call the analysis could link (one bearing a
    name it looked up)."""
    from lintloader.program import symbol_key

    functions = dict(summary.functions)
    for qualname, function in summary.functions.items():
        if symbol_key(summary.module, qualname) in reads.functions:
            continue
        if _named(function.calls, reads.names):
            return None
        if function.calls:
            functions[qualname] = dataclasses.replace(function, calls=[])
    return dataclasses.replace(summary, functions=functions)


def _named(calls: Iterable[CallSite], names: frozenset[str]) -> bool:
    return any(call.target[-1] in names for call in calls)
