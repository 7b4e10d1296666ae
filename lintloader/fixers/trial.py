"""Which fixes will apply: the fix rounds of ``lintloader fix`` (:mod:`lintloader.fixers.runner`),
run in memory, safe strategies only and then with the unsafe ones too.

A finding's ``fixes`` then name only the strategies that were applied to it, so ``check``'s
``[*] N fixable`` line, ``--statistics``, the JSON/SARIF/rdjson fix data and the editor's fix-all
promise no more than ``fix`` does. A finding is matched across rounds by its rule, file, chain
and calls, not its lines (:func:`lintloader.suppress.baseline.key_parts`): an earlier fix may
move it (see :func:`~lintloader.fixers.runner.matches`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from lintloader.engine import CheckOptions, CheckResult
from lintloader.findings import Finding
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import (
    Applied,
    FixOutcome,
    Guard,
    Note,
    Restrict,
    fix_in_memory,
    matches,
)
from lintloader.scan.model import Discovery


@dataclass(frozen=True)
class Tried:
    """The strategies applied to each finding: safe ones alone, then with the unsafe ones."""

    safe: FixOutcome
    unsafe: FixOutcome | None = None

    @property
    def outcomes(self) -> list[FixOutcome]:
        return [self.safe] if self.unsafe is None else [self.safe, self.unsafe]

    @property
    def notes(self) -> list[Note]:
        return [note for outcome in self.outcomes for note in outcome.notes]

    def applied_to(self, findings: Sequence[Finding]) -> list[tuple[str, ...]]:
        """For each of ``findings``, the strategies applied to it."""
        return _names(findings, [a for outcome in self.outcomes for a in outcome.applied])

    def unsafe_offered(self, findings: Sequence[Finding]) -> list[tuple[str, ...]]:
        """For each of ``findings``, the unsafe strategies that apply to it: what
        ``--unsafe-fixes`` offers."""
        applied = self.unsafe.applied if self.unsafe is not None else []
        return _names(findings, [a for a in applied if not a.strategy.safe])

    def narrowed(self, result: CheckResult) -> CheckResult:
        """``result`` whose findings name only the fixes that apply to them."""
        return result.with_fixes(tuple(self.applied_to(result.findings)))


def _names(findings: Sequence[Finding], applied: Sequence[Applied]) -> list[tuple[str, ...]]:
    """The strategies of ``applied`` per finding (matched as :func:`matches` says)."""
    names: list[dict[str, None]] = [{} for _ in findings]
    matched = matches(findings, [fix.finding for fix in applied])
    for fix, index in zip(applied, matched, strict=True):
        if index is not None:
            names[index][fix.strategy.name] = None
    return [tuple(found) for found in names]


def with_unsafe(
    safe: FixOutcome,
    discovery: Discovery,
    options: CheckOptions,
    restrict: Restrict | None = None,
    guard: Guard | None = None,
) -> Tried:
    """``safe`` (fix rounds with the safe strategies), and the rounds with the unsafe ones too
    when a finding the safe ones leave names one."""
    registry = load_registry()
    unsafe_named = any(
        not strategy.safe
        for finding in safe.remaining
        for name in finding.fixes
        if (strategy := registry.get(name)) is not None
    )
    if not unsafe_named:
        return Tried(safe)
    return Tried(safe, fix_in_memory(discovery, options, registry, True, guard, restrict))


def try_fixes(
    discovery: Discovery,
    options: CheckOptions,
    restrict: Restrict | None = None,
    guard: Guard | None = None,
) -> Tried:
    """The fix rounds in memory: safe strategies, then unsafe ones where they are named. They
    write nothing to the cache: no run reads the edited bytes again."""
    options = replace(options, cache_writes=False)
    safe = fix_in_memory(discovery, options, load_registry(), False, guard, restrict)
    return with_unsafe(safe, discovery, options, restrict, guard)
