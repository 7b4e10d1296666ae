"""The cache directory and the safe file operations every cache file uses: reads that never
follow a symbolic link, atomic writes, and a clean that removes only lintloader's own entries.

Everything under the cache directory is an optimisation: an entry that cannot be read is a miss.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # summaries are imported only when one is keyed, read or written
    pass

CACHE_DIR_NAME = ".lintloader_cache"
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_cache_dir() -> Path:
    override = os.environ.get("LINTLOADER_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lintloader"


def cache_problem(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the cache (not a directory, no permission, a full disk),
    or None: it is created if missing, and a small probe file is written there and removed."""
    probe = directory / f".tmp-probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        if directory.exists() and not directory.is_dir():
            return "not a directory"
        directory.mkdir(parents=True, exist_ok=True)
        foreign = foreign_problem(os.stat(directory))
        if foreign:
            return foreign
        descriptor = os.open(probe, _CREATE_FLAGS, 0o666)
        try:
            os.write(descriptor, b"lintloader cache probe\n")
        finally:
            os.close(descriptor)
            os.unlink(probe)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def foreign_problem(status: os.stat_result) -> str | None:
    """Why a cache directory with ``status`` could hold entries written by someone else: the
    cache holds pickles, and loading one another user planted would run their code."""
    if hasattr(os, "geteuid") and status.st_uid != os.geteuid():
        return f"owned by another user (uid {status.st_uid}); its entries are not trusted"
    if status.st_mode & 0o002:
        return "writable by every user; its entries are not trusted"
    return None


def read_pickle(path: Path) -> Any:
    """The object pickled at ``path``; None when missing, unreadable, corrupt or a link."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
        with os.fdopen(descriptor, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # missing, unreadable or corrupt: a miss, never an error
        return None


def read_keyed(path: Path, key: str) -> dict[Any, Any]:
    """The dict pickled at ``path`` as ``(key, dict)``; empty when missing, corrupt, or
    stored under another key. (Its values are still to be checked by the caller.)"""
    stored = read_pickle(path)
    valid = isinstance(stored, tuple) and len(stored) == 2 and stored[0] == key
    return stored[1] if valid and isinstance(stored[1], dict) else {}


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
        with contextlib.suppress(OSError):  # left only when something failed
            temporary.unlink()


def _linked_between(root: Path, folder: Path) -> bool:
    """Whether ``folder`` or any directory between it and ``root`` (inclusive) is a link."""
    current = folder
    while True:
        if current.is_symlink():
            return True
        if current == root or current.parent == current:
            return False
        current = current.parent


CACHE_ENTRY_PREFIXES = ("summaries-", "index-", "interpreters-", "listings-", "code-", ".tmp-")


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
