"""A one-line progress display on stderr for long scans (only when stderr is a terminal)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

_INTERVAL_S = 0.1  # redraw at most this often


@dataclass(eq=False, repr=False)
class Progress:
    """``lintloader: 7972 files found, 12 parsed, 95 from cache`` redrawn in place."""

    stream: TextIO
    found: int = 0
    parsed: int = 0
    cached: int = 0
    _drawn_at: float = field(default=0.0, repr=False)
    _shown: bool = field(default=False, repr=False)

    @classmethod
    def for_stderr(cls) -> Progress | None:
        """A progress line on stderr if it is a terminal, else None (no output at all)."""
        stream = sys.stderr
        return cls(stream) if stream is not None and stream.isatty() else None

    def update(self, **counts: int) -> None:
        for name, value in counts.items():
            setattr(self, name, value)
        now = time.monotonic()
        if now - self._drawn_at >= _INTERVAL_S:
            self._drawn_at = now
            self._draw()

    def found_so_far(self, count: int) -> None:
        """While the tree is walked: ``lintloader: 120000 files found``."""
        self.update(found=count)

    def _draw(self) -> None:
        line = (
            f"lintloader: {self.found} files found, {self.parsed} parsed, {self.cached} from cache"
        )
        self.stream.write(f"\r{line}\x1b[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """Erase the line, so that what follows starts on a clean line."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@dataclass(eq=False, repr=False)
class ParseStats:
    """How many summaries a run parsed and loaded from the cache, forwarded to the progress
    line. (It lives here, not in ``lintloader.select.parse``, so that a replayed run reports its
    counts without importing the parsing machinery.)"""

    parsed: int = 0
    cached: int = 0
    progress: Progress | None = None

    def count(self, *, parsed: int = 0, cached: int = 0) -> None:
        self.parsed += parsed
        self.cached += cached
        if self.progress is not None:
            self.progress.update(parsed=self.parsed, cached=self.cached)
