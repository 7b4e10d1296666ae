"""One analysis of a project for the language server: what ``lintloader check ROOT`` finds,
with the editor's unsaved buffers read instead of the files on disk.

The preparation is ``check``'s (the nearest ``[tool.lintloader]``, its excludes, the summary
cache, the same discovery), so the editor shows the findings the command prints, noqa and
per-file ignores included. Unsaved buffers go in as ``CheckOptions.sources``, the engine's way
of reading bytes instead of a file (``fix`` hands its edited sources in the same way), keyed by
their digest like files: a run is replayed from the cache when nothing changed, and after an
edit of a few files (saved or not) the stored run is revisited (``incremental/revisit.py``),
so an edit costs a byte search and a parse of the edited buffer, not a new analysis.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from lintloader.cache.files import default_cache_dir
from lintloader.finding.findings import PARSE_ERROR_CODE, Finding
from lintloader.incremental.replay import replay_path
from lintloader.pipeline.engine import CheckOptions, CheckResult, run_check
from lintloader.pipeline.preparation import discover_trees, nearest_config, usable_cache
from lintloader.scan.model import Discovery
from lintloader.scan.read.statindex import index_path
from lintloader.settings.config import Config, ConfigError


@dataclass(frozen=True)
class Settings:
    """How the server runs its checks (``lintloader server``'s options)."""

    use_cache: bool = True
    cache_dir: Path | None = None  # None: the default cache directory
    # One process: the server analyzes in a worker thread, and a process forked from a
    # threaded one can inherit a lock another thread held (a parse pool hung that way). A cold
    # analysis runs in a helper forked before any thread started (``warm_cache``), in shards.
    jobs: int = 1
    cold_jobs: int = 1  # processes for a cold analysis (in a helper's child when above 1)


def cold_jobs() -> int:
    """``check``'s default number of parse processes (the CPU count, at most 8): on 2 quiet
    CPUs the helper's forked shards bring the first analysis of the 5,411-file project from
    1.2 s to 1.0 s (docs/performance.md, "The language server"); ``--jobs 1`` keeps it in the
    server's own process, for a machine busy with other work."""
    from lintloader.select.parse import default_jobs

    return default_jobs()


@dataclass
class Analysis:
    """The findings of one check of ``root``, by absolute path, and what produced them."""

    root: str
    discovery: Discovery
    options: CheckOptions
    result: CheckResult
    by_path: dict[str, tuple[Finding, ...]] = field(default_factory=dict)

    def path_of(self, display: str) -> str:
        """The absolute path of a finding's or hop's display path."""
        paths = {f.display: f.path for f in self.result.files}
        return os.path.abspath(paths.get(display, display))

    def displays(self) -> dict[str, str]:
        """display path -> path, as a fix request takes them."""
        return {f.display: f.path for f in self.result.files}


def project_config(root: str) -> Config:
    """``check``'s configuration for ``root``: the nearest ``[tool.lintloader]``; a selector
    that matches no rule is an error."""
    from lintloader.rules.codes import rule_codes

    config = nearest_config(root)
    errors, _ = config.selection_problems({*rule_codes(), PARSE_ERROR_CODE})
    if errors:
        source = f" (in {config.source})" if config.source else ""
        raise ConfigError(f"{errors[0]}{source}")
    return config


def cache_directory(settings: Settings) -> Path | None:
    if not settings.use_cache:
        return None
    return usable_cache(settings.cache_dir or default_cache_dir(), _unwarned)


def _unwarned(line: str) -> None:
    """An editor shows no warning of an unusable cache: it costs speed, never findings."""


def analyze(
    root: str, buffers: Mapping[str, bytes], settings: Settings, before: Analysis | None = None
) -> Analysis:
    """Check the project at ``root`` with ``buffers`` (path -> bytes) read instead of the
    files (raises ``ConfigError`` or ``DiscoveryError`` as ``check`` would exit 2). ``before``:
    an analysis whose files are still the project's (only buffers changed since): its
    discovery is kept when the configuration is the same."""
    config = project_config(root)
    cache = cache_directory(settings)
    if before is not None and before.options.config == config:
        discovery = before.discovery
    else:
        # no environment read as context, as in the flake8 plugin: a run that reads some is
        # not stored, and the server replays the stored run while nothing changed
        discovery = discover_trees((root,), config.exclude, cache, context=False)
    known = {f.path for f in discovery.files}
    sources = {path: data for path, data in buffers.items() if path in known}
    options = CheckOptions(
        config=config, jobs=settings.jobs, cache_dir=cache, sources=sources, replay_sources=True
    )
    result = run_check(discovery, replace(options, replay=True))
    analysis = Analysis(root, discovery, options, result)
    analysis.by_path = findings_by_path(analysis)
    return analysis


def cold_cache(root: str, settings: Settings) -> Path | None:
    """The cache directory, when it holds no stored run of the project at ``root`` (its first
    analysis parses what it needs: :func:`warm_cache` is worth a helper's fork)."""
    cache = cache_directory(settings)
    return cache if cache is not None and not _stored_run(root, cache) else None


def starts_cold(root: str, settings: Settings) -> bool:
    """Whether the first analysis of the project at ``root`` parses (no cache, or no stored
    run of it): then the open files are checked alone first (:func:`analyze_alone`)."""
    cache = cache_directory(settings)
    return cache is None or not _stored_run(root, cache)


def _stored_run(root: str, cache: Path) -> bool:
    return replay_path(index_path(cache, (os.path.abspath(root),))).exists()


def analyze_alone(
    root: str, paths: Sequence[str], buffers: Mapping[str, bytes], settings: Settings
) -> Analysis:
    """The files at ``paths`` checked alone, as ``check --project-root none FILES`` checks
    them with the configuration of the project at ``root``: the chains inside them, and the
    summaries the cache holds of them. A cold server shows this while the project is
    analyzed (docs/performance.md, "open files first"); the project's analysis replaces it."""
    config = project_config(root)
    cache = cache_directory(settings)
    discovery = discover_trees(paths, config.exclude, cache, context=False)
    sources = {path: data for path, data in buffers.items() if path in paths}
    options = CheckOptions(config=config, jobs=1, cache_dir=cache, sources=sources)
    analysis = Analysis(root, discovery, options, run_check(discovery, options))
    analysis.by_path = findings_by_path(analysis)
    return analysis


def warm_cache(job: dict[str, str | int]) -> None:
    """A helper's job (``workers/prefork.py``): a cold analysis of the files of the project
    at ``job["root"]``, in a single-threaded process that parses in forked shards as
    ``check`` does; the server's own analysis then replays what it stored in
    ``job["cache_dir"]`` (or revisits it, for unsaved buffers); ``job["jobs"]`` processes."""
    cache, jobs = Path(str(job["cache_dir"])), int(job["jobs"])
    analyze(str(job["root"]), {}, Settings(use_cache=True, cache_dir=cache, jobs=jobs))


def findings_by_path(analysis: Analysis) -> dict[str, tuple[Finding, ...]]:
    """The findings of each file (a notebook's placed in its Python source, which
    ``notebooks.py`` places in its cells)."""
    found: dict[str, list[Finding]] = {}
    for finding in analysis.result.findings:
        found.setdefault(analysis.path_of(finding.path), []).append(finding)
    return {path: tuple(findings) for path, findings in found.items()}
