"""The check pipeline: discover -> read -> select/summarize -> link -> analyze -> filter.

This is the library entry point that the CLI, the flake8 plugin and the fixers call.
"""

from __future__ import annotations

import errno
import gc
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lintloader.cache.replay import (
    Replay,
    content_key,
    load_replay,
    replay_keys,
    save_replay,
)
from lintloader.cache.summaries import SummaryCache
from lintloader.config import Config
from lintloader.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.scan.model import NOTEBOOK_SUFFIX, Discovery, Environment, FileProblem, SourceFile
from lintloader.scan.sources import SourceSet
from lintloader.select.demand_reads import recorded
from lintloader.select.progress import ParseStats, Progress

if TYPE_CHECKING:  # imported when something must be analyzed (a replayed run never does)
    from lintloader.program import Program
    from lintloader.rules.base import Rule
    from lintloader.select.revisit import Revisited, Summarize
    from lintloader.select.trail import Round
    from lintloader.summary.model import FileSummary


@dataclass
class CheckOptions:
    config: Config = field(default_factory=Config)
    jobs: int | None = None  # worker processes for parsing; None: parse.default_jobs()
    cache_dir: Path | None = None  # None: no cache
    sources: dict[str, bytes] = field(default_factory=dict)  # path -> bytes read instead (fix)
    progress: bool = False  # a progress line on stderr (when it is a terminal)
    replay: bool = False  # reuse the last run's findings if nothing changed (no program then)


@dataclass
class CheckResult:
    findings: list[Finding]
    linked: Program | None  # None for a replayed run, which links nothing
    summaries: dict[str, FileSummary]
    files: list[SourceFile]
    stats: ParseStats
    suppressed: int = 0
    hidden: int = 0  # findings below the severity threshold
    # how the findings were worked out: "analyzed" (selected, linked, checked), "relinked"
    # (a stored selection linked again and checked) or "replayed" (stored findings reused)
    route: str = "analyzed"

    @property
    def files_found(self) -> int:
        return len(self.files)

    @property
    def program(self) -> Program:
        """The linked program (an empty one for a replayed run)."""
        if self.linked is None:
            from lintloader.program import Program

            self.linked = Program(())
        return self.linked


class _Run(NamedTuple):
    """What one cached check works with, handed down the replay path."""

    files: list[SourceFile]
    problems: list[FileProblem]
    sources: SourceSet
    cache: SummaryCache
    stats: ParseStats
    options: CheckOptions


def active_rules(config: Config) -> list[Rule]:
    from lintloader.rules.registry import all_rules

    return [rule for rule in all_rules() if config.enabled(rule.code)]


def read_source(path: str) -> bytes | None:
    """A regular file's bytes (a notebook's: its code cells as Python, see
    :mod:`lintloader.scan.notebooks`); None for a directory. Never blocks on a FIFO or a
    device."""
    if path.endswith(NOTEBOOK_SUFFIX):
        from lintloader.scan.notebooks import notebook_to_python

        data = read_file(path)
        return None if data is None else notebook_to_python(data)
    return read_file(path)


def read_file(path: str) -> bytes | None:
    """A regular file's bytes, as they are on disk; None for a directory."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            return None
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(descriptor, True)
        return _read_to_end(descriptor, status.st_size)
    finally:
        os.close(descriptor)


def _read_to_end(descriptor: int, size: int) -> bytes:
    """Everything left in ``descriptor``, expected to be ``size`` bytes (it may have grown or
    shrunk since): plain ``os.read`` calls, without a buffered file object per file."""
    chunks = []
    while chunk := os.read(descriptor, max(size, 0) + 1):  # +1: the usual case ends in 2 reads
        chunks.append(chunk)
        size = 65536
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a run. A run allocates hundreds of thousands of
    small objects that hold no cycles (syntax trees, summaries, unpickled cache entries), and
    the collector walked them again and again: a third of the time to load cached summaries.
    Reference counting still frees everything as usual; any cycle waits until the run ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_check(discovery: Discovery, options: CheckOptions) -> CheckResult:
    with collector_paused():
        result = _run_check(discovery, options)
    if result.findings:  # known affected releases (after a replay too: the data may be newer)
        from lintloader.analysis.advisories import with_advisories

        result.findings = with_advisories(result.findings, result.files)
    return result


def _run_check(discovery: Discovery, options: CheckOptions) -> CheckResult:
    problems = list(discovery.problems)
    progress = Progress.for_stderr() if options.progress else None
    sources = SourceSet(read_source, options.sources, options.cache_dir, discovery.roots)
    files = sources.load(discovery.files, problems)
    cache = SummaryCache(options.cache_dir) if options.cache_dir else None
    stats = ParseStats(progress=progress)
    if progress:
        progress.update(found=len(files))
    # A run that looks modules up outside its files (--site-packages B: A's base classes) is
    # never replayed: its key covers the scanned files only, not the context it parsed.
    replayable = options.replay and not options.sources and not discovery.context
    replay_file = sources.index_file if replayable and cache else None
    if replay_file is None or cache is None:
        context, environment = discovery.context, discovery.environment
        return analyze(files, problems, sources, cache, stats, options, context, None, environment)
    shape, key = replay_keys(files, sources, problems, options.config)
    stored = load_replay(replay_file, cache)
    run = _Run(files, problems, sources, cache, stats, options)
    if stored is not None and stored.shape == shape:
        replayed = _replayed(stored, key, run)
        if replayed is not None:
            if progress:
                progress.close()
            return replayed
    rounds: list[Round] = []
    result = analyze(
        files, problems, sources, cache, stats, options, discovery.context, rounds,
        discovery.environment,
    )  # fmt: skip
    if _read_context(result):
        return result  # its key covers the scanned files only, not the context it read
    taken = tuple((path, sources.digest(path)) for round_ in rounds for path in round_.taken)
    summaries = stats.parsed + stats.cached
    reads = recorded(result.linked) if result.linked is not None else None
    stored = Replay(
        "", tuple(result.findings), result.suppressed, summaries, (), result.hidden, shape,
        rounds=tuple(rounds), taken=taken, reads=reads,
    )  # fmt: skip
    _store(stored, cache.used, run)
    return result


def _read_context(result: CheckResult) -> bool:
    """Whether a run summarized a file it did not scan (context from the environment)."""
    scanned = {file.path for file in result.files}
    return any(path not in scanned for path in result.summaries)


def _replayed(stored: Replay, key: str, run: _Run) -> CheckResult | None:
    """The stored run's result if it still holds: nothing changed (the key is equal), or only
    the content of a few files, in ways its findings do not depend on (``select/revisit.py``,
    after which the run is stored again under its new key). When only the lines of a taken
    file moved, the stored selection still holds and only the rules run again."""
    files, _, sources, cache, stats, options = run
    if stored.key != key:
        from lintloader.select.revisit import revisit

        parsed = ParseStats()  # counted only if the stored run holds (else analyzed again)
        summarize = _one_file_summarizer(sources, cache, parsed, options)
        revisited = revisit(stored, files, sources, cache, summarize)
        if revisited is None:
            return None
        stats.count(parsed=parsed.parsed)
        if revisited.moved:
            return _relinked(stored, revisited, run)
        # what the edited files now define can link a later commit's calls: keep it
        stored = replace(stored, taken=revisited.taken, reads=revisited.reads)
        _store(stored, revisited.entry_keys, run)
    sources.save()
    stats.cached = stored.summaries - stats.parsed
    findings = list(stored.findings)
    return CheckResult(
        findings, None, {}, files, stats, stored.suppressed, stored.hidden, route="replayed"
    )


def _relinked(stored: Replay, revisited: Revisited, run: _Run) -> CheckResult | None:
    """The stored run's selection, summarized as the files are now, linked and checked by the
    rules (no demand round: ``select/revisit.py`` showed each round would ask and take what
    it did), then stored again. None when a stored summary is gone."""
    from lintloader.program import Program
    from lintloader.select.revisit import summaries_again

    files, problems, sources, cache, stats, options = run
    summaries = summaries_again(stored.rounds, revisited, files, cache)
    if summaries is None:
        return None
    sources.save()
    stats.cached = len(summaries) - stats.parsed
    program = Program(summaries.values())
    result = conclude(files, problems, summaries, program, stats, options)
    # the rounds would read what they read for the stored run (select/revisit.py)
    before = revisited.reads
    reads = None if before is None else recorded(program, before)
    again = Replay(
        "", tuple(result.findings), result.suppressed, len(summaries), (), result.hidden,
        stored.shape, rounds=stored.rounds, taken=revisited.taken, reads=reads,
    )  # fmt: skip
    _store(again, revisited.entry_keys, run)
    return replace(result, route="relinked")


def _one_file_summarizer(
    sources: SourceSet, cache: SummaryCache, stats: ParseStats, options: CheckOptions
) -> Summarize:
    """Summarize one file as a selection round would (the parser is imported when called)."""

    def summarize(file: SourceFile) -> FileSummary:
        from lintloader.select.rounds import RoundTaker

        taker = RoundTaker(sources, cache, stats, 1, options.config.max_file_size)
        return taker.summarize([file], stats, jobs=1)[file.path]

    return summarize


def _store(stored: Replay, entry_keys: Iterable[str], run: _Run) -> None:
    """Store a run (of ``stored.shape``) for the next one to replay, keyed as the files are
    now: the run worked out digests it needed, which the next run's key will include."""
    files, _, sources, cache, _, options = run
    entries = cache.stamps(entry_keys)
    if entries is None or options.cache_dir is None or sources.index_file is None:
        return
    paths = [file.path for file in files]
    key = content_key(stored.shape, paths, sources)
    contents = tuple(sources.content_ids(paths))
    stored = replace(stored, key=key, entries=entries, contents=contents)
    save_replay(options.cache_dir, sources.index_file, stored)


def analyze(
    files: list[SourceFile],
    problems: list[FileProblem],
    sources: SourceSet,
    cache: SummaryCache | None,
    stats: ParseStats,
    options: CheckOptions,
    context_dirs: list[str] | None = None,
    rounds: list[Round] | None = None,
    environment: Environment | None = None,
) -> CheckResult:
    """Select and summarize what the active rules need, link it and run the rules.
    ``context_dirs``: where modules the files build on are looked up (scan/locate.py), and
    ``environment``: an interpreter whose site directories are looked in too
    (scan/environment.py); ``rounds`` receives the selection's trail (select/trail.py)."""
    from functools import partial

    from lintloader.analysis.vocabulary import Vocabulary
    from lintloader.analysis.vocabulary_demand import vocabulary_demand
    from lintloader.scan.environment import EnvironmentLocator
    from lintloader.scan.locate import ModuleLocator
    from lintloader.select.parse import default_jobs
    from lintloader.select.policy import select
    from lintloader.select.rounds import RoundTaker

    config = options.config
    rules = active_rules(config)
    jobs = options.jobs or default_jobs()
    taker = RoundTaker(sources, cache, stats, jobs, config.max_file_size)
    locator: ModuleLocator | None = ModuleLocator(context_dirs) if context_dirs else None
    if environment is not None:
        locator = EnvironmentLocator(list(context_dirs or ()), environment=environment)
    locate = locator.find if locator else None
    vocabulary = Vocabulary(config.extend_resets, config.extend_roots, config.extend_loaders)
    extra = [partial(vocabulary_demand, vocabulary=vocabulary)] if vocabulary.modules else []
    summaries, program = select(
        files, sources, rules, taker.take, rounds, locate, vocabulary.modules, extra
    )
    sources.save()
    if stats.progress:
        stats.progress.close()
    located = {p: f.display for p, f in (locator.found if locator else {}).items()}
    return conclude(files, problems, summaries, program, stats, options, located)


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
    from lintloader.analysis.placement import located_in_scanned, placed_at_overrides
    from lintloader.analysis.ranges import with_ranges
    from lintloader.analysis.vocabulary import Vocabulary, unknown_names
    from lintloader.config import ConfigError
    from lintloader.rules.base import AnalysisContext
    from lintloader.suppression import filter_findings

    config = options.config
    displays = {f.path: f.display for f in files}
    located = located or {}
    context_shown = {shown for p, shown in located.items() if p not in displays}
    displays = {**located, **displays}
    vocabulary = Vocabulary(config.extend_resets, config.extend_roots, config.extend_loaders)
    unknown = unknown_names(program, vocabulary) if vocabulary.modules else []
    if unknown:
        raise ConfigError(f"{config.source or 'configuration'}: [tool.lintloader]: {unknown[0]}")
    context = AnalysisContext(program, lambda path: displays.get(path, path), vocabulary)
    raw = [finding for rule in active_rules(config) for finding in rule.check(context)]
    modules = {displays.get(p, p): s.module for p, s in summaries.items()}
    raw = list(placed_at_overrides(raw, program, modules))
    raw += problem_findings(problems, summaries.values(), displays)
    if context_shown:
        raw = list(located_in_scanned(raw, context_shown))
    findings, suppressed, hidden = filter_findings(raw, config, summaries, displays)
    findings = with_ranges(findings, summaries, displays)
    return CheckResult(findings, program, summaries, files, stats, suppressed, hidden)


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
