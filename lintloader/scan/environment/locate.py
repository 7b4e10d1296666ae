"""Modules outside the scanned files, found by name: the code a scanned distribution builds on.

``lintloader check --site-packages B`` scans B's files only; when B subclasses a trainer of
package A, the analysis needs A's class (its loops call B's override). Selection asks for such
modules by dotted path (``a.trainer.Trainer``); this finds the file that defines the longest
prefix that is a module, in the site directories, without listing them: a few ``stat`` calls.
Files found this way are context: parsed and linked, never reported on themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from lintloader.scan.discover.display import display_path
from lintloader.scan.model import SourceFile


@dataclass(eq=False, repr=False)
class ModuleLocator:
    """Finds modules by dotted name below ``directories`` (the first directory that has one
    wins, as on ``sys.path``)."""

    directories: list[str]
    cwd: str = field(default_factory=os.getcwd)
    found: dict[str, SourceFile] = field(default_factory=dict)  # path -> file, this run
    _answers: dict[str, SourceFile | None] = field(default_factory=dict)

    def find(self, dotted: str) -> SourceFile | None:
        """The file of the longest prefix of ``dotted`` that is a module, if any."""
        if dotted not in self._answers:
            self._answers[dotted] = self._find(dotted)
        return self._answers[dotted]

    def _find(self, dotted: str) -> SourceFile | None:
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            if not all(part.isidentifier() for part in parts[:cut]):
                continue
            for directory in self.directories:
                file = self._module_file(directory, parts[:cut])
                if file is not None:
                    self.found[file.path] = file
                    return file
        return None

    def _module_file(self, directory: str, parts: list[str]) -> SourceFile | None:
        base = os.path.join(directory, *parts)
        for path, is_package in ((os.path.join(base, "__init__.py"), True), (base + ".py", False)):
            if os.path.isfile(path):
                shown = display_path(path, os.path.abspath(self.cwd), directory)
                return SourceFile(path, ".".join(parts), is_package, shown)
        return None
