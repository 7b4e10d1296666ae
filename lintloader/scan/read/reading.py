"""A scanned file's bytes, as they are on disk (a notebook's: its code cells as Python).

Every file is opened without following it into a FIFO or a device, and read with plain
``os.read`` calls: no buffered file object per file (``safe_file.read_regular``). A file whose
size the scan's own stat gave just before is read without another ``fstat``
(``safe_file.read_sized``): one ``open``, ``read`` and ``close`` a file.
"""

from __future__ import annotations

import os

from lintloader.scan.model import NOTEBOOK_SUFFIX
from lintloader.trust.safe_file import NotRegular, read_regular, read_sized


def read_source(path: str, size: int = -1) -> bytes | None:
    """A regular file's bytes (a notebook's: its code cells as Python, see
    :mod:`lintloader.scan.read.notebooks`); None for a directory. Never blocks on a FIFO or a
    device. ``size``: the file's size as stat'ed just before (-1: not known)."""
    if path.endswith(NOTEBOOK_SUFFIX):
        from lintloader.scan.read.notebooks import notebook_to_python

        data = read_file(path, size)
        return None if data is None else notebook_to_python(data)
    return read_file(path, size)


def read_file(path: str, size: int = -1) -> bytes | None:
    """A regular file's bytes, as they are on disk (``safe_file.read_regular``, through a
    link: the walk decided which links it follows; ``safe_file.read_sized`` when ``size``, the
    size a stat just gave, is known); None for a directory."""
    try:
        return read_regular(path, None, follow=True) if size < 0 else read_sized(path, size)
    except NotRegular:
        if os.path.isdir(path):
            return None
        raise
