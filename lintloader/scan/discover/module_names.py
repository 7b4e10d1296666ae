"""The module name of each scanned file: from the packages above it (``__init__.py`` files) in a
source tree, from its path below a site directory, and a name of its own for a script that
shares its file name with another one outside any package."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from lintloader.scan.discover.display import inside
from lintloader.scan.model import SourceFile


def module_name_for(path: str) -> tuple[str, bool]:
    """Dotted module name from the package structure (``__init__.py`` files above the file)."""
    absolute = Path(os.path.abspath(path))
    is_package = absolute.name == "__init__.py"
    parts = [] if is_package else [absolute.stem]
    directory = absolute.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) or absolute.stem, is_package


class ModuleNamer:
    """:func:`module_name_for` over many files, each given as a normalized absolute directory
    and a name: whether a directory is a package (and the package path above it) is looked up
    once per directory, not once per file in it."""

    def __init__(self) -> None:
        self._prefixes: dict[str, tuple[str, ...]] = {}

    def named(self, directory: str, name: str) -> tuple[str, bool]:
        """The module name of the file ``name`` in the normalized absolute ``directory``."""
        return self.named_all(directory, [name])[0]

    def named_all(self, directory: str, names: Iterable[str]) -> list[tuple[str, bool]]:
        """:meth:`named` for each of ``names`` in ``directory`` (the package path joined once:
        a walk names every file of a site-packages this way)."""
        package = ".".join(self.prefix(directory))
        named = []
        for name in names:
            if name == "__init__.py":
                named.append((package or "__init__", True))
                continue
            dot = name.rfind(".")
            stem = name[:dot] if 0 < dot < len(name) - 1 else name  # as Path.stem
            named.append((f"{package}.{stem}" if package else stem, False))
        return named

    def prefix(self, directory: str, has_init: bool | None = None) -> tuple[str, ...]:
        """The package path of the normalized absolute ``directory`` (empty: no package);
        ``has_init``: whether it holds a regular file ``__init__.py``, when a walk's listing
        already says (None: look)."""
        known = self._prefixes.get(directory)
        if known is None:
            parent = os.path.dirname(directory)
            if has_init is None:
                has_init = os.path.isfile(os.path.join(directory, "__init__.py"))
            is_package = parent != directory and has_init
            known = (*self.prefix(parent), os.path.basename(directory)) if is_package else ()
            self._prefixes[directory] = known
        return known


def module_name_in_site(path: str, site_dir: str) -> tuple[str, bool]:
    relative = inside(os.path.abspath(path), os.path.abspath(site_dir))
    if relative is None:
        relative = os.path.relpath(path, site_dir)
    *folders, name = relative.split(os.sep)
    is_package = name == "__init__.py"
    parts = folders if is_package else [*folders, os.path.splitext(name)[0]]
    return ".".join(p for p in parts if p not in ("", ".")), is_package


def distinct_scripts(files: list[SourceFile]) -> list[SourceFile]:
    """Scripts outside any package that share a name (``a/train.py``, ``b/train.py``) each get
    a module name of their own, ``train@b``, so the second is analysed rather than dropped as
    a copy of the first. Such a name cannot be imported: which one ``import train`` means
    depends on ``sys.path``, which a static scan does not know. Two copies of one package
    (two projects' ``src/pkg``) keep one name here; the linker tells them apart by their
    package roots (``link/symbols.py``)."""
    first: set[str] = set()  # the names without a dot seen (a dotted one is never renamed)
    renamed = []
    for file in files:
        if "." in file.module:
            renamed.append(file)
            continue
        if file.is_package or file.module not in first:
            first.add(file.module)
            renamed.append(file)
            continue
        folder = os.path.dirname(file.display) or "."
        renamed.append(file._replace(module=f"{file.module}@{folder}"))
    return renamed
