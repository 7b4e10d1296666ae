"""The warm fast path of ``check``: before click or any of the analysis is imported, a plain
``check --site-packages`` whose stored answer still holds prints that answer and exits.

The stored answer (``fast_record.py`` writes it, at the end of a ``check`` that replayed its
stored run or stored one) is what a replay prints, chunk by chunk on standard output and error,
its exit code, and the stamp (size, mtime, ctime, inode) of every path the answer depends on:
the scanned files, every directory the walk of the site directories went into (with the stamp
the walk took), each ``pyproject.toml`` a configuration is looked for in, the files the check
opened (configuration, baseline, the modules it imported), lintloader's own files and the
interpreter's candidate sites.
It is kept under a name made from the command line, the working directory, the environment
and the interpreter (:func:`run_key`), which it also stores in full.
It answers only when all of that is equal now: else the command runs through click as always.

A stored answer is data: its paths are only stat'ed, its bytes only written to standard output
and standard error, and it is read only from the user's own cache (``cache/place.py``).
This module imports only the standard library's ``os``, ``stat``, ``array`` and ``zlib``,
``trust/safe_file.py``, ``cache/place.py`` and ``scan/read/stamps.py``, and makes no dataclass.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from array import array

from lintloader import __version__
from lintloader.cache.place import default_cache_folder, foreign_problem
from lintloader.scan.read.stamps import UNTRUSTED, stamp_of
from lintloader.trust.safe_file import read_regular

MAGIC = b"lintloader fast check 1\n"
FOLDER_PREFIX = "fast-"
MAX_RECORD = 64 * 1024 * 1024
# the options a stored answer may stand for: no side effect but the report on standard
# output, no standard input, and inputs the stamps cover (not distributions: their files
# come from metadata)
FLAGS = frozenset(
    (
        "--site-packages",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "--exit-zero",
        "--statistics",
        "--color",
        "--no-color",
    )
)
VALUED = frozenset(
    (
        "--output-format",
        "--min-severity",
        "--select",
        "--extend-select",
        "--ignore",
        "--extend-ignore",
        "--exclude",
        "--extend-exclude",
        "--per-file-ignores",
        "--config",
        "--cache-dir",
        "-j",
        "--jobs",
        "--python",
    )
)
# what a shell sets anew for every command, which no check reads
VOLATILE = frozenset(("_", "OLDPWD"))


def cache_folder(argv: list[str]) -> str | None:
    """The cache directory of ``check ARGS`` when ``argv`` is a form the fast path answers
    (``--cache-dir``, else the default), else None."""
    if argv[:1] != ["check"] or "--site-packages" not in argv:
        return None
    folder = None
    words = iter(argv[1:])
    for word in words:
        name, equals, value = word.partition("=")
        if word in FLAGS:
            continue
        if name not in VALUED or (not equals and word != name):
            return None
        if not equals:
            value = next(words, "")
        if not value or (name == "--output-format" and ":" in value):
            return None  # FORMAT:PATH writes a file
        if name == "--cache-dir":
            folder = value
    return folder or default_cache_folder()


def run_key(argv: list[str]) -> bytes | None:
    """Everything besides the stamped paths that a check's output depends on: the command
    line, the working directory, the environment, the interpreter and where its output goes.
    None when standard output or standard error is closed (click says so)."""
    try:
        for fd in (1, 2):
            os.fstat(fd)
    except OSError:
        return None
    ttys = "".join("t" if os.isatty(fd) else "f" for fd in (1, 2))
    environment = sorted(f"{k}={v}" for k, v in os.environ.items() if k not in VOLATILE)
    words = [
        MAGIC.decode(),
        __version__,
        os.getcwd(),
        sys.executable,
        sys.version,
        repr(sys.flags),
        str(os.geteuid() if hasattr(os, "geteuid") else ""),
        ttys,
        *sys.path,
        "",
        *argv,
        "",
        *environment,
    ]
    return "\0".join(words).encode("utf-8", "surrogatepass")


def record_path(folder: str, key: bytes) -> str:
    """Where the answer of the check of ``key`` is kept (two keys may share it: it stores
    its key, and the last one written stays)."""
    import zlib

    name = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.run"
    return os.path.join(folder, FOLDER_PREFIX + __version__, name)


def answer(argv: list[str]) -> int | None:
    """Print the stored answer of ``check ARGS`` and give its exit code, when it still holds;
    else None, having printed nothing."""
    folder = cache_folder(argv)
    key = run_key(argv) if folder is not None else None
    if folder is None or key is None:
        return None
    stored = _read(folder, record_path(folder, key))
    parsed = parse(stored, key) if stored is not None else None
    if parsed is None:
        return None
    code, chunks, paths, stamps = parsed
    if stamps_now(paths) != stamps:
        return None
    return _write(chunks, code)


def _read(folder: str, path: str) -> bytes | None:
    """The record at ``path``, if it and the folders above it, up to the cache directory, are
    the user's alone (not links, nobody else may write them)."""
    for level in (folder, os.path.dirname(path)):
        try:
            status = os.lstat(level)
        except OSError:
            return None
        if not stat.S_ISDIR(status.st_mode) or foreign_problem(status):  # a link is no dir
            return None
    try:
        return read_regular(path, MAX_RECORD, accept=foreign_problem)
    except OSError:
        return None


Chunks = list[tuple[int, bytes]]  # (file descriptor: 1 or 2, bytes), in the order written
Parsed = tuple[int, Chunks, list[str], "array[int]"]


def parse(data: bytes, key: bytes) -> Parsed | None:
    """(exit code, output chunks, paths, their stamps) of a record stored under ``key``; None
    when it is anything but exactly what :func:`encode` writes for that key."""
    if not data.startswith(MAGIC):
        return None
    sections = _sections(data, len(MAGIC), 4)
    if sections is None:
        return None
    stored_key, output, names, numbers = sections
    if stored_key != key or len(output) < 1 or output[0] not in (0, 1):
        return None
    chunks = _sections(output, 1, None)
    if chunks is None or not all(chunk[:1] in (b"\1", b"\2") for chunk in chunks):
        return None
    stamps = array("q")
    if len(numbers) % (4 * stamps.itemsize):
        return None
    stamps.frombytes(numbers)
    if sys.byteorder != "little":
        stamps.byteswap()
    try:
        paths = names.decode("utf-8", "surrogateescape").split("\0") if names else []
    except UnicodeDecodeError:
        return None
    if len(paths) * 4 != len(stamps):
        return None
    return output[0], [(chunk[0], chunk[1:]) for chunk in chunks], paths, stamps


def _sections(data: bytes, start: int, count: int | None) -> list[bytes] | None:
    """``data`` from ``start`` as sections, each its length (8 bytes, little-endian) then its
    bytes: exactly ``count`` of them (None: as many as there are) and nothing after."""
    found: list[bytes] = []
    while start < len(data) and (count is None or len(found) < count):
        end = start + 8 + int.from_bytes(data[start : start + 8], "little")
        if start + 8 > len(data) or end > len(data):
            return None
        found.append(data[start + 8 : end])
        start = end
    if start != len(data) or (count is not None and len(found) != count):
        return None
    return found


def encode(key: bytes, code: int, chunks: Chunks, paths: list[str], stamps: array[int]) -> bytes:
    """The record :func:`parse` reads."""
    output = bytes((code,)) + b"".join(_section(bytes((fd,)) + data) for fd, data in chunks)
    numbers = array("q", stamps)
    if sys.byteorder != "little":
        numbers.byteswap()
    names = "\0".join(paths).encode("utf-8", "surrogateescape")
    return MAGIC + b"".join(map(_section, (key, output, names, numbers.tobytes())))


def _section(data: bytes) -> bytes:
    return len(data).to_bytes(8, "little") + data


def stamps_now(paths: list[str]) -> array[int]:
    """The stamp of each of ``paths`` (after links), flat, ``UNTRUSTED`` for one that cannot
    be stat'ed."""
    stamps = array("q")
    add = stamps.extend
    stat_of = os.stat
    for path in paths:
        try:
            add(stamp_of(stat_of(path)))
        except (OSError, ValueError):  # ValueError: a NUL, which no stored path holds
            add(UNTRUSTED)
    return stamps


def _write(chunks: Chunks, code: int) -> int:
    """Write the chunks as the check wrote them; ``code``, or 2 (and click's message) when
    standard output cannot be written."""
    for fd, data in chunks:
        try:
            _write_all(fd, data)
        except OSError as exc:
            if fd == 1:
                with open(os.devnull, "wb") as null:  # as cli/options.silence_stdout
                    os.dup2(null.fileno(), 1)
                message = f"lintloader: error: cannot write output: {exc.strerror or exc}\n"
                with contextlib.suppress(OSError):
                    _write_all(2, message.encode())
            return 2
    return code


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
