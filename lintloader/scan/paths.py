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
SUFFIXES = (".py", NOTEBOOK_SUFFIX)  # the files a walk lists


@dataclass(frozen=True)
class _Scan:
    """What stays the same over the walks of one :func:`discover_paths`: the exclude patterns
    (and their matcher), the working directory, the cache, the module namer, and the discovery
    that receives the problems."""

    patterns: tuple[str, ...]
    excluded: Excluder
    cwd: str
    cache_dir: Path | None
    namer: ModuleNamer
    found: Discovery

    def walk_key(self, root: str, answer: GitAnswer | None) -> str:
        """The key of what a walk of ``root`` keeps (``scan/walk/named_files.py``)."""
        return walk_key(root, self.patterns, self.cwd, answer.tracked_output if answer else None)

    def tree_key(self, root: str, answer: GitAnswer | None) -> str:
        """The key of a snapshot of the whole walk of ``root`` (``scan/walk/snapshot.py``)."""
        return snapshot_key(self.walk_key(root, answer), self.namer.prefix(root))


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
    scan = _Scan(patterns, Excluder.of(patterns), cwd, cache_dir, ModuleNamer(), found)
    seen: set[str] = set()
    for raw in paths:
        path = os.path.join(cwd, raw) if not os.path.isabs(raw) else raw
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        found.roots.append(os.path.abspath(path))
        for files in _walk(scan, path):
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


def _walk(scan: _Scan, path: str) -> Iterator[list[SourceFile]]:
    """The files to scan below ``path``, a directory at a time, named, in ``os.walk`` order (a
    directory's files sorted, then its subdirectories, sorted, each in turn). One ``scandir``
    per directory: the file type comes with the listing, so a regular file costs no ``stat``
    here; a directory unchanged since an earlier walk is not listed again
    (``scan/walk/listings.py``), nor are its files named again (``scan/walk/named_files.py``)."""
    if os.path.islink(path) and not os.path.exists(path):
        scan.found.problems.append(FileProblem(display_path(path, scan.cwd), link_problem(path)))
        return
    root = os.path.abspath(path)
    if not os.path.isdir(path):  # an explicitly named file is scanned whatever its suffix
        yield _named(os.path.dirname(root), [(os.path.basename(root), root)], scan.namer, scan.cwd)
        return
    with GitFiles(path) as git:  # runs while the walk goes on (scan/git_files.py)
        remembered = _remembered_walk(scan, root, git)
        if remembered is not None:
            yield remembered
            return
        git.start_untracked()
        yield from _walk_tree(scan, root, git)


def _tree(root: str) -> str:
    """The scope of a tree's memos (not a site's listings)."""
    return f"{root}\0tree"


def _remembered_walk(scan: _Scan, root: str, git: GitFiles) -> list[SourceFile] | None:
    """The files of an earlier walk of ``root`` (``scan/walk/snapshot.py``) when its key still
    holds, the directories that changed since listed again; None: walk the tree. git's answer,
    part of the key, is waited for only when there is a snapshot."""
    loaded = load_snapshot(scan.cache_dir, _tree(root), root)
    if loaded is None:
        return None
    answer = git.result()
    key = scan.tree_key(root, answer)
    if loaded.key != key:
        return None
    snapshot = loaded.snapshot
    if not loaded.changed:
        return list(snapshot.files)
    patched = _patched(scan, root, snapshot, loaded.changed, answer)
    if patched is None:
        return None
    if patched.memorable:
        save_snapshot(scan.cache_dir, _tree(root), key, patched.snapshot)
    return list(patched.snapshot.files)


class _Patched(NamedTuple):
    snapshot: WalkSnapshot
    memorable: bool  # every directory listed again is remembered, and git tracks its files


def _patched(
    scan: _Scan, root: str, snapshot: WalkSnapshot, changed: list[int], answer: GitAnswer | None
) -> _Patched | None:
    """``snapshot`` with the ``changed`` directories listed and their files worked out again;
    None when one of them now has other subdirectories or another package path (or holds a
    link that does not resolve, or cannot be listed): the tree must be walked."""
    directories, slices = list(snapshot.directories), snapshot.slices()
    memorable, listings = True, ListingCache()  # listings: the racy rule, nothing stored
    for index in changed:
        walked = directories[index]
        listing = list_directory(walked.path, SUFFIXES, listings)
        if listing is None or listing.broken or scan.namer.prefix(walked.path) != walked.prefix:
            return None
        relative_dir = "" if walked.path == root else walked.path[len(root) + 1 :] + "/"
        if _subdirs(listing, relative_dir, scan.excluded) != walked.subdirs:
            return None
        # no link in it is broken: no problem is found
        entries = _wanted(scan, listing, relative_dir, answer)
        slices[index] = _named(walked.path, entries, scan.namer, scan.cwd)
        directories[index] = walked._replace(mtime_ns=listing.mtime_ns, files=len(slices[index]))
        memorable = memorable and _memorable(walked.path, listing, listings, answer)
    files = tuple(file for files in slices for file in files)
    return _Patched(WalkSnapshot(tuple(directories), files), memorable)


def _subdirs(listing: Listing, relative_dir: str, excluded: Excluder) -> tuple[str, ...]:
    """The paths of the subdirectories a walk goes into, in the listing's order."""
    return tuple(full for name, full in listing.subdirs if not excluded(relative_dir + name, name))


class _Listed(NamedTuple):
    """A directory the walk listed."""

    path: str  # normalized and absolute
    relative: str  # relative to the walk's root, with a trailing '/' ("" for the root)
    listing: Listing
    subdirs: tuple[str, ...]  # the paths of the subdirectories the walk goes into


class _Answered(NamedTuple):
    """git's answer (None: not in a work tree), the key of what the walk keeps (part of it),
    and what an earlier walk with that key kept."""

    git: GitAnswer | None
    key: str
    named: NamedFiles


class _Kept(NamedTuple):
    """What a walk keeps of one directory: its files, named; whether they can be remembered;
    the directory as a snapshot of the walk holds it."""

    files: list[SourceFile]
    memorable: bool
    walked: WalkedDirectory


def _walk_tree(scan: _Scan, root: str, git: GitFiles) -> Iterator[list[SourceFile]]:
    """:func:`_walk` below the directory ``root``. Directories walked before git has answered
    wait for its answer (a few tens of milliseconds); after that, each is filtered as it is
    walked. The walk is remembered whole when every directory of it can be."""
    listings = ListingCache.load(scan.cache_dir, _tree(root))
    answered: _Answered | None = None
    waiting: list[_Listed] = []
    kept: list[_Kept] = []
    problems = len(scan.found.problems)
    for listed, last in _listed_below(scan, root, listings):
        waiting.append(listed)
        if answered is None and (git.ready or last):
            answer = git.result()
            key = scan.walk_key(root, answer)
            answered = _Answered(answer, key, NamedFiles.load(scan.cache_dir, _tree(root), key))
        if answered is None:
            continue
        for folder in waiting:
            kept.append(_kept(scan, folder, answered, listings))
            yield kept[-1].files
        waiting.clear()
    listings.save()
    if answered is None:  # never: the last directory waits for git's answer
        return
    answered.named.save()
    if all(k.memorable for k in kept) and len(scan.found.problems) == problems:
        walked = tuple(k.walked for k in kept)
        files = tuple(file for k in kept for file in k.files)
        key = snapshot_key(answered.key, scan.namer.prefix(root))
        save_snapshot(scan.cache_dir, _tree(root), key, WalkSnapshot(walked, files))


def _listed_below(scan: _Scan, root: str, listings: ListingCache) -> Iterator[tuple[_Listed, bool]]:
    """Every directory of the tree at ``root`` that the walk goes into, listed, in
    ``os.walk`` order; with whether it is the last one. A directory unchanged since an earlier
    walk is not listed again (``listings``)."""
    # (directory, its path relative to ``root`` with a trailing '/'), from the normalized
    # absolute path: the paths below it come out normalized and absolute
    pending = [(root, "")]
    while pending:
        directory, relative_dir = pending.pop()
        listing = (
            listings.get(directory)
            or list_directory(directory, SUFFIXES, listings)
            or Listing(0, [], [])  # unreadable (or vanished): nothing in it, as os.walk does
        )
        subdirs = _subdirs(listing, relative_dir, scan.excluded)
        pending.extend(
            (full, f"{relative_dir}{full[len(directory) + 1 :]}/") for full in reversed(subdirs)
        )
        yield _Listed(directory, relative_dir, listing, subdirs), not pending


def _kept(scan: _Scan, folder: _Listed, answered: _Answered, listings: ListingCache) -> _Kept:
    """The files a walk keeps in one listed directory, named: as an earlier walk kept them
    when nothing they depend on changed, else worked out (and remembered when the listing is
    and git tracks every file in it: what git's slower answer says is not in the key)."""
    prefix = scan.namer.prefix(folder.path)
    listing = folder.listing
    files = answered.named.get(folder.path, listing, prefix)
    memorable = files is not None
    if files is None:
        entries = _wanted(scan, listing, folder.relative, answered.git)
        files = _named(folder.path, entries, scan.namer, scan.cwd)
        memorable = _memorable(folder.path, listing, listings, answered.git)
        if memorable:
            answered.named.put(folder.path, listing, prefix, files)
    walked = WalkedDirectory(folder.path, listing.mtime_ns, folder.subdirs, prefix, len(files))
    return _Kept(files, memorable, walked)


def _memorable(
    directory: str, listing: Listing, listings: ListingCache, answer: GitAnswer | None
) -> bool:
    """Whether what a walk made of ``directory`` can be remembered: its listing is (see
    ``scan/walk/listings.py``), and git tracks every file in it (whether git ignores an
    untracked file is not in the key)."""
    remembered = listings.fresh.get(directory) is listing
    return remembered and (answer is None or all(answer.tracks(p) for _, p in listing.files))


def _wanted(
    scan: _Scan, listing: Listing, relative_dir: str, answer: GitAnswer | None
) -> list[tuple[str, str]]:
    """The (name, path) of a listed directory's files that the walk scans: not excluded, and
    listed by git (inside a work tree); a link among them that does not resolve is a problem."""
    wanted = [
        (name, full)
        for name, full in listing.files
        if not scan.excluded(relative_dir + name, name) and (answer is None or answer.keeps(full))
    ]
    for _, full in wanted:
        if full in listing.broken:
            problem = FileProblem(display_path(full, scan.cwd), link_problem(full))
            scan.found.problems.append(problem)
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
