"""Summarize many files, from the cache where possible, in worker processes where it pays."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace

from lintloader.cache.summaries import SummaryCache
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.summary.definitions import fits, grows
from lintloader.summary.model import FileSummary
from lintloader.summary.summarize import grow_summary, summarize_source
from lintloader.workers.progress import ParseStats

# Worker processes cost ~0.1 s to start and must pickle their summaries back: below these, one
# process is faster (the ast summarizer handles roughly 4 MB of source a second).
PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 1_000_000


Texts = tuple[bytes, ...] | None  # what a file is summarized for (summary/definitions.py)
Job = tuple[bytes, str, str, bool, Texts]


def _summarize(job: Job) -> FileSummary:
    return summarize_source(*job)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def summarize_files(
    files: Sequence[SourceFile],
    sources: SourceSet,
    cache: SummaryCache | None,
    jobs: int,
    stats: ParseStats,
    texts: dict[str, tuple[bytes, ...]] | None = None,
) -> dict[str, FileSummary]:
    """Summaries keyed by path; identical whatever ``jobs`` is and whether the cache is used.
    Files with the same bytes under the same module name (copies of one package in several
    environments) are parsed once: only the path differs between their summaries, and nothing
    else in a summary depends on it. A copy counts as parsed (its summary was made in this run,
    not read from the cache). ``texts``: per path, the bytes whose top-level definitions its
    summary walks (summary/definitions.py; a path not in it: all); a cached summary serves
    only if it walks the same ones."""
    texts = texts or {}
    done: dict[str, FileSummary] = {}
    memo = sources.memo.summaries if sources.memo is not None and cache is None else None
    todo: dict[tuple[str, str, bool, Texts], list[tuple[SourceFile, str | None]]] = {}
    for file in files:
        digest = sources.digest(file.path)
        wanted = texts.get(file.path)
        key = cache.key(digest, file.module, file.is_package) if cache else None
        hit = cache.get(key) if cache and key else None
        made = memo.get((digest, file.module, file.is_package)) if memo is not None else None
        if hit is not None and not _fits(hit, sources, file, wanted):
            hit = None
        if made is not None and not _fits(made, sources, file, wanted):
            made = None
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
            made_key = (digest, file.module, file.is_package, wanted)
            todo.setdefault(made_key, []).append((file, key))
    # largest first, so that a big file does not start last and keep one worker busy alone
    groups = sorted(todo.items(), key=lambda item: -sources.size(item[1][0][0].path))
    firsts = [copies[0] for _, copies in groups]
    summaries = _run(firsts, sources, jobs, texts)
    for (made_key, copies), summary in zip(groups, summaries, strict=True):
        for copy, _ in copies:
            done[copy.path] = at_path(summary, copy.path)
        stats.count(parsed=len(copies))
        if memo is not None:
            memo[made_key[:3]] = summary
        key = copies[0][1]
        if cache and key and sources.writes:
            cache.put(key, summary)
    return {f.path: done[f.path] for f in files if f.path in done}


def grow_files(
    taken: Sequence[tuple[SourceFile, FileSummary]],
    sources: SourceSet,
    cache: SummaryCache | None,
    texts: tuple[bytes, ...],
) -> dict[str, FileSummary]:
    """The summaries of ``taken`` (files with the summaries made for fewer tokens) that grow
    for ``texts`` (summary/definitions.py), grown: only the functions that now hold a token
    are walked. Each is stored where a summary made anew would be."""
    found: dict[str, FileSummary] = {}
    memo = sources.memo.summaries if sources.memo is not None and cache is None else None
    for file, summary in taken:
        source = sources[file.path]
        if not grows(summary, source, texts):
            continue
        found[file.path] = grown = grow_summary(summary, source, texts)
        made_key = (sources.digest(file.path), file.module, file.is_package)
        if memo is not None:
            memo[made_key] = grown
        if cache is not None and sources.writes:
            cache.put(cache.key(*made_key), grown)
    return found


def _fits(summary: FileSummary, sources: SourceSet, file: SourceFile, wanted: Texts) -> bool:
    """Whether a summary made before walks what one made for ``wanted`` would (its bytes are
    read only when it or ``wanted`` is narrowed)."""
    if wanted is None and not summary.narrowed:
        return True
    return fits(summary, sources[file.path], wanted)


def at_path(summary: FileSummary, path: str) -> FileSummary:
    """``summary`` for the same bytes and module name at ``path``."""
    return summary if summary.path == path else replace(summary, path=path)


def _run(
    todo: list[tuple[SourceFile, str | None]],
    sources: SourceSet,
    jobs: int,
    texts: dict[str, tuple[bytes, ...]],
) -> Iterable[FileSummary]:
    work: list[Job] = [
        (sources[f.path], f.path, f.module, f.is_package, texts.get(f.path)) for f, _ in todo
    ]
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
