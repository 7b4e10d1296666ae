"""Installed packages: the files of a site-packages (or of some distributions in it) and their
module names, from the site directories an interpreter reports (see ``interpreter``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lintloader.cache.pending import PendingStores
from lintloader.scan.discover.directories import link_problem, list_directory
from lintloader.scan.discover.display import display_path, inside
from lintloader.scan.discover.escape import printable
from lintloader.scan.discover.excludes import name_matcher
from lintloader.scan.discover.module_names import module_name_in_site
from lintloader.scan.environment.interpreter import normalize_name, query_interpreter
from lintloader.scan.model import Discovery, DiscoveryError, FileProblem, SourceFile

if TYPE_CHECKING:  # the answer's shape (site_query.py runs without typing)
    from lintloader.scan.environment.site_query import Answer
from lintloader.scan.discover.walk.listings import ListingCache


def discover_site_packages(
    python: str | None,
    dists: Iterable[str],
    excludes: Iterable[str] = (),
    cwd: str | None = None,
    cache_dir: Path | None = None,
    defer_stores: bool = False,
) -> Discovery:
    """Every ``.py`` file of the interpreter's site directories, or only those of ``dists``
    (``cache_dir``: see :func:`query_interpreter`; the sites' listings are stored there at
    once or, with ``defer_stores``, when the check writes the discovery's ``stores``)."""
    wanted = list(dists)
    answer = query_interpreter(python, wanted, cache_dir)
    sites: list[str] = answer["sites"]
    if not sites:
        raise DiscoveryError("no site-packages directory found for that interpreter")
    cwd = os.path.abspath(cwd or os.getcwd())
    found = Discovery(roots=list(sites), stores=PendingStores(defer_stores))
    for problem in answer.get("broken", []):
        found.problems.append(FileProblem("<site-packages>", problem))
    seen: set[str] = set()
    if wanted:
        # the distributions they build on (see scan/environment/locate.py)
        found.context = list(sites)
        for path in _files_of(wanted, answer):
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                found.files.append(_site_file(path, sites, cwd))
        return found
    excluded = name_matcher(("__pycache__", *excludes))
    for site in sites:
        listings = ListingCache.load(cache_dir, site)
        found.files.extend(_walked_site_files(site, sites, excluded, found, cwd, seen, listings))
        found.stores.add(listings.save)
        found.directories.update(listings.stamps)
    return found


def _site_file(path: str, sites: list[str], cwd: str) -> SourceFile:
    """A file of a site directory, named after the innermost site that holds it."""
    site_dir = _site_of(path, sites)
    module, is_package = module_name_in_site(path, site_dir)
    return SourceFile(path, module, is_package, display_path(path, cwd, site_dir))


def _walked_site_files(
    site: str,
    sites: list[str],
    excluded: Callable[[str], bool],
    found: Discovery,
    cwd: str,
    seen: set[str],
    listings: ListingCache,
) -> Iterator[SourceFile]:
    """The files below ``site`` not in ``seen`` yet. Module names and display paths are built
    once per directory from the walk's relative folders (what :func:`_site_file` computes per
    file, which still does it when ``site`` is not normalized or holds another site)."""
    exact = os.path.abspath(site) == site and not any(
        other.startswith(site.rstrip(os.sep) + os.sep) for other in sites
    )
    for directory, folders, files in _walk_site(site, excluded, found, listings):
        if not exact:
            for _, path in files:
                if path not in seen:
                    seen.add(path)
                    yield _site_file(path, sites, cwd)
            continue
        package = ".".join(folders)
        prefix = package + "." if package else ""
        shown = printable(_display_folder(directory, cwd, folders))
        for name, path in files:
            if path in seen:
                continue
            seen.add(path)
            if not name.isprintable():  # an undecodable byte or a newline in the name
                yield SourceFile(path, prefix + _stem(name), False, shown + printable(name))
            elif name == "__init__.py":
                yield SourceFile(path, package, True, shown + name)
            else:
                yield SourceFile(path, prefix + _stem(name), False, shown + name)


def _display_folder(directory: str, cwd: str, folders: tuple[str, ...]) -> str:
    """What :func:`display_path` puts before the name of a file in ``directory`` (a normalized
    folder below a site, ``folders`` relative to it): the part relative to ``cwd`` when the
    folder lies in it, else the part relative to the site."""
    relative = inside(directory, cwd)
    if relative is not None:
        return "" if relative == "." else relative + os.sep
    return "".join(folder + os.sep for folder in folders)


def _stem(name: str) -> str:
    """``os.path.splitext(name)[0]`` for a name ending in ``.py``, by slicing when it can."""
    return name[:-3] if not name.startswith(".") else os.path.splitext(name)[0]


def _files_of(wanted: list[str], answer: Answer) -> list[str]:
    known = {normalize_name(n): n for n in answer["names"]}
    files: list[str] = []
    for name in wanted:
        key = normalize_name(name)
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(known[c] for c in close)}?" if close else ""
            raise DiscoveryError(f"distribution {name!r} is not installed{hint}")
        files.extend(answer["dists"].get(key, []))
    return sorted(files)


def _walk_site(
    site: str, excluded: Callable[[str], bool], found: Discovery, listings: ListingCache
) -> Iterator[tuple[str, tuple[str, ...], list[tuple[str, str]]]]:
    """For each directory below ``site``, top-down in name order (as ``os.walk`` with sorted
    names): its path, its folder names relative to ``site`` and the sorted (name, path) of its
    regular ``.py`` files. Directories whose name is ``excluded`` and links to directories are not
    entered, unreadable directories are skipped, a link that does not resolve is a problem.
    A directory unchanged since an earlier run is not listed again (``listings.py``)."""
    stack: list[tuple[str, tuple[str, ...]]] = [(site, ())]
    while stack:
        directory, folders = stack.pop()
        listing = listings.get(directory) or list_directory(directory, (".py",), listings)
        if listing is None:
            continue  # unreadable (or vanished) directory: skipped, as os.walk does
        for _, path in listing.files:
            if path in listing.broken:
                found.problems.append(FileProblem(path, link_problem(path)))
        yield directory, folders, [f for f in listing.files if f[1] not in listing.broken]
        subdirs = [(name, path) for name, path in listing.subdirs if not excluded(name)]
        stack.extend((path, (*folders, name)) for name, path in reversed(subdirs))


def _site_of(path: str, sites: list[str]) -> str:
    best = ""
    for site in sites:
        if path.startswith(site.rstrip(os.sep) + os.sep) and len(site) > len(best):
            best = site
    return best or os.path.dirname(path)
