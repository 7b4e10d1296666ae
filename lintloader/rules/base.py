"""What a rule is.

A rule module holds one rule: its docstring is the rule's documentation (ruff's sections: What it
does / Why is this bad? / Example / Fix safety), ``RULE`` describes it, ``VALID``/``INVALID`` are
inline examples that the test-suite runs (Fixit style).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lintloader.analysis.context import AnalysisContext, Demand, TokenGroups
from lintloader.finding.findings import Finding, Severity
from lintloader.link.program import Program


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
    # the lowest severity at which its findings say a worker pool is shut down and started
    # again (None: they never do); a fix that leaves such a finding on the loader or chain it
    # fixed is incomplete (fixers/residual.py)
    rebuilds_from: Severity | None = None
    valid: tuple[str, ...] = field(default=(), repr=False)
    invalid: tuple[str, ...] = field(default=(), repr=False)
    # What to parse next, given what is linked so far (select.policy asks every round; rules
    # that share a hook are asked once)
    demand: Callable[[Program], Demand] | None = field(default=None, repr=False)
    # More hooks it needs asked, which rules of other families may name too (asked once
    # however many active rules name one): the LL2xx rules name override_demand, the bases
    # of loader-building classes across distributions
    also_demand: tuple[Callable[[Program], Demand], ...] = field(default=(), repr=False)
