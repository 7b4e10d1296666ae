"""Summarize many files, from the cache where possible, in worker processes where it pays."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from lintloader.cache import SummaryCache, summary_key
from lintloader.discover import SourceFile
from lintloader.summary import FileSummary, summarize_source

_PARALLEL_THRESHOLD = 4  # fewer files than this are parsed in-process


@dataclass
class ParseStats:
    parsed: int = 0
    cached: int = 0


def _summarize(job: tuple[bytes, str, str, bool]) -> FileSummary:
    source, path, module, is_package = job
    return summarize_source(source, path, module, is_package)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def summarize_files(
    files: Iterable[SourceFile],
    contents: dict[str, bytes],
    cache: SummaryCache | None,
    jobs: int,
    stats: ParseStats,
) -> dict[str, FileSummary]:
    """Summaries keyed by path; identical whatever ``jobs`` is and whether the cache is used."""
    done: dict[str, FileSummary] = {}
    todo: list[tuple[SourceFile, str | None]] = []
    for file in files:
        key = summary_key(contents[file.path], file.module, file.is_package) if cache else None
        hit = cache.get(key) if cache and key else None
        if hit is not None and hit.path == file.path:
            done[file.path] = hit
            stats.cached += 1
        else:
            todo.append((file, key))
    jobs_list = [(contents[f.path], f.path, f.module, f.is_package) for f, _ in todo]
    if jobs > 1 and len(jobs_list) >= _PARALLEL_THRESHOLD:
        workers = min(jobs, len(jobs_list))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_summarize, jobs_list, chunksize=1))
    else:
        results = [_summarize(job) for job in jobs_list]
    for (file, key), summary in zip(todo, results, strict=False):
        done[file.path] = summary
        stats.parsed += 1
        if cache and key:
            cache.put(key, summary)
    return done
