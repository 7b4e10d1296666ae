"""What a check is asked and what it answers, and the last step of every route to the answer:
the active rules run on a linked program, and what they find is placed, filtered and given its
range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lintloader.finding.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.scan.model import FileProblem, SourceFile
from lintloader.settings.config import Config
from lintloader.workers.progress import ParseStats

if TYPE_CHECKING:  # imported when something must be analyzed (a replayed run never does)
    from lintloader.link.program import Program
    from lintloader.rules.base import Rule
    from lintloader.scan.read.memo import ReadMemo
    from lintloader.summary.model import FileSummary

FixNames = tuple[tuple[str, ...], ...]  # per finding, the names of the fixes that apply
Counts = dict[str, int]  # display path -> how many findings of that file


@dataclass(eq=False, repr=False)
class CheckOptions:
    config: Config = field(default_factory=Config)
    jobs: int | None = None  # worker processes for parsing; None: parse.default_jobs()
    cache_dir: Path | None = None  # None: no cache
    sources: dict[str, bytes] = field(default_factory=dict)  # path -> bytes read instead (fix)
    progress: bool = False  # a progress line on stderr (when it is a terminal)
    replay: bool = False  # reuse the last run's findings if nothing changed (no program then)
    # a run with ``sources`` replays too (or revisits the stored run: incremental/revisit.py),
    # and is stored for the next one (the language server's unsaved buffers)
    replay_sources: bool = False
    # False: read the cache, write nothing to it (check's fix trial: its edited bytes would
    # fill it with summaries nobody reads again, and the stat index must keep the files as
    # they are on disk)
    cache_writes: bool = True
    # what the checks of this process learned of the files, for the next one (its fix trial,
    # fix's rounds): scan/read/memo.py; None: each check reads every file itself
    reads: ReadMemo | None = None


@dataclass(eq=False, repr=False)
class CheckResult:
    findings: list[Finding]
    linked: Program | None  # None for a replayed run, which links nothing
    summaries: dict[str, FileSummary]
    files: list[SourceFile]
    stats: ParseStats
    # per file (display path): the findings a suppression removed, and those below the
    # severity threshold (the summary counts the files a check reports on: ReportScope)
    suppressed_in: Counts = field(default_factory=dict)
    hidden_in: Counts = field(default_factory=dict)
    # how the findings were worked out: "analyzed" (selected, linked, checked), "relinked"
    # (a stored selection linked again and checked) or "replayed" (stored findings reused)
    route: str = "analyzed"
    # a check of files seen in their project (ReportScope): how many of the files are the
    # ones asked for (``files`` holds the whole project, read for its chains)
    reported_files: int | None = None
    # roots known from lintloader's framework stubs, not the frameworks' code, that findings
    # start from or pass: (path as shown, function, framework) (analysis/frameworks.py)
    stub_hooks: tuple[tuple[str, str, str], ...] = ()
    # per finding, the fixes check's fix trial found to apply, stored with the run it replays
    # (None: not known, the trial runs); and how to store them with this run (None: not stored)
    fixable: FixNames | None = None
    remember_fixable: Callable[[FixNames], None] | None = None

    @property
    def suppressed(self) -> int:
        return sum(self.suppressed_in.values())

    @property
    def hidden(self) -> int:
        """How many findings fell below the severity threshold."""
        return sum(self.hidden_in.values())

    @property
    def files_found(self) -> int:
        return len(self.files)

    @property
    def program(self) -> Program:
        """The linked program (an empty one for a replayed run)."""
        if self.linked is None:
            from lintloader.link.program import Program

            self.linked = Program(())
        return self.linked

    def with_fixes(self, names: FixNames) -> CheckResult:
        """This result whose findings that name fixes name ``names`` (one per finding)."""
        findings = [
            replace(f, fixes=applied) if f.fixes else f
            for f, applied in zip(self.findings, names, strict=True)
        ]
        return replace(self, findings=findings)


def active_rules(config: Config) -> list[Rule]:
    from lintloader.rules.registry import all_rules

    return [rule for rule in all_rules() if config.enabled(rule.code)]


def conclude(
    files: list[SourceFile],
    problems: list[FileProblem],
    summaries: dict[str, FileSummary],
    program: Program,
    stats: ParseStats,
    options: CheckOptions,
    located: dict[str, str] | None = None,
) -> CheckResult:
    """Run the active rules on the linked ``program`` of the selected ``summaries`` and filter
    what they find. ``located``: display paths of context files (modules looked up outside
    the scanned files), whose findings are placed in the scanned ones."""
    from lintloader.analysis.context import AnalysisContext
    from lintloader.analysis.framework_loaders import stub_hooks
    from lintloader.analysis.placement import located_in_scanned, placed_at_overrides
    from lintloader.analysis.ranges import with_ranges
    from lintloader.analysis.vocabulary import Vocabulary, unknown_names
    from lintloader.scan.read.reading import read_source
    from lintloader.settings.config import ConfigError, shown_path
    from lintloader.suppress.filter import filter_findings

    config = options.config
    displays = {f.path: f.display for f in files}
    located = located or {}
    context_shown = {shown for p, shown in located.items() if p not in displays}
    displays = {**located, **displays}
    vocabulary = Vocabulary(config.extend_resets, config.extend_roots, config.extend_loaders)
    unknown = unknown_names(program, vocabulary) if vocabulary.modules else []
    if unknown:
        source = shown_path(config.source) if config.source else "configuration"
        raise ConfigError(f"{source}: [tool.lintloader]: {unknown[0]}")
    context = AnalysisContext(program, lambda path: displays.get(path, path), vocabulary)
    raw = [finding for rule in active_rules(config) for finding in rule.check(context)]
    modules = {displays.get(p, p): s.module for p, s in summaries.items()}
    raw = list(placed_at_overrides(raw, program, modules))
    raw += problem_findings(problems, summaries.values(), displays)
    if context_shown:
        raw = list(located_in_scanned(raw, context_shown))
    read = partial(options.reads.read, reader=read_source) if options.reads else None
    findings, suppressed, hidden = filter_findings(raw, config, summaries, displays, read)
    findings = with_ranges(findings, summaries, displays)
    hooks = stub_hooks(program, raw, context.display)
    return CheckResult(
        findings, program, summaries, files, stats, suppressed, hidden, stub_hooks=hooks
    )


def problem_findings(
    problems: Iterable[FileProblem],
    summaries: Iterable[FileSummary],
    displays: dict[str, str],
) -> list[Finding]:
    """LL000: files that could not be read or parsed. Always error severity."""
    found = [
        Finding(PARSE_ERROR_CODE, Severity.ERROR, p.display, p.line, p.column, p.message)
        for p in problems
    ]
    for summary in summaries:
        if summary.error:
            found.append(
                Finding(
                    PARSE_ERROR_CODE,
                    Severity.ERROR,
                    displays.get(summary.path, summary.path),
                    summary.error_line,
                    summary.error_column,
                    summary.error,
                )
            )
    return found
