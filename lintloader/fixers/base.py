"""The fixer interface: a strategy turns one finding into new sources for the files it touches.

A strategy never writes: it gets a :class:`FixRequest` (the finding, the linked program and the
current bytes of every scanned file) and returns the new bytes per path, or ``None``
when it does not apply. The writer (``lintloader.fixers.writer``) does diff, atomic write,
backup and revert for every strategy alike.

Rules declare strategies in ``Rule.fixes`` and name them in ``Finding.fixes``; the registry
(:mod:`lintloader.fixers.registry`) maps those names to strategies. A strategy module in
``fixers/strategies/`` defines ``STRATEGY = FixStrategy(...)``, the way a rule module defines
``RULE``, and is found without being listed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange

from lintloader.finding.findings import Finding, Hop
from lintloader.link.program import FunctionInfo, Program


class FixError(Exception):
    """A strategy that applies but cannot produce a safe edit (reported, the run goes on)."""


@dataclass(frozen=True)
class Parsed:
    """A source as libcst read it, with the positions and parents the strategies look up."""

    source: bytes
    module: cst.Module
    positions: Mapping[cst.CSTNode, CodeRange]
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    calls: Mapping[tuple[int, int], cst.Call]  # (line, 1-based column) -> the call starting there


@dataclass(frozen=True)
class FixRequest:
    """Everything a strategy may read.

    ``sources`` maps paths (as discovered) to their current bytes; parse them with
    ``libcst.parse_module(data)`` and return ``module.bytes``, which keeps the encoding, a BOM and
    the line endings. ``displays`` maps a finding's/hop's display path to the path. ``parsed``
    is shared by the requests of one run of fix rounds: a file's text is parsed, and its
    metadata resolved, once for every strategy and round that reads that text (path -> its last
    parse; ``fixers.edit.loader_calls.parsed``).
    """

    finding: Finding
    program: Program
    sources: Mapping[str, bytes]
    displays: Mapping[str, str]
    parsed: dict[str, Parsed] = field(default_factory=dict, repr=False, compare=False)

    def path_of(self, hop: Hop) -> str:
        return self.displays.get(hop.path, hop.path)

    def function_at(self, hop: Hop) -> FunctionInfo | None:
        """The function a hop happens in (matched by file and qualified name)."""
        return function_at(self.program, self.displays, hop)


def function_at(program: Program, displays: Mapping[str, str], hop: Hop) -> FunctionInfo | None:
    """The function ``hop`` happens in: its file (shown as ``hop.path``, a display path of
    ``displays``) and its qualified name."""
    path = displays.get(hop.path, hop.path)
    for info in program.functions.values():
        if info.file.path == path and info.function.qualname == hop.function:
            return info
    return None


# new bytes per path; None: the strategy does not apply to this finding
Edits = dict[str, bytes]
ApplyFn = Callable[[FixRequest], "Edits | None"]


@dataclass(frozen=True)
class FixStrategy:
    name: str  # what rules put in Finding.fixes: "relocate", "remove-call", ...
    safe: bool  # unsafe strategies run only with --unsafe-fixes
    description: str  # one line for `fix --help`/docs
    apply: ApplyFn = field(compare=False)
    # codes a fix may leave on its loader or chain by design, documented as out of scope in
    # docs/fixes.md (relocate leaves LL103: the reset is still there, in teardown)
    leaves: tuple[str, ...] = ()


@dataclass
class Registry:
    strategies: dict[str, FixStrategy] = field(default_factory=dict)

    def add(self, strategy: FixStrategy) -> None:
        self.strategies[strategy.name] = strategy

    def get(self, name: str) -> FixStrategy | None:
        return self.strategies.get(name)

    def choose(self, finding: Finding, unsafe: bool) -> list[FixStrategy]:
        """The strategies to try for a finding, in the rule's order of preference."""
        unknown = [name for name in finding.fixes if name not in self.strategies]
        if unknown:
            raise FixError(f"{finding.code} names unknown fix strategies: {', '.join(unknown)}")
        found = (self.strategies[name] for name in finding.fixes)
        return [s for s in found if s.safe or unsafe]
