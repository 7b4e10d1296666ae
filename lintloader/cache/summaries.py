"""Content-addressed store of file summaries, and the safe file operations every cache file uses.

A summary depends only on a file's bytes, its module name and the tool version, so the key is a
hash of those (the bytes enter through their sha256, which the stat index remembers, so a warm
run finds a summary without reading the file). Entries are written to a temporary file and
renamed into place, so concurrent runs sharing one directory never see a partial entry; a corrupt
entry counts as a miss. Entries are JSON (``cache/codec.py``) read back as exactly a
:class:`FileSummary`; nothing is ever read or written through a symbolic link.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lintloader import __version__
from lintloader.cache.code import code_digest
from lintloader.cache.files import read_entry, write_entry

if TYPE_CHECKING:  # summaries are imported only when one is keyed, read or written
    from lintloader.summary.model import FileSummary


def content_digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def summary_key(digest: str, module: str, is_package: bool, code: str) -> str:
    """The cache key of a file's summary; ``digest`` is :func:`content_digest` of its bytes,
    ``code`` the digest of lintloader's own code (:func:`lintloader.cache.code.code_digest`).
    A module name that is not valid UTF-8 (from a file name) enters with its raw bytes."""
    from lintloader.summary.model import SUMMARY_SCHEMA

    text = f"{__version__}\0{code}\0{SUMMARY_SCHEMA}\0{module}\0{int(is_package)}\0{digest}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def summary_kind() -> str:
    """The kind of a summary entry (``cache/codec.py``): it names the summary schema."""
    from lintloader.summary.model import SUMMARY_SCHEMA

    return f"summary {SUMMARY_SCHEMA}"


class SummaryCache:
    """Summaries under ``<dir>/summaries-<version>/<kk>/<key>.json``."""

    def __init__(self, directory: Path) -> None:
        self.root = Path(directory)
        self.directory = self.root / f"summaries-{__version__}"
        self.used: set[str] = set()  # keys read or written by this run
        self.made: set[str] = set()  # keys written by this run (their summaries were parsed)
        # with keep_written (a forked child's parses): each summary written, by id, and its
        # entry's bytes, until taken (the child sends them to the parent as they are)
        self.keep_written = False
        self._written: dict[int, tuple[FileSummary, bytes]] = {}

    @functools.cached_property
    def code(self) -> str:
        """The digest of lintloader's code, computed (or read from the cache) on first use."""
        return code_digest(self.root)

    def settle_code(self) -> None:
        """Work out :attr:`code` now, in this process: the processes a cold scan forks
        inherit it instead of each reading (or computing and writing) it again."""
        _ = self.code

    @functools.cached_property
    def kind(self) -> str:
        return summary_kind()

    def key(self, digest: str, module: str, is_package: bool) -> str:
        return summary_key(digest, module, is_package, self.code)

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
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileSummary | None:
        from lintloader.summary.model import FileSummary

        value: FileSummary | None = read_entry(self.root, self._path(key), self.kind, FileSummary)
        if value is None:  # missing, a link, or not a summary this version writes
            return None
        self.used.add(key)
        return value

    def put(self, key: str, summary: FileSummary) -> None:
        from lintloader.summary.model import FileSummary

        data = write_entry(self.root, self._path(key), self.kind, FileSummary, summary)
        self.used.add(key)
        self.made.add(key)
        if self.keep_written and data is not None:
            self._written[id(summary)] = (summary, data)

    def take_written(self, summary: FileSummary) -> bytes | None:
        """The bytes of the entry written for this very ``summary`` object (with
        :attr:`keep_written`), let go of here; None when none was."""
        found = self._written.pop(id(summary), None)
        return found[1] if found is not None and found[0] is summary else None
