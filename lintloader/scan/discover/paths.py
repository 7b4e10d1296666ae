"""Source trees: which files to scan below the paths given, and what module name each has.

Files and directories given on the command line, minus default excludes, user excludes and
(inside a git work tree) whatever ``.gitignore`` ignores. Installed packages are found by
:mod:`lintloader.scan.environment.site_packages`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.pending import PendingStores
from lintloader.scan.discover.directories import link_problem, list_directory
from lintloader.scan.discover.display import display_path, inside
from lintloader.scan.discover.escape import printable
from lintloader.scan.discover.excludes import DEFAULT_EXCLUDES, Entries, Excluder
from lintloader.scan.discover.git_files import GitAnswer, GitFiles
from lintloader.scan.discover.module_names import (
    ModuleNamer,
    distinct_scripts,
    module_columns,
    package_path,
)
from lintloader.scan.discover.walk.listings import Listing, ListingCache
from lintloader.scan.discover.walk.tree_memo import (
    MemoDirectory,
    NamedFiles,
    TreeMemo,
    changed_directories,
    load_memo,
    memo_directory,
    save_memo,
    shown_from,
    walk_key,
)
from lintloader.scan.model import (
    NOTEBOOK_SUFFIX,
    Discovery,
    DiscoveryError,
    FileProblem,
    SourceFile,
)

# -- source trees ------------------------------------------------------------------------------
SUFFIXES = (".py", NOTEBOOK_SUFFIX)  # the files a walk lists


@dataclass(frozen=True, eq=False)
class _Scan:
    """What stays the same over the walks of one :func:`discover_paths`: the exclude patterns
    (and their matcher), the working directory, the cache, the module namer, and the discovery
    that receives the problems."""

    patterns: tuple[str, ...]
    excluded: Excluder
    files_excluded: Excluder  # ``excluded`` for the files a walk lists (their suffixes)
    cwd: str
    cache_dir: Path | None
    namer: ModuleNamer
    found: Discovery

    def walk_key(self, root: str, answer: GitAnswer | None) -> str:
        """The key of what a walk of ``root`` keeps (``scan/discover/walk/tree_memo.py``)."""
        return walk_key(root, self.patterns, answer.tracked_output if answer else None)


def discover_paths(
    paths: Iterable[str],
    excludes: Iterable[str] = (),
    cwd: str | None = None,
    on_found: Callable[[int], None] | None = None,
    cache_dir: Path | None = None,
    defer_stores: bool = False,
) -> Discovery:
    """The files to scan below ``paths``; ``on_found(count)`` is told of each file found (a
    progress line: a root such as ``/`` takes minutes to walk); directory listings are
    remembered under ``cache_dir`` (None: not remembered), at once or, with
    ``defer_stores``, when the check writes the discovery's ``stores``."""
    cwd = os.path.abspath(cwd or os.getcwd())
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    found = Discovery(stores=PendingStores(defer_stores))
    excluded, files_excluded = Excluder.of(patterns), Excluder.of(patterns, SUFFIXES)
    scan = _Scan(patterns, excluded, files_excluded, cwd, cache_dir, ModuleNamer(), found)
    seen: set[str] = set()
    given = list(paths)
    single = len(given) == 1
    for raw in given:
        path = os.path.join(cwd, raw) if not os.path.isabs(raw) else raw
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        found.roots.append(os.path.abspath(path))
        for files in _walk(scan, path):
            if single and on_found is None:  # made distinct below, at once
                found.files.extend(files)
                continue
            for file in files:
                if file.path in seen:
                    continue
                seen.add(file.path)
                found.files.append(file)
                if on_found is not None:
                    on_found(len(found.files))
    if single and on_found is None:
        found.files = _first_of_each_path(found.files)
    found.files = distinct_scripts(found.files)
    return found


def _first_of_each_path(files: list[SourceFile]) -> list[SourceFile]:
    """``files`` without a path that came earlier (a walk lists each file once, but what a
    memo read back from disk holds is not trusted to)."""
    if len(set(map(itemgetter(0), files))) == len(files):  # their paths
        return files
    first: dict[str, SourceFile] = {}
    for file in files:
        first.setdefault(file.path, file)
    return list(first.values())


def _named(entries: Entries, prefix: tuple[str, ...], shown: str) -> list[SourceFile]:
    """The files (name, path) of a directory whose package path is ``prefix`` and whose files'
    display paths start with ``shown``, named: by columns (the names, the module names, the
    package flags, the display paths), each made for the whole directory, and the rows made
    from them by C code."""
    if not entries:
        return []
    names = [name for name, _ in entries]
    modules, packages = module_columns(prefix, names)
    displays = _displays(shown, names)
    paths = [path for _, path in entries]
    return list(map(_new, repeat(SourceFile), zip(paths, modules, packages, displays, strict=True)))


# a named tuple made from all its fields at once, without its generated ``__new__``
_new = tuple.__new__


def _displays(shown: str, names: list[str]) -> list[str]:
    """The display paths of the files ``names`` of a directory whose files' display paths
    start with ``shown`` (escaped where a name, or ``shown``, does not print as it is)."""
    if shown.isprintable() and "".join(names).isprintable():
        return [shown + name for name in names]
    return [printable(shown + name) for name in names]


def _shown(directory: str, cwd: str) -> str:
    """What the display paths of the files of ``directory`` start with (display_path, for a
    normalized absolute path)."""
    relative = inside(directory, cwd)
    shown = os.path.join(directory if relative is None else relative, "")
    return "" if shown == "./" else shown


def _walk(scan: _Scan, path: str) -> Iterator[list[SourceFile]]:
    """The files to scan below ``path``, a directory at a time, named, in ``os.walk`` order (a
    directory's files sorted, then its subdirectories, sorted, each in turn). One ``scandir``
    per directory: the file type comes with the listing, so a regular file costs no ``stat``
    here; a directory unchanged since an earlier walk is not listed again, nor are its files
    named again, and an unchanged walk is taken whole (``scan/discover/walk/tree_memo.py``)."""
    if os.path.islink(path) and not os.path.exists(path):
        scan.found.problems.append(FileProblem(display_path(path, scan.cwd), link_problem(path)))
        return
    root = os.path.abspath(path)
    if not os.path.isdir(path):  # an explicitly named file is scanned whatever its suffix
        directory = os.path.dirname(root)
        entries = [(os.path.basename(root), root)]
        yield _named(entries, scan.namer.prefix(directory), _shown(directory, scan.cwd))
        return
    with GitFiles(path) as git:  # runs while the walk goes on (scan/discover/git_files.py)
        memo = load_memo(scan.cache_dir, _tree(root), root)
        memo = shown_from(memo, scan.cwd, _shown) if memo is not None else None
        remembered = _remembered_walk(scan, root, git, memo)
        if remembered is not None:
            yield remembered
            return
        yield from _walk_tree(scan, root, git, memo)


def _tree(root: str) -> str:
    """The scope of a tree's memo (not a site's listings)."""
    return f"{root}\0tree"


def _remembered_walk(
    scan: _Scan, root: str, git: GitFiles, memo: TreeMemo | None
) -> list[SourceFile] | None:
    """The files of an earlier walk of ``root`` when ``memo`` holds it whole and its key still
    holds, the directories that changed since listed again; None: walk the tree. git's
    answer, part of the key, is waited for only when there is such a memo."""
    if memo is None or not memo.whole:
        return None
    changed = changed_directories(memo)
    if changed is None:
        return None
    answer = git.result()
    if memo.key != scan.walk_key(root, answer) or memo.root_prefix != scan.namer.prefix(root):
        return None
    if changed:
        patched = _patched(scan, root, memo, changed, answer)
        if patched is None:
            return None
        memo = patched.memo
        if patched.memorable:
            scan.found.stores.add(partial(save_memo, scan.cache_dir, _tree(root), memo))
    return [file for directory in memo.directories for file in directory.kept()]


class _Patched(NamedTuple):
    memo: TreeMemo
    memorable: bool  # every directory listed again is remembered, and git tracks its files


def _patched(
    scan: _Scan, root: str, memo: TreeMemo, changed: list[int], answer: GitAnswer | None
) -> _Patched | None:
    """``memo`` with the ``changed`` directories listed and their files worked out again;
    None when one of them now has other subdirectories or another package path (or holds a
    link that does not resolve, or cannot be listed): the tree must be walked."""
    directories = list(memo.directories)
    memorable, listings = True, ListingCache()  # listings: the racy rule, nothing stored
    for index in changed:
        stored = directories[index]
        listing = list_directory(stored.path, SUFFIXES, listings)
        if listing is None or listing.broken or scan.namer.prefix(stored.path) != stored.prefix:
            return None
        relative_dir = "" if stored.path == root else stored.path[len(root) + 1 :] + "/"
        walked_into = _subdirs(stored.listing(), relative_dir, scan.excluded)
        if _subdirs(listing, relative_dir, scan.excluded) != walked_into:
            return None
        # no link in it is broken: no problem is found
        entries = _wanted(scan, listing, relative_dir, answer)
        files = _named(entries, stored.prefix, _shown(stored.path, scan.cwd))
        named = tuple(files)
        directories[index] = memo_directory(listing, stored.path, stored.prefix, named)
        memorable = memorable and _memorable(stored.path, listing, listings, answer)
    return _Patched(memo._replace(directories=tuple(directories)), memorable)


def _subdirs(listing: Listing, relative_dir: str, excluded: Excluder) -> tuple[str, ...]:
    """The paths of the subdirectories a walk goes into, in the listing's order."""
    return tuple([full for _, full in excluded.kept(listing.subdirs, relative_dir)])


class _Listed(NamedTuple):
    """A directory the walk listed."""

    path: str  # normalized and absolute
    relative: str  # relative to the walk's root, with a trailing '/' ("" for the root)
    listing: Listing
    prefix: tuple[str, ...]  # its package path
    shown: str  # what the display paths of its files start with


class _Answered(NamedTuple):
    """git's answer (None: not in a work tree), the key of what the walk keeps (part of it),
    and what an earlier walk with that key kept."""

    git: GitAnswer | None
    key: str
    named: NamedFiles


class _Kept(NamedTuple):
    """What a walk keeps of one directory: its files, named; whether they can be remembered;
    the directory as listed, and its package path."""

    files: list[SourceFile]
    memorable: bool
    folder: _Listed
    prefix: tuple[str, ...]


def _walk_tree(
    scan: _Scan, root: str, git: GitFiles, memo: TreeMemo | None
) -> Iterator[list[SourceFile]]:
    """:func:`_walk` below the directory ``root``. Directories walked before git has answered
    wait for its answer (a few tens of milliseconds); after that, each is filtered as it is
    walked. What the walk made of each directory is remembered (:func:`_remembered`), and
    the walk whole when every directory of it is."""
    known = {d.path: d.listing() for d in memo.directories} if memo else {}
    listings = ListingCache(_tree(root), known=known)  # stored in the tree's memo
    answered: _Answered | None = None
    waiting: list[_Listed] = []
    kept: list[_Kept] = []
    problems = len(scan.found.problems)
    for listed, last in _listed_below(scan, root, listings):
        waiting.append(listed)
        if answered is None and (git.ready or last):
            answer = git.result()
            key = scan.walk_key(root, answer)
            answered = _Answered(answer, key, NamedFiles.of(memo, key))
        if answered is None:
            continue
        for folder in waiting:
            kept.append(_kept(scan, folder, answered, listings))
            if kept[-1].files:  # a directory without files to scan (4 in 10) is not yielded
                yield kept[-1].files
        waiting.clear()
    if answered is None or scan.cache_dir is None:  # None: never (the last one waits for git)
        return
    whole = all(k.memorable for k in kept) and len(scan.found.problems) == problems
    head = TreeMemo(answered.key, scan.cwd, scan.namer.prefix(root), whole, ())
    walked = _Walked(scan.cache_dir, _tree(root), memo, head, kept, answered, listings)
    scan.found.stores.add(walked.save)


@dataclass(frozen=True, eq=False)
class _Walked:
    """What a tree's walk made, to be remembered as its memo: made and stored by
    :meth:`save`, which the check may leave to another process (``cache/pending.py``)."""

    cache_dir: Path
    tree: str
    before: TreeMemo | None  # the memo the walk started from
    head: TreeMemo  # the new memo but its directories (``whole``: if every one is remembered)
    kept: list[_Kept]
    answered: _Answered
    listings: ListingCache

    def save(self) -> None:
        directories = _remembered(self.kept, self.answered, self.listings)
        whole = self.head.whole and len(directories) == len(self.kept)
        now = self.head._replace(whole=whole, directories=directories)
        if now != self.before:
            save_memo(self.cache_dir, self.tree, now)


def _remembered(
    kept: list[_Kept], answered: _Answered, listings: ListingCache
) -> tuple[MemoDirectory, ...]:
    """What a walk remembers of its directories: each whose listing is remembered, with the
    files it kept there when they can be remembered."""
    return tuple(
        memo_directory(k.folder.listing, k.folder.path, k.prefix, answered.named.fresh.get(path))
        for k in kept
        if listings.fresh.get(path := k.folder.path) is k.folder.listing
    )


def _listed_below(scan: _Scan, root: str, listings: ListingCache) -> Iterator[tuple[_Listed, bool]]:
    """Every directory of the tree at ``root`` that the walk goes into, listed, in
    ``os.walk`` order; with whether it is the last one. A directory unchanged since an earlier
    walk is not listed again (``listings``). Below the root, a directory's package path and
    display prefix are its parent's and its name (the root's own are looked up once)."""
    # (directory, its path relative to ``root`` with a trailing '/', its name, its parent's
    # package path), from the normalized absolute path: the paths below it come out
    # normalized and absolute
    pending: list[tuple[str, str, str, tuple[str, ...] | None]] = [(root, "", "", None)]
    # the display prefix of a directory below the root is the root's and its relative path,
    # unless the working directory lies below the root: then it is looked up for each
    below = inside(scan.cwd, root) not in (None, ".")
    top = None if below else _shown(root, scan.cwd)
    while pending:
        directory, relative_dir, name, above = pending.pop()
        listing = (
            listings.get(directory)
            or list_directory(directory, SUFFIXES, listings)
            or Listing(0, [], [])  # unreadable (or vanished): nothing in it, as os.walk does
        )
        has_init = _has_init(directory, listing)
        if above is None:
            prefix = scan.namer.prefix(directory, has_init)
        else:
            prefix = package_path(above, name, has_init)
        shown = _shown(directory, scan.cwd) if top is None else top + relative_dir
        subdirs = scan.excluded.kept(listing.subdirs, relative_dir)
        pending.extend(
            [(full, f"{relative_dir}{child}/", child, prefix) for child, full in reversed(subdirs)]
        )
        yield _Listed(directory, relative_dir, listing, prefix, shown), not pending


def _kept(scan: _Scan, folder: _Listed, answered: _Answered, listings: ListingCache) -> _Kept:
    """The files a walk keeps in one listed directory, named: as an earlier walk kept them
    when nothing they depend on changed, else worked out (and remembered when the listing is
    and git tracks every file in it: what git's slower answer says is not in the key)."""
    listing, prefix = folder.listing, folder.prefix
    files = answered.named.get(folder.path, listing, prefix)
    memorable = files is not None
    if files is None:
        entries = _wanted(scan, listing, folder.relative, answered.git)
        files = _named(entries, prefix, folder.shown)
        # nothing is remembered without a cache
        memorable = scan.cache_dir is not None and _memorable(
            folder.path, listing, listings, answered.git
        )
        if memorable:
            answered.named.put(folder.path, files)
    return _Kept(files, memorable, folder, prefix)


def _has_init(directory: str, listing: Listing) -> bool:
    """Whether the listed ``directory`` holds a regular file ``__init__.py`` (through a link
    too: what ``os.path.isfile`` answers), from its listing."""
    init = os.path.join(directory, "__init__.py")
    return ("__init__.py", init) in listing.files and init not in listing.broken


def _memorable(
    directory: str, listing: Listing, listings: ListingCache, answer: GitAnswer | None
) -> bool:
    """Whether what a walk made of ``directory`` can be remembered: its listing is (see
    ``scan/discover/walk/listings.py``), and git tracks every file in it (whether git ignores an
    untracked file is not in the key)."""
    remembered = listings.fresh.get(directory) is listing
    return remembered and (answer is None or answer.tracks_all(map(itemgetter(1), listing.files)))


def _wanted(scan: _Scan, listing: Listing, relative_dir: str, answer: GitAnswer | None) -> Entries:
    """The (name, path) of a listed directory's files that the walk scans: not excluded, and
    listed by git (inside a work tree); a link among them that does not resolve is a problem.
    The listing's own files when it keeps all of them."""
    wanted = scan.files_excluded.kept(listing.files, relative_dir)
    if answer is not None and not answer.tracks_all(map(itemgetter(1), wanted)):
        wanted = [entry for entry in wanted if answer.keeps(entry[1])]
    if not listing.broken:
        return wanted
    for _, full in wanted:
        if full in listing.broken:
            problem = FileProblem(display_path(full, scan.cwd), link_problem(full))
            scan.found.problems.append(problem)
    return [entry for entry in wanted if entry[1] not in listing.broken]
