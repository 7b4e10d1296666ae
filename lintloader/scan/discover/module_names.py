"""The module name of each scanned file: from the packages above it (``__init__.py`` files) in a
source tree, from its path below a site directory, and a name of its own for a script that
shares its file name with another one outside any package."""

from __future__ import annotations

import os
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
    """The package paths of :func:`module_name_for` over many directories, each a normalized
    absolute path: whether a directory is a package (and the package path above it) is looked
    up once per directory, not once per file in it (:func:`module_columns` names the files).
    A tree's walk asks it for its root only: below, a directory's package path is its parent's
    and its name (``scan/discover/paths.py``)."""

    def __init__(self) -> None:
        self._prefixes: dict[str, tuple[str, ...]] = {}

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
            above = self.prefix(parent) if is_package else ()
            known = self._prefixes[directory] = package_path(above, directory, is_package)
        return known


def package_path(above: tuple[str, ...], directory: str, has_init: bool) -> tuple[str, ...]:
    """The package path of ``directory`` (its path or name), whose parent's is ``above``:
    that and its name when it holds an ``__init__.py``, else none (the rule of
    :func:`module_name_for`, for a walk that knows the parent's)."""
    return (*above, os.path.basename(directory)) if has_init else ()


def module_columns(prefix: tuple[str, ...], names: list[str]) -> tuple[list[str], list[bool]]:
    """The module names of the files ``names`` of a directory whose package path is
    ``prefix``, and whether each is a package (its ``__init__.py``), as two columns: the
    package path is joined once, and each name costs one comprehension's step (a walk names
    every file of a tree this way)."""
    package = ".".join(prefix)
    head = package + "." if package else ""
    # the stem as ``Path(name).stem`` (a leading dot is no suffix's), inline: one step a name
    modules = [
        head + (name[:dot] if 0 < (dot := name.rfind(".")) < len(name) - 1 else name)
        for name in names
    ]
    packages = [False] * len(names)
    if "__init__.py" in names:
        at = names.index("__init__.py")
        modules[at], packages[at] = package or "__init__", True
    return modules, packages


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
    # the files whose module name has no dot, by their index (a dotted one is never renamed)
    scripts = [at for at, file in enumerate(files) if "." not in file.module]
    renamed = files
    first: set[str] = set()  # the names without a dot seen
    for at in scripts:
        file = files[at]
        if file.is_package or file.module not in first:
            first.add(file.module)
            continue
        if renamed is files:
            renamed = list(files)
        folder = os.path.dirname(file.display) or "."
        renamed[at] = file._replace(module=f"{file.module}@{folder}")
    return renamed
