"""What a rule is, and the context every rule's check receives.

A rule module holds one rule: its docstring is the rule's documentation (ruff's sections: What it
does / Why is this bad? / Example / Fix safety), ``RULE`` describes it, ``VALID``/``INVALID`` are
inline examples that the test-suite runs (Fixit style).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from lintloader.analysis.reachability import Reachability
from lintloader.analysis.vocabulary import Vocabulary
from lintloader.findings import Finding, Severity
from lintloader.program import Program

TokenGroup = tuple[bytes, ...]
TokenGroups = tuple[TokenGroup, ...]


class Demand(NamedTuple):
    """What a rule needs parsed next, given what is linked so far: files that contain every
    token of one of ``token_groups``, and the modules named in ``modules`` (dotted paths)."""

    token_groups: frozenset[TokenGroup] = frozenset()
    modules: frozenset[str] = frozenset()


@dataclass
class AnalysisContext:
    """The linked program plus analyses shared between rules (computed on first use)."""

    program: Program
    display: Callable[[str], str] = str
    vocabulary: Vocabulary = field(default_factory=Vocabulary)

    @cached_property
    def reachability(self) -> Reachability:
        return Reachability(self.program, self.vocabulary)


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
    fixes: tuple[str, ...] = ()  # fix strategies its findings may name (fixers/strategies/)
    valid: tuple[str, ...] = field(default=(), repr=False)
    invalid: tuple[str, ...] = field(default=(), repr=False)
    # What to parse next, given what is linked so far (select.policy asks every round; rules
    # that share a hook are asked once)
    demand: Callable[[Program], Demand] | None = field(default=None, repr=False)
