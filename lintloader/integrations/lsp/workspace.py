"""What the server knows of the projects an editor has open: each project's root, its latest
analysis, what was last shown for each file, and the unsaved buffers to analyze.

A project is the workspace folder a file lies in (else the nearest directory with a project
marker, as ``--project-root auto`` finds it, else the file alone: never ``/``, whose analysis
would walk the whole file system). Every change (an edit,
a save, a file changed on disk, a new ``pyproject.toml``) bumps its generation; the analysis
loop runs until each project's analysis is of its latest generation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lintloader.finding.findings import Finding
from lintloader.integrations.lsp.analysis import Analysis
from lintloader.integrations.lsp.notebooks import notebook_code
from lintloader.integrations.project import find_project_root
from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.scan.read.reading import read_file, read_source

Shown = dict[str, tuple[Finding, ...]]  # path -> the findings last shown for it
EDITED = (".py", NOTEBOOK_SUFFIX)  # the files whose open buffers the analysis reads


@dataclass
class Project:
    root: str
    generation: int = 1  # bumped by every change
    analyzed: int = 0  # the generation of ``analysis``
    analysis: Analysis | None = None
    shown: Shown = field(default_factory=dict)
    ever_shown: set[str] = field(default_factory=set)  # paths to report empty once cleared
    # a file may have been added, removed or saved since the last analysis began: find the
    # files again (an edit of an open buffer keeps them, where the client reports the rest)
    disk_changed: bool = True
    # before the first analysis lands: the open files checked alone (shown meanwhile), and
    # whether a pull was answered from them (the client is then asked to pull again)
    early: Analysis | None = None
    answered_early: bool = False
    cold: bool | None = None  # whether the first analysis parses (None: not known yet)

    @property
    def stale(self) -> bool:
        return self.analyzed != self.generation

    @property
    def shown_analysis(self) -> Analysis | None:
        """What the diagnostics shown come from: the analysis, else the early one."""
        return self.analysis or self.early

    def covers(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)

    def findings(self, path: str) -> tuple[Finding, ...]:
        shown = self.shown_analysis
        return shown.by_path.get(path, ()) if shown else ()

    def take_early(self, early: Analysis) -> list[str]:
        """Show ``early`` until the first analysis lands; the paths it gives findings to."""
        self.early = early
        found = {path: findings for path, findings in early.by_path.items() if findings}
        changed = sorted(path for path in found if self.shown.get(path) != found[path])
        self.shown.update(found)
        self.ever_shown.update(found)
        return changed

    def take(self, analysis: Analysis, generation: int) -> list[str]:
        """Keep ``analysis``; the paths whose findings it changed (to show again or clear:
        an early finding the analysis does not make too)."""
        self.analysis, self.analyzed = analysis, generation
        self.early = None
        before, self.shown = self.shown, dict(analysis.by_path)
        self.ever_shown.update(self.shown)
        return sorted(p for p in {*before, *self.shown} if before.get(p) != self.shown.get(p))


@dataclass
class Projects:
    projects: dict[str, Project] = field(default_factory=dict)

    def add(self, root: str) -> Project | None:
        """The project of the folder ``root`` (None for the file system's root)."""
        root = os.path.abspath(root)
        if _is_top(root):
            return None
        return self.projects.setdefault(root, Project(root))

    def of(self, path: str) -> Project:
        """The project ``path`` belongs to (the innermost that covers it), made if none does:
        the nearest folder with a project marker below ``/``, else ``path`` alone."""
        covering = [p for p in self.projects.values() if p.covers(path)]
        if covering:
            return max(covering, key=lambda p: len(p.root))
        root = find_project_root([path])
        project = self.add(root) if root else None
        return project or self.alone(path)

    def alone(self, path: str) -> Project:
        path = os.path.abspath(path)
        return self.projects.setdefault(path, Project(path))

    def touched(self, paths: Iterable[str], on_disk: bool = True) -> list[Project]:
        """Bump the generation of every project that holds one of ``paths`` (``on_disk``:
        changed on disk, not only in a buffer)."""
        found = {id(p): p for path in paths for p in self.projects.values() if p.covers(path)}
        for project in found.values():
            project.generation += 1
            project.disk_changed |= on_disk
        return list(found.values())

    def stale(self) -> list[Project]:
        return [p for p in self.projects.values() if p.stale]


def _is_top(folder: str) -> bool:
    return os.path.dirname(folder) == folder


def buffers(project: Project, texts: Mapping[str, str]) -> dict[str, bytes]:
    """The open Python files and notebooks of ``project`` whose text is not what is on disk
    (path -> the bytes the engine reads: a notebook's code cells, see ``notebooks.py``).
    Buffers equal to the files are left out, so that an analysis of saved files replays."""
    found = {}
    for path, text in texts.items():
        if path.endswith(EDITED) and project.covers(path):
            data = text.encode("utf-8", "surrogateescape")
            # the engine reads a notebook's code cells (none: not readable now, disk's read)
            code = notebook_code(data) if path.endswith(NOTEBOOK_SUFFIX) else data
            if code is not None and code != on_disk(path, read_source):
                found[path] = code
    return found


def on_disk(path: str, read: Callable[[str], bytes | None] = read_file) -> bytes | None:
    """A file's bytes on disk (``read``: read_source for what the engine reads of a notebook);
    None when it cannot be read."""
    try:
        return read(path)
    except OSError:  # a notebook that cannot be converted too
        return None


def disk_lines(path: str, read: Callable[[str], bytes | None] = on_disk) -> list[str]:
    data = read(path)
    return data.decode("utf-8", "replace").splitlines(keepends=True) if data else []
