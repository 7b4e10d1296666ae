"""The linked program of a run that will be stored: the same queries, recording what the
analysis read of the functions' calls.

The demand hooks and the rules read calls only through ``edges_from``, ``edges_into``,
``calls_named`` and ``calls_of`` (``tests/test_rule_contract.py`` checks that nothing in
``analysis/`` or ``rules/`` reads them otherwise). :class:`RecordingProgram` answers each as
:class:`~lintloader.link.program.Program` does and records, over every extension, the keys of
the functions whose calls were read, the call names whose callers were looked up, and which
kinds of whose calls were read as written (``link/call_kinds.py``); ``incremental/reads.py``
keeps that with the stored run. ``pipeline/engine.py`` installs it as the selection's linker, so the
linker's queries have no side effect and a rule knows nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lintloader.finding.findings import Confidence
from lintloader.link.call_kinds import EVERY_CALL, CallKind
from lintloader.link.program import Edge, FunctionInfo, Program
from lintloader.summary.model import CallSite, FileSummary


class RecordingProgram(Program):
    """A :class:`Program` that records what its call queries were asked."""

    def __init__(self, summaries: Iterable[FileSummary]) -> None:
        self.read_calls: set[str] = set()  # whose calls were read
        self.asked_names: set[str] = set()  # the call names whose callers were looked up
        self.read_kinds: set[tuple[str, str]] = set()  # (function key, kind name)
        super().__init__(summaries)

    def edges_from(self, key: str) -> list[Edge]:
        self.read_calls.add(key)
        return super().edges_from(key)

    def edges_into(self, key: str, confidence: Confidence | None = None) -> list[Edge]:
        called = self.called_names(key)
        self.asked_names |= called
        self.read_calls.update(self.callers_named(self._with_renames(called)))
        return super().edges_into(key, confidence)

    def calls_named(self, names: Iterable[str]) -> Iterator[tuple[FunctionInfo, CallSite]]:
        # name by name, as the caller takes them: a caller that stops early read no more
        for name in names:
            self.asked_names.add(name)
            for info, call in super().calls_named((name,)):
                self.read_calls.add(info.key)
                yield info, call

    def calls_of(self, key: str, kind: CallKind = EVERY_CALL) -> list[CallSite]:
        self.read_calls.add(key)
        self.read_kinds.add((key, kind.name))
        return super().calls_of(key, kind)

    def looked_up_names(self) -> set[str]:
        """The call names whose callers the analysis looked up (:attr:`asked_names`), with
        every local name an import gives one of them, to any depth: the names whose calls
        :meth:`edges_into` linked."""
        return self._with_renames(self.asked_names)
