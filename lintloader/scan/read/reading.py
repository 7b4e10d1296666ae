"""A scanned file's bytes, as they are on disk (a notebook's: its code cells as Python).

Every file is opened without following it into a FIFO or a device, and read with plain
``os.read`` calls: no buffered file object per file (``safe_file.read_regular``).
"""

from __future__ import annotations

import os

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.trust.safe_file import NotRegular, read_regular


def read_source(path: str) -> bytes | None:
    """A regular file's bytes (a notebook's: its code cells as Python, see
    :mod:`lintloader.scan.read.notebooks`); None for a directory. Never blocks on a FIFO or a
    device."""
    if path.endswith(NOTEBOOK_SUFFIX):
        from lintloader.scan.read.notebooks import notebook_to_python

        data = read_file(path)
        return None if data is None else notebook_to_python(data)
    return read_file(path)


def read_file(path: str) -> bytes | None:
    """A regular file's bytes, as they are on disk (``safe_file.read_regular``, through a
    link: the walk decided which links it follows); None for a directory."""
    try:
        return read_regular(path, None, follow=True)
    except NotRegular:
        if os.path.isdir(path):
            return None
        raise
