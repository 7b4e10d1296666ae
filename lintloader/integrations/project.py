"""Index a whole project, report on a few files.

A chain often starts in one file and ends in another (Lightning 1.5.0: ``fetching.py`` ->
``supporters.py``). A commit hook or a flake8 worker is handed some files only; analyzing those
alone would miss every chain that leaves them. So the project root is indexed (demand-driven:
only files that can take part in a chain are parsed, and summaries come from the cache) and the
findings are then restricted to the files that were asked about.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lintloader.pipeline.engine import CheckResult
from lintloader.scan.model import DiscoveryError

PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
AUTO = "auto"
NONE = "none"  # --project-root none: analyse the given paths alone


def find_project_root(paths: Sequence[str], cwd: str | None = None) -> str | None:
    """The nearest directory at or above the paths' common directory holding a project marker
    (pyproject.toml, setup.cfg, setup.py, .git); None when there is none."""
    cwd = os.path.abspath(cwd or os.getcwd())
    absolute = [os.path.join(cwd, p) for p in paths] or [cwd]
    dirs = [p if os.path.isdir(p) else os.path.dirname(p) for p in map(os.path.abspath, absolute)]
    start = os.path.commonpath(dirs)
    folder = start
    while True:
        if any(os.path.exists(os.path.join(folder, m)) for m in PROJECT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class ReportScope:
    """Index ``root`` (plus any target outside it); report findings located in ``targets``."""

    root: str
    targets: tuple[str, ...]  # absolute files or directories

    @classmethod
    def build(cls, paths: Sequence[str], project_root: str, cwd: str | None = None) -> ReportScope:
        """``project_root`` is a directory or ``auto`` (see ``find_project_root``; without a
        marker, the paths' common directory)."""
        cwd = os.path.abspath(cwd or os.getcwd())
        targets = tuple(os.path.abspath(os.path.join(cwd, p)) for p in paths)
        for raw, target in zip(paths, targets, strict=True):
            if not os.path.lexists(target):
                raise DiscoveryError(f"{raw}: no such file or directory")
        if project_root == AUTO:
            root = find_project_root(paths, cwd) or _common_dir(targets, cwd)
        else:
            root = os.path.abspath(os.path.join(cwd, project_root))
            if not os.path.isdir(root):
                raise DiscoveryError(f"--project-root {project_root}: not a directory")
        return cls(root, targets)

    def index_paths(self) -> tuple[str, ...]:
        """What to discover: the root, and targets that lie outside it."""
        return (self.root, *(t for t in self.targets if not _under(t, self.root)))

    def covers(self, path: str) -> bool:
        return any(_under(path, target) for target in self.targets)

    def restrict(self, result: CheckResult) -> CheckResult:
        """The result with only the findings located in the targets, the counts of suppressed
        and hidden findings of those files only, and how many of its files the targets are."""
        absolute = {f.display: f.path for f in result.files}

        def covered(display: str) -> bool:
            return self.covers(os.path.abspath(absolute.get(display, display)))

        return dataclasses.replace(
            result,
            findings=[f for f in result.findings if covered(f.path)],
            suppressed_in={p: n for p, n in result.suppressed_in.items() if covered(p)},
            hidden_in={p: n for p, n in result.hidden_in.items() if covered(p)},
            reported_files=sum(1 for f in result.files if self.covers(os.path.abspath(f.path))),
        )


def _common_dir(targets: Iterable[str], cwd: str) -> str:
    dirs = [t if os.path.isdir(t) else os.path.dirname(t) for t in targets]
    return os.path.commonpath(dirs) if dirs else cwd
