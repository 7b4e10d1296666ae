"""What the checks of one process learned of their files, for the next check in it.

``check`` runs a check and then its fix trial, which checks the same files again (in memory,
with edited bytes for the files it fixes), and ``fix`` checks again after each round: every
one of those checks used to stat, read and search every file anew (14 reads of each file of a
site-packages for one ``check --site-packages --no-cache``, 2 with a cache). A
:class:`ReadMemo` given to each of them (``CheckOptions.reads``) carries over

* the stat index of each set of scan roots (its token answers, stamps and digests), so that a
  file whose stamp is unchanged answers every round from its bits, without being read, cache
  or no cache (the index object is shared: rows are only added or updated);
* the bytes a check held at its end (the files it parsed; a file's bytes are only ever used
  while the file's stat is still the one recorded before they were read, as the stat index's
  own answers are);
* the summaries made without a cache (``select/parse.py``), by content digest and module, as
  the summary cache keys them.

It holds no more than one check held at its end (memory follows the parsed files,
docs/performance.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lintloader.scan.read.stamps import Stamp
    from lintloader.scan.read.statindex import StatIndex
    from lintloader.summary.model import FileSummary

SummaryKey = tuple[str, str, bool]  # content digest, module name, is a package


class ReadMemo:
    """See the module docstring. Plain attributes: made on every ``check``, replay included."""

    __slots__ = ("indexes", "kept", "summaries")

    def __init__(self) -> None:
        self.indexes: dict[tuple[str, ...], StatIndex] = {}  # by sorted scan roots
        self.kept: dict[str, tuple[Stamp, bytes]] = {}  # path -> (stamp before reading, bytes)
        self.summaries: dict[SummaryKey, FileSummary] = {}

    def bytes_of(self, path: str, stamp: Stamp) -> bytes | None:
        """The bytes kept of ``path`` if its stat is still ``stamp`` (a trusted one)."""
        found = self.kept.get(path)
        if found is None or found[0] != stamp or stamp[1] < 0:
            return None
        return found[1]

    def stamps(self, paths: Iterable[str]) -> dict[str, Stamp]:
        """The trusted stamp each of ``paths`` had when a check of this process stat'ed it
        (before reading it), where one is known: the warm fast path stores them instead of
        stat'ing every scanned file again (a file changed since only looks changed)."""
        indexes = list(self.indexes.values())
        found: dict[str, Stamp] = {}
        for path in paths:
            for index in indexes:
                stamp = index.stamp(path)
                if stamp is not None:
                    found[path] = stamp
                    break
        return found

    def read(self, path: str, reader: Callable[[str], bytes | None]) -> bytes | None:
        """``reader(path)``, unless the bytes of ``path`` are kept and its stat is still the
        one they were read at (``fix``'s rounds read the files they edit this way)."""
        found = self.kept.get(path)
        if found is not None:
            from lintloader.scan.read.stamps import stamp_of

            try:
                now = os.stat(path)
            except OSError:
                return reader(path)
            data = self.bytes_of(path, stamp_of(now))
            if data is not None:
                return data
        return reader(path)
