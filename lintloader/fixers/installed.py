"""What the installer says about a site directory's files: the digests in each distribution's
``RECORD`` (``path,sha256=<urlsafe base64>,size``), as pip writes them when it installs.

``fix --site-packages --revert`` asks it whether a file that is no longer the patched one was
installed again (an upgrade or a reinstall: it now holds what its ``RECORD`` says), and which
installed file a backup with no manifest entry was taken of (:func:`original_of`: also a file
no ``RECORD`` lists that holds the backup's bytes again).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import os
from collections.abc import Iterator


def record_digests(site: str) -> Iterator[tuple[str, str]]:
    """(path relative to ``site``, sha256 hex) of every file some ``RECORD`` there lists with a
    sha256; unreadable or malformed records and rows are skipped."""
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return
    for name in names:
        if not name.endswith(".dist-info"):
            continue
        try:
            with open(os.path.join(site, name, "RECORD"), encoding="utf-8", newline="") as handle:
                rows = list(csv.reader(handle))
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
        for row in rows:
            digest = _hex_digest(row[1]) if len(row) >= 2 else None
            if digest is not None:
                yield os.path.normpath(row[0]), digest


def _hex_digest(field: str) -> str | None:
    algorithm, _, encoded = field.partition("=")
    if algorithm != "sha256" or not encoded:
        return None
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        return None
    return raw.hex() if len(raw) == 32 else None


def installed_as_recorded(site: str, key: str, digest: str) -> bool:
    """Whether the file ``key`` of ``site``, whose bytes have sha256 ``digest``, is what its
    distribution's ``RECORD`` says was installed."""
    wanted = os.path.normpath(key)
    return any(path == wanted and found == digest for path, found in record_digests(site))


def recorded_path(site: str, digest: str) -> str | None:
    """The file of ``site`` that some ``RECORD`` lists with sha256 ``digest``, if any."""
    return next((path for path, found in record_digests(site) if found == digest), None)


def original_of(site: str, digest: str) -> str | None:
    """The file of ``site`` (relative path) a backup of sha256 ``digest`` was taken of: the one
    a ``RECORD`` lists with that digest, else a Python file there that holds those bytes now
    (a file no ``RECORD`` lists, left unpatched by an interrupted fix)."""
    listed = recorded_path(site, digest)
    return listed if listed is not None else _python_file_with(site, digest)


def _python_file_with(site: str, digest: str) -> str | None:
    for folder, dirs, files in os.walk(site):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".lintloader-"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    found = hashlib.sha256(handle.read()).hexdigest()
            except OSError:
                continue
            if found == digest:
                return os.path.relpath(path, site)
    return None
