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

Keys are paths relative to the site directory. The backup is stored and verified (a regular file
whose digest matches, read back), and the manifest written (atomically), *before* the first change
to a file: no verified backup, no patch. A later fix of the same patched file keeps the first
backup (verified again) and updates ``patched_sha256``. ``revert`` restores the backup only when
the file still has ``patched_sha256``; a file changed since (an upgrade, a hand edit) is left
alone. Nothing read from the manifest is trusted (see :mod:`lintloader.fixers.manifest`).
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from lintloader import __version__
from lintloader.cache.locks import LockBusy, bounded_lock
from lintloader.fixers.installed import installed_as_recorded
from lintloader.fixers.manifest import (
    BACKUP_DIR,
    DIGEST,
    Entry,
    Manifest,
    ManifestRefused,
    backup_name,
    key_problem,
    parse_manifest,
    render_manifest,
)
from lintloader.fixers.writer import FileChanged, WriteError, atomic_write, remove_stale_bytecode
from lintloader.trust.safe_file import read_regular, write_atomic

MANIFEST = "manifest.json"
MANIFEST_LOCK = "manifest.lock"
MANIFEST_WAIT_S = 60.0  # how long a run waits for another one updating the same manifest


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


@dataclass(frozen=True)
class Restored:
    path: str
    message: str
    ok: bool
    dropped: bool = False  # not restored: its entry was stale, and was dropped


@dataclass
class BackupStore:
    """The backups of one site directory."""

    site: str
    manifest: Manifest = field(default_factory=Manifest)

    @property
    def entries(self) -> dict[str, Entry]:
        return self.manifest.entries

    @property
    def directory(self) -> str:
        return os.path.join(self.site, BACKUP_DIR)

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.directory, MANIFEST)

    @classmethod
    def load(cls, site: str) -> BackupStore:
        """The store of ``site``; :class:`ManifestRefused` (a :class:`WriteError`) when the
        backup directory or the manifest cannot be trusted or read."""
        store = cls(site)
        for folder in (store.directory, os.path.join(store.directory, "files")):
            if os.path.islink(folder):
                raise ManifestRefused(f"{folder} is a symbolic link; not using backups through it")
        try:
            data = read_regular(store.manifest_path, None)
        except FileNotFoundError:
            return store
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ManifestRefused(
                f"{store.manifest_path}: unreadable manifest ({reason})"
            ) from None
        try:
            store.manifest = parse_manifest(data, site)
        except ManifestRefused as exc:
            raise ManifestRefused(f"{store.manifest_path}: {exc}") from None
        return store

    def save(self) -> None:
        os.makedirs(os.path.join(self.directory, "files"), exist_ok=True)
        write_plain(self.manifest_path, render_manifest(self.manifest))

    def key(self, path: str) -> str:
        return os.path.relpath(os.path.realpath(path), os.path.realpath(self.site))

    def absolute(self, key: str) -> str:
        return os.path.join(self.site, key)

    def backup_path(self, entry: Entry) -> str:
        return os.path.join(self.directory, entry.backup)

    def backup_problem(self, entry: Entry) -> str | None:
        """Why the backup of ``entry`` cannot be trusted (missing, not a regular file, corrupt),
        or None when it holds exactly the original bytes."""
        try:
            data = read_regular(self.backup_path(entry), None)
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            return f"unreadable or not a regular file ({exc.strerror or exc})"
        return None if sha256(data) == entry.original_sha256 else "corrupt (digest mismatch)"

    def record(
        self, path: str, original: bytes, patched: bytes, fixes: Iterable[str]
    ) -> Entry | None:
        """Store the original (once, verified) and the manifest entry, before ``path`` is
        written. Returns the entry it replaced (see :meth:`undo`). Raises WriteError when no
        verified backup could be kept."""
        key = self.key(path)
        problem = key_problem(key, self.site)
        if problem:
            raise WriteError(f"cannot be recorded in the backup manifest: {problem}")
        previous = self.entries.get(key)
        if previous is not None and previous.patched_sha256 == sha256(original):
            problem = self.backup_problem(previous)
            if problem:
                raise WriteError(
                    f"the backup of its original ({self.backup_path(previous)}) is {problem}; "
                    "not patching it again without a verified backup"
                )
            entry = Entry(**{**vars(previous), "patched_sha256": sha256(patched)})
            entry.fixes = sorted({*previous.fixes, *fixes})
        else:
            entry = self.new_entry(path, original, patched, fixes)
        self.entries[key] = entry
        self.manifest.refused.pop(key, None)
        self.save_or_fail()
        return previous

    def new_entry(self, path: str, original: bytes, patched: bytes, fixes: Iterable[str]) -> Entry:
        digest = sha256(original)
        mode = os.stat(os.path.realpath(path)).st_mode & 0o777
        entry = Entry(
            digest,
            sha256(patched),
            backup_name(digest),
            mode,
            __version__,
            datetime.now(timezone.utc).isoformat(),
            current_user(),
            sorted(set(fixes)),
        )
        if self.backup_problem(entry) is None:
            return entry
        try:
            os.makedirs(os.path.join(self.directory, "files"), exist_ok=True)
            write_plain(self.backup_path(entry), original)
        except OSError as exc:
            raise WriteError(f"cannot store its backup: {exc.strerror or exc}") from None
        problem = self.backup_problem(entry)
        if problem:
            raise WriteError(f"its backup {self.backup_path(entry)} is {problem} after writing")
        return entry

    def save_or_fail(self) -> None:
        try:
            self.save()
        except OSError as exc:
            raise WriteError(f"cannot write the backup manifest: {exc.strerror or exc}") from None

    def undo(self, path: str, previous: Entry | None) -> None:
        """Put back the entry :meth:`record` replaced: ``path`` was not written after all."""
        key = self.key(path)
        if previous is None:
            self.entries.pop(key, None)
        else:
            self.entries[key] = previous
        with contextlib.suppress(OSError):
            self.save()

    def forget(self, key: str) -> None:
        """Drop the entry of ``key``, and its backup once no entry refers to it."""
        entry = self.entries.pop(key, None)
        self.save()
        if entry is not None and entry.backup not in {e.backup for e in self.entries.values()}:
            with contextlib.suppress(OSError):
                os.unlink(self.backup_path(entry))

    def drop_backup(self, backup: str) -> None:
        """Remove a backup no entry refers to (``files/<digest>``, as :meth:`orphans` names it)."""
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.directory, backup))

    def orphans(self) -> list[str]:
        """The backups (``files/<digest>``) no entry refers to, usable or refused: the
        original of a file whose entry was lost (patched, but not recorded)."""
        try:
            names = os.listdir(os.path.join(self.directory, "files"))
        except OSError:
            return []
        known = {entry.backup for entry in self.entries.values()}
        known |= {
            str(raw.get("backup"))
            for raw, _ in self.manifest.refused.values()
            if isinstance(raw, dict)
        }
        return sorted(
            backup_name(name)
            for name in names
            if backup_name(name) not in known and DIGEST.fullmatch(name)
        )

    def state(self, key: str) -> str:
        """patched, changed since patched, reverted (already the original) or missing."""
        entry = self.entries[key]
        try:
            digest = sha256(read_regular(self.absolute(key), None))
        except FileNotFoundError:
            return "missing"
        except OSError:
            return "unreadable"
        if digest == entry.patched_sha256:
            return "patched"
        if digest == entry.original_sha256:
            return "original"
        return "changed"

    def stale(self, key: str, state: str) -> str | None:
        """Why the entry of ``key`` no longer describes the installed file (``pip uninstall``
        removed it, or ``pip install -U`` put another one there: it holds what its
        distribution's ``RECORD`` says), or None."""
        path = self.absolute(key)
        if state == "missing" and not os.path.lexists(path):
            return "no longer installed (uninstalled since it was patched)"
        if state == "changed":
            try:
                digest = sha256(read_regular(path, None))
            except OSError:
                return None
            if installed_as_recorded(self.site, key, digest):
                return "installed again since it was patched (it matches its distribution's RECORD)"
        return None

    def revert(self, key: str) -> Restored:
        entry = self.entries[key]
        path = self.absolute(key)
        state = self.state(key)
        if state == "original":
            self.forget(key)
            return Restored(path, "already the original; manifest entry dropped", True)
        stale = self.stale(key, state)
        if stale:
            self.forget(key)
            return Restored(path, f"{stale}; its stale manifest entry was dropped", True, True)
        if state != "patched":
            why = {"missing": "no longer exists", "unreadable": "cannot be read"}.get(
                state, "changed since it was patched"
            )
            return Restored(
                path,
                f"{why} (expected sha256 {entry.patched_sha256[:12]}); not overwriting it. "
                f"The original is at {self.backup_path(entry)}",
                False,
            )
        problem = self.backup_problem(entry)
        if problem:
            return Restored(path, f"backup {entry.backup} is {problem}; not restoring", False)
        original = read_regular(self.backup_path(entry), None)
        try:
            atomic_write(
                path, original, verify=False, expected_sha256=entry.patched_sha256, mode=entry.mode
            )
        except FileChanged as exc:
            return Restored(path, f"{exc}; not restoring", False)
        except WriteError as exc:
            return Restored(path, f"not restored: {exc}", False)
        left = remove_stale_bytecode(path)
        self.forget(key)
        note = f" (could not remove stale bytecode: {'; '.join(left)})" if left else ""
        return Restored(path, f"restored from {entry.backup}{note}", True)


@contextlib.contextmanager
def locked_store(
    site: str, create: bool = True, wait_s: float = MANIFEST_WAIT_S
) -> Iterator[BackupStore]:
    """The store of ``site``, read while holding its manifest lock (so that concurrent runs
    patching one environment each add their entries to the manifest as it is then, never
    to a copy read before another run wrote it). :class:`ManifestRefused` as :meth:`load`
    does, or when another run held the lock for ``wait_s`` seconds. ``create`` False: a site
    without a backup directory gets none (an empty store)."""
    folder = os.path.join(site, BACKUP_DIR)
    if os.path.islink(folder):
        raise ManifestRefused(f"{folder} is a symbolic link; not using backups through it")
    if not create and not os.path.isdir(folder):
        yield BackupStore(site)  # nothing recorded there: nothing to lock
        return
    with contextlib.suppress(OSError):  # an unwritable site: the writes report it
        os.makedirs(folder, exist_ok=True)
    try:
        with bounded_lock(Path(folder) / MANIFEST_LOCK, wait_s, mode=0o666):  # as backups are
            yield BackupStore.load(site)
    except LockBusy:
        raise ManifestRefused(
            f"{os.path.join(folder, MANIFEST)} is being updated by another run "
            f"(waited {wait_s:.0f} s for its lock); not patching"
        ) from None


def write_plain(path: str, data: bytes) -> None:
    """Atomic write of a non-Python file (backup copy, manifest): created with the user's umask
    (mode 0o666 before it), never through a symbolic link (``safe_file.write_atomic``): one
    planted in the backup directory is replaced, as any bad backup blob is."""
    write_atomic(path, data, replace_link=True)


def site_of(path: str, sites: Iterable[str]) -> str | None:
    real = os.path.realpath(path)
    best = None
    for site in sites:
        root = os.path.realpath(site)
        inside = real.startswith(root.rstrip(os.sep) + os.sep)
        if inside and (best is None or len(root) > len(best)):
            best = site
    return best
