"""Storing a ``check``'s answer for the warm fast path (``cli/fast.py`` reads it).

A :class:`Witness` watches a ``check`` the fast path could answer but did not: it copies what
the check writes to standard output and standard error, and notes (an audit hook) the files
it opens to read and the directories it lists. ``check`` tells it what it scanned; when the
check replayed its stored run or stored its run for the next one, the witness stores what a
replay prints (with ``-v``, the replay's counts), the exit code and the stamps of every path
the answer depends on (see ``cli/fast.py``), unless one of them changed within
:data:`~lintloader.scan.read.stamps.RACY_NS` of the check's start (git's racy rule: a change in
the same tick as the stamp would go unseen).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, BinaryIO

from lintloader.cli import fast
from lintloader.scan.read.stamps import Stamp, is_racy

# what no check's answer depends on, and whose stamps change on their own
UNSTAMPED = ("/proc/", "/sys/", "/dev/")
_LISTING = frozenset(("os.listdir", "os.scandir"))


class Tee(io.RawIOBase):
    """The binary layer under a copy of ``sys.stdout`` or ``sys.stderr``: each write goes
    through to the stream at once (so that the order of the two streams is the order of the
    writes) and is kept, in that order, in ``chunks``."""

    def __init__(self, target: BinaryIO, fd: int, chunks: fast.Chunks) -> None:
        super().__init__()
        self.target, self.fd, self.chunks = target, fd, chunks

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        written = bytes(data)
        self.target.write(written)
        self.target.flush()
        self.chunks.append((self.fd, written))
        return len(written)

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()


def _teed(stream: Any, fd: int, chunks: fast.Chunks) -> io.TextIOWrapper:
    """A text stream that writes as ``stream`` does, through a :class:`Tee`."""
    stream.flush()
    return io.TextIOWrapper(
        Tee(stream.buffer, fd, chunks),  # type: ignore[arg-type]  # a raw layer, as -u's
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


class Witness:
    """What a ``check`` the fast path could answer wrote, opened and scanned."""

    def __init__(self, argv: list[str], folder: str, key: bytes) -> None:
        self.argv, self.folder, self.key = argv, folder, key
        self.started = time.time_ns()
        self.chunks: fast.Chunks = []
        self.opened: dict[str, None] = {}
        self.listed: dict[str, None] = {}
        self.scanned: list[str] | None = None  # set by check, when its run was stored
        # scanned files' and walked directories' stamps as the check stat'ed them
        self.known: Mapping[str, Stamp] = {}
        self.directories: Mapping[str, Stamp] = {}  # see :meth:`saw`; empty: walk the roots
        self.roots: list[str] = []
        self.python: str | None = None
        self.summaries = 0  # how many summaries the run stored (its replay's -v count)
        self.lines: dict[str, str] = {}  # a line printed -> what a replay prints instead

    @classmethod
    def watch(cls, argv: list[str]) -> Witness | None:
        """A witness of ``check ARGS`` (its output teed from now on), if the fast path could
        answer it; else None."""
        folder = fast.cache_folder(argv)
        key = fast.run_key(argv) if folder is not None else None
        if folder is None or key is None or sys.stdout is None or sys.stderr is None:
            return None
        witness = cls(argv, folder, key)
        sys.stdout = _teed(sys.stdout, 1, witness.chunks)
        sys.stderr = _teed(sys.stderr, 2, witness.chunks)
        sys.addaudithook(witness.audit)
        return witness

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: files opened to read, directories listed (never raises: that
        would stop the operation). It runs for every audited event of the run (some 20,000
        on a site-packages): the others return at once."""
        if event == "open" or event in _LISTING:
            try:
                self._note(event, args)
            except (OSError, ValueError, TypeError):
                return

    def _note(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            reading = "r" in mode and "+" not in mode if isinstance(mode, str) else None
            if reading is None:
                reading = isinstance(flags, int) and not flags & (os.O_WRONLY | os.O_RDWR)
            if reading and isinstance(path, str | bytes):
                self.opened[os.path.abspath(os.fsdecode(path))] = None
        elif isinstance(args[0], str | bytes):
            self.listed[os.path.abspath(os.fsdecode(args[0]))] = None

    def saw(
        self,
        scanned: Sequence[str],
        roots: Sequence[str],
        cache_dir: os.PathLike[str] | None,
        python: str | None,
        known: Mapping[str, Stamp] | None = None,
        directories: Mapping[str, Stamp] | None = None,
    ) -> None:
        """``check`` replayed or stored a run over ``scanned`` below ``roots``, the site
        directories of ``python`` (None: the running interpreter), with the cache in
        ``cache_dir``: its answer may be stored (see :meth:`store`). ``known``: the stamps
        of scanned files as the check stat'ed them before reading them, stored as they are
        (a file changed since then only makes the next run take the slow path).
        ``directories``: the stamp of every directory the walk of ``roots`` went into, as it
        stat'ed them before listing them (``Discovery.directories``); those are stored
        instead of listing the roots again. A directory it did not go into (a link, an
        excluded name) holds nothing the check scanned."""
        if cache_dir is not None and os.path.abspath(cache_dir) == os.path.abspath(self.folder):
            self.scanned, self.roots, self.python = list(scanned), list(roots), python
            self.known = known or {}
            if directories and all(root in directories for root in roots):
                self.directories = directories
                self.known = {**self.known, **directories}

    def replaced_line(self, printed: str, replayed: str) -> None:
        """``check -v`` printed ``printed`` (on standard error) where a replay of its run
        prints ``replayed``: the stored answer is the replay's."""
        self.lines[printed] = replayed

    def store(self, code: int) -> None:
        """Store the answer (exit ``code``), if the check replayed or stored its run and
        nothing it depends on changed since it started."""
        if self.scanned is not None and code in (0, 1):
            with contextlib.suppress(OSError, ValueError):  # a name no stamp can hold, say
                self._store(code)

    def _store(self, code: int) -> None:
        if any(data.startswith(b"\r") for _, data in self.chunks):
            return  # a progress line (a terminal): no part of the answer
        chunks = self._as_replayed()
        if chunks is None:
            return
        paths = list(dict.fromkeys(self._paths()))
        stamps = self._stamps(paths)
        if _any_racy(stamps, self.started):  # a change since the check began is not seen
            return
        cache = self._cache_paths()  # rewritten atomically (a new inode): no racy rule
        paths.extend(cache)
        stamps.extend(fast.stamps_now(cache))
        record = fast.encode(self.key, code, chunks, paths, stamps)
        if len(record) <= fast.MAX_RECORD:
            _save(self.folder, fast.record_path(self.folder, self.key), record)

    def _stamps(self, paths: list[str]) -> array[int]:
        """The stamp of each of ``paths``, flat: the check's own (:attr:`known`) where it has
        one, else stat'ed now."""
        found: list[Stamp | None] = list(map(self.known.get, paths))
        missing = [i for i, stamp in enumerate(found) if not stamp]
        unknown = fast.stamps_now([paths[i] for i in missing])
        for i, stamp in zip(missing, zip(*[iter(unknown)] * 4, strict=True), strict=True):
            found[i] = stamp
        return array("q", chain.from_iterable(found))  # type: ignore[arg-type]  # (all found)

    def _as_replayed(self) -> fast.Chunks | None:
        """The chunks written, each line :meth:`replaced_line` names as a replay prints it
        (None: one was not found)."""
        encoding, errors = sys.stderr.encoding, sys.stderr.errors or "strict"
        wanted = {
            (printed + "\n").encode(encoding, errors): (again + "\n").encode(encoding, errors)
            for printed, again in self.lines.items()
        }
        chunks = [(fd, wanted.get(data, data) if fd == 2 else data) for fd, data in self.chunks]
        found = sum(fd == 2 and data in wanted for fd, data in self.chunks)
        return chunks if found == len(wanted) else None

    def _cache_paths(self) -> list[str]:
        """With ``-v`` (its counts say what came from the cache): every folder of the summary
        cache, whose entries a replay needs (one removed, the run parses again)."""
        if not {"-v", "--verbose"} & set(self.argv):
            return []
        from lintloader import __version__

        return list(_tree(os.path.join(self.folder, f"summaries-{__version__}"), files=False))

    def _paths(self) -> Iterator[str]:
        from lintloader.cache.code import package_root

        cache = os.path.abspath(self.folder)
        unstamped = (cache + os.sep, *UNSTAMPED)  # the cache changes on every run
        # the import system lists each folder of sys.path (the working directory too, for
        # `python -m`): the modules it found there are among the files opened
        searched = {os.path.abspath(folder) for folder in sys.path}
        listed = [path for path in self.listed if path not in searched]
        known = self.known  # scanned files (yielded below) and walked directories
        used = [*(_source_of(path) for path in self.opened if path not in known), *listed]
        yield from (p for p in used if p != cache and not p.startswith(unstamped))
        # where a configuration is searched for (config.find_pyproject): the file, not its
        # folder, which may be /tmp
        yield from (os.path.join(f, "pyproject.toml") for f in _folders_up(os.getcwd()))
        yield from _tree(str(package_root()), files=True)  # lintloader's code and data
        yield from self._interpreter()
        if self.directories:
            yield from self.directories
        else:
            for root in self.roots:
                yield from _tree(root, files=False)
        yield from self.scanned or ()

    def _interpreter(self) -> Iterator[str]:
        """What the interpreter's answer depends on (``scan/environment/interpreter.py``):
        for ``--python``, its path and the ``pyvenv.cfg`` files looked for beside it; the
        candidate site directories (one made later becomes a site)."""
        from pathlib import Path

        from lintloader.scan.environment.interpreter import query_interpreter

        if self.python is not None:
            executable = os.path.abspath(self.python)
            bindir = os.path.dirname(executable)
            yield executable
            yield from (os.path.join(f, "pyvenv.cfg") for f in (bindir, os.path.dirname(bindir)))
        yield from query_interpreter(self.python, [], Path(self.folder))["candidates"]


def _any_racy(stamps: array[int], read_ns: int) -> bool:
    """Whether any of the flat ``stamps`` is racy (``stamps.is_racy``): its newest
    modification or change time, the columns' largest, too close to ``read_ns``."""
    if not stamps:
        return False
    return is_racy((0, max(stamps[1::4]), max(stamps[2::4]), 0), read_ns)


def _source_of(path: str) -> str:
    """The module's source for a compiled module (what Python checks before it uses the
    compiled file), else ``path``."""
    folder, name = os.path.split(path)
    if os.path.basename(folder) != "__pycache__" or not name.endswith(".pyc"):
        return path
    return os.path.join(os.path.dirname(folder), name.split(".")[0] + ".py")


def _folders_up(start: str) -> Iterator[str]:
    folder = os.path.abspath(start)
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _tree(root: str, files: bool) -> Iterator[str]:
    """``root`` and every directory below it (not through links, not ``__pycache__``), and
    with ``files`` their files."""
    stack = [root]
    while stack:
        folder = stack.pop()
        yield folder
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif files:
                yield entry.path


def _save(folder: str, path: str, record: bytes) -> None:
    """Write ``record`` as a cache entry (private, atomic, never through a link); a cache
    that cannot be written only makes the next run slower."""
    from pathlib import Path

    from lintloader.cache.files import make_private_dirs
    from lintloader.trust.safe_file import write_atomic

    try:
        if make_private_dirs(Path(folder), Path(path).parent):
            write_atomic(path, record, private=True, replace_link=True, durable=False)
    except OSError:
        return
