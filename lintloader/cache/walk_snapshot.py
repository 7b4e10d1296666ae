"""A whole source-tree walk remembered: every directory it walked, with its mtime, and the
files it kept, named.

``cache/named_files.py`` spares a warm walk the naming of each unchanged directory, but the
walk still visits every listing and every file: about 40 ms of Python in a 5,400-file project,
on every pre-commit run. When no directory of the tree changed since a walk that could
remember all of them, that walk's files are the answer again:

* a directory's mtime changes when an entry is added, removed or renamed in it, so the same
  mtimes mean the same listings (``cache/listings.py``), hence the same subdirectories walked
  and the same package paths below the root;
* the key holds what else the walk depended on: the root and its package path, the exclude
  patterns, the working directory and which files git tracks;
* a snapshot is only taken of a walk in which every listing was remembered (no link, nothing
  modified within the racy window, nothing unreadable) and git tracked every file: whether git
  ignores an untracked file is not in the key.

What is read back is checked: every directory must lie inside the root, every file in one of
those directories, with a printable display path; anything else, and any directory whose
mtime differs or cannot be read, means: walk again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.files import read_pickle, write_pickle
from lintloader.cache.listings import walk_file
from lintloader.scan.model import SourceFile


class WalkSnapshot(NamedTuple):
    directories: tuple[tuple[str, int], ...]  # each directory walked, with its mtime
    files: tuple[SourceFile, ...]  # the files kept, in the walk's order


def snapshot_key(walk_key: str, root_prefix: tuple[str, ...]) -> str:
    """``cache.named_files.walk_key`` of the walk, with the root's package path."""
    text = f"{walk_key}\0{'.'.join(root_prefix)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def load_snapshot(cache_dir: Path | None, tree: str, root: str) -> tuple[str, WalkSnapshot] | None:
    """The stored snapshot of the walk of ``root`` and its key, if it is well formed and no
    directory of it changed; None otherwise (the key is compared by the caller once git's
    answer, part of it, is in)."""
    if cache_dir is None:
        return None
    stored = read_pickle(walk_file(cache_dir, tree, "walk"))
    if not (isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], str)):
        return None
    key, snapshot = stored
    if not isinstance(snapshot, WalkSnapshot) or not _unchanged(snapshot.directories, root):
        return None
    if not _files_inside(snapshot, root):
        return None
    return key, snapshot


def save_snapshot(cache_dir: Path | None, tree: str, key: str, snapshot: WalkSnapshot) -> None:
    if cache_dir is not None:
        write_pickle(Path(cache_dir), walk_file(cache_dir, tree, "walk"), (key, snapshot))


def _unchanged(directories: object, root: str) -> bool:
    if not isinstance(directories, tuple) or not directories:
        return False
    inside = os.path.join(root, "")
    for entry in directories:
        if not (isinstance(entry, tuple) and len(entry) == 2):
            return False
        directory, mtime = entry
        if not isinstance(directory, str) or not (
            directory == root or directory.startswith(inside)
        ):
            return False
        if os.path.normpath(directory) != directory:  # no "..", no doubled separators
            return False
        try:
            if os.stat(directory).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    return True


def _files_inside(snapshot: WalkSnapshot, root: str) -> bool:
    """Every file is a SourceFile of strings in one of the snapshot's directories, with a
    printable display path (one pass of plain type tests: it runs for every file)."""
    folders = {directory for directory, _ in snapshot.directories}
    if not isinstance(snapshot.files, tuple):
        return False
    for file in snapshot.files:
        if type(file) is not SourceFile:
            return False
        path, module, is_package, display = file
        if type(path) is not str or type(module) is not str or type(display) is not str:
            return False
        folder, _, name = path.rpartition(os.sep)
        if folder not in folders or name in ("", ".", "..") or type(is_package) is not bool:
            return False
        if not display.isprintable():  # what scan.escape.printable leaves unchanged
            return False
    return True
