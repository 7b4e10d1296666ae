"""A file's stat stamp, and git's racy rule: the one home of both for the stat index, the
listings, the interpreter's answer and the warm fast path (which imports only this of the scan,
so it holds nothing but the standard library's ``os``).

A stamp is (size, mtime, ctime, inode) in nanoseconds. A file modified within :data:`RACY_NS`
of the moment it was read may have changed again within the same timestamp tick, so its stamp
cannot vouch for its content.
"""

from __future__ import annotations

import os

RACY_NS = 2_000_000_000
Stamp = tuple[int, int, int, int]  # st_size, st_mtime_ns, st_ctime_ns, st_ino
UNTRUSTED: Stamp = (-1, -1, -1, -1)  # no file's stamp: one not to trust, or no file there


def stamp_of(status: os.stat_result) -> Stamp:
    """A file's stamp from its ``os.stat``."""
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def is_racy(stamp: Stamp, read_ns: int) -> bool:
    """Whether a file read at ``read_ns`` was modified too recently for its stamp to vouch
    for its content next time."""
    return max(stamp[1], stamp[2]) >= read_ns - RACY_NS
