"""What a run's analysis read of each function's calls, and the view of a summary without what
it did not read.

The demand hooks and the rules read a function's calls only through the program
(``Program.edges_from``, ``edges_into``, ``calls_named``, ``calls_of``;
``tests/test_rule_contract.py`` checks that nothing in ``analysis/`` or ``rules/`` reads them
otherwise), which, linked as a :class:`~lintloader.incremental.recording.RecordingProgram`,
records whose calls were read, which call names the callers of were looked up (``read_calls``,
``asked_names``) and which kinds of whose calls were read as written (``read_kinds``, see
``link/call_kinds.py``). A stored run keeps these, and the names a call must bear to link
anywhere (``Program.linkable_names``) (:class:`DemandReads`).

A call the analysis cannot have seen changes nothing it computed:

* any call of a function whose calls it did not read, unless the call bears a name it looked
  up (or a name an import gives one): the function is never linked;
* in a function whose calls it did read, a call bearing none of those names, no name that
  links anywhere, and of no kind read there: ``edges_from`` finds no edge for it, in any
  round, ``calls_named`` and ``calls_of`` never yield it. (``print(x)`` added next to a reset.)

So an edit that changes only such calls keeps the stored selection and findings
(``incremental/revisit.py``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lintloader.incremental.recording import RecordingProgram
    from lintloader.link.call_kinds import CallKind
    from lintloader.summary.model import CallSite, FileSummary, FunctionSummary


class DemandReads(NamedTuple):
    """What the analysis of a run (its rounds and its rules) read of the functions' calls."""

    functions: frozenset[str]  # whose calls it read
    # the call names it looked the callers of up, with every local name an import gives one
    # of them (``from m import f as g``: callers of ``f`` include those of ``g``)
    names: frozenset[str]
    kinds: frozenset[tuple[str, str]]  # (function, kind): calls read as written
    linkable: frozenset[str]  # the names a call must end in to land in the linked files
    bare: frozenset[str]  # those a bare name call (``f()``) must bear


def recorded(program: RecordingProgram, before: DemandReads | None = None) -> DemandReads:
    """What ``program``'s analysis read, with what ``before`` (the stored run the program
    was linked again for) had read."""
    functions, names = set(program.read_calls), program.looked_up_names()
    kinds, linkable = set(program.read_kinds), program.linkable_names()
    bare = program.linkable_names(bare=True)
    if before is not None:
        functions |= before.functions
        names |= before.names
        kinds |= before.kinds
        linkable |= before.linkable
        bare |= before.bare
    return DemandReads(
        frozenset(functions),
        frozenset(names),
        frozenset(kinds),
        frozenset(linkable),
        frozenset(bare),
    )


def stored_reads(value: object) -> DemandReads | None:
    """``value``, read back from the cache, if it is a :class:`DemandReads` as lintloader
    writes it; else None (what was read is unknown)."""
    if isinstance(value, tuple) and len(value) == len(DemandReads._fields):
        value = DemandReads._make(value)  # stored as a plain tuple (incremental/replay.py)
    if not isinstance(value, DemandReads) or not all(isinstance(p, frozenset) for p in value):
        return None
    # the linkable names are only ever asked whether they hold a name: any item will do
    functions, names, kinds, _, _ = value
    pairs = all(isinstance(pair, tuple) and len(pair) == 2 and _strings(pair) for pair in kinds)
    return value if pairs and _strings(functions) and _strings(names) else None


def _strings(items: Iterable[object]) -> bool:
    return all(isinstance(item, str) for item in items)


def unread_view(summary: FileSummary, reads: DemandReads) -> FileSummary | None:
    """``summary`` without the calls the analysis that ``reads`` records cannot have seen
    (see the module docstring; ``reads.linkable`` and ``reads.bare`` must hold the names
    the edited files define, before and after the edit). None when a function whose calls
    were not read makes a call bearing a name the analysis looked up (it would be linked)."""
    from lintloader.link.program import symbol_key

    kinds = _kinds_read(reads)
    starts = _site_starts(summary)
    functions = dict(summary.functions)
    for qualname, function in summary.functions.items():
        key = symbol_key(summary.module, qualname)
        read = kinds.get(key, ()) if key in reads.functions else None
        if read is None and _named(function.calls, reads.names):
            return None
        kept = [
            call
            for call in function.calls
            if _may_be_seen(call, function, read, reads) or starts[_start(call)] > 1
        ]
        if len(kept) != len(function.calls):
            functions[qualname] = dataclasses.replace(function, calls=kept)
    return dataclasses.replace(summary, functions=functions)


def _kinds_read(reads: DemandReads) -> dict[str, list[CallKind]]:
    """The kinds of call read as written, by function (``link/call_kinds.py``)."""
    from lintloader.link.call_kinds import kind_named

    kinds: dict[str, list[CallKind]] = {}
    for key, name in reads.kinds:
        kinds.setdefault(key, []).append(kind_named(name))
    return kinds


def _may_be_seen(
    call: CallSite,
    function: FunctionSummary,
    read: Iterable[CallKind] | None,
    reads: DemandReads,
) -> bool:
    """Whether the analysis may have seen ``call`` of ``function``, whose calls it did not
    read (``read`` None) or read, as written, those of the kinds ``read``."""
    if read is None:
        return False
    name = call.target[-1]
    return (
        name in reads.names
        or name in (reads.bare if len(call.target) == 1 else reads.linkable)
        or any(kind.matches(function, call) for kind in read)
    )


def _site_starts(summary: FileSummary) -> Counter[tuple[int, int]]:
    """How many recorded sites start at each place of the file. A call left out of the view
    must start where no other site does: a finding's range ends where the widest site at its
    start ends (``analysis/ranges.py``)."""
    from lintloader.analysis.ranges import site_starts

    return Counter(site_starts(summary))


def _start(call: CallSite) -> tuple[int, int]:
    return call.site.line, call.site.column


def _named(calls: Iterable[CallSite], names: frozenset[str]) -> bool:
    return any(call.target[-1] in names for call in calls)
