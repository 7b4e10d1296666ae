"""Modules imported through folders that are no package: ``from models.net import build`` where
``models/`` has no ``__init__.py`` (a folder of scripts run from the repository root, a
namespace package, a namespace folder inside a package).

A file's module name comes from the ``__init__.py`` files above it
(``scan/discover/module_names.py``):
``models/net.py`` is ``net``. Python imports it as ``models.net`` too, from any directory on
``sys.path`` that holds ``models/``: the script's own directory or one above it (run from the
repository root). A dotted name matches a file here when it is the file's module name behind
one or more of the folders above it, and the file's path ends in those folders; the directory
before them is the one that must be on ``sys.path`` (its root). The linker resolves an import
through such a name only from a file inside that root, the nearest root first; selection parses
any file a wanted name matches.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    """A file with a module name (a scanned file, a summary)."""

    @property
    def path(self) -> str: ...

    @property
    def module(self) -> str: ...

    @property
    def is_package(self) -> bool: ...


File = TypeVar("File", bound=Named)


class FolderFiles(Generic[File]):
    """Files by the dotted names the folders above them give their modules (worked out on the
    first look-up)."""

    def __init__(self, files: Iterable[File]) -> None:
        self._files = files
        self._by_name: dict[str, list[File]] | None = None
        self._nearest: dict[tuple[str, str], File | None] = {}  # (dotted, importer): answer

    def matching(self, dotted: str) -> list[tuple[File, str]]:
        """Each file ``dotted`` names through folders that are no package, with its root."""
        if self._by_name is None:
            self._by_name = {}
            for file in self._files:
                self._by_name.setdefault(own_name(file.module), []).append(file)
        parts = dotted.split(".")
        found = []
        for split in range(1, len(parts)):
            for file in self._by_name.get(".".join(parts[split:]), ()):
                root = _root(file, parts)
                if root is not None:
                    found.append((file, root))
        return found

    def first(self, dotted: str) -> File | None:
        """A file ``dotted`` names, if any (selection: which to parse)."""
        return next((file for file, _ in self.matching(dotted)), None)

    def nearest(self, dotted: str, importer: str) -> File | None:
        """The file ``dotted`` names from the file at path ``importer``: the one whose root
        holds ``importer`` most closely; None when no root holds it."""
        asked = (dotted, importer)
        if asked not in self._nearest:
            self._nearest[asked] = self._nearest_to(dotted, importer)
        return self._nearest[asked]

    def _nearest_to(self, dotted: str, importer: str) -> File | None:
        here = os.path.dirname(os.path.abspath(importer))
        best: tuple[File, str] | None = None
        for file, root in self.matching(dotted):
            inside = here == root or here.startswith(root.rstrip(os.sep) + os.sep)
            if inside and (best is None or len(root) > len(best[1])):
                best = (file, root)
        return best[0] if best else None


def own_name(module: str) -> str:
    """The dotted name a module key stands for: a script's own name (``train@b``), a copy's
    (``pkg.mod@@2``: the same module of another project in the tree)."""
    return module.partition("@")[0]


def package_root(file: Named) -> str:
    """The directory that holds the file's top package (a script's: its own directory)."""
    parts = own_name(file.module).split(".")
    directory = os.path.dirname(os.path.abspath(file.path))
    for _ in range(len(parts) if file.is_package else len(parts) - 1):
        directory = os.path.dirname(directory)
    return directory


def _root(file: Named, parts: list[str]) -> str | None:
    """The directory that holds the folders ``parts`` names before ``file``, if its path ends
    in them."""
    tail = os.sep.join(parts) + (os.sep + "__init__.py" if file.is_package else ".py")
    path = os.path.abspath(file.path)
    if not path.endswith(os.sep + tail):
        return None
    return path[: -len(tail) - 1] or os.sep
