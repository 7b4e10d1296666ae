"""How a scanned path is shown: relative to the working directory when inside it, else to a
site directory, escaped so that it prints on one line (:mod:`lintloader.scan.discover.escape`)."""

from __future__ import annotations

import os

from lintloader.scan.discover.escape import printable


def inside(absolute: str, anchor: str) -> str | None:
    """``absolute`` relative to ``anchor`` when it lies inside it, else None. Both are
    normalized absolute paths, so this is string slicing (``os.path.relpath`` per file costs a
    third of a second over a site-packages)."""
    if absolute == anchor:
        return "."
    prefix = anchor.rstrip(os.sep) + os.sep
    return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def display_path(path: str, cwd: str, base: str | None = None) -> str:
    """Relative to the working directory when inside it, else to ``base`` (a site dir);
    undecodable bytes and control characters escaped (see
    :mod:`lintloader.scan.discover.escape`)."""
    absolute = os.path.abspath(path)
    for anchor in (cwd, base):
        relative = inside(absolute, anchor) if anchor else None
        if relative is not None:
            return printable(relative)
    return printable(absolute)
