"""What the last run learned about each scanned file, keyed by its stat, so that a file that has
not changed is neither read nor hashed nor searched again.

For every path the index keeps the stat stamp seen when the file was read (size, mtime, ctime,
inode), the sha256 of its bytes (which keys its cached summary) and which demand tokens it
contains: two bitmasks over the index's token table, ``checked`` (searched for) and ``present``
(found). A file whose stamp is unchanged is trusted, except when it had been modified within
:data:`RACY_NS` of the moment it was read (it may have changed again within the same timestamp
tick, git's "racy" files): its stamp is not recorded, so it is read again next time.

One index file per set of scan roots lives under ``<cache>/index-<version>/``; it is replaced
atomically (last writer wins) and a corrupt or foreign one is simply ignored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lintloader import __version__
from lintloader.cache import read_pickle, write_pickle

RACY_NS = 2_000_000_000
MAX_TOKENS = 4096  # a bigger token table is dropped and relearned (bitmasks stay small)
_FORMAT = 1
Stamp = tuple[int, int, int, int]
UNTRUSTED: Stamp = (-1, -1, -1, -1)


def stamp_of(result: os.stat_result) -> Stamp:
    return (result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino)


@dataclass
class Entry:
    stamp: Stamp
    digest: str
    checked: int = 0  # bit i set: token i was searched for
    present: int = 0  # bit i set: token i occurs in the file


@dataclass
class StatIndex:
    """Per-path entries plus the token table their bitmasks refer to."""

    tokens: list[bytes] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)
    _ids: dict[bytes, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._ids = {token: number for number, token in enumerate(self.tokens)}

    def fresh(self, path: str, stamp: Stamp) -> Entry | None:
        """The entry for ``path`` if the file is certainly unchanged since it was recorded."""
        entry = self.entries.get(path)
        return entry if entry is not None and entry.stamp == stamp else None

    def record(self, path: str, stamp: Stamp, digest: str, read_ns: int) -> Entry:
        """Remember a file read at ``read_ns`` whose stat (taken before reading) was ``stamp``."""
        if max(stamp[1], stamp[2]) >= read_ns - RACY_NS:
            stamp = UNTRUSTED  # modified too recently: may change again within the same tick
        entry = Entry(stamp, digest)
        self.entries[path] = entry
        return entry

    def bit(self, token: bytes) -> int:
        number = self._ids.get(token)
        if number is None:
            number = self._ids[token] = len(self.tokens)
            self.tokens.append(token)
        return 1 << number

    def keep_only(self, paths: Iterable[str]) -> None:
        wanted = set(paths)
        self.entries = {p: e for p, e in self.entries.items() if p in wanted}


def index_path(cache_dir: Path, roots: Iterable[str]) -> Path:
    scope = "\0".join(sorted(set(roots))) or "<none>"
    name = hashlib.sha256(scope.encode()).hexdigest()[:24]
    return Path(cache_dir) / f"index-{__version__}" / f"{name}.index"


def load_index(path: Path) -> StatIndex:
    """The index stored at ``path``, or an empty one (missing, corrupt, other format)."""
    raw = read_pickle(path)
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
        return StatIndex()
    if len(raw.get("tokens", ())) > MAX_TOKENS:
        return StatIndex()
    try:
        entries = {p: Entry(*values) for p, values in raw["entries"].items()}
        return StatIndex(list(raw["tokens"]), entries)
    except (KeyError, TypeError, ValueError):
        return StatIndex()


def save_index(cache_dir: Path, path: Path, index: StatIndex) -> None:
    raw = {
        "format": _FORMAT,
        "tokens": index.tokens,
        "entries": {
            p: (e.stamp, e.digest, e.checked, e.present) for p, e in index.entries.items()
        },
    }
    write_pickle(Path(cache_dir), path, raw)
