"""The one place that writes source files: unified diffs, safety checks, atomic writes and
stale-bytecode removal. Shared by every strategy.

A write is refused (and reported) when the new bytes do not parse, the file is not writable,
or the path (after symlinks) leaves the scanned roots. Otherwise the bytes go to a fresh
temporary file in the same directory (``safe_file.write_atomic``), get the original's owner and
permission bits, are flushed and renamed over the original, so a reader sees the old file or
the new one, never half of one. Encoding, BOM and line endings are whatever the bytes carry
(libcst's ``module.bytes`` keeps the original's).
"""

from __future__ import annotations

import difflib
import glob
import hashlib
import io
import os
import stat
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from lintloader.fixers.edit.parsing import reparse_ok
from lintloader.trust.safe_file import write_atomic

INSTALLED_MARKERS = ("site-packages", "dist-packages")

Count = TypeVar("Count")


class WriteError(Exception):
    """A file that was not written, with the reason (reported; the run goes on)."""


class FileChanged(WriteError):
    """The file no longer holds the bytes that were analysed: someone saved it meanwhile."""


@dataclass(frozen=True)
class Roots:
    """The scanned roots: nothing outside them is written, symlinks included."""

    paths: tuple[str, ...]

    @classmethod
    def of(cls, roots: Iterable[str]) -> Roots:
        """A directory root is where it leads; a file root is the name itself, in its real
        directory, so a named link (``fix LINK.py``) does not bring its target in."""
        return cls(tuple(_root(r) for r in roots))

    def contains(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.paths)


def _root(path: str) -> str:
    if os.path.isdir(path):
        return os.path.realpath(path)
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(folder), name)


def decode(data: bytes) -> str:
    """Text for a diff, decoded the way Python would read the file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", errors="replace")


def unified_diff(display: str, old: bytes, new: bytes) -> str:
    lines = difflib.unified_diff(
        decode(old).splitlines(keepends=True),
        decode(new).splitlines(keepends=True),
        fromfile=f"a/{display}",
        tofile=f"b/{display}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def notebook_diff(display: str, old: bytes, new: bytes) -> str:
    """A fixed notebook's diff, cell by cell as ruff shows one (``a/train.ipynb:cell 3``),
    from the two Python forms the fixers worked on."""
    from lintloader.scan.read.notebooks import changed_cells

    parts = []
    for number, before, after in changed_cells(old, new):
        where = f"{display}:cell {number}"
        lines = difflib.unified_diff(
            [line + "\n" for line in before],
            [line + "\n" for line in after],
            fromfile=f"a/{where}",
            tofile=f"b/{where}",
        )
        parts.append("".join(lines))
    return "".join(parts)


def is_installed(path: str) -> bool:
    parts = os.path.realpath(path).split(os.sep)
    return any(marker in parts for marker in INSTALLED_MARKERS)


def why_not_writable(path: str, roots: Roots, allow_installed: bool) -> str | None:
    """Why ``path`` must not be written, or None."""
    if not roots.contains(path):
        return "resolves (through a symbolic link) outside the scanned paths; not writing"
    if not allow_installed and is_installed(path):
        return "is an installed package; use `lintloader fix --site-packages` (it keeps a backup)"
    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    try:
        # no write bit on the file or its directory: even root leaves it alone
        read_only = not os.stat(real).st_mode & 0o222 or not os.stat(folder).st_mode & 0o222
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if read_only or not os.access(real, os.W_OK) or not os.access(folder, os.W_OK):
        return "permission denied (read-only file or directory); skipped"
    return None


def atomic_write(
    path: str,
    data: bytes,
    verify: bool = True,
    expected_sha256: str | None = None,
    mode: int | None = None,
) -> None:
    """Replace ``path`` (the file a symlink points at, if it is one) with ``data``, keeping its
    owner, group and permission bits (or ``mode``); with ``verify``, only if ``data`` parses;
    with ``expected_sha256``, only if the file still holds those bytes just before the replace
    (else :class:`FileChanged`)."""
    problem = reparse_ok(data, path) if verify else None
    if problem:
        raise WriteError(f"the fixed file would not parse ({problem}); not written")
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None

    def unchanged() -> None:
        if expected_sha256 is not None and digest_of(real) != expected_sha256:
            raise FileChanged("changed on disk while lintloader worked on it; not written")

    try:
        write_atomic(
            real,
            data,
            mode=stat.S_IMODE(info.st_mode) if mode is None else mode,
            owner=(info.st_uid, info.st_gid),
            before_replace=unchanged,
        )
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None


def rewrite_scanned(path: str, roots: Roots, edit: Callable[[bytes], tuple[bytes, Count]]) -> Count:
    """Replace a scanned file (never an installed one) with what ``edit`` makes of its bytes,
    atomically, and return what ``edit`` counted (``check --add-noqa``, and ``check --fix``
    taking unused codes out of ``# noqa``); :class:`WriteError` when it may not be written,
    ``OSError`` when it cannot be read."""
    problem = why_not_writable(path, roots, allow_installed=False)
    if problem:
        raise WriteError(problem)
    with open(path, "rb") as handle:
        edited, counted = edit(handle.read())
    atomic_write(path, edited)
    return counted


def digest_of(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def remove_stale_bytecode(path: str) -> list[str]:
    """Delete ``__pycache__/<name>.*.pyc`` beside ``path`` so no old bytecode shadows the new
    source (its mtime and size could match the cache's record). Returns what could not go."""
    real = os.path.realpath(path)
    stem = os.path.splitext(os.path.basename(real))[0]
    pattern = os.path.join(glob.escape(os.path.dirname(real)), "__pycache__", f"{stem}.*.pyc")
    failed = []
    for pyc in glob.glob(pattern):
        try:
            os.unlink(pyc)
        except FileNotFoundError:
            continue
        except OSError as exc:
            failed.append(f"{pyc}: {exc.strerror or exc}")
    return failed
