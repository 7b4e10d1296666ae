"""What the last run learned about each scanned file, keyed by its stat, so that a file that has
not changed is neither read nor hashed nor searched again.

For every path the index keeps the stat stamp seen when the file was read (size, mtime, ctime,
inode), the sha256 of its bytes (which keys its cached summary) and which demand tokens it
contains: two bitmasks over the index's token table, ``checked`` (searched for) and ``present``
(found). A file whose stamp is unchanged is trusted, except when it had been modified within
:data:`~lintloader.scan.read.stamps.RACY_NS` of the moment it was read (it may have changed
again within the same timestamp tick, git's "racy" files): its stamp is not recorded, so it is
read again next time.

The index is a table with one row per path, stored column by column (a list of paths, one of
stamps, ...): loading it makes a few lists, not an object per file, which matters when a warm
run over a site-packages does little else. One index file per set of scan roots lives under
``<cache>/index-<version>/``; it is replaced atomically (last writer wins) and a corrupt or
foreign one is simply ignored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from lintloader import __version__
from lintloader.cache.files import read_entry, write_entry
from lintloader.scan.read.stamps import UNTRUSTED, Stamp, is_racy
from lintloader.scan.read.tokens import implied_absences, is_plain

MAX_TOKENS = 4096  # a bigger token table is dropped and relearned (bitmasks stay small)
_KIND = "stat index 3"
# tokens, paths, stamps (flat: four ints a row), digests, checked, present
_Stored = tuple[list[bytes], list[str], list[int], list[str], list[int], list[int]]


@dataclass(eq=False, repr=False)
class StatIndex:
    """Rows of (path, stamp, digest, checked, present), by column, plus the token table the
    bitmasks refer to. Rows are only ever added or updated, so a row number stays valid."""

    tokens: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    stamps: list[Stamp] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    checked: list[int] = field(default_factory=list)  # bit i set: token i was searched for
    present: list[int] = field(default_factory=list)  # bit i set: token i occurs in the file
    _rows: dict[str, int] = field(default_factory=dict, repr=False)
    _ids: dict[bytes, int] = field(default_factory=dict, repr=False)
    # the plain tokens of the table, with their numbers (the only ones inner_bits looks at)
    _plain: list[tuple[int, bytes]] = field(default_factory=list, repr=False)
    _inner: dict[bytes, tuple[int, int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._rows = {path: row for row, path in enumerate(self.paths)}
        self._ids = {token: number for number, token in enumerate(self.tokens)}
        self._plain = [(number, t) for number, t in enumerate(self.tokens) if is_plain(t)]

    def fresh(self, path: str, stamp: Stamp) -> int | None:
        """The row of ``path`` if the file is certainly unchanged since it was recorded."""
        row = self._rows.get(path)
        return row if row is not None and self.stamps[row] == stamp else None

    def stamp(self, path: str) -> Stamp | None:
        """The stamp recorded for ``path`` (None: no row, or a stamp not to trust)."""
        row = self._rows.get(path)
        found = self.stamps[row] if row is not None else None
        return found if found is not None and found[1] >= 0 else None

    def has_digest(self, path: str) -> bool:
        row = self._rows.get(path)
        return row is not None and bool(self.digests[row])

    def record(self, path: str, stamp: Stamp, digest: str, read_ns: int | None) -> int:
        """Remember a file read at ``read_ns`` whose stat (taken before reading) was ``stamp``;
        ``read_ns`` None: bytes that did not come from the file (never trusted). Its token
        answers start empty. Returns its row."""
        if read_ns is None or is_racy(stamp, read_ns):
            # modified too recently: may change again within the same tick. Its size stays
            # known (shards are balanced by it); the stamp never equals a file's real one
            stamp = (stamp[0], *UNTRUSTED[1:])
        return self.put(path, stamp, digest)

    def put(self, path: str, stamp: Stamp, digest: str) -> int:
        """Remember ``path`` with ``stamp`` as given (:meth:`record` once the stamp is judged;
        ``SourceSet.load`` gives a file not read yet whose stamp it judged not racy, with no
        digest). Its token answers start empty. Returns its row."""
        row = self._rows.get(path)
        if row is None:
            row = self._rows[path] = len(self.paths)
            self.paths.append(path)
            self.stamps.append(stamp)
            self.digests.append(digest)
            self.checked.append(0)
            self.present.append(0)
        else:
            self.stamps[row], self.digests[row] = stamp, digest
            self.checked[row] = self.present[row] = 0
        return row

    def bit(self, token: bytes) -> int:
        number = self._ids.get(token)
        if number is None:
            number = self._ids[token] = len(self.tokens)
            self.tokens.append(token)
            if is_plain(token):
                self._plain.append((number, token))
        return 1 << number

    def inner_bits(self, token: bytes) -> int:
        """Bits of the plain tokens of the table that occur inside ``token``: a file known not
        to contain one of them does not contain ``token`` (see :func:`tokens.implied_absences`).
        Only the plain tokens are looked at (the others never imply an absence), and when the
        table has grown, only those added since (it only grows: a round that adds tokens one
        by one as it searches does not look at the whole table again after each)."""
        seen, mask = self._inner.get(token, (0, 0))
        plain = self._plain
        if seen != len(plain):
            mask |= implied_absences(token, plain[seen:])
            self._inner[token] = (len(plain), mask)
        return mask

    def subset(self, paths: Iterable[str]) -> StatIndex:
        """A new index with the rows of ``paths`` only (and the same token table)."""
        wanted = set(paths)
        rows = [row for row, path in enumerate(self.paths) if path in wanted]
        return StatIndex(
            list(self.tokens),
            [self.paths[row] for row in rows],
            [self.stamps[row] for row in rows],
            [self.digests[row] for row in rows],
            [self.checked[row] for row in rows],
            [self.present[row] for row in rows],
        )


def index_path(cache_dir: Path, roots: Iterable[str]) -> Path:
    scope = "\0".join(sorted(set(roots))) or "<none>"
    name = hashlib.sha256(scope.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return Path(cache_dir) / f"index-{__version__}" / f"{name}.index"


def load_index(cache_dir: Path, path: Path) -> StatIndex:
    """The index stored at ``path``, or an empty one (missing, corrupt, other format)."""
    raw = read_entry(Path(cache_dir), path, _KIND, _Stored)
    if raw is None:
        return StatIndex()
    tokens, paths, flat, digests, checked, present = raw
    rows = len(paths)
    if len(tokens) > MAX_TOKENS or len(flat) != 4 * rows:
        return StatIndex()
    if not len(digests) == len(checked) == len(present) == rows:
        return StatIndex()
    numbers = iter(flat)
    stamps: list[Stamp] = list(zip(numbers, numbers, numbers, numbers, strict=True))
    return StatIndex(tokens, paths, stamps, digests, checked, present)


def save_index(cache_dir: Path, path: Path, index: StatIndex) -> None:
    flat = list(chain.from_iterable(index.stamps))  # four ints a file, flattened in C
    raw = (index.tokens, index.paths, flat, index.digests, index.checked, index.present)
    write_entry(Path(cache_dir), path, _KIND, _Stored, raw)
