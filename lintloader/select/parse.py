"""Summarize many files, from the cache where possible, in worker processes where it pays."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace

from lintloader.cache.summaries import SummaryCache
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import summarize_source
from lintloader.workers.progress import ParseStats

# Worker processes cost ~0.1 s to start and must pickle their summaries back: below these, one
# process is faster (the ast summarizer handles roughly 4 MB of source a second).
PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 1_000_000


def _summarize(job: tuple[bytes, str, str, bool]) -> FileSummary:
    source, path, module, is_package = job
    return summarize_source(source, path, module, is_package)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def summarize_files(
    files: Sequence[SourceFile],
    sources: SourceSet,
    cache: SummaryCache | None,
    jobs: int,
    stats: ParseStats,
) -> dict[str, FileSummary]:
    """Summaries keyed by path; identical whatever ``jobs`` is and whether the cache is used.
    Files with the same bytes under the same module name (copies of one package in several
    environments) are parsed once: only the path differs between their summaries, and nothing
    else in a summary depends on it. A copy counts as parsed (its summary was made in this run,
    not read from the cache)."""
    done: dict[str, FileSummary] = {}
    memo = sources.memo.summaries if sources.memo is not None and cache is None else None
    todo: dict[tuple[str, str, bool], list[tuple[SourceFile, str | None]]] = {}
    for file in files:
        digest = sources.digest(file.path)
        key = cache.key(digest, file.module, file.is_package) if cache else None
        hit = cache.get(key) if cache and key else None
        made = memo.get((digest, file.module, file.is_package)) if memo is not None else None
        if made is not None:  # made by an earlier check of this process, without a cache
            done[file.path] = at_path(made, file.path)
            stats.count(parsed=1)
        elif hit is not None:
            done[file.path] = at_path(hit, file.path)
            # parsed earlier in this run (a revisit that fell through)
            if cache is not None and key in cache.made:
                stats.count(parsed=1)
            else:
                stats.count(cached=1)
        else:
            todo.setdefault((digest, file.module, file.is_package), []).append((file, key))
    # largest first, so that a big file does not start last and keep one worker busy alone
    groups = sorted(todo.items(), key=lambda item: -sources.size(item[1][0][0].path))
    firsts = [copies[0] for _, copies in groups]
    for (made_key, copies), summary in zip(groups, _run(firsts, sources, jobs), strict=True):
        for copy, _ in copies:
            done[copy.path] = at_path(summary, copy.path)
        stats.count(parsed=len(copies))
        if memo is not None:
            memo[made_key] = summary
        key = copies[0][1]
        if cache and key and sources.writes:
            cache.put(key, summary)
    return {f.path: done[f.path] for f in files if f.path in done}


def at_path(summary: FileSummary, path: str) -> FileSummary:
    """``summary`` for the same bytes and module name at ``path``."""
    return summary if summary.path == path else replace(summary, path=path)


def _run(
    todo: list[tuple[SourceFile, str | None]], sources: SourceSet, jobs: int
) -> Iterable[FileSummary]:
    work = [(sources[f.path], f.path, f.module, f.is_package) for f, _ in todo]
    size = sum(len(job[0]) for job in work)
    if jobs > 1 and len(work) >= PARALLEL_MIN_FILES and size >= PARALLEL_MIN_BYTES:
        # imported here: multiprocessing costs a run that parses little ~10-20 ms to import
        from concurrent.futures import ProcessPoolExecutor

        from lintloader.workers.parent_death import die_with_parent

        workers = min(jobs, len(work))
        with ProcessPoolExecutor(
            workers, initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            try:
                yield from pool.map(_summarize, work, chunksize=1)
            except BaseException:  # interrupted: drop the queued files, do not parse them
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        yield from map(_summarize, work)
