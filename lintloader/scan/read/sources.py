"""The scanned files' bytes and what is known about them, read at most once per run.

A :class:`SourceSet` answers three questions for the rest of the pipeline: a file's bytes, the
digest of those bytes (the summary cache key) and whether it contains a token (demand
selection). With a stat index from an earlier run, an unchanged file answers the last two from
the index without being read at all.

Bytes are held only while something needs them: a ``.py`` file the index does not know is
stat'ed when it is loaded and read when it is first searched (in a forked child, on a cold
scan), and :meth:`SourceSet.forget` drops the bytes of files whose token answers are known, so
that memory follows the few files that are parsed, not the many that are scanned. A file is
read again if a later round needs it; its digest, when worked out, comes from the same bytes as
its summary (bytes whose digest is known are never dropped).

A :class:`~lintloader.scan.read.memo.ReadMemo` carries the index and the bytes held at the end of
a check over to the next check of the same process (``check``'s fix trial, ``fix``'s rounds).
"""

from __future__ import annotations

import errno
import math
import os
import stat
import time
from array import array
from collections.abc import Iterable, Mapping
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lintloader.cache.summaries import content_digest
from lintloader.scan.model import NOTEBOOK_SUFFIX, FileProblem, SourceFile
from lintloader.scan.read.memo import ReadMemo
from lintloader.scan.read.stamps import Stamp, is_racy, stamp_of
from lintloader.scan.read.statindex import StatIndex, index_path, load_index, save_index
from lintloader.scan.read.tokens import found_in
from lintloader.summary.limits import size_problem

if TYPE_CHECKING:
    from lintloader.summary.model import FileSummary


class Reader(Protocol):
    """Reads a file (``reading.read_source``): its bytes; None for a directory, to skip; an
    OSError if unreadable. ``size``: the size its stat gave just before (-1: not known)."""

    def __call__(self, path: str, size: int = -1) -> bytes | None: ...


# A file larger on disk than this many times ``max-file-size`` is too large, never read (a
# notebook's file holds its outputs too: its code cells, measured after reading, decide below).
UNREAD_FACTOR = 16


class SourceSet:
    """Bytes, digests and token answers for the files of one run."""

    def __init__(
        self,
        reader: Reader,
        overrides: dict[str, bytes] | None = None,
        cache_dir: Path | None = None,
        roots: Iterable[str] = (),
        max_mb: float = 0.0,
        writes: bool = True,
        memo: ReadMemo | None = None,
    ) -> None:
        self._reader = reader
        self.memo = memo
        # False: the run reads the cache but writes nothing to it, neither summaries nor the
        # index (check's fix trial: its edited bytes are never read again, and the index must
        # keep the edited files as they are on disk)
        self.writes = writes
        self._max_mb = max_mb  # larger files are problems, found by stat (0: no limit)
        self._overrides = dict(overrides or {})
        self._cache_dir = cache_dir
        self._index_path = index_path(cache_dir, roots) if cache_dir else None
        self.index = self._start_index(tuple(sorted(set(roots))))
        self._contents: dict[str, bytes] = {}
        self._deferred: set[str] = set()  # stat'ed, counted in read_count, not read yet
        self._rows: dict[str, int] = {}  # admitted path -> its row in the index
        self.read_count = 0
        self._spared = 0  # bytes that forget() kept (see its ``spare``)
        self._changed = False  # anything the index did not know yet

    def _start_index(self, roots: tuple[str, ...]) -> StatIndex:
        """The memo's index of these roots (an earlier check of this process), else the stored
        one, else an empty one."""
        if self.memo is not None and roots in self.memo.indexes:
            return self.memo.indexes[roots]
        cache_dir, stored = self._cache_dir, self._index_path
        index = load_index(cache_dir, stored) if cache_dir and stored else StatIndex()
        if self.memo is not None:
            self.memo.indexes[roots] = index
        return index

    def keep(self) -> None:
        """Leave the bytes held now (the parsed files') to the memo, for the next check of
        this process: those of files whose stamp was trusted when they were read."""
        if self.memo is None:
            return
        kept, stamps = self.memo.kept, self.index.stamps
        for path, data in self._contents.items():
            stamp = stamps[self._rows[path]]
            if path not in self._overrides and stamp[1] >= 0:
                kept[path] = (stamp, data)

    @property
    def index_file(self) -> Path | None:
        """Where the stat index of these roots is stored (None without a cache)."""
        return self._index_path

    def load(self, files: Iterable[SourceFile], problems: list[FileProblem]) -> list[SourceFile]:
        """The readable files among ``files``; the others become problems (directories are
        skipped). This loop runs once per file of a whole tree on every run, so it does the
        two common cases inline: a file the index vouches for is only stat'ed, and a plain
        ``.py`` file it does not know is stat'ed, its access checked and its row added
        unread (read when it is first needed, see the module docstring). The clock is read
        once, before the first stat: every stamp is judged as of then, which is before each
        file's stat and read (a file changed since then is racy, never trusted)."""
        readable: list[SourceFile] = []
        rows, overrides, index = self._rows, self._overrides, self.index
        fresh, has_digest, put = index.fresh, index.has_digest, index.put
        deferred, now, unread = self._deferred, time.time_ns(), 0
        limit = self._unread_limit()
        owner = os.getuid() if hasattr(os, "getuid") else -1  # -1: no file's owner
        for file in files:
            path = file.path
            row: int | None
            try:
                if path in overrides:
                    row = self._admit_override(path)
                else:
                    status = os.stat(path)
                    mode = status.st_mode
                    if stat.S_ISDIR(mode):
                        continue
                    if status.st_size > limit:
                        problems.append(FileProblem(file.display, self._too_large(status.st_size)))
                        continue
                    stamp = stamp_of(status)
                    row = fresh(path, stamp)
                    if row is None and (
                        path.endswith(".py") and not is_racy(stamp, now) and not has_digest(path)
                    ):
                        if not stat.S_ISREG(mode):  # a FIFO, a device: never opened
                            raise OSError(errno.EINVAL, "not a regular file")
                        if not (status.st_uid == owner and mode & stat.S_IRUSR):
                            self._check_access(path)
                        deferred.add(path)
                        unread += 1
                        row = put(path, stamp, "")  # read when first needed
                    elif row is None:
                        row = self._admit_read(path, stamp, mode)
            except OSError as exc:
                problems.append(FileProblem(file.display, f"cannot read: {exc.strerror or exc}"))
                continue
            if row is not None:
                rows[path] = row
                readable.append(file)
        if unread:
            self._changed = True
            self.read_count += unread  # counted when admitted, not again when read
        return readable

    @staticmethod
    def _check_access(path: str) -> None:
        """Raise the error a read would meet if the file may not be read (``os.access``: the
        real user's permission). :meth:`load` asks it only of a file the real user does not
        own with its owner's read bit set: for its owner, that bit is the kernel's answer (an
        access control list keeps the owner's entry in it); where there are no user ids
        (Windows), of every file."""
        if not os.access(path, os.R_OK):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))

    def _unread_limit(self) -> float:
        """The size on disk above which a file is too large even to read: more than
        :data:`UNREAD_FACTOR` times ``max-file-size`` (no limit: infinite)."""
        if self._max_mb <= 0:
            return math.inf
        return UNREAD_FACTOR * self._max_mb * 1024 * 1024

    def _too_large(self, size: int) -> str:
        """The LL000 message of a file too large even to read (:meth:`_unread_limit`),
        decided by its size before a byte is read, the same way every run. A smaller file
        over the limit is read and searched, and is LL000 when the selection would parse it
        (``select/rounds.py``)."""
        return size_problem(size, self._max_mb) or ""

    def _admit_override(self, path: str) -> int:
        """Bytes given instead of the file's: recorded untrusted (and never saved)."""
        data = self._overrides[path]
        self._contents[path] = data
        return self.index.record(path, (-1, -1, -1, -1), content_digest(data), None)

    def _admit_read(self, path: str, stamp: Stamp, mode: int) -> int | None:
        """Admit a file the index does not vouch for and :meth:`load` did not admit unread
        (None: it is a directory now). Such a file is read now: a file
        whose stamp cannot be trusted (then the digest is what identifies its content), one
        the index knew a digest for (the replay key identified the file by it: unchanged
        bytes must keep that key; the digest is worked out at once in both cases) and a
        notebook (converted, and reported if it cannot be)."""
        data = self.memo.bytes_of(path, stamp) if self.memo is not None else None
        if data is not None:
            self._contents[path] = data
            self.read_count += 1
        else:
            # read at its stat's size if that stat found a regular file (else read_regular
            # judges what it is: a FIFO or a device named on the command line is refused)
            data = self._read(path, stamp[0] if stat.S_ISREG(mode) else -1)
        if data is None:
            return None
        self._changed = True
        read_ns = time.time_ns()
        eager = is_racy(stamp, read_ns) or self.index.has_digest(path)
        digest = content_digest(data) if eager else ""
        return self.index.record(path, stamp, digest, read_ns)

    def _read(self, path: str, size: int) -> bytes | None:
        data = self._reader(path, size)
        if data is not None:
            self._contents[path] = data
            self.read_count += 1
        return data

    def __getitem__(self, path: str) -> bytes:
        """A file's bytes (read now if the index had spared reading it, if its reading was
        deferred, or if they were forgotten; a file that cannot be read any more reads as
        empty). A file is read at the size its stat gave (``Reader``), when it has one."""
        data = self._contents.get(path)
        if data is None:
            data = self._kept(path)
        if data is None:
            row = self._rows.get(path)
            try:
                data = self._reader(path, -1 if row is None else self.index.stamps[row][0]) or b""
            except OSError:
                data = b""
        if path not in self._contents:
            self._contents[path] = data
            if path in self._deferred:
                self._deferred.discard(path)
            else:
                self.read_count += 1
        return data

    def remember_summaries(
        self, summarized: Iterable[tuple[SourceFile, FileSummary]], uncached: bool
    ) -> None:
        """Give the memo the summaries forked children made (their own memo went with them),
        when there is no cache to find them in (``select/parse.py``): by the digest the child
        worked out, never reading a file for it."""
        if self.memo is None or not uncached:
            return
        made, rows, digests = self.memo.summaries, self._rows, self.index.digests
        for file, summary in summarized:
            digest = digests[rows[file.path]]
            if digest and file.path not in self._overrides:
                made.setdefault((digest, file.module, file.is_package), summary)

    def _kept(self, path: str) -> bytes | None:
        """The memo's bytes of ``path``, if they were read at the stamp the file has now."""
        if self.memo is None or path not in self._rows:
            return None
        return self.memo.bytes_of(path, self.index.stamps[self._rows[path]])

    def forget(self, paths: Iterable[str], spare: int = 0) -> None:
        """Drop the bytes of ``paths`` (read again if needed), except bytes given instead of a
        file's, bytes whose digest is known (a summary made later must come from them) and,
        first come first kept, bytes of up to ``spare`` in all over the run's calls."""
        contents, overrides, rows, digests = (
            self._contents,
            self._overrides,
            self._rows,
            self.index.digests,
        )
        for path in paths:
            if path in contents and path not in overrides and not digests[rows[path]]:
                size = len(contents[path])
                if spare > 0 and self._spared + size <= spare:
                    self._spared += size
                else:
                    del contents[path]

    def held(self) -> set[str]:
        """The paths whose bytes are in memory now."""
        return set(self._contents)

    def digest(self, path: str) -> str:
        """The sha256 of a file's bytes (worked out now if it was never needed before)."""
        row = self._rows[path]
        known = self.index.digests[row]
        if not known:
            known = self.index.digests[row] = content_digest(self[path])
            self._changed = True
        return known

    def content_columns(self, paths: Iterable[str]) -> tuple[list[str], bytes]:
        """What identifies the files' content without reading them: each file's digest where
        known ("" where not), and the stat stamps, packed, of the files without one (a trusted
        stamp changes with the content; a file whose stamp is not trusted has a digest)."""
        rows = [self._rows[path] for path in paths]
        digests, stamps = self.index.digests, self.index.stamps
        known = [digests[row] for row in rows]
        unhashed = (stamps[row] for row, digest in zip(rows, known, strict=True) if not digest)
        return known, array("q", chain.from_iterable(unhashed)).tobytes()

    def content_ids(self, paths: Iterable[str]) -> list[str | tuple[int, int, int, int]]:
        """What identifies each file's content, as :meth:`content_columns` does, one value per
        file: its digest where known, else its stat stamp. Two runs that give a file the same
        value saw the same bytes (a digest that is not known yet, or a stamp that replaced a
        digest, only makes a file look changed)."""
        rows, digests, stamps = self._rows, self.index.digests, self.index.stamps
        return [digests[row] or stamps[row] for row in map(rows.__getitem__, paths)]

    def disk_size(self, path: str) -> int:
        """The size of the file as last stat'ed (0 for bytes given instead of a file): what
        its search will read, known without reading it."""
        return max(self.index.stamps[self._rows[path]][0], 0)

    def size(self, path: str) -> int:
        """The size of the bytes analyzed: a notebook's code cells (read again if need be),
        never the size of its file on disk, so a warm run decides as a cold one."""
        data = self._contents.get(path)
        if data is None and path.endswith(NOTEBOOK_SUFFIX):
            data = self[path]
        return len(data) if data is not None else self.index.stamps[self._rows[path]][0]

    def contains(
        self, path: str, token: bytes, needs: Mapping[bytes, tuple[bytes, ...]] | None = None
    ) -> bool:
        """Whether the file's bytes contain ``token``; remembered in the index. It is absent
        without a search when a plain token inside it is already known to be absent from the
        file, or when one of its ``needs`` (shorter tokens that every file containing it
        contains, see :func:`tokens.prerequisites`), searched first, is."""
        index, row = self.index, self._rows[path]
        bit = index.bit(token)
        checked = index.checked[row]
        if checked & bit:
            return bool(index.present[row] & bit)
        if checked & ~index.present[row] & index.inner_bits(token):
            self.note_absent(path, bit)
            return False
        for need in needs.get(token, ()) if needs else ():
            if not self.contains(path, need, needs):
                self.note_absent(path, bit)
                return False
        return self.search(path, token, bit)

    def search(self, path: str, token: bytes, bit: int) -> bool:
        """Search the file's bytes for ``token`` (its bit ``bit``), not asked of the file yet,
        and remember the answer (:meth:`contains` without what it knows beforehand)."""
        found = found_in(self[path], token)
        row = self._rows[path]
        self.index.checked[row] |= bit
        if found:
            self.index.present[row] |= bit
        self._changed = True
        return found

    def search_until_found(self, path: str, tokens: Iterable[tuple[bytes, int]]) -> bool:
        """Whether the file holds one of ``tokens`` (each with its bit), asked in order until
        one is found: a token already asked of the file is answered by the index, another is
        searched (:meth:`search`)."""
        row = self._rows[path]
        checked, present = self.index.checked, self.index.present
        for token, bit in tokens:
            if checked[row] & bit:
                if present[row] & bit:
                    return True
            elif self.search(path, token, bit):
                return True
        return False

    def note_absent(self, path: str, bits: int) -> None:
        """Remember that the file holds none of the tokens of ``bits``, known without a search
        (as :meth:`contains` knows it: a plain token inside each is known absent)."""
        self.index.checked[self._rows[path]] |= bits
        self._changed = True

    def answers(self, path: str) -> tuple[int, int]:
        """(checked, present) token bits of a file: which tokens were searched, which found."""
        row = self._rows[path]
        return self.index.checked[row], self.index.present[row]

    def token_answers(self, paths: Iterable[str]) -> list[tuple[int, int, int, str]]:
        """(row, checked, present, digest) of each path: what a forked child learned."""
        index, rows = self.index, self._rows
        return [
            (row, index.checked[row], index.present[row], index.digests[row])
            for row in map(rows.__getitem__, paths)
        ]

    def learn(self, answers: Iterable[tuple[int, int, int, str]], table_size: int) -> None:
        """Take what a forked child found (see :meth:`token_answers`). Token bits are ignored
        if the child's token table had grown past this one (they would mean other tokens):
        they are only remembered answers, and will be searched for again."""
        index = self.index
        same_table = table_size == len(index.tokens)
        for row, checked, present, digest in answers:
            if same_table:
                index.checked[row] |= checked
                index.present[row] |= present
            if digest:
                index.digests[row] = digest
        self._changed = True

    def register(self, tokens: Iterable[bytes]) -> None:
        """Give ``tokens`` their bits now, so that forked children agree on them."""
        for token in tokens:
            self.index.bit(token)

    def save(self) -> None:
        """Store the index for the next run (only this run's files; no-op without a cache)."""
        if self._cache_dir is None or self._index_path is None or not self.writes:
            return
        if not self._changed and not self._overrides and len(self._rows) == len(self.index.paths):
            return  # nothing new to remember (each admitted file has a row: the same paths)
        known = [path for path in self._rows if path not in self._overrides]
        # every row is one of this run's files (a cold run): the index as it is, not a copy
        whole = len(known) == len(self.index.paths)
        save_index(
            self._cache_dir, self._index_path, self.index if whole else self.index.subset(known)
        )
