"""Cache entries made now and written later.

A check's discovery makes what the next run's walk takes (a tree's memo, a site's listings:
``scan/discover/``) before anything is checked. Written there, they are the parent's serial
work (the 4x tree's walk: 7.8 MB, ~0.1 s to make and write); left here instead, a cold scan's
first resident child writes them before it takes its first piece of the first round's work,
so that the round's queue shares them out like any piece (``select/rounds.py``), and the
parent writes whatever is still pending when the run ends (no child, or one that failed:
``pipeline/engine.py``). The entries are the same either way, each written atomically by
one process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Write = Callable[[], None]


@dataclass
class PendingStores:
    """Writes of cache entries: made at once unless ``defer``, then kept until :meth:`write`
    (or dropped by :meth:`written_elsewhere`)."""

    defer: bool = False
    writes: list[Write] = field(default_factory=list)

    def add(self, write: Write) -> None:
        if self.defer:
            self.writes.append(write)
        else:
            write()

    def extend(self, other: PendingStores) -> None:
        """Take ``other``'s pending writes (a discovery merged into another)."""
        self.writes.extend(other.writes)
        other.writes = []

    def write(self) -> None:
        """Make every pending write, in the order they were added (each once)."""
        writes, self.writes = self.writes, []
        for write in writes:
            write()

    def written_elsewhere(self) -> None:
        """Another process (forked from this one) made the pending writes: drop them here."""
        self.writes = []
