"""A scanned file's bytes, as they are on disk (a notebook's: its code cells as Python).

Every file is opened without following it into a FIFO or a device, and read with plain
``os.read`` calls: no buffered file object per file.
"""

from __future__ import annotations

import errno
import os
import stat

from lintloader.scan.model import NOTEBOOK_SUFFIX


def read_source(path: str) -> bytes | None:
    """A regular file's bytes (a notebook's: its code cells as Python, see
    :mod:`lintloader.scan.notebooks`); None for a directory. Never blocks on a FIFO or a
    device."""
    if path.endswith(NOTEBOOK_SUFFIX):
        from lintloader.scan.notebooks import notebook_to_python

        data = read_file(path)
        return None if data is None else notebook_to_python(data)
    return read_file(path)


def read_file(path: str) -> bytes | None:
    """A regular file's bytes, as they are on disk; None for a directory."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            return None
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(descriptor, True)
        return _read_to_end(descriptor, status.st_size)
    finally:
        os.close(descriptor)


def _read_to_end(descriptor: int, size: int) -> bytes:
    """Everything left in ``descriptor``, expected to be ``size`` bytes (it may have grown or
    shrunk since): plain ``os.read`` calls, without a buffered file object per file."""
    chunks = []
    while chunk := os.read(descriptor, max(size, 0) + 1):  # +1: the usual case ends in 2 reads
        chunks.append(chunk)
        size = 65536
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
