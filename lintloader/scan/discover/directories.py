"""One directory listed for a walk: its subdirectories and the files a walk wants, with the
file types that come with the listing (only links cost a ``stat``), given to the memo of
listings (``scan/discover/walk/listings.py``); and
why a link that does not resolve cannot be read."""

from __future__ import annotations

import errno
import os

from lintloader.scan.discover.walk.listings import Listing, ListingCache


def list_directory(
    directory: str, suffixes: tuple[str, ...], listings: ListingCache
) -> Listing | None:
    """List ``directory`` for a walk and give the listing to ``listings``: its subdirectories
    that are not links, sorted, and its files ending in one of ``suffixes``, sorted, that are
    regular files (through a link too) or links that do not resolve (also in ``broken``: each
    is a problem where the walk wants the file). None for a directory that cannot be listed.
    File types come with the listing: only links cost a ``stat``."""
    mtime = listings.stat(directory)  # before listing: see listings.py
    subdirs: list[tuple[str, str]] = []
    files: list[tuple[str, str]] = []  # regular files, not links: known from the listing
    links: list[os.DirEntry[str]] = []  # files (by name) that are links: worked out below
    linked = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.is_symlink():
                        linked = True
                    else:
                        subdirs.append((entry.name, entry.path))
                    continue
                name = entry.name
                if not name.endswith(suffixes):
                    continue
                if entry.is_symlink():
                    links.append(entry)
                elif _is_file(entry):
                    files.append((name, entry.path))
    except OSError:
        return None
    broken = _with_links(files, links) if links else _NONE
    files.sort()  # by name: the names in one directory differ
    subdirs.sort()
    listing = Listing(mtime or 0, subdirs, files, broken)
    listings.put(directory, mtime, None if linked or links else listing)
    return listing


_NONE: frozenset[str] = frozenset()


def _with_links(files: list[tuple[str, str]], links: list[os.DirEntry[str]]) -> frozenset[str]:
    """Add to ``files`` the ``links`` (to files by name) that resolve to a regular file or do
    not resolve; the paths of those that do not."""
    broken = frozenset(e.path for e in links if not os.path.exists(e.path))
    files.extend((e.name, e.path) for e in links if e.path in broken or _is_file(e))
    return broken


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def link_problem(path: str) -> str:
    """Why a symbolic link that does not resolve cannot be read."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return f"broken symbolic link (target {os.readlink(path)!r} does not exist)"
