"""The one home of lintloader's file reads and writes that a hostile tree must not steer.

:func:`read_regular` reads a regular file only (never a FIFO, a device or, unless asked, a
link), its size taken from ``fstat`` before a byte is read and refused over a cap;
:func:`read_sized` reads a file whose size and type a ``stat`` just gave, without the ``fstat``.
:func:`write_atomic` writes a file whole or not at all: a fresh temporary, created with
``O_EXCL | O_NOFOLLOW`` under a random name in the target's directory (so a planted link of any
name is never followed), flushed to disk, then renamed over the target. Every writer of
lintloader (cache entries, fixed sources, backups and their manifest, baselines, report files)
goes through it; a reader of untrusted bytes (configuration, baselines, manifests, scanned
files) through :func:`read_regular`.

Imports nothing of lintloader: every layer may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable

TEMP_SUFFIX = ".lintloader-tmp"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens without a writer; its type is then refused
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """Not a regular file (a link where none is followed, a FIFO, a device, a directory)."""


class TooLarge(OSError):
    """A regular file over the size cap; nothing of it was read."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, over the limit of {cap}")
        self.size = size
        self.cap = cap


class Refused(OSError):
    """A regular file refused for what its status says (another user owns it...)."""


class UnsafeWrite(OSError):
    """A write refused: its target is a link, or its directory leads outside where it may."""


def read_regular(
    path: str | os.PathLike[str],
    cap: int | None,
    follow: bool = False,
    accept: Callable[[os.stat_result], str | None] | None = None,
) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``cap`` bytes (None: no cap):
    :class:`NotRegular` for anything else (a link too, unless ``follow``), :class:`TooLarge`
    when its size, taken before reading, is over the cap, :class:`Refused` when ``accept``
    gives a reason against its status (e.g. :func:`owned_by_another_user`); other
    OSErrors as they come."""
    flags = _READ_FLAGS if follow else _READ_FLAGS | _NOFOLLOW
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegular(errno.ELOOP, "a symbolic link, not a regular file") from None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        refused = accept(status) if accept is not None else None
        if refused:
            raise Refused(errno.EPERM, refused)
        if cap is not None and status.st_size > cap:
            raise TooLarge(status.st_size, cap)
        # (O_NONBLOCK, which kept a FIFO from blocking the open, means nothing to a regular
        # file: no fcntl to clear it)
        data = _read_to_end(descriptor, status.st_size, cap)
    finally:
        os.close(descriptor)
    if cap is not None and len(data) > cap:  # it grew while it was read
        raise TooLarge(len(data), cap)
    return data


def read_sized(path: str, size: int) -> bytes:
    """The bytes of ``path`` (through a link), a regular file of ``size`` bytes when it was
    stat'ed just before (a scan stats every file first): one ``read`` of ``size + 1`` bytes and
    no ``fstat``, which :func:`read_regular` pays on every file. A short read is read on to
    the end, as :func:`read_regular` does. A read that fills is a file that grew, or is no
    longer regular: then its ``fstat`` decides, as in :func:`read_regular` (:class:`NotRegular`,
    a directory too), and the rest is read. A file swapped after the stat for a FIFO (opened
    without blocking) or a device reads as what its reads return up to about ``size`` bytes, as
    any file changed after its stat reads as its new bytes: never a blocking read."""
    descriptor = os.open(path, _READ_FLAGS)
    try:
        try:
            data = os.read(descriptor, max(size, 0) + 1)
        except IsADirectoryError:
            raise NotRegular(errno.EISDIR, "a directory, not a regular file") from None
        if len(data) == size:
            return data
        if len(data) < size:  # it shrank, or its file system hands it out a part at a time
            return data + _read_to_end(descriptor, size - len(data), None)
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        return data + _read_to_end(descriptor, status.st_size - len(data), None)
    finally:
        os.close(descriptor)


def _read_to_end(descriptor: int, size: int, cap: int | None) -> bytes:
    """What is left in regular file ``descriptor``, expected to be ``size`` bytes (it may
    have grown or shrunk since), at most ``cap + 1``: plain ``os.read`` calls, no buffered file
    object (a scan reads thousands of files). A read of a regular file returns less than asked
    only at its end, so the usual case is one read of ``size + 1`` bytes that returns ``size``
    bytes (a file that grew fills the read, and the reads go on; one that shrank, or a
    kernel file that says its size is 0, is read until a read returns nothing)."""
    chunks = []
    want = max(size, 0) + 1
    total = 0
    while chunk := os.read(
        descriptor, asked := want if cap is None else min(want, cap + 1 - total)
    ):
        chunks.append(chunk)
        total += len(chunk)
        if (cap is not None and total > cap) or (len(chunk) < asked and 0 < size <= total):
            break  # over the cap, or at the end (a /proc file's size is 0: read to a 0)
        want = 65536
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def owned_by_another_user(status: os.stat_result) -> str | None:
    """Why a file with ``status`` is not the user's to trust, as git's ``safe.directory``
    says it: owned by someone else than the user or root; None when it is theirs."""
    if not hasattr(os, "geteuid") or status.st_uid in (os.geteuid(), 0):
        return None
    return f"owned by another user (uid {status.st_uid}); not trusted"


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    private: bool = False,
    *,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
    inside: str | None = None,
    replace_link: bool = False,
    before_replace: Callable[[], None] | None = None,
    make_parents: bool = False,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data``, whole or not at all. The temporary is created in the
    target's directory, mode 0600 when ``private`` else 0666 less the umask; then it gets
    ``owner`` (where this user may give it) and ``mode``; ``before_replace`` runs last and may
    refuse by raising. :class:`UnsafeWrite` when the target is a link (unless
    ``replace_link``: the link itself is replaced, never followed) or, with ``inside``, when
    the target's directory is not (after links) below that directory. ``make_parents``: the
    missing directories above the target are made first (below ``inside``, with it).
    ``durable``: the bytes reach the disk before the rename (``fsync``); a cache entry waives
    it (after a crash it may be empty or cut, and its reader takes such an entry as a miss)."""
    target = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(target)
    if make_parents:
        _make_parents(folder, inside)
    _check_target(target, folder, inside, replace_link)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(8).hex()}{TEMP_SUFFIX}")
    descriptor = os.open(temporary, _CREATE_FLAGS, 0o600 if private else 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(descriptor)
            if owner is not None:
                _give_owner(descriptor, owner)
            if mode is not None:  # after the owner: a chown may clear set-id bits
                os.fchmod(descriptor, mode)
        if before_replace is not None:
            before_replace()
        os.replace(temporary, target)  # the rename replaces a link at target, never follows it
    except BaseException:
        # left only when something failed (a replaced temporary is gone: no unlink to fail
        # and be suppressed after each of a fresh cache's writes)
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _make_parents(folder: str, inside: str | None) -> None:
    """Make ``folder`` and the missing directories above it; the nearest existing one must
    lie (after links) below ``inside``, so nothing is made through a link out of it."""
    missing = []
    existing = folder
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        missing.append(existing)
        existing = os.path.dirname(existing)
    if inside is not None and not is_below(os.path.realpath(existing), os.path.realpath(inside)):
        raise UnsafeWrite(errno.EXDEV, f"leads (through a link) outside {inside}; not writing")
    for directory in reversed(missing):
        os.mkdir(directory)


def _check_target(target: str, folder: str, inside: str | None, replace_link: bool) -> None:
    if not replace_link and os.path.islink(target):
        raise UnsafeWrite(errno.ELOOP, "is a symbolic link; not writing through it")
    if inside is not None and not is_below(os.path.realpath(folder), os.path.realpath(inside)):
        raise UnsafeWrite(errno.EXDEV, f"leads (through a link) outside {inside}; not writing")


def is_below(path: str, folder: str) -> bool:
    """Whether the absolute ``path`` is ``folder`` or below it (both already resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _give_owner(descriptor: int, owner: tuple[int, int]) -> None:
    """The owner and group of the file replaced, where this user may (root may; others may
    keep their own file's group)."""
    if not hasattr(os, "fchown"):
        return
    status = os.fstat(descriptor)
    if (status.st_uid, status.st_gid) != owner:
        with contextlib.suppress(PermissionError):
            os.fchown(descriptor, *owner)
