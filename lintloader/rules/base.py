"""What a rule is, and the context every rule's check receives.

A rule module holds one rule: its docstring is the rule's documentation (ruff's sections: What it
does / Why is this bad? / Example / Fix safety), ``RULE`` describes it, ``VALID``/``INVALID`` are
inline examples that the test-suite runs (Fixit style).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from lintloader.analysis.reachability import Reachability
from lintloader.findings import Finding, Severity
from lintloader.program import Program

TokenGroups = tuple[tuple[bytes, ...], ...]


@dataclass
class AnalysisContext:
    """The linked program plus analyses shared between rules (computed on first use)."""

    program: Program
    display: Callable[[str], str] = str

    @cached_property
    def reachability(self) -> Reachability:
        return Reachability(self.program)


@dataclass(frozen=True)
class Rule:
    """One rule. ``seed_tokens`` tell discovery which files must be parsed for this rule: a file
    is a seed when it contains every token of at least one group (a cheap byte search)."""

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    check: Callable[[AnalysisContext], Iterable[Finding]]
    seed_tokens: TokenGroups = ()
    fix_safety: str = "no fix"
    valid: tuple[str, ...] = field(default=(), repr=False)
    invalid: tuple[str, ...] = field(default=(), repr=False)
    # More token groups to parse for, given what is linked so far (demand.select asks each round)
    demand: Callable[[Program], Iterable[tuple[bytes, ...]]] | None = field(
        default=None, repr=False
    )
