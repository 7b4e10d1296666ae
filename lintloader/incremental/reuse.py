"""Reusing a stored run: as it was when nothing changed, after a few files changed when its
findings still hold (``incremental/revisit.py``), or linked again when only lines moved; and
storing each run for the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from lintloader.cache.summaries import SummaryCache
from lintloader.conclude.checking import CheckOptions, CheckResult, FixNames, conclude
from lintloader.incremental.reads import recorded
from lintloader.incremental.replay import (
    Replay,
    StoredRound,
    content_key,
    remember_fixable,
    save_replay,
)
from lintloader.scan.model import FileProblem, SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.workers.progress import ParseStats

if TYPE_CHECKING:  # imported when something must be analyzed (a replayed run never does)
    from lintloader.incremental.revisit import Revisited, Summarize
    from lintloader.select.trail import Round
    from lintloader.summary.model import FileSummary


class Run(NamedTuple):
    """What one cached check works with, handed down the replay path."""

    files: list[SourceFile]
    problems: list[FileProblem]
    sources: SourceSet
    cache: SummaryCache
    stats: ParseStats
    options: CheckOptions


def reused(stored: Replay | None, shape: str, run: Run) -> CheckResult | None:
    """The stored run's result, if it is a run of this ``shape`` that still holds; else None
    (the files are analyzed). The key of the files' content is worked out only then: a cold
    run (nothing stored) or one of another shape never needs it (it hashes a column of
    every file's digest or stamp, and the run stored at the end is keyed anew)."""
    if stored is None or stored.shape != shape:
        return None
    key = content_key(shape, [file.path for file in run.files], run.sources)
    return _replayed(stored, key, run)


Remember = Callable[[FixNames], None]  # stores check's fix trial with a stored run


def store_analyzed(
    result: CheckResult, rounds: Sequence[Round], shape: str, run: Run
) -> Remember | None:
    """Store an analyzed run, with its selection's trail and what its analysis read; how to
    store check's fix trial with it (None: not stored)."""
    sources, cache, stats = run.sources, run.cache, run.stats
    taken = tuple((path, sources.digest(path)) for round_ in rounds for path in round_.taken)
    held = _summarized_sources(taken, sources)
    summaries = stats.parsed + stats.cached
    from lintloader.incremental.recording import RecordingProgram  # linked: imported
    from lintloader.incremental.trailing import held_summarized

    linked = result.linked
    reads = recorded(linked) if isinstance(linked, RecordingProgram) else None
    stored = Replay(
        key="",
        findings=tuple(result.findings),
        suppressed_in=result.suppressed_in,
        summaries=summaries,
        hidden_in=result.hidden_in,
        shape=shape,
        rounds=tuple(StoredRound._make(round_) for round_ in rounds),
        taken=taken,
        taken_code=held_summarized(taken, held),
        reads=reads,
        stub_hooks=result.stub_hooks,
    )
    return _store(stored, cache.used, run)


# A taken file at least this large whose bytes are not held is read again to store the
# digest of its summarized part: its parse, spared by a later commit, costs far more.
READ_FOR_SUMMARIZED = 32 * 1024


def _summarized_sources(taken: Sequence[tuple[str, str]], sources: SourceSet) -> dict[str, bytes]:
    """The bytes of the taken files whose summarized part's digest is stored: those held
    (parsed in this process) and the large ones (``trailing.held_summarized`` checks that
    they still have the digest the run read)."""
    held = sources.held()
    wanted = [p for p, _ in taken if p in held or sources.size(p) >= READ_FOR_SUMMARIZED]
    return {path: sources[path] for path in wanted}


def _replayed(stored: Replay, key: str, run: Run) -> CheckResult | None:
    """The stored run's result if it still holds: nothing changed (the key is equal), or only
    the content of a few files, in ways its findings do not depend on (``incremental/revisit.py``,
    after which the run is stored again under its new key). When only the lines of a taken
    file moved, the stored selection still holds and only the rules run again."""
    files, _, sources, cache, stats, options = run
    remember = _rememberer(key, run)
    if stored.key != key:
        from lintloader.incremental.revisit import revisit

        parsed = ParseStats()  # counted only if the stored run holds (else analyzed again)
        summarize = _one_file_summarizer(sources, cache, parsed, options)
        revisited = revisit(stored, files, sources, cache, summarize)
        if revisited is None:
            return None
        stats.count(parsed=parsed.parsed)
        if revisited.moved:
            return _relinked(stored, revisited, run)
        # what the edited files now define can link a later commit's calls: keep it. The fix
        # trial holds while no summarized file changed (the fixes edit those files alone)
        fixable = stored.fixable if revisited.taken == stored.taken else None
        stored = replace(
            stored,
            taken=revisited.taken,
            taken_code=revisited.taken_code,
            reads=revisited.reads,
            fixable=fixable,
        )
        remember = _store(stored, revisited.entry_keys, run)
    sources.save()
    stats.cached = stored.summaries - stats.parsed
    findings = list(stored.findings)
    return CheckResult(
        findings,
        None,
        {},
        files,
        stats,
        dict(stored.suppressed_in),
        dict(stored.hidden_in),
        route="replayed",
        stub_hooks=stored.stub_hooks,
        fixable=stored.fixable,
        remember_fixable=remember,
    )


def _relinked(stored: Replay, revisited: Revisited, run: Run) -> CheckResult | None:
    """The stored run's selection, summarized as the files are now, linked and checked by the
    rules (no demand round: ``incremental/revisit.py`` showed each round would ask and take what
    it did), then stored again. None when a stored summary is gone."""
    from lintloader.incremental.recording import RecordingProgram
    from lintloader.incremental.revisit import summaries_again

    files, problems, sources, cache, stats, options = run
    summaries = summaries_again(stored.rounds, revisited, files, cache)
    if summaries is None:
        return None
    sources.save()
    stats.cached = len(summaries) - stats.parsed
    program = RecordingProgram(summaries.values())
    result = conclude(files, problems, summaries, program, stats, options)
    # the rounds would read what they read for the stored run (incremental/revisit.py)
    before = revisited.reads
    reads = None if before is None else recorded(program, before)
    again = Replay(
        key="",
        findings=tuple(result.findings),
        suppressed_in=result.suppressed_in,
        summaries=len(summaries),
        hidden_in=result.hidden_in,
        shape=stored.shape,
        rounds=stored.rounds,
        taken=revisited.taken,
        taken_code=revisited.taken_code,
        reads=reads,
        stub_hooks=result.stub_hooks,
    )
    remember = _store(again, revisited.entry_keys, run)
    return replace(result, route="relinked", remember_fixable=remember)


def _one_file_summarizer(
    sources: SourceSet, cache: SummaryCache, stats: ParseStats, options: CheckOptions
) -> Summarize:
    """Summarize one file as a selection round would (the parser is imported when called)."""

    def summarize(file: SourceFile) -> FileSummary:
        from lintloader.select.rounds import RoundTaker

        taker = RoundTaker(sources, cache, stats, 1, options.config.max_file_size)
        return taker.summarize([file], stats, jobs=1)[file.path]

    return summarize


def _store(stored: Replay, entry_keys: Iterable[str], run: Run) -> Remember | None:
    """Store a run (of ``stored.shape``) for the next one to replay, keyed as the files are
    now: the run worked out digests it needed, which the next run's key will include."""
    files, _, sources, cache, _, options = run
    entries = cache.stamps(entry_keys)
    if entries is None or options.cache_dir is None or sources.index_file is None:
        return None
    paths = [file.path for file in files]
    key = content_key(stored.shape, paths, sources)
    contents = tuple(sources.content_ids(paths))
    stored = replace(stored, key=key, entries=entries, contents=contents)
    save_replay(options.cache_dir, sources.index_file, stored)
    return _rememberer(key, run)


def _rememberer(key: str, run: Run) -> Remember | None:
    """How to store check's fix trial with the run stored under ``key``."""
    cache_dir, index_file = run.options.cache_dir, run.sources.index_file
    if cache_dir is None or index_file is None:
        return None
    return partial(remember_fixable, cache_dir, index_file, key)
