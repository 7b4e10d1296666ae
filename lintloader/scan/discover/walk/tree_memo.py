"""What a source-tree walk remembers between runs: one entry per tree, holding each directory
it listed (its listing, and the files it kept there, named) and whether that is the whole walk.

Three things spare a warm walk its work, all kept here:

* **listings**: a directory whose mtime is what it was when it was listed still holds the same
  entries (``scan/discover/walk/listings.py`` says why, and when a listing is not remembered);
* **named files**: what the walk made of a directory (its files, named: module, package flag,
  display path) depends only on its listing, its package path and the walk's key, made of the
  root, the exclude patterns and which files git tracks (:func:`walk_key`); a directory
  holding a file git does not track has none remembered (whether git ignores it is not in the
  key, see ``scan/discover/git_files.py``). The display paths are relative to the working
  directory of the walk that made them (``cwd``); a run from another folder makes them again
  from the paths (:func:`shown_from`), so that a server started in the project and a
  ``check`` run elsewhere do not each walk the tree again after the other;
* **the whole walk**: when every directory of a walk had its files remembered (no link, nothing
  modified within the racy window, nothing unreadable, every file tracked), the entry is the
  walk itself, in its order (``whole``): a warm run stats each directory and takes the files
  as they are. A commit, a checkout or an editor that saves by renaming changes the mtime of
  the directories it writes in: ``scan/discover/paths.py`` lists those again (at most
  :data:`MAX_CHANGED`) when they keep their subdirectories and package path, else walks.

What is read back is checked, all or nothing (anything else is a miss: walk again): every
directory lies inside the root and is a normalized path; every name is a child's name (no
separator, not ``..``); every file the walk kept is one of its directory's listed files, with
a Python or notebook suffix and a printable display path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.files import read_entry, write_entry
from lintloader.scan.discover.escape import printable
from lintloader.scan.discover.walk.listings import Listing, walk_file
from lintloader.scan.model import NOTEBOOK_SUFFIX, SourceFile

KIND = "tree walk 2"
MAX_CHANGED = 16  # changed directories patched into a whole walk; more: walk the tree
_SUFFIXES = (".py", NOTEBOOK_SUFFIX)
_NOT_NAMES = frozenset({"", ".", ".."})


class MemoDirectory(NamedTuple):
    """One directory as a walk listed it, and the files it kept there."""

    path: str
    mtime_ns: int  # of its listing
    subdirs: tuple[str, ...]  # the names of its subdirectories (not links), sorted
    files: tuple[str, ...]  # the names of its listed files, sorted
    prefix: tuple[str, ...]  # its package path
    named: tuple[SourceFile, ...] | None  # the files the walk kept; None: worked out each walk

    def listing(self) -> Listing:
        folder = os.path.join(self.path, "")
        return Listing(
            self.mtime_ns,
            [(name, folder + name) for name in self.subdirs],
            [(name, folder + name) for name in self.files],
        )

    def kept(self) -> list[SourceFile]:
        """The files the walk kept here (none when ``named`` is None)."""
        return list(self.named or ())


class TreeMemo(NamedTuple):
    key: str  # walk_key of the walk that made it
    cwd: str  # the working directory the display paths of ``directories`` are relative to
    root_prefix: tuple[str, ...]  # the package path of the root
    whole: bool  # every directory the walk went into, in its order, with its files named
    directories: tuple[MemoDirectory, ...]


Stored = tuple[str, TreeMemo]  # (the tree's scope, its memo)


def walk_key(root: str, patterns: Iterable[str], tracked: bytes | None) -> str:
    """What the files kept in every directory of one walk depend on, beyond the directory and
    the working directory (display paths: :func:`shown_from`)."""
    digest = hashlib.sha256()
    for part in (root, "\0".join(patterns)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\n")
    digest.update(b"no git\n" if tracked is None else tracked)
    return digest.hexdigest()


def memo_directory(
    listing: Listing, path: str, prefix: tuple[str, ...], named: tuple[SourceFile, ...] | None
) -> MemoDirectory:
    subdirs = tuple(name for name, _ in listing.subdirs)
    files = tuple(name for name, _ in listing.files)
    return MemoDirectory(path, listing.mtime_ns, subdirs, files, prefix, named)


def load_memo(cache_dir: Path | None, tree: str, root: str) -> TreeMemo | None:
    """The memo of the walks of ``root`` (``tree``: its scope), if there is a well-formed one."""
    if cache_dir is None:
        return None
    stored = read_entry(Path(cache_dir), walk_file(cache_dir, tree, "walk"), KIND, Stored)
    if stored is None:
        return None
    scope, memo = stored
    return memo if scope == tree and _well_formed(memo, root) else None


def shown_from(memo: TreeMemo, cwd: str, shown: Callable[[str, str], str]) -> TreeMemo:
    """``memo`` with the display paths of a walk run in ``cwd`` (``shown(directory, cwd)``:
    the display prefix of a directory's files, as the walk makes it)."""
    if memo.cwd == cwd:
        return memo
    directories = []
    for directory in memo.directories:
        named = directory.named
        if named is not None:
            prefix = shown(directory.path, cwd)
            named = tuple(
                f._replace(display=printable(prefix + f.path.rpartition(os.sep)[2])) for f in named
            )
        directories.append(directory._replace(named=named))
    return memo._replace(cwd=cwd, directories=tuple(directories))


def save_memo(cache_dir: Path | None, tree: str, memo: TreeMemo) -> None:
    if cache_dir is not None:
        path = walk_file(cache_dir, tree, "walk")
        write_entry(Path(cache_dir), path, KIND, Stored, (tree, memo))


def changed_directories(memo: TreeMemo) -> list[int] | None:
    """The indices of the directories whose mtime changed since; None when one cannot be
    stat'ed or more than :data:`MAX_CHANGED` changed."""
    changed = []
    for index, directory in enumerate(memo.directories):
        try:
            mtime = os.stat(directory.path).st_mtime_ns
        except OSError:
            return None
        if mtime != directory.mtime_ns:
            changed.append(index)
            if len(changed) > MAX_CHANGED:
                return None
    return changed


@dataclass(eq=False, repr=False)
class NamedFiles:
    """The named files of each directory of one walk, served while the walk's key is the
    memo's; ``fresh``: what this walk kept (or worked out and can remember)."""

    known: dict[str, MemoDirectory] = field(default_factory=dict)
    fresh: dict[str, tuple[SourceFile, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, memo: TreeMemo | None, key: str) -> NamedFiles:
        if memo is None or memo.key != key:
            return cls()
        return cls({d.path: d for d in memo.directories if d.named is not None})

    def get(
        self, directory: str, listing: Listing, prefix: tuple[str, ...]
    ) -> list[SourceFile] | None:
        """The files kept in ``directory`` if they were made from this very listing and
        package path; None when they must be worked out."""
        known = self.known.get(directory)
        if known is None or known.mtime_ns != listing.mtime_ns or known.prefix != prefix:
            return None
        if known.files != tuple(name for name, _ in listing.files) or known.named is None:
            return None
        self.fresh[directory] = known.named
        return known.kept()

    def put(self, directory: str, files: list[SourceFile]) -> None:
        """Remember the files kept in ``directory`` (a remembered listing's only)."""
        self.fresh[directory] = tuple(files)


def _well_formed(memo: TreeMemo, root: str) -> bool:
    """Whether ``memo``, read back as its type (``cache/codec.py`` checks every value's type),
    holds only what a walk of ``root`` can: see the module docstring."""
    inside = os.path.join(root, "")
    if not all(_directory_ok(d, root, inside) for d in memo.directories):
        return False
    if not memo.whole:
        return True
    # a whole walk starts at its root, and holds every directory's files
    first = memo.directories[0].path if memo.directories else None
    return first == root and all(d.named is not None for d in memo.directories)


def _directory_ok(directory: MemoDirectory, root: str, inside: str) -> bool:
    path, _, subdirs, files, _, named = directory
    return (
        (path == root or path.startswith(inside))
        and os.path.normpath(path) == path  # no "..", no doubled separators
        and _names(subdirs)
        and _names(files)
        and (named is None or _named_ok(named, path, files))
    )


def _names(names: tuple[str, ...]) -> bool:
    """Names of a directory's children: one with a separator, or ``..``, would add a file from
    elsewhere to a walk."""
    joined = "".join(names)
    return os.sep not in joined and "\0" not in joined and _NOT_NAMES.isdisjoint(names)


def _named_ok(named: tuple[SourceFile, ...], folder: str, files: tuple[str, ...]) -> bool:
    """Each kept file is one of the directory's listed files, a Python file or a notebook, and
    its display path prints as it is (what ``scan.escape.printable`` leaves unchanged). This
    runs for every file of the tree: plain tests, one pass."""
    listed = set(files)
    for path, _, _, display in named:
        parent, _, name = path.rpartition(os.sep)
        if parent != folder or name not in listed or not name.endswith(_SUFFIXES):
            return False
        if not display.isprintable():
            return False
    return True
