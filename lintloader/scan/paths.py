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
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from lintloader.scan.escape import printable
from lintloader.scan.git_files import GitAnswer, GitFiles
from lintloader.scan.model import (
    NOTEBOOK_SUFFIX,
    Discovery,
    DiscoveryError,
    FileProblem,
    SourceFile,
)
from lintloader.scan.walk.listings import Listing, ListingCache
from lintloader.scan.walk.named_files import NamedFiles, walk_key
from lintloader.scan.walk.snapshot import (
    WalkedDirectory,
    WalkSnapshot,
    load_snapshot,
    save_snapshot,
    snapshot_key,
)

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


@dataclass(frozen=True)
class Excluder:
    """:func:`is_excluded` for a walk that checks each path as it goes down: the components
    above a path were checked on the way, so only its last component and the whole path are
    matched, each against all patterns at once."""

    name: Callable[[str], bool]
    whole: Callable[[str], bool]

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Excluder:
        matcher = name_matcher(patterns)
        return cls(matcher, matcher)

    def __call__(self, relative: str, name: str) -> bool:
        return self.name(name) or self.whole(relative)


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
        is_package = name == "__init__.py"
        dot = name.rfind(".")
        stem = name[:dot] if 0 < dot < len(name) - 1 else name  # as Path.stem
        parts = self.prefix(directory) + (() if is_package else (stem,))
        return ".".join(parts) or stem, is_package

    def prefix(self, directory: str) -> tuple[str, ...]:
        """The package path of the normalized absolute ``directory`` (empty: no package)."""
        known = self._prefixes.get(directory)
        if known is None:
            parent = os.path.dirname(directory)
            is_package = parent != directory and os.path.isfile(
                os.path.join(directory, "__init__.py")
            )
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


# -- source trees ------------------------------------------------------------------------------
def discover_paths(
    paths: Iterable[str],
    excludes: Iterable[str] = (),
    cwd: str | None = None,
    on_found: Callable[[int], None] | None = None,
    cache_dir: Path | None = None,
) -> Discovery:
    """The files to scan below ``paths``; ``on_found(count)`` is told of each file found (a
    progress line: a root such as ``/`` takes minutes to walk); directory listings are
    remembered under ``cache_dir`` (None: not remembered)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    found = Discovery()
    seen: set[str] = set()
    module_name = ModuleNamer()
    for raw in paths:
        path = os.path.join(cwd, raw) if not os.path.isabs(raw) else raw
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        found.roots.append(os.path.abspath(path))
        for files in _walk(path, patterns, found, cwd, cache_dir, module_name):
            for file in files:
                if file.path in seen:
                    continue
                seen.add(file.path)
                found.files.append(file)
                if on_found is not None:
                    on_found(len(found.files))
    found.files = distinct_scripts(found.files)
    return found


def _named(
    directory: str, entries: list[tuple[str, str]], namer: ModuleNamer, cwd: str
) -> list[SourceFile]:
    """The files (name, path) of the normalized absolute ``directory``, named."""
    relative = inside(directory, cwd)  # display_path, for a path known to be absolute
    shown = os.path.join(directory if relative is None else relative, "")
    shown = "" if shown == "./" else shown
    files = []
    for name, path in entries:
        module, is_package = namer.named(directory, name)
        files.append(SourceFile(path, module, is_package, printable(shown + name)))
    return files


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


def _walk(
    path: str,
    patterns: tuple[str, ...],
    found: Discovery,
    cwd: str,
    cache_dir: Path | None,
    namer: ModuleNamer,
) -> Iterator[list[SourceFile]]:
    """The files to scan below ``path``, a directory at a time, named, in ``os.walk`` order (a
    directory's files sorted, then its subdirectories, sorted, each in turn). One ``scandir``
    per directory: the file type comes with the listing, so a regular file costs no ``stat``
    here; a directory unchanged since an earlier walk is not listed again
    (``scan/walk/listings.py``), nor are its files named again (``scan/walk/named_files.py``)."""
    if os.path.islink(path) and not os.path.exists(path):
        found.problems.append(FileProblem(display_path(path, cwd), link_problem(path)))
        return
    if not os.path.isdir(path):
        named = os.path.abspath(path)  # an explicitly named file is scanned whatever its suffix
        directory = os.path.dirname(named)
        yield _named(directory, [(os.path.basename(named), named)], namer, cwd)
        return
    with GitFiles(path) as git:  # runs while the walk goes on (scan/git_files.py)
        remembered = _remembered_walk(path, patterns, cwd, cache_dir, git, namer)
        if remembered is not None:
            yield remembered
            return
        git.start_untracked()
        yield from _walk_tree(path, patterns, found, cwd, cache_dir, git, namer)


def _remembered_walk(
    path: str,
    patterns: tuple[str, ...],
    cwd: str,
    cache_dir: Path | None,
    git: GitFiles,
    namer: ModuleNamer,
) -> list[SourceFile] | None:
    """The files of an earlier walk of ``path`` (``scan/walk/snapshot.py``) when its key still
    holds, the directories that changed since listed again; None: walk the tree. git's answer,
    part of the key, is waited for only when there is a snapshot."""
    root = os.path.abspath(path)
    tree = f"{root}\0tree"
    loaded = load_snapshot(cache_dir, tree, root)
    if loaded is None:
        return None
    answer = git.result()
    key = snapshot_key(
        walk_key(root, patterns, cwd, answer.tracked_output if answer else None),
        namer.prefix(root),
    )
    if loaded.key != key:
        return None
    snapshot = loaded.snapshot
    if not loaded.changed:
        return list(snapshot.files)
    patched = _patched(snapshot, loaded.changed, root, patterns, answer, cwd, namer)
    if patched is None:
        return None
    if patched.memorable:
        save_snapshot(cache_dir, tree, key, patched.snapshot)
    return list(patched.snapshot.files)


class _Patched(NamedTuple):
    snapshot: WalkSnapshot
    memorable: bool  # every directory listed again is remembered, and git tracks its files


def _patched(
    snapshot: WalkSnapshot,
    changed: list[int],
    root: str,
    patterns: tuple[str, ...],
    answer: GitAnswer | None,
    cwd: str,
    namer: ModuleNamer,
) -> _Patched | None:
    """``snapshot`` with the ``changed`` directories listed and their files worked out again;
    None when one of them now has other subdirectories or another package path (or holds a
    link that does not resolve, or cannot be listed): the tree must be walked."""
    excluded = Excluder.of(patterns)
    directories, slices = list(snapshot.directories), snapshot.slices()
    memorable, listings = True, ListingCache()  # listings: the racy rule, nothing stored
    for index in changed:
        walked = directories[index]
        listing = list_directory(walked.path, (".py", NOTEBOOK_SUFFIX), listings)
        if listing is None or listing.broken or namer.prefix(walked.path) != walked.prefix:
            return None
        relative_dir = "" if walked.path == root else walked.path[len(root) + 1 :] + "/"
        if _subdirs(listing, relative_dir, excluded) != walked.subdirs:
            return None
        entries = _wanted(listing, relative_dir, excluded, answer, Discovery(), cwd)
        slices[index] = _named(walked.path, entries, namer, cwd)
        directories[index] = walked._replace(mtime_ns=listing.mtime_ns, files=len(slices[index]))
        memorable = memorable and _memorable(walked.path, listing, listings, answer)
    files = tuple(file for files in slices for file in files)
    return _Patched(WalkSnapshot(tuple(directories), files), memorable)


def _subdirs(listing: Listing, relative_dir: str, excluded: Excluder) -> tuple[str, ...]:
    """The paths of the subdirectories a walk goes into, in the listing's order."""
    return tuple(full for name, full in listing.subdirs if not excluded(relative_dir + name, name))


def _walk_tree(
    path: str,
    patterns: tuple[str, ...],
    found: Discovery,
    cwd: str,
    cache_dir: Path | None,
    git: GitFiles,
    namer: ModuleNamer,
) -> Iterator[list[SourceFile]]:
    """:func:`_walk` below a directory. Directories walked before git has answered wait for
    its answer (a few tens of milliseconds); after that, each is filtered as it is walked."""
    excluded = Excluder.of(patterns)
    root = os.path.abspath(path)
    listings = ListingCache.load(cache_dir, f"{root}\0tree")  # not a site's listings
    asking: GitFiles | None = git
    listed: GitAnswer | None = None
    named = NamedFiles("")  # loaded once git's answer, part of its key, is in
    key = ""
    waiting: list[tuple[str, str, Listing, tuple[str, ...]]] = []
    walked: list[WalkedDirectory] = []  # for a snapshot of the whole walk
    kept: list[SourceFile] = []
    whole = True  # whether this walk can be remembered whole
    problems = len(found.problems)
    # (directory, its path relative to ``path`` with a trailing '/'), from the normalized
    # absolute path: the paths below it come out normalized and absolute
    pending = [(root, "")]
    while pending:
        directory, relative_dir = pending.pop()
        listing = (
            listings.get(directory)
            or list_directory(directory, (".py", NOTEBOOK_SUFFIX), listings)
            or Listing(0, [], [])  # unreadable (or vanished): nothing in it, as os.walk does
        )
        subdirs = _subdirs(listing, relative_dir, excluded)
        waiting.append((directory, relative_dir, listing, subdirs))
        pending.extend(
            (full, f"{relative_dir}{full[len(directory) + 1 :]}/") for full in reversed(subdirs)
        )
        if asking is not None and (asking.ready or not pending):
            listed, asking = asking.result(), None
            key = walk_key(root, patterns, cwd, listed.tracked_output if listed else None)
            named = NamedFiles.load(cache_dir, f"{root}\0tree", key)
        if asking is None:
            for folder, relative, held, inner in waiting:
                prefix = namer.prefix(folder)
                files, memorable = _kept(
                    folder, relative, held, prefix, excluded, listed, found, cwd, namer, named,
                    listings,
                )  # fmt: skip
                walked.append(WalkedDirectory(folder, held.mtime_ns, inner, prefix, len(files)))
                whole = whole and memorable
                kept.extend(files)
                yield files
            waiting.clear()
    listings.save()
    named.save()
    if whole and len(found.problems) == problems:
        tree_key = snapshot_key(key, namer.prefix(root))
        save_snapshot(
            cache_dir, f"{root}\0tree", tree_key, WalkSnapshot(tuple(walked), tuple(kept))
        )


def _kept(
    directory: str,
    relative_dir: str,
    listing: Listing,
    prefix: tuple[str, ...],
    excluded: Excluder,
    listed: GitAnswer | None,
    found: Discovery,
    cwd: str,
    namer: ModuleNamer,
    named: NamedFiles,
    listings: ListingCache,
) -> tuple[list[SourceFile], bool]:
    """The files a walk keeps in one listed directory, named: as an earlier walk kept them
    when nothing they depend on changed, else worked out (and remembered when the listing is
    and git tracks every file in it: what git's slower answer says is not in the key).
    Also whether they can be remembered. ``prefix``: the directory's package path."""
    files = named.get(directory, listing, prefix)
    if files is not None:
        return files, True
    entries = _wanted(listing, relative_dir, excluded, listed, found, cwd)
    files = _named(directory, entries, namer, cwd)
    memorable = _memorable(directory, listing, listings, listed)
    if memorable:
        named.put(directory, listing, prefix, files)
    return files, memorable


def _memorable(
    directory: str, listing: Listing, listings: ListingCache, answer: GitAnswer | None
) -> bool:
    """Whether what a walk made of ``directory`` can be remembered: its listing is (see
    ``scan/walk/listings.py``), and git tracks every file in it (whether git ignores an
    untracked file is not in the key)."""
    remembered = listings.fresh.get(directory) is listing
    return remembered and (answer is None or all(answer.tracks(p) for _, p in listing.files))


def _wanted(
    listing: Listing,
    relative_dir: str,
    excluded: Excluder,
    listed: GitAnswer | None,
    found: Discovery,
    cwd: str,
) -> list[tuple[str, str]]:
    """The (name, path) of a listed directory's files that the walk scans: not excluded, and
    listed by git (inside a work tree); a link among them that does not resolve is a problem."""
    wanted = [
        (name, full)
        for name, full in listing.files
        if not excluded(relative_dir + name, name) and (listed is None or listed.keeps(full))
    ]
    for _, full in wanted:
        if full in listing.broken:
            found.problems.append(FileProblem(display_path(full, cwd), link_problem(full)))
    return [entry for entry in wanted if entry[1] not in listing.broken]


def list_directory(
    directory: str, suffixes: tuple[str, ...], listings: ListingCache
) -> Listing | None:
    """List ``directory`` for a walk and give the listing to ``listings``: its subdirectories
    that are not links, sorted, and its files ending in one of ``suffixes``, sorted, that are
    regular files (through a link too) or links that do not resolve (also in ``broken``: each
    is a problem where the walk wants the file). None for a directory that cannot be listed.
    File types come with the listing: only links cost a ``stat``."""
    try:
        mtime: int | None = os.stat(directory).st_mtime_ns  # before listing: see listings.py
    except OSError:
        mtime = None
    subdirs: list[tuple[str, str]] = []
    candidates: list[os.DirEntry[str]] = []
    linked = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    linked = linked or entry.is_symlink()
                    if not entry.is_symlink():
                        subdirs.append((entry.name, entry.path))
                elif entry.name.endswith(suffixes):
                    candidates.append(entry)
                    linked = linked or entry.is_symlink()
    except OSError:
        return None
    candidates.sort(key=lambda entry: entry.name)
    broken = {e.path for e in candidates if e.is_symlink() and not os.path.exists(e.path)}
    files = [(e.name, e.path) for e in candidates if e.path in broken or _is_file(e)]
    listing = Listing(mtime or 0, sorted(subdirs), files, frozenset(broken))
    listings.put(directory, mtime, None if linked else listing)
    return listing


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def link_problem(path: str) -> str:
    """Why a symbolic link that does not resolve cannot be read."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return f"broken symbolic link (target {os.readlink(path)!r} does not exist)"
