"""Source trees: which files to scan below the paths given, and what module name each has.

Files and directories given on the command line, minus default excludes, user excludes and
(inside a git work tree) whatever ``.gitignore`` ignores. Installed packages are found by
:mod:`lintloader.scan.site_packages`.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lintloader.scan.escape import printable
from lintloader.scan.model import Discovery, DiscoveryError, FileProblem, SourceFile
from lintloader.scan.notebooks import SUFFIX as NOTEBOOK_SUFFIX

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".lintloader_cache",
)


def inside(absolute: str, anchor: str) -> str | None:
    """``absolute`` relative to ``anchor`` when it lies inside it, else None. Both are
    normalized absolute paths, so this is string slicing (``os.path.relpath`` per file costs a
    third of a second over a site-packages)."""
    if absolute == anchor:
        return "."
    prefix = anchor.rstrip(os.sep) + os.sep
    return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def display_path(path: str, cwd: str, base: str | None = None) -> str:
    """Relative to the working directory when inside it, else to ``base`` (a site dir);
    undecodable bytes and control characters escaped (see :mod:`lintloader.scan.escape`)."""
    absolute = os.path.abspath(path)
    for anchor in (cwd, base):
        relative = inside(absolute, anchor) if anchor else None
        if relative is not None:
            return printable(relative)
    return printable(absolute)


def is_excluded(relative: str, patterns: Iterable[str]) -> bool:
    """``relative`` uses '/' separators; a pattern matches any path component or the path."""
    parts = relative.split("/")
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(relative, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return True
    return False


def name_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """Whether one path component matches any of the glob ``patterns`` (what
    :func:`is_excluded` answers for a one-component path), as one compiled expression."""
    expression = "|".join(fnmatch.translate(os.path.normcase(p.rstrip("/"))) for p in patterns)
    if not expression:
        return lambda name: False
    match = re.compile(expression).match
    return lambda name: match(os.path.normcase(name)) is not None


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


def module_name_in_site(path: str, site_dir: str) -> tuple[str, bool]:
    relative = inside(os.path.abspath(path), os.path.abspath(site_dir))
    if relative is None:
        relative = os.path.relpath(path, site_dir)
    *folders, name = relative.split(os.sep)
    is_package = name == "__init__.py"
    parts = folders if is_package else [*folders, os.path.splitext(name)[0]]
    return ".".join(p for p in parts if p not in ("", ".")), is_package


# -- source trees ------------------------------------------------------------------------------
def discover_paths(
    paths: Iterable[str], excludes: Iterable[str] = (), cwd: str | None = None
) -> Discovery:
    cwd = os.path.abspath(cwd or os.getcwd())
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    found = Discovery()
    seen: set[str] = set()
    for raw in paths:
        path = os.path.join(cwd, raw) if not os.path.isabs(raw) else raw
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        found.roots.append(os.path.abspath(path))
        for candidate in _walk(path, patterns, found, cwd):
            key = os.path.abspath(candidate)
            if key in seen:
                continue
            seen.add(key)
            module, is_package = module_name_for(candidate)
            found.files.append(SourceFile(key, module, is_package, display_path(key, cwd)))
    found.files = distinct_scripts(found.files)
    return found


def distinct_scripts(files: list[SourceFile]) -> list[SourceFile]:
    """Scripts outside any package that share a name (``a/train.py``, ``b/train.py``) each get
    a module name of their own, ``train@b``, so the second is analysed rather than dropped as
    a copy of the first. Such a name cannot be imported: which one ``import train`` means
    depends on ``sys.path``, which a static scan does not know. Two copies of one package
    (``src/pkg`` and an installed ``pkg``) keep one name: the first found is used."""
    first: set[str] = set()
    renamed = []
    for file in files:
        if "." in file.module or file.is_package or file.module not in first:
            first.add(file.module)
            renamed.append(file)
            continue
        folder = os.path.dirname(file.display) or "."
        renamed.append(file._replace(module=f"{file.module}@{folder}"))
    return renamed


def _walk(path: str, patterns: tuple[str, ...], found: Discovery, cwd: str) -> Iterator[str]:
    if os.path.islink(path) and not os.path.exists(path):
        found.problems.append(FileProblem(display_path(path, cwd), link_problem(path)))
        return
    if not os.path.isdir(path):
        yield path  # an explicitly named file is scanned whatever its suffix
        return
    listed = _git_listed(path)
    for directory, dirnames, filenames in os.walk(path, followlinks=False):
        relative_dir = os.path.relpath(directory, path).replace(os.sep, "/")
        relative_dir = "" if relative_dir == "." else relative_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(relative_dir + d, patterns))
        for name in sorted(filenames):
            if not name.endswith((".py", NOTEBOOK_SUFFIX)):
                continue
            full = os.path.join(directory, name)
            relative = relative_dir + name
            if is_excluded(relative, patterns):
                continue
            if listed is not None and os.path.abspath(full) not in listed:
                continue
            if os.path.islink(full) and not os.path.exists(full):
                found.problems.append(FileProblem(display_path(full, cwd), link_problem(full)))
                continue
            if os.path.isfile(full):
                yield full


def link_problem(path: str) -> str:
    """Why a symbolic link that does not resolve cannot be read."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return f"broken symbolic link (target {os.readlink(path)!r} does not exist)"


def _git_listed(directory: str) -> set[str] | None:
    """Files git does not ignore below ``directory`` (tracked or not), or None outside git."""
    import subprocess  # imported when used: a warm --site-packages run never starts one

    from lintloader.scan.process_group import run_grouped

    try:
        result = run_grouped(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            timeout=60,
            cwd=directory,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    root = os.path.abspath(directory)
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {os.path.abspath(os.path.join(root, n)) for n in names if n}
