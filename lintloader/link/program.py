"""Link per-file summaries into one program: the one type the rest of lintloader links with.

A :class:`Program` is, layer on layer, the symbol table and name resolution
(``link/symbols.py``), the class hierarchy (``link/hierarchy.py``) and call resolution
(``link/calls.py``); this module adds linking more files in and what analyses work out from
the whole program (:meth:`Program.derived`). The records those layers answer with are
importable from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import TypeVar, cast

from lintloader.link.calls import MEGAMORPHIC_DISPATCH, CallGraph, Edge
from lintloader.link.hierarchy import FOREIGN
from lintloader.link.symbols import ClassInfo, FunctionInfo, Symbol, symbol_key
from lintloader.summary.model import FileSummary

__all__ = [
    "FOREIGN",
    "MEGAMORPHIC_DISPATCH",
    "ClassInfo",
    "Edge",
    "FunctionInfo",
    "Program",
    "Symbol",
    "symbol_key",
]

Derived = TypeVar("Derived")
Kept = TypeVar("Kept")
# what gathered() kept for one work_out: (how many functions it has seen, what it kept)
_Gathering = tuple[int, tuple[tuple["FunctionInfo", object], ...]]


class Program(CallGraph):
    """The whole scanned code as one linked program."""

    # what analyses work out from the whole program, by the function that works it out
    # (derived): forgotten on extend
    _derived: dict[Callable[[Program], object], object]

    def __init__(self, summaries: Iterable[FileSummary]) -> None:
        # what gathered() kept, by the function that works it out: kept over extend
        self._gathered: dict[Callable[[FunctionInfo], object], _Gathering] = {}
        super().__init__()
        self.extend(summaries)

    def _forget(self) -> None:
        super()._forget()
        self._derived = {}

    def extend(self, summaries: Iterable[FileSummary]) -> None:
        """Link more files in (demand selection adds each round's files to one program).
        Everything worked out from the files so far is forgotten: a newly linked module can
        change how a name resolves, a class's MRO, its subclasses."""
        for summary in summaries:
            if summary.ok:
                self._add(summary)
        self._forget()

    def derived(self, work_out: Callable[[Program], Derived]) -> Derived:
        """``work_out(self)``, worked out once for the files linked so far: what analyses and
        fixers share (``loader_sites``), typed by the function that works it out."""
        if work_out not in self._derived:
            self._derived[work_out] = work_out(self)
        return cast(Derived, self._derived[work_out])

    def gathered(
        self, work_out: Callable[[FunctionInfo], Kept | None]
    ) -> tuple[tuple[FunctionInfo, Kept], ...]:
        """Each linked function for which ``work_out`` answers something (not None), with the
        answer, in key order. ``work_out`` reads the function and its file only, never the
        program, so the answers hold over :meth:`extend`: only the functions linked since the
        last call are worked out (the demand hooks ask every round, ``select/policy.py``)."""
        seen, kept = self._gathered.get(work_out, (0, ()))
        if seen < len(self.functions):
            new = islice(self.functions.values(), seen, None)
            fresh = [(info, found) for info in new if (found := work_out(info)) is not None]
            if fresh:
                kept = tuple(sorted([*kept, *fresh], key=lambda pair: pair[0].key))
            self._gathered[work_out] = (len(self.functions), kept)
        return cast(tuple[tuple[FunctionInfo, Kept], ...], kept)
