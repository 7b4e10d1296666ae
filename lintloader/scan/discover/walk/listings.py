"""Directory listings remembered between runs of a walk (a site-packages, or a source tree).

Adding, removing or renaming an entry changes its directory's mtime, so a directory whose mtime
is what it was when it was listed still holds the same entries: a warm run stats each directory
(1,600 in a torch + Lightning environment) instead of listing and classifying every entry
(30,000+), which was a third of its time. Two rules keep that sound:

* a directory modified within :data:`~lintloader.scan.read.stamps.RACY_NS` of being listed is not
  remembered (an entry added within the same timestamp tick would leave its mtime unchanged);
* a directory with a symbolic link among its entries is never remembered: what a link points
  to can change without touching the directory (and broken links must be reported each run).

The listings of a site's walk are stored in one entry per site directory under the cache
directory (``listings-<version>/``), written atomically like every cache file; a source tree's
are kept in the tree's memo (``scan/discover/walk/tree_memo.py``), with what its walk made of
them. An entry keeps the names only (a listing's paths are its directory's path and the name, made
again when it is read).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from lintloader import __version__
from lintloader.cache.files import read_keyed, write_entry
from lintloader.scan.read.stamps import RACY_NS, UNTRUSTED, Stamp, stamp_of

Entries = list[tuple[str, str]]  # sorted (name, path)
# what is stored of a listing: mtime, names of the subdirectories, of the files, of the broken
StoredListing = tuple[int, list[str], list[str], list[str]]
KIND = "listings 1"
_NOT_NAMES = frozenset({"", ".", ".."})


@dataclass(frozen=True, eq=False)
class Listing:
    """What a walk needs of one directory: its subdirectories (not links) and the files it
    scans (``.py`` regular files in a site; in a source tree, notebooks too, through links),
    each sorted by name. ``broken``: the paths among ``files`` that are links which do not
    resolve (a listing with a link in it is never remembered)."""

    mtime_ns: int
    subdirs: Entries
    files: Entries
    broken: frozenset[str] = frozenset()


def walk_file(cache_dir: Path, scope: str, suffix: str) -> Path:
    """Where what one walk remembers of ``scope`` (a site directory, a tree) is stored."""
    name = hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(cache_dir) / f"listings-{__version__}" / f"{name}.{suffix}"


@dataclass(eq=False, repr=False)
class ListingCache:
    """Listings by directory path for the walk of one site directory or source tree (``site``
    names it, and tells the two kinds of walk apart); ``path`` None: none are remembered (no
    cache directory)."""

    site: str = ""
    path: Path | None = None
    root: Path | None = None
    known: dict[str, Listing] = field(default_factory=dict)
    fresh: dict[str, Listing] = field(default_factory=dict)  # what this walk saw
    changed: bool = False
    # the stamp of every directory this walk went into, from the stat taken before its
    # listing was listed or taken as remembered (UNTRUSTED: it could not be stat'ed): what
    # the warm fast path's answer depends on (``cli/fast_record.py``), kept so that it need
    # not list the site directories again
    stamps: dict[str, Stamp] = field(default_factory=dict)

    @classmethod
    def load(cls, cache_dir: Path | None, site: str) -> ListingCache:
        if cache_dir is None:
            return cls(site)
        path = walk_file(cache_dir, site, "listing")
        stored = read_keyed(Path(cache_dir), path, KIND, dict[str, StoredListing], site)
        known = {directory: _listing(directory, names) for directory, names in stored.items()}
        usable = {directory: listing for directory, listing in known.items() if listing}
        return cls(site, path, Path(cache_dir), usable)

    def get(self, directory: str) -> Listing | None:
        """The remembered listing of ``directory`` if it is certainly still right."""
        known = self.known.get(directory)
        if known is None:
            return None
        try:
            status = os.stat(directory)
        except OSError:
            return None
        if status.st_mtime_ns != known.mtime_ns:
            return None
        self.stamps[directory] = stamp_of(status)
        self.fresh[directory] = known
        return known

    def stat(self, directory: str) -> int | None:
        """The mtime of ``directory`` before it is listed (None: it cannot be stat'ed), its
        stamp noted (:attr:`stamps`)."""
        try:
            status = os.stat(directory)
        except OSError:
            self.stamps[directory] = UNTRUSTED
            return None
        self.stamps[directory] = stamp_of(status)
        return status.st_mtime_ns

    def put(self, directory: str, mtime_ns: int | None, listing: Listing | None) -> None:
        """Remember a directory just listed (``listing`` None: it held a link, or
        ``mtime_ns`` None: it could not be stat'ed)."""
        self.changed = True
        if listing is None or mtime_ns is None or mtime_ns >= time.time_ns() - RACY_NS:
            return
        self.fresh[directory] = listing

    def save(self) -> None:
        """Store what this walk saw (only that: vanished directories are forgotten)."""
        if self.path is None or self.root is None:
            return
        if not self.changed and len(self.fresh) == len(self.known):
            return
        stored = {directory: _stored(listing) for directory, listing in self.fresh.items()}
        write_entry(
            self.root, self.path, KIND, tuple[str, dict[str, StoredListing]], (self.site, stored)
        )


def _stored(listing: Listing) -> StoredListing:
    names = [name for name, _ in listing.files]
    broken = sorted(name for name, path in listing.files if path in listing.broken)
    return (listing.mtime_ns, [name for name, _ in listing.subdirs], names, broken)


def _listing(directory: str, stored: StoredListing) -> Listing | None:
    """The listing ``stored`` for ``directory``; None when a name is not that of a child (one
    with a separator, or ``..``, would add a file from elsewhere to a walk: what is read from
    disk is not trusted). This runs for every directory of a site (1,600 in a torch
    environment): plain string operations only."""
    mtime_ns, subdirs, files, broken = stored
    names = subdirs + files + broken
    joined = "".join(names)
    if os.sep in joined or "\0" in joined or not _NOT_NAMES.isdisjoint(names):
        return None
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return Listing(
        mtime_ns,
        [(name, prefix + name) for name in subdirs],
        [(name, prefix + name) for name in files],
        frozenset([prefix + name for name in broken]) if broken else frozenset(),
    )
