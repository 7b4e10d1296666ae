"""What a check of source trees is given before it runs: the configuration found for its
paths, a cache it can use, and the files it scans with the environment their classes build on.

``check`` and ``fix`` (``cli/options.py``), the flake8 plugin
(``integrations/flake8_plugin.py``) and the language server (``integrations/lsp/analysis.py``)
prepare their checks with these functions, so that the plugin and the editor report what the
command does; each then adds what is its own (the command's options and progress line, the
plugin's one process and shared replay, the editor's unsaved buffers).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from lintloader.cache.files import cache_problem
from lintloader.scan.discover.escape import printable
from lintloader.scan.discover.paths import discover_paths
from lintloader.scan.model import Discovery, Environment
from lintloader.settings.config import Config, ForeignConfig, find_pyproject, load_config

Warn = Callable[[str], None]  # shows one warning line


def nearest_config(start: str, warn: Warn | None = None) -> Config:
    """The ``[tool.lintloader]`` of the nearest pyproject.toml at or above ``start`` (the
    defaults without one; ``ConfigError`` when it is broken). One another user owns is not
    used: one warning (on stderr unless ``warn`` shows it), and the defaults."""
    try:
        return load_config(find_pyproject(start), found=True)
    except ForeignConfig as exc:
        (warn or _on_stderr)(f"lintloader: warning: {printable(str(exc))}")
        return Config()


def _on_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def usable_cache(directory: Path, warn: Warn) -> Path | None:
    """``directory``, or None (and one warning) when it cannot hold the cache: the cache costs
    speed when it is missing, never findings."""
    problem = cache_problem(directory)
    if problem is None:
        return directory
    warn(
        f"lintloader: warning: cache directory {directory} is unusable ({problem}); "
        "going on without the cache"
    )
    return None


def discover_trees(
    paths: Iterable[str],
    excludes: Iterable[str],
    cache: Path | None,
    python: str | None = None,
    context: bool = True,
    on_found: Callable[[int], None] | None = None,
    defer: bool = False,
) -> Discovery:
    """The files to scan below ``paths`` (``scan/discover/paths.py``) and, with ``context``, the
    environment whose site directories hold the frameworks their classes build on, read as
    context (``scan/environment/project.py``): the running interpreter's, or ``python``'s.
    ``defer``: leave the walk's stores to the check (``discover_paths``' ``defer_stores``)."""
    found = discover_paths(paths, excludes, on_found=on_found, cache_dir=cache, defer_stores=defer)
    if context:
        found.environment = project_environment(python, cache)
    return found


def project_environment(python: str | None, cache: Path | None) -> Environment:
    """Where a project scan reads its context: the running interpreter (asked when first
    needed), or ``python``, asked now so that a bad one stops the run (``DiscoveryError``)."""
    if python is None:
        return Environment(None, cache)
    from lintloader.scan.environment.interpreter import query_interpreter

    answer = query_interpreter(python, [], cache)
    return Environment(python, cache, tuple(str(site) for site in answer.get("sites", [])))
