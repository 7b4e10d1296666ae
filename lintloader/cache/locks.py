"""An advisory lock file with a bounded wait: what serializes runs that share a file.

``fcntl.flock`` is released when its holder dies, so a crashed run never blocks the next one;
a live holder that never lets go (or a lock someone else planted) is waited for only so long.
Without ``fcntl`` (not POSIX) nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

POLL_S = 0.05


class LockBusy(Exception):
    """The lock was still held by someone else when the wait ran out."""


@contextlib.contextmanager
def bounded_lock(path: Path, wait_s: float, mode: int = 0o600) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (created with ``mode`` masked by the umask, never
    through a link) for the body;
    yields whether it is held (False: it could not be created, the body runs unlocked).
    :class:`LockBusy` when someone else still held it after ``wait_s`` seconds."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield False
        return
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags, mode)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(f"{path} is held by another process") from None
                time.sleep(POLL_S)
        yield True
    finally:
        os.close(descriptor)  # releases the lock
