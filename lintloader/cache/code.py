"""What lintloader's own installed code is, as cache keys need it.

A cached summary or a replayed run must follow the analyzer's code, not only its version
string: after the summarizer changes (an edited checkout, another commit of the same version
installed by pre-commit), old entries must be misses. Two fingerprints, each computed at most
once per process:

- :func:`code_stamp`: path, size and mtime of every module (about a millisecond of ``stat``);
  what the whole-run replay key uses, and what remembers the content digest;
- :func:`code_digest`: sha256 of every module's relative path and bytes. It keys the summaries,
  so that identical code installed twice (two pre-commit environments) shares them. Reading
  and hashing the package costs a few milliseconds, so the digest is remembered in the cache
  under the stamp: a warm run reads one small entry instead.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import lintloader
from lintloader import __version__
from lintloader.cache.files import read_entry, write_entry

CODE_DIR_PREFIX = "code-"


def package_root() -> Path:
    return Path(lintloader.__file__).parent


@lru_cache(maxsize=1)
def module_files() -> tuple[tuple[str, str], ...]:
    """(path relative to the package, absolute path) of every module, in a stable order."""
    root = package_root()
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            full = os.path.join(folder, name)
            found.append((os.path.relpath(full, root), full))
    return tuple(sorted(found))


@lru_cache(maxsize=1)
def code_stamp() -> str:
    """Size and mtime of every module of the installed lintloader package (and the version)."""
    digest = hashlib.sha256(__version__.encode())
    for _, full in module_files():
        status = os.stat(full)
        digest.update(
            f"{full}\0{status.st_size}\0{status.st_mtime_ns}\n".encode("utf-8", "surrogateescape")
        )
    return digest.hexdigest()


def package_digest() -> str:
    """sha256 of the version and every module's relative path and bytes."""
    digest = hashlib.sha256(__version__.encode() + b"\0")
    for relative, full in module_files():
        with open(full, "rb") as handle:
            data = handle.read()
        digest.update(f"{relative}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    return digest.hexdigest()


@lru_cache(maxsize=4)
def code_digest(cache_dir: Path | None) -> str:
    """:func:`package_digest`, remembered in ``cache_dir`` under :func:`code_stamp` (an entry
    that is not exactly what this function writes is a miss)."""
    if cache_dir is None:
        return package_digest()
    stamp = code_stamp()
    path = Path(cache_dir) / f"{CODE_DIR_PREFIX}{__version__}" / f"{stamp}.digest"
    stored: tuple[str, str] | None = read_entry(
        Path(cache_dir), path, "code digest", tuple[str, str]
    )
    if stored is not None and stored[0] == stamp and len(stored[1]) == 64:
        return stored[1]
    digest = package_digest()
    write_entry(Path(cache_dir), path, "code digest", tuple[str, str], (stamp, digest))
    return digest
