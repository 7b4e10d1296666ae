"""The check pipeline: discover -> read -> reuse a stored run, else select/summarize -> link
-> analyze -> filter.

This is the library entry point that the CLI, the flake8 plugin and the fixers call. What a
check is asked and answers (:class:`CheckOptions`, :class:`CheckResult`) and its last step
(``conclude``) are in ``conclude/checking.py``; reusing a stored run is ``incremental/reuse.py``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from lintloader.cache.pending import PendingStores
from lintloader.cache.summaries import SummaryCache
from lintloader.conclude.checking import CheckOptions, CheckResult, active_rules, conclude
from lintloader.incremental.replay import load_replay, replay_shape
from lintloader.incremental.reuse import Run, reused, store_analyzed
from lintloader.scan.model import Discovery, Environment, FileProblem, SourceFile
from lintloader.scan.read.reading import read_source
from lintloader.scan.read.sources import SourceSet
from lintloader.workers.progress import ParseStats, Progress

if TYPE_CHECKING:  # imported when something must be analyzed (a replayed run never does)
    from lintloader.select.trail import Round

# what the CLI, the integrations and the fixers import from here: the entry points, and what a
# check is asked and answers (defined in conclude/checking.py, read through scan/read/reading.py)
__all__ = ["CheckOptions", "CheckResult", "analyze", "read_source", "run_check"]


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
        try:
            result = _run_check(discovery, options)
        finally:  # what discovery left to write, unless a resident child wrote it
            discovery.stores.write()
    if result.findings:  # known affected releases (after a replay too: the data may be newer)
        from lintloader.analysis.advisories import with_advisories

        result.findings = with_advisories(result.findings, result.files)
    return result


def _run_check(discovery: Discovery, options: CheckOptions) -> CheckResult:
    problems = list(discovery.problems)
    progress = Progress.for_stderr() if options.progress else None
    max_mb = options.config.max_file_size
    sources = SourceSet(
        read_source,
        options.sources,
        options.cache_dir,
        discovery.roots,
        max_mb,
        writes=options.cache_writes,
        memo=options.reads,
    )
    files = sources.load(discovery.files, problems)
    cache = SummaryCache(options.cache_dir) if options.cache_dir else None
    stats = ParseStats(progress=progress)
    if progress:
        progress.update(found=len(files))
    # A run that looks modules up outside its files (--site-packages B: A's base classes) is
    # never replayed: its key covers the scanned files only, not the context it parsed. Bytes
    # given instead of files are keyed by their digest, like files' (only when asked for).
    with_sources = not options.sources or options.replay_sources
    replayable = options.replay and with_sources and not discovery.context
    replay_file = sources.index_file if replayable and cache else None
    analyzed = partial(
        analyze,
        files,
        problems,
        sources,
        cache,
        stats,
        options,
        context_dirs=discovery.context,
        environment=discovery.environment,
        stores=discovery.stores,
    )
    if replay_file is None or cache is None:
        return analyzed()
    shape = replay_shape(files, problems, options.config)
    run = Run(files, problems, sources, cache, stats, options)
    replayed = reused(load_replay(replay_file, cache), shape, run)
    if replayed is not None:
        if progress:
            progress.close()
        return replayed
    rounds: list[Round] = []
    result = analyzed(rounds=rounds)
    if not _read_context(result):  # its key covers the scanned files only, not the context
        result.remember_fixable = store_analyzed(result, rounds, shape, run)
    return result


def _read_context(result: CheckResult) -> bool:
    """Whether a run summarized a file it did not scan (context from the environment)."""
    scanned = {file.path for file in result.files}
    return any(path not in scanned for path in result.summaries)


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
    stores: PendingStores | None = None,
) -> CheckResult:
    """Select and summarize what the active rules need, link it and run the rules.
    ``context_dirs``: where modules the files build on are looked up
    (scan/environment/locate.py), and
    ``environment``: an interpreter whose site directories are looked in too
    (scan/environment/project.py); ``rounds`` receives the selection's trail (select/trail.py),
    and only then, since the run will be stored, is it linked as a program that records what
    its analysis read (incremental/recording.py): a run nobody stores (``--no-cache``, the fix
    trial's checks) does not pay for the record. ``stores``: cache entries made before the
    run (a check's discovery's), which a cold scan's first resident child writes before
    its first piece of work; those still pending when it returns are the caller's."""
    from lintloader.analysis.vocabulary import Vocabulary
    from lintloader.analysis.vocabulary_demand import vocabulary_demand
    from lintloader.incremental.recording import RecordingProgram
    from lintloader.link.program import Program
    from lintloader.scan.environment.locate import ModuleLocator
    from lintloader.scan.environment.project import EnvironmentLocator
    from lintloader.select.parse import default_jobs
    from lintloader.select.policy import select
    from lintloader.select.rounds import RoundTaker

    config = options.config
    rules = active_rules(config)
    jobs = options.jobs or default_jobs()
    if cache is not None:
        cache.settle_code()  # before a cold scan forks its processes (select/rounds.py)
    taker = RoundTaker(sources, cache, stats, jobs, config.max_file_size, stores=stores)
    locator: ModuleLocator | None = ModuleLocator(context_dirs) if context_dirs else None
    if environment is not None:
        locator = EnvironmentLocator(list(context_dirs or ()), environment=environment)
    locate = locator.find if locator else None
    vocabulary = Vocabulary(config.extend_resets, config.extend_roots, config.extend_loaders)
    extra = [partial(vocabulary_demand, vocabulary=vocabulary)] if vocabulary.modules else []
    try:
        summaries, program = select(
            files,
            sources,
            rules,
            taker.take,
            rounds=rounds,
            locate=locate,
            wanted=vocabulary.modules,
            extra=extra,
            link=Program if rounds is None else RecordingProgram,
        )
    except BaseException:  # Ctrl-C above all: leave no child behind
        taker.close(kill=True)
        raise
    taker.let_go()  # the children leave while the rules run (their exit takes milliseconds)
    try:
        sources.save()
        sources.keep()
        if stats.progress:
            stats.progress.close()
        located = {p: f.display for p, f in (locator.found if locator else {}).items()}
        return conclude(files, problems, summaries, program, stats, options, located)
    finally:
        taker.close()  # reaped
