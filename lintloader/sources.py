"""The scanned files' bytes and what is known about them, read at most once per run.

A :class:`SourceSet` answers three questions for the rest of the pipeline: a file's bytes, the
digest of those bytes (the summary cache key) and whether it contains a token (demand
selection). With a stat index from an earlier run, an unchanged file answers the last two from
the index without being read at all.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from lintloader.cache import content_digest
from lintloader.discover import FileProblem, SourceFile
from lintloader.statindex import Entry, StatIndex, index_path, load_index, save_index, stamp_of
from lintloader.tokens import found_in

Reader = Callable[[str], "bytes | None"]  # None: a directory, skip it; OSError: unreadable


class SourceSet:
    """Bytes, digests and token answers for the files of one run."""

    def __init__(
        self,
        reader: Reader,
        overrides: dict[str, bytes] | None = None,
        cache_dir: Path | None = None,
        roots: Iterable[str] = (),
    ) -> None:
        self._reader = reader
        self._overrides = dict(overrides or {})
        self._cache_dir = cache_dir
        self._index_path = index_path(cache_dir, roots) if cache_dir else None
        self.index = load_index(self._index_path) if self._index_path else StatIndex()
        self._contents: dict[str, bytes] = {}
        self._entries: dict[str, Entry] = {}
        self.read_count = 0
        self._changed = False  # anything the index did not know yet

    @property
    def index_file(self) -> Path | None:
        """Where the stat index of these roots is stored (None without a cache)."""
        return self._index_path

    def load(self, files: Iterable[SourceFile], problems: list[FileProblem]) -> list[SourceFile]:
        """The readable files among ``files``; the others become problems (directories are
        skipped). Files the index vouches for are only stat'ed."""
        readable: list[SourceFile] = []
        for file in files:
            try:
                entry = self._admit(file.path)
            except OSError as exc:
                problems.append(FileProblem(file.display, f"cannot read: {exc.strerror or exc}"))
                continue
            if entry is not None:
                self._entries[file.path] = entry
                readable.append(file)
        return readable

    def _admit(self, path: str) -> Entry | None:
        if path in self._overrides:
            data = self._overrides[path]
            self._contents[path] = data
            return Entry((-1, -1, -1, -1), content_digest(data))  # never stored in the index
        status = os.stat(path)
        if stat.S_ISDIR(status.st_mode):
            return None
        stamp = stamp_of(status)
        known = self.index.fresh(path, stamp)
        if known is not None:
            return known
        data = self._read(path)
        if data is None:
            return None
        self._changed = True
        return self.index.record(path, stamp, content_digest(data), time.time_ns())

    def _read(self, path: str) -> bytes | None:
        data = self._reader(path)
        if data is not None:
            self._contents[path] = data
            self.read_count += 1
        return data

    def __getitem__(self, path: str) -> bytes:
        """A file's bytes (read now if the index had spared reading it)."""
        data = self._contents.get(path)
        if data is None:
            data = self._reader(path) or b""
            self._contents[path] = data
            self.read_count += 1
        return data

    def digest(self, path: str) -> str:
        return self._entries[path].digest

    def size(self, path: str) -> int:
        data = self._contents.get(path)
        return len(data) if data is not None else self._entries[path].stamp[0]

    def contains(self, path: str, token: bytes) -> bool:
        """Whether the file's bytes contain ``token``; remembered in the index."""
        entry = self._entries[path]
        bit = self.index.bit(token)
        if entry.checked & bit:
            return bool(entry.present & bit)
        found = found_in(self[path], token)
        self._changed = True
        entry.checked |= bit
        if found:
            entry.present |= bit
        return found

    def save(self) -> None:
        """Store the index for the next run (only this run's files; no-op without a cache)."""
        known = set(self._entries) - set(self._overrides)
        if self._cache_dir is None or self._index_path is None:
            return
        if not self._changed and known == set(self.index.entries):
            return  # nothing new to remember
        self.index.keep_only(known)
        save_index(self._cache_dir, self._index_path, self.index)
