"""Reading the backup manifest of a site directory, trusting nothing in it.

Anyone who can write into a site-packages (a wheel that ships ``.lintloader-backups/`` as data,
another user of a shared environment) can plant a manifest. ``revert`` writes files named by it,
with bytes and modes taken from it, so every entry is checked before it is used:

- the key is a relative ``.py`` path, already normalised, without ``..``, outside the backup
  directory, and its real path (symbolic links resolved) stays inside the site directory;
- the digests are 64 lower-case hex digits and the backup is exactly ``files/<original digest>``
  (the only name lintloader writes);
- the mode is an integer, masked to the permission bits (no setuid, setgid or sticky bit);
- the descriptive fields are strings without control characters (they are printed).

An entry that fails is refused with its reason and kept aside (written back unchanged, so nothing
is silently dropped); the others are used. A manifest that is not a JSON object of the known
format is refused as a whole.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lintloader.fixers.writer import WriteError

BACKUP_DIR = ".lintloader-backups"
FORMAT = 1
PERMISSION_BITS = 0o777
DIGEST = re.compile(r"[0-9a-f]{64}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TEXT_FIELDS = ("tool_version", "time", "user")


class ManifestRefused(WriteError):
    """The manifest as a whole cannot be used (unreadable, not JSON, unknown shape)."""


@dataclass
class Entry:
    """One patched file: what it held, what lintloader wrote, where the original is kept."""

    original_sha256: str
    patched_sha256: str
    backup: str  # relative to the backup directory: files/<original_sha256>
    mode: int
    tool_version: str
    time: str
    user: str
    fixes: list[str] = field(default_factory=list)


@dataclass
class Manifest:
    """The usable entries, and the refused ones (raw value and reason) by key."""

    entries: dict[str, Entry] = field(default_factory=dict)
    refused: dict[str, tuple[Any, str]] = field(default_factory=dict)


def backup_name(digest: str) -> str:
    return f"files/{digest}"


def parse_manifest(data: bytes, site: str) -> Manifest:
    """The manifest held in ``data`` for the site directory ``site``; raises
    :class:`ManifestRefused` when its shape is not the one lintloader writes."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ManifestRefused(f"not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ManifestRefused(f"expected a JSON object, found {type(document).__name__}")
    if document.get("format") != FORMAT:
        raise ManifestRefused(f"unknown manifest format {document.get('format')!r}")
    files = document.get("files", {})
    if not isinstance(files, dict):
        raise ManifestRefused(f"'files' must be an object, found {type(files).__name__}")
    manifest = Manifest()
    for key, value in files.items():
        entry = parse_entry(value)
        reason = entry if isinstance(entry, str) else key_problem(key, site)
        if reason is None and isinstance(entry, Entry):
            manifest.entries[key] = entry
        else:
            manifest.refused[key] = (value, reason or "unusable entry")
    return manifest


def parse_entry(value: Any) -> Entry | str:
    """The entry described by ``value``, or why it is refused."""
    if not isinstance(value, dict):
        return f"entry must be an object, found {type(value).__name__}"
    for name in ("original_sha256", "patched_sha256"):
        if not isinstance(value.get(name), str) or not DIGEST.match(value[name]):
            return f"{name} is not a sha256 hex digest"
    if value.get("backup") != backup_name(value["original_sha256"]):
        return "backup is not files/<original_sha256>, the only name lintloader writes"
    mode = value.get("mode")
    if not isinstance(mode, int) or isinstance(mode, bool) or mode < 0:
        return "mode is not a non-negative integer"
    texts = [value.get(name, "") for name in _TEXT_FIELDS]
    fixes = value.get("fixes", [])
    if not isinstance(fixes, list):
        return "fixes is not a list"
    if not all(isinstance(text, str) and not _CONTROL.search(text) for text in [*texts, *fixes]):
        return "a descriptive field is not a plain one-line string"
    version, time, user = texts
    return Entry(
        value["original_sha256"],
        value["patched_sha256"],
        value["backup"],
        mode & PERMISSION_BITS,
        version,
        time,
        user,
        list(fixes),
    )


def key_problem(key: str, site: str) -> str | None:
    """Why ``key`` does not name a Python file inside ``site``, or None."""
    if not key or _CONTROL.search(key) or os.path.isabs(key):
        return "key is not a relative path"
    if os.path.normpath(key) != key or ".." in key.split(os.sep):
        return "key is not a normalised path inside the site directory"
    if not key.endswith(".py") or key.split(os.sep)[0] == BACKUP_DIR:
        return "key is not a Python source file"
    root = os.path.realpath(site)
    real = os.path.realpath(os.path.join(site, key))
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        return "key resolves (through a symbolic link) outside the site directory"
    return None


def render_manifest(manifest: Manifest) -> bytes:
    """The manifest as written: the usable entries and, unchanged, the refused ones."""
    files: dict[str, Any] = {key: value for key, (value, _) in manifest.refused.items()}
    files.update({key: _as_dict(entry) for key, entry in manifest.entries.items()})
    document = {"format": FORMAT, "files": dict(sorted(files.items()))}
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def _as_dict(entry: Entry) -> Mapping[str, Any]:
    return {
        "original_sha256": entry.original_sha256,
        "patched_sha256": entry.patched_sha256,
        "backup": entry.backup,
        "mode": entry.mode,
        "tool_version": entry.tool_version,
        "time": entry.time,
        "user": entry.user,
        "fixes": entry.fixes,
    }
