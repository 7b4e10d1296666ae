"""The cache directory and the safe file operations every cache file uses: reads that never
follow a symbolic link and trust only what the user alone can have written, atomic writes of
private files (both through ``lintloader/trust/safe_file.py``), and a clean that removes only
lintloader's own entries.

Entries are data (``cache/codec.py``), never pickles. Everything under the cache directory is
an optimisation: an entry that cannot be read, or is not exactly what lintloader writes, is a
miss.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path
from typing import Any

from lintloader.cache import codec
from lintloader.cache.place import default_cache_folder, foreign_problem
from lintloader.trust.safe_file import TEMP_SUFFIX, read_regular, write_atomic

CACHE_DIR_NAME = ".lintloader_cache"
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
PRIVATE_DIR = 0o700  # the umask only ever takes bits away from these
PRIVATE_FILE = 0o600
# The cache root's marker, in the format of https://bford.info/cachedir/ (backup tools skip
# the directory) with a line of lintloader's own: ``clean`` removes nothing without it.
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by lintloader.\n"
)


def default_cache_dir() -> Path:
    return Path(default_cache_folder())


def cache_problem(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the cache (not a directory, no permission, a full disk,
    not private to the user), or None: it is created (mode 0700) if missing, marked as
    lintloader's (:data:`MARKER`), and a small probe file is written there and removed."""
    probe = directory / f".tmp-probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        if directory.exists() and not directory.is_dir():
            return "not a directory"
        if not directory.exists():
            directory.parent.mkdir(parents=True, exist_ok=True)
            directory.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        foreign = foreign_problem(os.stat(directory))
        if foreign:
            return foreign
        descriptor = os.open(probe, _CREATE_FLAGS, PRIVATE_FILE)
        try:
            os.write(descriptor, b"lintloader cache probe\n")
        finally:
            os.close(descriptor)
            os.unlink(probe)
        mark(directory)
        return _store_problem(directory)
    except OSError as exc:
        return exc.strerror or str(exc)


def _store_problem(directory: Path) -> str | None:
    """Why a store directory of the cache root (``summaries-<version>/``...) cannot be
    trusted (someone else owns it or may write in it: left by an older version under
    ``umask 002``), or None."""
    for name in sorted(os.listdir(directory)):
        if not _ENTRY_NAME.fullmatch(name) or _is_temporary(name):
            continue
        try:
            status = os.lstat(directory / name)
        except FileNotFoundError:  # removed since the listing (another run's clean)
            continue
        problem = foreign_problem(status) if stat.S_ISDIR(status.st_mode) else None
        if problem:
            return f"its {name}/ is {problem.split(';')[0]}; `lintloader clean` removes it"
    return None


def _is_temporary(name: str) -> bool:
    """A probe or an atomic write's temporary file: another run's, here for a moment (renamed
    or removed at any time), so neither judged nor stated."""
    return name.startswith(".tmp-") or name.endswith(TEMP_SUFFIX)


def _private(status: os.stat_result) -> bool:
    """Whether only the user can have written what ``status`` describes."""
    return foreign_problem(status) is None


def mark(directory: Path) -> None:
    """Write :data:`MARKER` into the cache root (once): what ``clean`` requires before it
    removes anything."""
    target = directory / MARKER
    if is_marked(directory):
        return
    if not os.path.lexists(target):  # another tool's marker (or a link) stays as it is
        write_atomic(target, MARKER_TEXT, private=True)


def is_marked(directory: Path) -> bool:
    """Whether ``directory`` holds lintloader's marker (a regular file, its exact text)."""
    try:
        return read_regular(directory / MARKER, len(MARKER_TEXT)) == MARKER_TEXT
    except OSError:
        return False


def read_entry(root: Path, path: Path, kind: str, hint: object) -> Any:
    """The value of type ``hint`` stored at ``path`` (below ``root``) as an entry of ``kind``;
    None when it is missing, unreadable, a link, not of that type, or not private to the user
    (the entry, or a directory between it and ``root``, owned or writable by someone else)."""
    if not _trusted_levels(root, path.parent):
        return None
    try:
        return codec.loads(kind, hint, read_regular(path, None, accept=foreign_problem))
    except (OSError, codec.Invalid):  # missing, unreadable or not an entry: a miss
        return None


def read_keyed(root: Path, path: Path, kind: str, hint: object, key: str) -> dict[Any, Any]:
    """The dict (of type ``hint``) stored at ``path`` as ``(key, dict)``; empty when missing,
    not of that type, or stored under another key."""
    stored = read_entry(root, path, kind, tuple[str, hint])  # type: ignore[valid-type]
    return stored[1] if stored is not None and stored[0] == key else {}


def write_entry(root: Path, target: Path, kind: str, hint: object, value: object) -> bytes | None:
    """Atomically write ``value`` (of type ``hint``) to ``target`` (a path below ``root``) as
    an entry of ``kind``, never through a link nor into a directory someone else could write.
    Directories are made 0700 and entries 0600, whatever the umask. Returns the entry's bytes
    (None: not written).

    A cache that cannot be written is only slower, never wrong: errors are swallowed."""
    try:
        if not make_private_dirs(root, target.parent):
            return None  # never write (not even a folder) through a link planted inside the cache
        # a link planted at the entry is replaced, never followed; no fsync: a cold scan
        # writes an entry per file parsed, and a reader takes an entry it cannot load as a miss
        data = codec.dumps(kind, hint, value)
        write_atomic(target, data, private=True, replace_link=True, durable=False)
    except (OSError, TypeError, ValueError):  # unwritable, or a value the codec cannot store
        return None
    return data


def _levels(root: Path, folder: Path) -> list[Path]:
    """``root`` and every directory from it down to ``folder``, in that order (just ``folder``
    when it is not below ``root``)."""
    found = [folder]
    while found[-1] != root and found[-1].parent != found[-1]:
        found.append(found[-1].parent)
    return found[::-1] if found[-1] == root else [folder]


def _trusted_levels(root: Path, folder: Path) -> bool:
    """Whether ``folder`` and every directory between it and ``root`` (inclusive) is a real
    directory (not a link) that only the user can write in."""
    return all(_trusted_level(level) for level in _levels(root, folder))


def _trusted_level(level: Path) -> bool:
    try:
        status = os.lstat(level)
    except OSError:
        return False
    return stat.S_ISDIR(status.st_mode) and _private(status)


def make_private_dirs(root: Path, folder: Path) -> bool:
    """Create the missing directories from ``root`` down to ``folder`` (mode 0700); whether
    they all are then trusted (see :func:`_trusted_levels`). Each one is checked before
    anything is made in it, on every call: one ``lstat`` a level where it is there (a cache
    writes an entry per file parsed, into folders nearly always there), a ``mkdir`` only where
    it is not (then the ``lstat`` again: whatever is there now, made by this call or not)."""
    for level in _levels(root, folder):
        if _trusted_level(level):
            continue
        with contextlib.suppress(FileExistsError):
            os.mkdir(level, PRIVATE_DIR)
        if not _trusted_level(level):
            return False
    return True


# What lintloader names an entry of the cache root: a store of this or another version, the
# flake8 plugin's locks, a probe (the pid and random hex), a temporary file of a write
# (safe_file.write_atomic's: the entry's name, the pid and random hex).
_STORE = r"(?:summaries|index|interpreters|listings|code|fast)-[0-9][0-9A-Za-z.+!-]*"
_ENTRY_NAME = re.compile(
    rf"{_STORE}|flake8-locks"
    r"|\.tmp-(?:probe-)?[0-9]+-[0-9a-f]+"
    rf"|\.(?:{_STORE}|{re.escape(MARKER)})\.[0-9]+-[0-9a-f]+{re.escape(TEMP_SUFFIX)}"
)


class NotACache(Exception):
    """``clean`` was pointed at a directory lintloader did not make its cache."""


def clean_cache(directory: Path) -> int:
    """Remove what lintloader stored in ``directory``: only in a directory that holds its
    marker (else :class:`NotACache`, nothing removed), and only entries named as it names
    them, so that a mistyped ``--cache-dir ~`` never removes ``~/code-review/``. Then the
    marker, and the directory itself if that left it empty. Links are removed, never
    followed. Returns how many entries were removed (0 when there is no such directory)."""
    import shutil

    if not directory.is_symlink() and not directory.exists():
        return 0
    if directory.is_symlink() or not directory.is_dir() or not is_marked(directory):
        raise NotACache(f"{directory} is not a lintloader cache (no {MARKER} of lintloader's)")
    removed = 0
    for child in directory.iterdir():
        if not _ENTRY_NAME.fullmatch(child.name):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
        removed += 1
    with contextlib.suppress(OSError):
        (directory / MARKER).unlink()
        directory.rmdir()  # something else lives there: leave it
    return removed
