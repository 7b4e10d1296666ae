"""Which fixes will apply: the fix rounds of ``lintloader fix`` (:mod:`lintloader.fixers.runner`),
run in memory, safe strategies only and then with the unsafe ones too.

A finding's ``fixes`` then name only the strategies that end it (no finding on its loader or chain
says the pool is rebuilt after all rounds: :mod:`lintloader.fixers.residual`), so ``check``'s
``[*] N fixable`` line, ``--statistics``, the JSON/SARIF/rdjson fix data and the editor's fix-all
promise no more than ``fix`` does. A finding is matched across rounds by its rule, file, chain
and calls, not its lines (:func:`lintloader.suppress.baseline.key_parts`): an earlier fix may
move it (see :func:`~lintloader.fixers.runner.matches`).

An editor's quick fix is judged the same way (:func:`try_strategy`): the fix rounds on its one
finding with its one strategy, offered only when they end that finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from lintloader.finding.findings import Finding
from lintloader.finding.fix_safety import FIX_SAFETY
from lintloader.fixers.registry import load_registry
from lintloader.fixers.runner import (
    FixOutcome,
    FixRounds,
    Guard,
    Note,
    Restrict,
    fix_in_memory,
    matches,
)
from lintloader.pipeline.engine import CheckOptions, CheckResult
from lintloader.scan.model import Discovery
from lintloader.suppress.baseline import key_parts


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
        """For each of ``findings``, the strategies that end it: those applied to it by the safe
        rounds when they end it, else the unsafe ones applied by the rounds with them too."""
        ending = zip(_ending(findings, self.safe), self.unsafe_offered(findings), strict=True)
        return [names or offer for names, offer in ending]

    def unsafe_offered(self, findings: Sequence[Finding]) -> list[tuple[str, ...]]:
        """For each of ``findings``, the unsafe strategies applied to it by the rounds with the
        unsafe ones when they end it: what ``--unsafe-fixes`` offers."""
        if self.unsafe is None:
            return [() for _ in findings]
        ending = _ending(findings, self.unsafe)
        return [tuple(n for n in names if not FIX_SAFETY[n].safe) for names in ending]

    def narrowed(self, result: CheckResult) -> CheckResult:
        """``result`` whose findings name only the fixes that end them."""
        return result.with_fixes(tuple(self.applied_to(result.findings)))


def _ending(findings: Sequence[Finding], outcome: FixOutcome) -> list[tuple[str, ...]]:
    """For each of ``findings``, the strategies ``outcome`` applied to it, when they ended it:
    judged after all rounds, so a fix that takes two (the guard, then the hoist of the same
    loader) counts, and one after which its loader still starts a pool does not."""
    names: list[dict[str, None]] = [{} for _ in findings]
    ended = outcome.fixed
    for fixed, index in zip(ended, matches(findings, [f.finding for f in ended]), strict=True):
        if index is not None:
            names[index].update(dict.fromkeys(fixed.strategies))
    return [tuple(found) for found in names]


@dataclass(frozen=True)
class StrategyTrial:
    """The fix rounds on one finding with one strategy (what an editor's quick fix applies)."""

    finding: Finding
    strategy: str
    outcome: FixOutcome

    @property
    def ends(self) -> bool:
        """Whether the strategy was applied and, after all rounds, ended the finding."""
        return self.strategy in _ending([self.finding], self.outcome)[0]

    def why_not(self) -> str:
        """Why it does not end the finding: the strategy's refusal, or the finding that still
        says the pool is rebuilt after its edit."""
        key = key_parts(self.finding)
        for note in self.outcome.notes:
            if note.strategy == self.strategy and key_parts(note.finding) == key:
                return note.reason
        if self.outcome.incomplete:
            left = self.outcome.incomplete[0].residual[0]
            return (
                f"its edit leaves {left.code} [{left.severity.label}] at {left.path}:{left.line}, "
                "which still says the worker pool is rebuilt"
            )
        return "it does not apply here"


def try_strategy(
    discovery: Discovery,
    options: CheckOptions,
    finding: Finding,
    strategy: str,
    restrict: Restrict | None = None,
    guard: Guard | None = None,
) -> StrategyTrial:
    """The fix rounds in memory on ``finding`` alone (as ``restrict`` leaves it), with
    ``strategy`` the only one it names (unsafe rounds when it is unsafe)."""
    only = [finding]

    def narrowed(result: CheckResult) -> CheckResult:
        result = restrict(result) if restrict is not None else result
        hits = zip(result.findings, matches(only, result.findings), strict=True)
        kept = [replace(f, fixes=(strategy,)) for f, i in hits if i == 0]
        return replace(result, findings=kept)

    options = replace(options, cache_writes=False)
    unsafe = not FIX_SAFETY[strategy].safe
    outcome = fix_in_memory(discovery, options, load_registry(), unsafe, guard, narrowed)
    return StrategyTrial(finding, strategy, outcome)


def with_unsafe(rounds: FixRounds, safe: FixOutcome) -> Tried:
    """``safe`` (what ``rounds`` ran with the safe strategies), and the rounds with the unsafe
    ones too when a finding the safe ones leave names one: they go on from where the safe
    rounds stopped (:meth:`~lintloader.fixers.runner.FixRounds.unsafe_after`)."""
    unsafe_named = any(
        not strategy.safe
        for finding in safe.remaining
        for name in finding.fixes
        if (strategy := rounds.registry.get(name)) is not None
    )
    if not unsafe_named:
        return Tried(safe)
    return Tried(safe, rounds.unsafe_after())


def try_fixes(
    discovery: Discovery,
    options: CheckOptions,
    restrict: Restrict | None = None,
    guard: Guard | None = None,
    checked: CheckResult | None = None,
) -> Tried:
    """The fix rounds in memory: safe strategies, then unsafe ones where they are named. They
    write nothing to the cache: no run reads the edited bytes again. ``checked``: the
    command's check of the files as they are, with ``options``; when it analyzed them (not a
    replay, whose program is empty or a stored selection's), the first round uses it instead
    of checking them again."""
    options = replace(options, cache_writes=False)
    analyzed = checked is not None and checked.route == "analyzed" and checked.linked is not None
    first = checked if analyzed else None
    rounds = FixRounds(discovery, options, load_registry(), guard, restrict, first)
    return with_unsafe(rounds, rounds.run(unsafe=False))
