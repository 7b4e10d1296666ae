"""Whole-run replay: when nothing a check depends on changed since the last run with the same
settings, its findings are reused as they were, without loading a summary or linking.

What a check depends on: every scanned file (path, module name, display path, sha256 of its
bytes, which the stat index supplies without reading), the files that could not be read, the
configuration, the active rules, lintloader's own code (the stamp of its modules, so that an
edited checkout never replays stale findings) and the summary cache entries the run used (each
must still be the very file it read or wrote: same size and mtime, not a link). All of it goes
into one key; the stored run is replayed only when the key is equal and the entries are intact.
One replay file per set of scan roots and working directory, next to the index.

A second key, the *shape*, leaves the files' content out. When only the content of a few files
changed (the shape is equal), the stored run also keeps what a later run needs to tell whether
its findings still hold: each file's content identity, the selection trail and the digests of
the files it summarized and of their summarized parts (``incremental/revisit.py`` decides).

A replay is the whole of a warm run, so this module and everything it imports stay clear of the
analysis: no summary, rule or parser module is imported until something must be analyzed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from lintloader.cache.code import code_stamp
from lintloader.cache.files import read_entry, write_entry
from lintloader.cache.summaries import SummaryCache
from lintloader.conclude.checking import Counts, FixNames
from lintloader.finding.findings import Finding
from lintloader.incremental.reads import DemandReads
from lintloader.scan.model import FileProblem, SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.settings.config import Config

KIND = "replay 6"
ContentId = str | tuple[int, int, int, int]  # a file's digest, else its stat stamp


class StoredRound(NamedTuple):
    """A round of the selection trail as stored: ``select/trail.py``'s ``Round`` field by
    field (which ``as_trail`` makes of it again), kept here so that loading a stored run
    imports nothing of the selection."""

    groups: tuple[tuple[bytes, ...], ...] | None  # its query's token groups; None: modules only
    modules: frozenset[str]  # the modules it asked for by name
    taken: tuple[str, ...]  # the paths of the files it took


@dataclass(frozen=True)
class Replay:
    key: str
    findings: tuple[Finding, ...]
    suppressed_in: Counts  # CheckResult.suppressed_in: per file, so a one-file check counts its
    summaries: int  # summaries the stored run parsed or loaded (now reported as "from cache")
    entries: tuple[tuple[str, int, int], ...] = ()  # the summary cache entries it used, stamped
    hidden_in: Counts = field(default_factory=dict)  # CheckResult.hidden_in, per file too
    shape: str = ""  # the key without the files' content (see the module docstring)
    contents: tuple[ContentId, ...] = ()  # each file's, in the files' order
    rounds: tuple[StoredRound, ...] = ()  # the selection trail (select/trail.py)
    taken: tuple[tuple[str, str], ...] = ()  # (path, content digest) of each summarized file
    # per file of ``taken``, the digest of its summarized part (incremental/trailing.py; "":
    # unknown): a file whose edit left it equal keeps its summary
    taken_code: tuple[str, ...] = ()
    # what its analysis read of the functions' calls (incremental/reads.py); None: unknown
    reads: DemandReads | None = None
    stub_hooks: tuple[tuple[str, str, str], ...] = ()  # CheckResult.stub_hooks
    fixable: FixNames | None = None  # CheckResult.fixable: check's fix trial, once it ran


def replay_shape(
    files: Sequence[SourceFile], problems: Iterable[FileProblem], config: Config
) -> str:
    """The hash of everything a check depends on but the files' content (the key of all of
    it is :func:`content_key`, worked out only when a stored run of this shape is there to
    compare it with). The active rules need no place of their own: they follow from the
    configuration and lintloader's code, which are in both."""
    problems = list(problems)
    shape = hashlib.sha256(f"{code_stamp()}\n{config!r}\n{len(problems)} problems\n".encode())
    for problem in problems:
        shape.update(f"{problem!r}\n".encode())
    # Column by column (this runs for every file of a site-packages on every run): each column
    # is its values joined by NUL, which never occurs in a path, preceded by its length.
    paths = [file.path for file in files]
    columns = (
        paths,
        [file.module for file in files],
        ["1" if file.is_package else "0" for file in files],
        [file.display for file in files],
    )
    shape.update(f"{len(files)} files\n".encode())
    for column in columns:
        _update(shape, column)
    return shape.hexdigest()


def content_key(shape: str, paths: list[str], sources: SourceSet) -> str:
    """The key of a run of this ``shape`` over ``paths`` as their content is now (what is
    known of it: digests, else stat stamps)."""
    digests, stamps = sources.content_columns(paths)
    key = hashlib.sha256(bytes.fromhex(shape))
    _update(key, digests)
    key.update(stamps)
    return key.hexdigest()


def _update(digest: hashlib._Hash, column: list[str]) -> None:
    data = "\0".join(column).encode("utf-8", "surrogatepass")  # undecodable names
    digest.update(f"{len(data)}\n".encode())
    digest.update(data)


def replay_path(index_file: Path) -> Path:
    """Where the stored run of the roots of ``index_file`` is kept for runs from this working
    directory: its findings' display paths are relative to it, so runs from two folders (an
    editor's server, ``check`` in a terminal) keep one each instead of replacing each other's."""
    folder = os.getcwd().encode("utf-8", "surrogateescape")
    return index_file.with_suffix(f".{hashlib.sha256(folder).hexdigest()[:12]}.replay")


def load_replay(index_file: Path, cache: SummaryCache) -> Replay | None:
    """The stored run, if the summary cache entries it was derived from are untouched (a
    removed, rewritten or linked entry means: run again, and repair it)."""
    stored = read_replay(cache.root, replay_path(index_file))
    if stored is None:
        return None
    keys = [entry[0] for entry in stored.entries]
    return stored if cache.stamps(keys) == stored.entries else None


def read_replay(cache_dir: Path, path: Path) -> Replay | None:
    """The run stored at ``path``; None when missing, a link, or not exactly what
    :func:`save_replay` writes (``cache/codec.py``)."""
    stored = read_entry(Path(cache_dir), path, KIND, _Stored)
    if stored is None:
        return None
    replay, digests, flat = stored
    contents = _contents(digests, flat)
    return None if contents is None else replace(replay, contents=contents)


def save_replay(cache_dir: Path, index_file: Path, replay: Replay) -> None:
    """Stored with its contents in two columns (digests, "" where a stamp stands instead;
    the stamps, four ints each), which read back several times faster than one per file."""
    digests = [item if isinstance(item, str) else "" for item in replay.contents]
    flat = [number for item in replay.contents if not isinstance(item, str) for number in item]
    stored = (replace(replay, contents=()), digests, flat)
    write_entry(Path(cache_dir), replay_path(index_file), KIND, _Stored, stored)


def remember_fixable(cache_dir: Path, index_file: Path, key: str, fixable: FixNames) -> None:
    """Store check's fix trial (``fixable``, one entry per finding) with the run stored under
    ``key``, so that a replay of it need not try the fixes again (nor import the fixers)."""
    stored = read_replay(cache_dir, replay_path(index_file))
    if stored is not None and stored.key == key and len(stored.findings) == len(fixable):
        save_replay(cache_dir, index_file, replace(stored, fixable=fixable))


# the run without its contents, the contents' digests and their stamps (see save_replay)
_Stored = tuple[Replay, list[str], list[int]]


def _contents(digests: list[str], flat: list[int]) -> tuple[ContentId, ...] | None:
    if len(flat) != 4 * digests.count(""):
        return None
    numbers = iter(flat)
    stamps = zip(numbers, numbers, numbers, numbers, strict=True)
    return tuple(digest or next(stamps) for digest in digests)
