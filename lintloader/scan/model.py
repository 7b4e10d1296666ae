"""What discovery finds: the files to scan, the ones that cannot be read, and its errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.pending import PendingStores

NOTEBOOK_SUFFIX = (
    ".ipynb"  # a Jupyter notebook: its code cells are scanned (scan/read/notebooks.py)
)


class DiscoveryError(Exception):
    """An operational error that stops the run (exit code 2): a missing path, a bad --python."""


class SourceFile(NamedTuple):
    """A file to scan. (A named tuple, not a dataclass: a site-packages makes thousands of
    them on every run, and a tuple is made in a third of the time.)"""

    path: str  # as found (not resolved through symlinks)
    module: str
    is_package: bool
    display: str  # what reports show


@dataclass(frozen=True)
class FileProblem:
    """A file that cannot be analyzed; reported as LL000 and the run goes on."""

    display: str
    message: str
    line: int = 1
    column: int = 1


@dataclass(frozen=True)
class Environment:
    """Which interpreter's site directories a project scan reads context from
    (scan/environment/project.py)."""

    python: str | None = None  # None: the running interpreter
    cache_dir: Path | None = None
    sites: tuple[str, ...] | None = None  # already asked for (``--python``); None: not yet


@dataclass(eq=False, repr=False)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # where a project config is looked up
    # where modules the files build on, but that are not scanned, may be looked up by name
    # (the site directories when only some distributions are scanned); see
    # scan/environment/locate.py
    context: list[str] = field(default_factory=list)
    # a project scan: also look such modules up in the environment's site directories
    # (scan/environment/project.py), without blocking a replay; None: do not
    environment: Environment | None = None
    # the stamp (size, mtime, ctime, inode) of every directory a walk of site directories
    # went into, taken before it was listed (scan/discover/walk/listings.py): the warm fast
    # path's answer stores them (cli/fast_record.py) instead of walking the sites again
    directories: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    # the cache entries the walk made for the next one (a tree's memo, a site's listings):
    # written at once, unless discovery was asked to leave them to the check (cache/pending.py)
    stores: PendingStores = field(default_factory=PendingStores)

    def extend(self, other: Discovery) -> None:
        self.files.extend(other.files)
        self.problems.extend(other.problems)
        self.roots.extend(other.roots)
        self.context.extend(other.context)
        self.directories.update(other.directories)
        self.stores.extend(other.stores)
        self.environment = self.environment or other.environment
