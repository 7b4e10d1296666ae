"""Backups of installed files that ``fix --site-packages`` patches, and their revert.

Location: ``<site-packages>/.lintloader-backups/`` of the site directory that holds the file,
so a backup lives and dies with the environment it belongs to. It holds ``manifest.json`` and
``files/<original sha256>``, the original bytes. Manifest (format 1)::

    {"format": 1,
     "files": {"pytorch_lightning/utilities/fetching.py": {
         "original_sha256": "...", "patched_sha256": "...",
         "backup": "files/<original sha256>", "mode": 420,
         "tool_version": "0.1.0", "time": "2025-01-01T12:00:00+00:00", "user": "alice",
         "fixes": ["relocate"]}}}

Keys are paths relative to the site directory. The backup is stored, and the manifest written
(atomically), *before* the first change to a file; a later fix of the same patched file keeps the
first backup and updates ``patched_sha256``. ``revert`` restores the backup only when the file
still has ``patched_sha256``; a file changed since (an upgrade, a hand edit) is left alone.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from lintloader import __version__
from lintloader.fixers.writer import WriteError, atomic_write, remove_stale_bytecode

BACKUP_DIR = ".lintloader-backups"
MANIFEST = "manifest.json"
FORMAT = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


@dataclass
class Entry:
    original_sha256: str
    patched_sha256: str
    backup: str  # relative to the backup directory
    mode: int
    tool_version: str = __version__
    time: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    user: str = field(default_factory=current_user)
    fixes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Restored:
    path: str
    message: str
    ok: bool


@dataclass
class BackupStore:
    """The backups of one site directory."""

    site: str
    entries: dict[str, Entry] = field(default_factory=dict)

    @property
    def directory(self) -> str:
        return os.path.join(self.site, BACKUP_DIR)

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.directory, MANIFEST)

    @classmethod
    def load(cls, site: str) -> BackupStore:
        store = cls(site)
        for folder in (store.directory, os.path.join(store.directory, "files")):
            if os.path.islink(folder):
                raise WriteError(f"{folder} is a symbolic link; not keeping backups through it")
        try:
            with open(store.manifest_path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return store
        except (OSError, ValueError) as exc:
            raise WriteError(f"{store.manifest_path}: unreadable manifest ({exc})") from None
        if data.get("format") != FORMAT:
            raise WriteError(f"{store.manifest_path}: unknown manifest format {data.get('format')}")
        store.entries = {key: Entry(**value) for key, value in data.get("files", {}).items()}
        return store

    def save(self) -> None:
        os.makedirs(os.path.join(self.directory, "files"), exist_ok=True)
        files = {key: asdict(entry) for key, entry in sorted(self.entries.items())}
        text = json.dumps({"format": FORMAT, "files": files}, indent=2) + "\n"
        _write_plain(self.manifest_path, text.encode("utf-8"))

    def key(self, path: str) -> str:
        return os.path.relpath(os.path.realpath(path), os.path.realpath(self.site))

    def absolute(self, key: str) -> str:
        return os.path.join(self.site, key)

    def record(self, path: str, original: bytes, patched: bytes, fixes: Iterable[str]) -> None:
        """Store the original (once) and the manifest entry, before ``path`` is written."""
        key = self.key(path)
        entry = self.entries.get(key)
        if entry is not None and entry.patched_sha256 == sha256(original):
            entry.patched_sha256 = sha256(patched)  # patched again: keep the first backup
            entry.fixes = sorted({*entry.fixes, *fixes})
        else:
            digest = sha256(original)
            backup = os.path.join(self.directory, "files", digest)
            os.makedirs(os.path.dirname(backup), exist_ok=True)
            if not os.path.exists(backup):
                _write_plain(backup, original)
            mode = os.stat(os.path.realpath(path)).st_mode & 0o7777
            self.entries[key] = Entry(
                digest, sha256(patched), f"files/{digest}", mode, fixes=sorted(set(fixes))
            )
        self.save()

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)
        self.save()

    def state(self, key: str) -> str:
        """patched, changed since patched, reverted (already the original) or missing."""
        entry = self.entries[key]
        try:
            with open(self.absolute(key), "rb") as handle:
                digest = sha256(handle.read())
        except FileNotFoundError:
            return "missing"
        if digest == entry.patched_sha256:
            return "patched"
        if digest == entry.original_sha256:
            return "original"
        return "changed"

    def revert(self, key: str) -> Restored:
        entry = self.entries[key]
        path = self.absolute(key)
        state = self.state(key)
        if state == "original":
            self.forget(key)
            return Restored(path, "already the original; manifest entry dropped", True)
        if state != "patched":
            why = "no longer exists" if state == "missing" else "changed since it was patched"
            return Restored(
                path,
                f"{why} (expected sha256 {entry.patched_sha256[:12]}); not overwriting it. "
                f"The original is at {os.path.join(self.directory, entry.backup)}",
                False,
            )
        with open(os.path.join(self.directory, entry.backup), "rb") as handle:
            original = handle.read()
        if sha256(original) != entry.original_sha256:
            return Restored(path, f"backup {entry.backup} is corrupt; not restoring", False)
        atomic_write(path, original, verify=False)
        os.chmod(os.path.realpath(path), entry.mode)
        stale = remove_stale_bytecode(path)
        self.forget(key)
        note = f" (could not remove stale bytecode: {'; '.join(stale)})" if stale else ""
        return Restored(path, f"restored from {entry.backup}{note}", True)


def _write_plain(path: str, data: bytes) -> None:
    """Atomic write of a non-Python file (backup copy, manifest): created with the user's umask
    (mode 0o666 before it), never through a symbolic link (O_EXCL | O_NOFOLLOW)."""
    temp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        with os.fdopen(os.open(temp, flags, 0o666), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def site_of(path: str, sites: Iterable[str]) -> str | None:
    real = os.path.realpath(path)
    best = None
    for site in sites:
        root = os.path.realpath(site)
        inside = real.startswith(root.rstrip(os.sep) + os.sep)
        if inside and (best is None or len(root) > len(best)):
            best = site
    return best
