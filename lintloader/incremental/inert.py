"""Which edits of a file add, remove or change only functions that no analysis reads.

A module-level function that calls nothing, resets nothing, holds no loop, types no local and
builds no DataLoader gives the linker, the demand hooks and the rules nothing to follow: no edge
leaves it, no sink is in it, no loader fact is in it. If no code names it either (no call, no
import, no reference; ``incremental/revisit.py`` checks the bytes of every file the stored run
took), no edge enters it and no name resolves differently with or without it. Such a function,
here *inert*, can be added (a helper being written), removed or changed without changing the
selection or any finding (a test adds one to every rule's fixtures and compares).

:func:`edited_inert` names the functions an edit added, removed or changed that are inert on
each side; :func:`without` drops them from a summary, so what is left compares as usual: equal
(the stored findings hold), moved lines only (the stored selection holds, see
``incremental/moves.py``) or different (analyze again).
"""

from __future__ import annotations

import dataclasses

from lintloader.incremental.moves import moved_only
from lintloader.summary.model import FileSummary, FunctionFacts, FunctionSummary


def edited_inert(before: FileSummary, after: FileSummary) -> frozenset[str] | None:
    """The qualnames of the module-level functions the edit from ``before`` to ``after``
    added, removed or changed (beyond their lines) that are inert wherever present; None when
    another function the edit touched in that way is not inert (the edit is not only that)."""
    edited = set()
    for name in before.functions.keys() | after.functions.keys():
        old, new = _entry(before, name), _entry(after, name)
        if old is not None and new is not None and moved_only(old, new):
            continue  # unchanged but for lines: what is left compares it
        if not all(entry is None or _inert(*entry) for entry in (old, new)):
            return None
        edited.add(name)
    return frozenset(edited)


def without(summary: FileSummary, names: frozenset[str]) -> FileSummary:
    """``summary`` without the functions ``names`` (and their DataLoader facts)."""
    if not names:
        return summary
    functions = {k: v for k, v in summary.functions.items() if k not in names}
    loaders = summary.loaders
    if loaders is not None:
        kept = {k: v for k, v in loaders.functions.items() if k not in names}
        loaders = dataclasses.replace(loaders, functions=kept)
    return dataclasses.replace(summary, functions=functions, loaders=loaders)


def _entry(summary: FileSummary, name: str) -> tuple[FunctionSummary, FunctionFacts | None] | None:
    function = summary.functions.get(name)
    if function is None:
        return None
    facts = summary.loaders.facts(name) if summary.loaders is not None else None
    return function, facts


def _inert(function: FunctionSummary, facts: FunctionFacts | None) -> bool:
    if function.kind != "function" or function.class_qualname is not None:
        return False
    if "." in function.qualname or function.name.startswith("__"):
        return False  # nested functions and module dunders (__getattr__) are left alone
    if function.calls or function.sinks or function.loops or function.local_types:
        return False
    # the names it returns only matter for a DataLoader built in it, and it builds none
    return facts is None or dataclasses.replace(facts, returns=[]) == FunctionFacts()
