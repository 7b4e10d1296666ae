"""Fix rounds, all in memory: check -> apply one fix per file -> re-check the edited sources ->
... until nothing changes; then one more check of the result with every rule at every severity,
so that a fix after which its loader still starts a new pool is not called fixed
(:mod:`lintloader.fixers.residual`). Nothing here writes a file; the command hands the result to the
writer (or prints the diff).

Each round tries the safe strategies of every finding first; unsafe ones (``--unsafe-fixes``)
only run in a round where no safe fix applied, so a safe fix that also removes another finding's
chain always wins. A file is edited at most once per round (positions come from the round's
check), and every edit must parse again before it is kept. So rounds with the unsafe strategies
are the safe rounds until a round where no safe fix applies: :class:`FixRounds` keeps where the
safe rounds stopped, and the unsafe ones go on from there (:meth:`FixRounds.unsafe_after`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from lintloader.finding.findings import Finding, Severity
from lintloader.fixers.base import FixError, FixRequest, FixStrategy, Parsed, Registry
from lintloader.fixers.edit.parsing import reparse_ok
from lintloader.fixers.residual import Key, keys_of, over_other_data, residual
from lintloader.pipeline.engine import CheckOptions, CheckResult, read_source, run_check
from lintloader.scan.model import Discovery
from lintloader.scan.read.memo import ReadMemo
from lintloader.settings.config import Config
from lintloader.suppress.baseline import key_parts

MAX_ROUNDS = 8
Guard = Callable[[str], "str | None"]  # path -> why it must not be edited, or None
Restrict = Callable[[CheckResult], CheckResult]  # narrows the findings a round may fix


@dataclass(frozen=True)
class Applied:
    finding: Finding
    strategy: FixStrategy
    paths: tuple[str, ...]
    keys: frozenset[Key] = frozenset()  # the loaders (or chain root) the finding is about
    # findings on the same loader or chain that still say the pool is rebuilt after every fix
    residual: tuple[Finding, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.residual


@dataclass(frozen=True)
class FixedFinding:
    """One finding and every fix applied to it: a finding may take one per round (a hook that
    starts the reset twice; a loader hoisted out of one loop, then out of the next)."""

    fixes: tuple[Applied, ...]

    @property
    def finding(self) -> Finding:
        return self.fixes[0].finding

    @property
    def strategies(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.strategy.name for a in self.fixes))

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted({path for a in self.fixes for path in a.paths}))

    @property
    def residual(self) -> tuple[Finding, ...]:
        return tuple(dict.fromkeys(f for a in self.fixes for f in a.residual))

    @property
    def complete(self) -> bool:
        return not self.residual


@dataclass(frozen=True)
class Note:
    """A fix that was not made, and why (reported; the run goes on)."""

    finding: Finding
    strategy: str
    reason: str


@dataclass
class FixOutcome:
    originals: dict[str, bytes] = field(default_factory=dict)  # path -> bytes before any fix
    sources: dict[str, bytes] = field(default_factory=dict)  # path -> bytes after all fixes
    applied: list[Applied] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    found: list[Finding] = field(default_factory=list)  # the findings of the first round
    remaining: list[Finding] = field(default_factory=list)  # fixable findings left at the end
    left: list[Finding] = field(default_factory=list)  # every finding left at the end
    rounds: int = 0

    @property
    def changed(self) -> dict[str, bytes]:
        return {p: data for p, data in self.sources.items() if data != self.originals.get(p)}

    @property
    def findings_fixed(self) -> list[FixedFinding]:
        """The fixes applied, grouped by the finding (of the first round) they fix."""
        groups: dict[int, list[Applied]] = {}
        alone: list[list[Applied]] = []
        matched = matches(self.found, [a.finding for a in self.applied])
        first = set(self.found)
        for applied, index in zip(self.applied, matched, strict=True):
            if index is None and applied.finding not in first:
                index = _continued(applied.finding, groups)
            if index is None:
                alone.append([applied])
            else:
                groups.setdefault(index, []).append(applied)
        return [FixedFinding(tuple(fixes)) for fixes in [*groups.values(), *alone]]

    @property
    def fixed(self) -> list[FixedFinding]:
        """The findings after whose fixes nothing on their loader or chain says the pool is
        rebuilt."""
        return [f for f in self.findings_fixed if f.complete]

    @property
    def incomplete(self) -> list[FixedFinding]:
        return [f for f in self.findings_fixed if not f.complete]

    def notes_left(self) -> list[Note]:
        """The notes of findings that no fix was applied to in the end."""
        done = {key_parts(a.finding) for a in self.applied}
        return [n for n in self.notes if key_parts(n.finding) not in done]


class Sources(Mapping[str, bytes]):
    """Every file's bytes as the round's check saw them: edited in an earlier round, else what
    is on disk (read once). A fix made earlier in the same round is not visible here: the
    round's positions would not match it (the runner retries such a finding next round)."""

    def __init__(self, outcome: FixOutcome, memo: ReadMemo | None = None) -> None:
        self.outcome = outcome
        self.memo = memo  # bytes an earlier check of this process kept (scan/read/memo.py)
        self.snapshot = dict(outcome.sources)

    def __getitem__(self, path: str) -> bytes:
        if path in self.snapshot:
            return self.snapshot[path]
        if path not in self.outcome.originals:
            # a notebook: its code cells as Python
            data = (self.memo.read(path, read_source) if self.memo else read_source(path)) or b""
            self.outcome.originals[path] = data
            self.outcome.sources.setdefault(path, data)
        return self.outcome.originals[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.snapshot)

    def __len__(self) -> int:
        return len(self.snapshot)


def matches(findings: Sequence[Finding], later: Sequence[Finding]) -> list[int | None]:
    """For each of ``later`` (found after some fixes), the index of the finding of ``findings``
    it is: the same rule, file, chain and calls (not lines: a fix may move it); or, when a fix
    edited the calls (the guard rewrote the call a hoist then moves), the same rule, file, root
    and sink; or the same rule, file and root (a finding that reaches two resets goes on to the
    second once the first call is removed), when one finding alone has them."""
    keys = [key_parts(f) for f in findings]
    return [_index(keys, key_parts(finding)) for finding in later]


def _continued(finding: Finding, groups: dict[int, list[Applied]]) -> int | None:
    """A finding an earlier fix made (a loader hoisted out of one loop now sits in the next)
    that no first-round finding matches alone (two loaders of one function): the group of the
    latest fix of the same rule in the same file, so that it is not counted as one more
    finding fixed."""
    same = [
        index
        for index, fixes in groups.items()
        if any(a.finding.code == finding.code and a.finding.path == finding.path for a in fixes)
    ]
    return same[-1] if same else None


def _index(keys: Sequence[tuple[str, ...]], key: tuple[str, ...]) -> int | None:
    for size in (5, 4, 3):
        hits = [i for i, k in enumerate(keys) if k[:size] == key[:size]]
        if len(hits) == 1:
            return hits[0]
    return None


def fixable(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.fixes and f.chain]


def fix_in_memory(
    discovery: Discovery,
    options: CheckOptions,
    registry: Registry,
    unsafe: bool,
    guard: Guard | None = None,
    restrict: Restrict | None = None,
) -> FixOutcome:
    """Fix rounds in memory. ``restrict`` narrows each round's findings (e.g. to the files a
    pre-commit hook was given while the whole project is indexed)."""
    return FixRounds(discovery, options, registry, guard, restrict).run(unsafe)


@dataclass
class _Progress:
    """How far a run of fix rounds got: the edits and notes so far, the fixes tried, and the
    check of the round in which no safe fix applied (None: the rounds ended otherwise)."""

    outcome: FixOutcome
    tried: set[tuple[str, ...]] = field(default_factory=set)
    halted_at: CheckResult | None = None

    def fork(self) -> _Progress:
        """A copy that rounds may go on from while this one's outcome is ended."""
        was = self.outcome
        outcome = FixOutcome(
            dict(was.originals),
            dict(was.sources),
            list(was.applied),
            list(was.notes),
            was.found,
            rounds=was.rounds,
        )
        return _Progress(outcome, set(self.tried), self.halted_at)


@dataclass
class FixRounds:
    """Fix rounds in memory on one set of files, and what runs of them share: each file's libcst
    parse (``parsed``), the check of the unfixed sources at every severity (:meth:`_rechecked`)
    and where the safe rounds stopped. A round tries the unsafe strategies only when no safe
    fix applied in it, so rounds with the unsafe strategies too are the safe rounds until those
    stop: :meth:`unsafe_after` goes on from there instead of repeating them."""

    discovery: Discovery
    options: CheckOptions
    registry: Registry
    guard: Guard | None = None
    restrict: Restrict | None = None
    # the check of the files as they are that the command already made with ``options``
    # (analyzed, its program linked): a round before any edit uses it instead of its own
    first: CheckResult | None = None
    parsed: dict[str, Parsed] = field(default_factory=dict)
    _before: CheckResult | None = field(default=None, init=False, repr=False)
    _safe_stop: _Progress | None = field(default=None, init=False, repr=False)

    def run(self, unsafe: bool) -> FixOutcome:
        """The rounds from the files as they are: safe strategies, and unsafe ones too when
        ``unsafe`` (each round as described in the module's docstring)."""
        sources = self.options.sources
        progress = _Progress(FixOutcome(originals=dict(sources), sources=dict(sources)))
        result = self._go(progress, unsafe)
        if not unsafe:
            self._safe_stop = progress.fork()
        return self._ended(progress.outcome, result)

    def unsafe_after(self) -> FixOutcome:
        """What :meth:`run` with ``unsafe`` gives, going on from where the last safe run
        stopped (which must have been run first)."""
        if self._safe_stop is None:
            raise RuntimeError("unsafe_after() needs a safe run() first")
        progress = self._safe_stop.fork()
        return self._ended(progress.outcome, self._go(progress, True))

    def _go(self, progress: _Progress, unsafe: bool) -> CheckResult:
        """Rounds from ``progress`` until no fix applies or MAX_ROUNDS ran: the last check.
        From a round where no safe fix applied, its unsafe strategies are tried first."""
        result = progress.halted_at
        if result is not None:
            progress.halted_at = None
            if not self._round(progress, result, True):
                return result
        while progress.outcome.rounds < MAX_ROUNDS:
            result = self._check(progress.outcome)
            if not progress.outcome.rounds:
                progress.outcome.found = result.findings
            progress.outcome.rounds += 1
            made = self._round(progress, result, False)
            if not made and unsafe:
                made = self._round(progress, result, True)
            if not made:
                progress.halted_at = None if unsafe else result
                return result
        return self._check(progress.outcome)

    def _round(self, progress: _Progress, result: CheckResult, unsafe_pass: bool) -> int:
        outcome = progress.outcome
        request_for = _requests(result, Sources(outcome, self.options.reads), self.parsed)
        findings = fixable(result.findings)
        return _round(
            findings, request_for, self.registry, unsafe_pass, self.guard, outcome, progress.tried
        )

    def _check(self, outcome: FixOutcome) -> CheckResult:
        """The check of the sources as edited so far (bytes given in options, stdin's, count
        as on disk). Before any edit, the command's own check of them when it gave one."""
        changed = outcome.changed
        if changed or self.first is None:
            sources = {**self.options.sources, **changed}
            result = run_check(self.discovery, replace(self.options, sources=sources))
        else:
            result = self.first
        return self.restrict(result) if self.restrict is not None else result

    def _ended(self, outcome: FixOutcome, result: CheckResult) -> FixOutcome:
        outcome.left = result.findings
        outcome.remaining = fixable(result.findings)
        return self._rechecked(outcome)

    def _rechecked(self, outcome: FixOutcome) -> FixOutcome:
        """Check the fixed sources with every rule at every severity; attach to each fix the
        findings that still say its loader's (or chain's) pool is rebuilt and were not there
        before the fixes (or are its own finding)."""
        if not outcome.applied:
            return outcome
        options = replace(self.options, config=_every_finding(self.options.config))
        before = self._before or self._every_unfixed(options)
        self._before = before
        there: set[Key] = {_place(f) for f in before.findings}
        sources = {**options.sources, **outcome.changed}
        result = run_check(self.discovery, replace(options, sources=sources))
        displays = {f.display: f.path for f in result.files}
        outcome.applied = [
            replace(a, residual=_new_or_own(a, result, displays, there)) for a in outcome.applied
        ]
        return outcome

    def _every_unfixed(self, options: CheckOptions) -> CheckResult:
        """The check of the unfixed sources with ``options`` (every finding): the command's
        own when it already showed every finding."""
        first = self.first
        if first is not None and options.config == self.options.config:
            return first
        return run_check(self.discovery, options)


def _every_finding(config: Config) -> Config:
    """``config`` with every rule at every severity, nothing ignored."""
    return replace(
        config, select=("LL",), ignore=(), per_file_ignores=(), min_severity=Severity.INFO
    )


def _new_or_own(
    applied: Applied, result: CheckResult, displays: dict[str, str], there: set[Key]
) -> tuple[Finding, ...]:
    own = _place(applied.finding)
    left = residual(applied.keys, result.findings, result.program, displays)
    new = (f for f in left if _place(f) == own or _place(f) not in there)
    return tuple(
        f for f in new if not over_other_data(f, applied.finding, result.program, displays)
    )


def _place(finding: Finding) -> Key:
    """A finding's rule, file, root and sink: what a fix's edit of the call text leaves."""
    return key_parts(finding)[:4]


def _requests(
    result: CheckResult, sources: Sources, parsed: dict[str, Parsed]
) -> Callable[[Finding], FixRequest]:
    displays = {f.display: f.path for f in result.files}
    return lambda finding: FixRequest(finding, result.program, sources, displays, parsed)


def _keys(request: FixRequest) -> frozenset[Key]:
    return keys_of(request.finding, request.program, request.displays)


def _round(
    findings: list[Finding],
    request_for: Callable[[Finding], FixRequest],
    registry: Registry,
    unsafe_pass: bool,
    guard: Guard | None,
    outcome: FixOutcome,
    tried: set[tuple[str, ...]],
) -> int:
    touched: set[str] = set()
    made = 0
    for finding in findings:
        for strategy in registry.choose(finding, unsafe_pass):
            if strategy.safe == unsafe_pass:
                continue  # safe ones in the first pass, unsafe ones in the second
            key = _attempt_key(finding, strategy)
            if key in tried:
                continue
            applied = _try(finding, strategy, request_for(finding), guard, touched, outcome)
            if applied is None:
                break  # a file it edits changed this round: try again on the next one
            tried.add(key)
            if applied:
                made += 1
                break
    return made


def _attempt_key(finding: Finding, strategy: FixStrategy) -> tuple[str, ...]:
    hops = tuple(f"{h.path}|{h.function}|{h.action}" for h in finding.chain)
    return (strategy.name, finding.code, *hops)


def _try(
    finding: Finding,
    strategy: FixStrategy,
    request: FixRequest,
    guard: Guard | None,
    touched: set[str],
    outcome: FixOutcome,
) -> bool | None:
    """True: applied; False: refused (noted); None: not now (a file already edited this round)."""
    try:
        edits = strategy.apply(request)
    except FixError as exc:
        outcome.notes.append(Note(finding, strategy.name, str(exc)))
        return False
    except OSError as exc:
        outcome.notes.append(Note(finding, strategy.name, f"cannot read: {exc.strerror or exc}"))
        return False
    edits = {p: data for p, data in (edits or {}).items() if data != request.sources[p]}
    if not edits:
        outcome.notes.append(Note(finding, strategy.name, "it changes nothing here"))
        return False
    if touched & set(edits):
        return None
    for path, data in edits.items():
        why = (guard(path) if guard else None) or reparse_ok(data, path)
        if why:
            outcome.notes.append(Note(finding, strategy.name, f"{_short(path)}: {why}"))
            return False
    touched.update(edits)
    outcome.sources.update(edits)
    outcome.applied.append(Applied(finding, strategy, tuple(sorted(edits)), _keys(request)))
    return True


def _short(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path
