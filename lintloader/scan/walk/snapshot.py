"""A whole source-tree walk remembered: every directory it walked, with its mtime, and the
files it kept there, named.

``scan/walk/named_files.py`` spares a warm walk the naming of each unchanged directory, but the
walk still visits every listing and every file: about 40 ms of Python in a 5,400-file project,
on every pre-commit run. A snapshot makes that a stat per directory and one pass over the
files:

* a directory's mtime changes when an entry is added, removed or renamed in it, so the same
  mtime means the same listing (``scan/walk/listings.py``): the same subdirectories walked and the
  same files;
* the key holds what else the walk depended on: the root and its package path, the exclude
  patterns, the working directory and which files git tracks;
* a snapshot is only taken of a walk in which every listing was remembered (no link, nothing
  modified within the racy window, nothing unreadable) and git tracked every file: whether git
  ignores an untracked file is not in the key.

A commit, a checkout or an editor that saves by renaming changes the mtime of the directories
it writes in. Such a directory is listed again (``scan/paths.py`` patches the snapshot): if it
still has the same subdirectories and package path, only its files are worked out again; if
not, or if more than :data:`MAX_CHANGED` directories changed, the tree is walked.

What is read back is checked: every directory must lie inside the root, every file in its
directory, with a Python or notebook suffix and a printable display path; anything else means
walking again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.files import read_entry, write_entry
from lintloader.scan.model import NOTEBOOK_SUFFIX, SourceFile
from lintloader.scan.walk.listings import walk_file

MAX_CHANGED = 16  # changed directories patched; more: walk the tree
_SUFFIXES = (".py", NOTEBOOK_SUFFIX)


class WalkedDirectory(NamedTuple):
    path: str
    mtime_ns: int
    subdirs: tuple[str, ...]  # the subdirectories walked into, in order
    prefix: tuple[str, ...]  # its package path
    files: int  # how many of the snapshot's files are in it (they follow the walk's order)


class WalkSnapshot(NamedTuple):
    directories: tuple[WalkedDirectory, ...]
    files: tuple[SourceFile, ...]

    def slices(self) -> list[list[SourceFile]]:
        """The files of each directory, in the order of :attr:`directories`."""
        found, start = [], 0
        for directory in self.directories:
            found.append(list(self.files[start : start + directory.files]))
            start += directory.files
        return found


KIND = "walk snapshot 1"
Stored = tuple[str, WalkSnapshot]


def snapshot_key(walk_key: str, root_prefix: tuple[str, ...]) -> str:
    """``scan.walk.named_files.walk_key`` of the walk, with the root's package path."""
    text = f"{walk_key}\0{'.'.join(root_prefix)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Loaded(NamedTuple):
    key: str
    snapshot: WalkSnapshot
    changed: list[int]  # indices of the directories whose mtime changed


def load_snapshot(cache_dir: Path | None, tree: str, root: str) -> Loaded | None:
    """The stored snapshot of the walk of ``root``, if it is well formed, and which of its
    directories changed since; None when there is none, or too many changed (the key is
    compared by the caller, once git's answer, part of it, is in)."""
    if cache_dir is None:
        return None
    stored = read_entry(Path(cache_dir), walk_file(cache_dir, tree, "walk"), KIND, Stored)
    if stored is None:
        return None
    key, snapshot = stored
    if not isinstance(snapshot, WalkSnapshot) or not _well_formed(snapshot, root):
        return None
    changed = []
    for index, directory in enumerate(snapshot.directories):
        try:
            mtime = os.stat(directory.path).st_mtime_ns
        except OSError:
            return None
        if mtime != directory.mtime_ns:
            changed.append(index)
            if len(changed) > MAX_CHANGED:
                return None
    return Loaded(key, snapshot, changed)


def save_snapshot(cache_dir: Path | None, tree: str, key: str, snapshot: WalkSnapshot) -> None:
    if cache_dir is not None:
        path = walk_file(cache_dir, tree, "walk")
        write_entry(Path(cache_dir), path, KIND, Stored, (key, snapshot))


def _well_formed(snapshot: WalkSnapshot, root: str) -> bool:
    directories, files = snapshot
    if not (isinstance(directories, tuple) and directories and isinstance(files, tuple)):
        return False
    inside, start = os.path.join(root, ""), 0
    for directory in directories:
        if not _directory_ok(directory, root, inside):
            return False
        if not _files_ok(files[start : start + directory.files], directory.path):
            return False
        start += directory.files
    return start == len(files)


def _directory_ok(directory: object, root: str, inside: str) -> bool:
    if type(directory) is not WalkedDirectory:
        return False
    path, mtime, subdirs, prefix, count = directory
    return (
        type(path) is str
        and (path == root or path.startswith(inside))
        and os.path.normpath(path) == path  # no "..", no doubled separators
        and type(mtime) is int
        and isinstance(subdirs, tuple)
        and isinstance(prefix, tuple)
        and all(type(part) is str for part in prefix)
        and type(count) is int
        and count >= 0
    )


def _files_ok(files: tuple[SourceFile, ...], folder: str) -> bool:
    """Plain type tests, one pass: this runs for every file of the tree."""
    for file in files:
        if type(file) is not SourceFile:
            return False
        path, module, is_package, display = file
        if type(path) is not str or type(module) is not str or type(display) is not str:
            return False
        parent, _, name = path.rpartition(os.sep)
        if parent != folder or not name.endswith(_SUFFIXES) or type(is_package) is not bool:
            return False
        if not display.isprintable():  # what scan.escape.printable leaves unchanged
            return False
    return True
