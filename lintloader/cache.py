"""Content-addressed store of file summaries.

A summary depends only on a file's bytes, its module name and the tool version, so the key is a
hash of those. Entries are written to a temporary file and renamed into place, so concurrent
runs sharing one directory never see a partial entry; a corrupt entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import secrets
from pathlib import Path

from lintloader import __version__
from lintloader.summary import SUMMARY_SCHEMA, FileSummary

CACHE_DIR_NAME = ".lintloader_cache"
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_cache_dir() -> Path:
    override = os.environ.get("LINTLOADER_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lintloader"


def summary_key(source: bytes, module: str, is_package: bool) -> str:
    digest = hashlib.sha256()
    digest.update(f"{__version__}\0{SUMMARY_SCHEMA}\0{module}\0{int(is_package)}\0".encode())
    digest.update(source)
    return digest.hexdigest()


class SummaryCache:
    """Pickled summaries under ``<dir>/summaries-<version>/<kk>/<key>.pickle``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory) / f"summaries-{__version__}"

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> FileSummary | None:
        try:
            descriptor = os.open(self._path(key), _READ_FLAGS)  # a symlinked entry is a miss
            with os.fdopen(descriptor, "rb") as handle:
                value = pickle.load(handle)
        except Exception:  # missing, unreadable or corrupt: a miss, never an error
            return None
        return value if isinstance(value, FileSummary) else None

    def put(self, key: str, summary: FileSummary) -> None:
        target = self._path(key)
        temporary = target.parent / f".tmp-{os.getpid()}-{secrets.token_hex(8)}"
        try:
            if self.directory.is_symlink() or target.parent.is_symlink():
                return  # never write (not even a folder) through a link planted in the cache
            target.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL never follows a link; mode 0o666 lets the user's umask decide permissions.
            descriptor = os.open(temporary, _CREATE_FLAGS, 0o666)
            with os.fdopen(descriptor, "wb") as stream:
                pickle.dump(summary, stream, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, target)  # replaces a link at target, never follows it
        except OSError:
            return  # a cache that cannot be written is only slower, never wrong
        finally:
            temporary.unlink(missing_ok=True)  # left only when something failed
