"""What a source-tree walk made of each directory: the files it scans there, named.

A warm walk of a 5,400-file project found every directory listing in ``scan/walk/listings.py``,
and then still spent most of its time on each file: the exclude patterns, git's answer, the
module name, the display path. What it makes of a directory depends only on

* the directory's listing (which a listing's mtime stands for, see ``scan/walk/listings.py``),
* the package path above it (whether the directories above hold ``__init__.py``),
* the exclude patterns, the working directory (display paths) and which files git tracks
  (a directory holding a file git does not track is not remembered: whether git ignores it
  is not in the key, see ``scan/git_files.py``),

so the walk remembers, per directory, the files it kept as (index into the listing, module
name, is-package, display path), under a key made of the last three. A directory is served
from here when that key, its listing's mtime and its package path are all as they were.

Only directories whose listing was remembered are remembered here (see the racy rule of
``scan/walk/listings.py``). What is read back is checked: an index must point into the listing
(so a crafted entry cannot add a file from elsewhere), and every name must be a printable
string.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.files import read_keyed, write_entry
from lintloader.scan.escape import printable
from lintloader.scan.model import SourceFile
from lintloader.scan.walk.listings import Listing, walk_file

Named = tuple[int, str, bool, str]  # (index into Listing.files, module, is_package, display)


class DirectoryFiles(NamedTuple):
    mtime_ns: int  # of the listing they were made from
    prefix: tuple[str, ...]  # the package path of the directory
    files: tuple[Named, ...]


KIND = "named files 1"


def walk_key(root: str, patterns: Iterable[str], cwd: str, tracked: bytes | None) -> str:
    """What the files kept in every directory of one walk depend on, beyond the directory."""
    digest = hashlib.sha256()
    for part in (root, "\0".join(patterns), cwd):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\n")
    digest.update(b"no git\n" if tracked is None else tracked)
    return digest.hexdigest()


@dataclass
class NamedFiles:
    """The named files of each directory of one source tree's walk (``path`` None: nothing
    is remembered)."""

    key: str
    path: Path | None = None
    root: Path | None = None
    known: dict[str, DirectoryFiles] = field(default_factory=dict)
    fresh: dict[str, DirectoryFiles] = field(default_factory=dict)

    @classmethod
    def load(cls, cache_dir: Path | None, tree: str, key: str) -> NamedFiles:
        if cache_dir is None:
            return cls(key)
        path = walk_file(cache_dir, tree, "named")
        known = read_keyed(Path(cache_dir), path, KIND, dict[str, DirectoryFiles], key)
        return cls(key, path, Path(cache_dir), known)

    def get(
        self, directory: str, listing: Listing, prefix: tuple[str, ...]
    ) -> list[SourceFile] | None:
        """The files kept in ``directory`` if they were made from this very listing and
        package path; None when they must be worked out."""
        known = self.known.get(directory)
        if not isinstance(known, DirectoryFiles) or known.mtime_ns != listing.mtime_ns:
            return None
        if known.prefix != prefix or not isinstance(known.files, tuple):
            return None
        files = []
        for entry in known.files:
            if not _is_named(entry, len(listing.files)):
                return None
            index, module, is_package, display = entry
            files.append(SourceFile(listing.files[index][1], module, is_package, display))
        self.fresh[directory] = known
        return files

    def put(
        self,
        directory: str,
        listing: Listing,
        prefix: tuple[str, ...],
        files: list[SourceFile],
    ) -> None:
        """Remember the files kept in ``directory`` (a remembered listing's only)."""
        index = {path: number for number, (_, path) in enumerate(listing.files)}
        named = tuple((index[f.path], f.module, f.is_package, f.display) for f in files)
        self.fresh[directory] = DirectoryFiles(listing.mtime_ns, prefix, named)

    def save(self) -> None:
        if self.path is None or self.root is None or self.fresh == self.known:
            return
        stored = (self.key, self.fresh)
        write_entry(self.root, self.path, KIND, tuple[str, dict[str, DirectoryFiles]], stored)


def _is_named(entry: object, size: int) -> bool:
    if not isinstance(entry, tuple) or len(entry) != 4:
        return False
    index, module, is_package, display = entry
    return (
        type(index) is int
        and 0 <= index < size
        and isinstance(module, str)
        and type(is_package) is bool
        and isinstance(display, str)
        and printable(display) == display
    )
