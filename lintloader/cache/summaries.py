"""Content-addressed store of file summaries, and the safe file operations every cache file uses.

A summary depends only on a file's bytes, its module name and the tool version, so the key is a
hash of those (the bytes enter through their sha256, which the stat index remembers, so a warm
run finds a summary without reading the file). Entries are written to a temporary file and
renamed into place, so concurrent runs sharing one directory never see a partial entry; a corrupt
entry counts as a miss. Nothing is ever read or written through a symbolic link, and files are
created with mode 0o666 so that the user's umask decides their permissions.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lintloader import __version__

if TYPE_CHECKING:  # summaries are imported only when one is keyed, read or written
    from lintloader.summary.model import FileSummary

CACHE_DIR_NAME = ".lintloader_cache"
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_cache_dir() -> Path:
    override = os.environ.get("LINTLOADER_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lintloader"


def content_digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def summary_key(digest: str, module: str, is_package: bool) -> str:
    """The cache key of a file's summary; ``digest`` is :func:`content_digest` of its bytes."""
    from lintloader.summary.model import SUMMARY_SCHEMA

    text = f"{__version__}\0{SUMMARY_SCHEMA}\0{module}\0{int(is_package)}\0{digest}"
    return hashlib.sha256(text.encode()).hexdigest()


def read_pickle(path: Path) -> Any:
    """The object pickled at ``path``; None when missing, unreadable, corrupt or a link."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
        with os.fdopen(descriptor, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # missing, unreadable or corrupt: a miss, never an error
        return None


def write_pickle(root: Path, target: Path, value: Any) -> None:
    """Atomically write ``value`` to ``target`` (a path below ``root``), never through a link.

    A cache that cannot be written is only slower, never wrong: errors are swallowed."""
    temporary = target.parent / f".tmp-{os.getpid()}-{os.urandom(8).hex()}"
    try:
        if _linked_between(root, target.parent):
            return  # never write (not even a folder) through a link planted inside the cache
        target.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL never follows a link; mode 0o666 lets the user's umask decide permissions.
        descriptor = os.open(temporary, _CREATE_FLAGS, 0o666)
        with os.fdopen(descriptor, "wb") as stream:
            pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, target)  # replaces a link at target, never follows it
    except OSError:
        return
    finally:
        temporary.unlink(missing_ok=True)  # left only when something failed


def _linked_between(root: Path, folder: Path) -> bool:
    """Whether ``folder`` or any directory between it and ``root`` (inclusive) is a link."""
    current = folder
    while True:
        if current.is_symlink():
            return True
        if current == root or current.parent == current:
            return False
        current = current.parent


CACHE_ENTRY_PREFIXES = ("summaries-", "index-", "interpreters-", "listings-", ".tmp-")


def clean_cache(directory: Path) -> int:
    """Remove what lintloader stored in ``directory`` (only its own entries, so a mistyped
    ``--cache-dir ~`` removes nothing else), then the directory itself if that left it empty.
    Links are removed, never followed. Returns how many entries were removed."""
    import shutil

    if directory.is_symlink() or not directory.is_dir():
        return 0
    removed = 0
    for child in directory.iterdir():
        if not child.name.startswith(CACHE_ENTRY_PREFIXES):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
        removed += 1
    with contextlib.suppress(OSError):  # something else lives there: leave it
        directory.rmdir()
    return removed


class SummaryCache:
    """Pickled summaries under ``<dir>/summaries-<version>/<kk>/<key>.pickle``."""

    def __init__(self, directory: Path) -> None:
        self.root = Path(directory)
        self.directory = self.root / f"summaries-{__version__}"
        self.used: set[str] = set()  # keys read or written by this run

    def stamps(self, keys: Iterable[str]) -> tuple[tuple[str, int, int], ...] | None:
        """(key, size, mtime) of each entry; None if one is missing or not a regular file."""
        found = []
        for key in sorted(keys):
            try:
                status = os.lstat(self._path(key))
            except OSError:
                return None
            if not stat.S_ISREG(status.st_mode):
                return None
            found.append((key, status.st_size, status.st_mtime_ns))
        return tuple(found)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> FileSummary | None:
        from lintloader.summary.model import FileSummary

        value = read_pickle(self._path(key))  # a symlinked entry is a miss
        if not isinstance(value, FileSummary):
            return None
        self.used.add(key)
        return value

    def put(self, key: str, summary: FileSummary) -> None:
        write_pickle(self.directory, self._path(key), summary)
        self.used.add(key)
