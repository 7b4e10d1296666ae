"""Which files to scan and what module name each one has.

Source trees: files and directories given on the command line, minus default excludes, user
excludes and (inside a git work tree) whatever ``.gitignore`` ignores. Installed packages: the
site directories of an interpreter (another one is asked through a subprocess, see
``site_query``, so that scanned code is never imported); a distribution name resolves to its
files through its installed metadata.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from lintloader import __version__
from lintloader.cache.listings import Listing, ListingCache
from lintloader.cache.summaries import read_pickle, write_pickle
from lintloader.scan import site_query

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".lintloader_cache",
)


class DiscoveryError(Exception):
    """An operational error that stops the run (exit code 2): a missing path, a bad --python."""


class SourceFile(NamedTuple):
    """A file to scan. (A named tuple, not a dataclass: a site-packages makes thousands of
    them on every run, and a tuple is made in a third of the time.)"""

    path: str  # as found (not resolved through symlinks)
    module: str
    is_package: bool
    display: str  # what reports show


@dataclass(frozen=True)
class FileProblem:
    """A file that cannot be analyzed; reported as LL000 and the run goes on."""

    display: str
    message: str
    line: int = 1
    column: int = 1


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # where a project config is looked up

    def extend(self, other: Discovery) -> None:
        self.files.extend(other.files)
        self.problems.extend(other.problems)
        self.roots.extend(other.roots)


def inside(absolute: str, anchor: str) -> str | None:
    """``absolute`` relative to ``anchor`` when it lies inside it, else None. Both are
    normalized absolute paths, so this is string slicing (``os.path.relpath`` per file costs a
    third of a second over a site-packages)."""
    if absolute == anchor:
        return "."
    prefix = anchor.rstrip(os.sep) + os.sep
    return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def display_path(path: str, cwd: str, base: str | None = None) -> str:
    """Relative to the working directory when inside it, else to ``base`` (a site dir)."""
    absolute = os.path.abspath(path)
    for anchor in (cwd, base):
        relative = inside(absolute, anchor) if anchor else None
        if relative is not None:
            return relative
    return absolute


def is_excluded(relative: str, patterns: Iterable[str]) -> bool:
    """``relative`` uses '/' separators; a pattern matches any path component or the path."""
    parts = relative.split("/")
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(relative, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return True
    return False


def name_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """Whether one path component matches any of the glob ``patterns`` (what
    :func:`is_excluded` answers for a one-component path), as one compiled expression."""
    expression = "|".join(fnmatch.translate(os.path.normcase(p.rstrip("/"))) for p in patterns)
    if not expression:
        return lambda name: False
    match = re.compile(expression).match
    return lambda name: match(os.path.normcase(name)) is not None


def module_name_for(path: str) -> tuple[str, bool]:
    """Dotted module name from the package structure (``__init__.py`` files above the file)."""
    absolute = Path(os.path.abspath(path))
    is_package = absolute.name == "__init__.py"
    parts = [] if is_package else [absolute.stem]
    directory = absolute.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) or absolute.stem, is_package


def module_name_in_site(path: str, site_dir: str) -> tuple[str, bool]:
    relative = inside(os.path.abspath(path), os.path.abspath(site_dir))
    if relative is None:
        relative = os.path.relpath(path, site_dir)
    *folders, name = relative.split(os.sep)
    is_package = name == "__init__.py"
    parts = folders if is_package else [*folders, os.path.splitext(name)[0]]
    return ".".join(p for p in parts if p not in ("", ".")), is_package


# -- source trees ------------------------------------------------------------------------------
def discover_paths(
    paths: Iterable[str], excludes: Iterable[str] = (), cwd: str | None = None
) -> Discovery:
    cwd = os.path.abspath(cwd or os.getcwd())
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    found = Discovery()
    seen: set[str] = set()
    for raw in paths:
        path = os.path.join(cwd, raw) if not os.path.isabs(raw) else raw
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        found.roots.append(os.path.abspath(path))
        for candidate in _walk(path, patterns, found, cwd):
            key = os.path.abspath(candidate)
            if key in seen:
                continue
            seen.add(key)
            module, is_package = module_name_for(candidate)
            found.files.append(SourceFile(key, module, is_package, display_path(key, cwd)))
    return found


def _walk(path: str, patterns: tuple[str, ...], found: Discovery, cwd: str) -> Iterator[str]:
    if os.path.islink(path) and not os.path.exists(path):
        found.problems.append(FileProblem(display_path(path, cwd), link_problem(path)))
        return
    if not os.path.isdir(path):
        yield path  # an explicitly named file is scanned whatever its suffix
        return
    listed = _git_listed(path)
    for directory, dirnames, filenames in os.walk(path, followlinks=False):
        relative_dir = os.path.relpath(directory, path).replace(os.sep, "/")
        relative_dir = "" if relative_dir == "." else relative_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(relative_dir + d, patterns))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            full = os.path.join(directory, name)
            relative = relative_dir + name
            if is_excluded(relative, patterns):
                continue
            if listed is not None and os.path.abspath(full) not in listed:
                continue
            if os.path.islink(full) and not os.path.exists(full):
                found.problems.append(FileProblem(display_path(full, cwd), link_problem(full)))
                continue
            if os.path.isfile(full):
                yield full


def link_problem(path: str) -> str:
    """Why a symbolic link that does not resolve cannot be read."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return f"broken symbolic link (target {os.readlink(path)!r} does not exist)"


def _git_listed(directory: str) -> set[str] | None:
    """Files git does not ignore below ``directory`` (tracked or not), or None outside git."""
    import subprocess  # imported when used: a warm --site-packages run never starts one

    try:
        result = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=directory,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    root = os.path.abspath(directory)
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {os.path.abspath(os.path.join(root, n)) for n in names if n}


# -- installed packages ------------------------------------------------------------------------
def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def query_interpreter(
    python: str | None, dists: Iterable[str], cache_dir: Path | None = None
) -> dict:
    """The site directories of ``python`` (default: this interpreter) and the files of the
    distributions ``dists``, as :mod:`lintloader.scan.site_query` answers them. With ``cache_dir``,
    what another interpreter answered about its site directories (no distributions asked) is
    remembered there, keyed by the interpreter's stat; which of its candidate directories exist
    is checked again on every use."""
    wanted = list(dists)
    if is_running_interpreter(python):
        # the very code the subprocess would run, with what ``-S`` leaves in site.ENABLE_USER_SITE
        return site_query.answer(wanted, sys.executable, None)
    executable = python or sys.executable
    remember = cache_dir is not None and not wanted and os.sep in executable
    stamp = interpreter_stamp(executable) if remember else None
    if cache_dir is not None and stamp is not None:
        answer = _remembered_answer(cache_dir, stamp)
        if answer is not None:
            return answer
    answer = _ask_interpreter(executable, wanted)
    if cache_dir is not None and stamp is not None:
        write_pickle(Path(cache_dir), _answer_file(cache_dir, stamp), (stamp, answer))
    return answer


def interpreter_stamp(executable: str) -> tuple[object, ...] | None:
    """What the answer about ``executable`` (a path) depends on besides the files of its
    standard library: its absolute path (the venv detection starts from it), the link and the
    file it resolves to, and the ``pyvenv.cfg`` files the venv detection looks for. None when
    it cannot be stat'ed."""
    path = os.path.abspath(executable)
    bindir = os.path.dirname(path)
    configs = [os.path.join(folder, "pyvenv.cfg") for folder in (bindir, os.path.dirname(bindir))]
    itself = (_stat_stamp(os.lstat, path), _stat_stamp(os.stat, path))
    if None in itself:
        return None
    return (path, *itself, *(_stat_stamp(os.stat, config) for config in configs))


def _stat_stamp(
    stat_call: Callable[[str], os.stat_result], path: str
) -> tuple[int, int, int, int] | None:
    try:
        status = stat_call(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def _answer_file(cache_dir: Path, stamp: tuple[object, ...]) -> Path:
    name = hashlib.sha256(str(stamp[0]).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(cache_dir) / f"interpreters-{__version__}" / f"{name}.pickle"


def _remembered_answer(cache_dir: Path, stamp: tuple[object, ...]) -> dict | None:
    stored = read_pickle(_answer_file(cache_dir, stamp))
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != stamp:
        return None
    answer = stored[1]
    if not _is_answer(answer) or not isinstance(answer.get("candidates"), list):
        return None
    return {**answer, "sites": site_query.existing_sites(answer["candidates"])}


def _ask_interpreter(executable: str, wanted: list[str]) -> dict:
    """Run :mod:`lintloader.scan.site_query` in ``executable`` (``-I -S``: no site hooks)."""
    import json
    import subprocess

    source = Path(site_query.__file__).read_text(encoding="utf-8")
    try:
        result = subprocess.run(
            [executable, "-I", "-S", "-c", source, json.dumps(wanted)],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except OSError as exc:
        raise DiscoveryError(f"--python {executable}: cannot run it ({exc.strerror})") from None
    except subprocess.TimeoutExpired:
        raise DiscoveryError(f"--python {executable}: did not answer within 120 s") from None
    try:
        answer = json.loads(result.stdout)
    except ValueError:
        answer = None
    if not _is_answer(answer):
        stderr = result.stderr.decode(errors="replace").strip().splitlines()
        why = stderr[-1] if stderr else f"exit code {result.returncode}, no usable answer"
        raise DiscoveryError(f"--python {executable}: not a usable Python ({why})")
    return answer


def is_running_interpreter(python: str | None) -> bool:
    """Whether ``python`` names the interpreter lintloader runs in (then it is asked directly:
    its own site hooks have already run, so asking it in-process executes nothing new)."""
    if not sys.executable:
        return False
    return python is None or os.path.abspath(python) == os.path.abspath(sys.executable)


def _is_answer(answer: object) -> bool:
    """The shape the query prints; anything else came from a program that is not a Python."""
    return (
        isinstance(answer, dict)
        and isinstance(answer.get("sites"), list)
        and isinstance(answer.get("names"), list)
        and isinstance(answer.get("dists"), dict)
        and all(isinstance(s, str) for s in answer["sites"])
    )


def discover_site_packages(
    python: str | None,
    dists: Iterable[str],
    excludes: Iterable[str] = (),
    cwd: str | None = None,
    cache_dir: Path | None = None,
) -> Discovery:
    """Every ``.py`` file of the interpreter's site directories, or only those of ``dists``
    (``cache_dir``: see :func:`query_interpreter`)."""
    wanted = list(dists)
    answer = query_interpreter(python, wanted, cache_dir)
    sites: list[str] = answer["sites"]
    if not sites:
        raise DiscoveryError("no site-packages directory found for that interpreter")
    cwd = os.path.abspath(cwd or os.getcwd())
    found = Discovery(roots=list(sites))
    for problem in answer.get("broken", []):
        found.problems.append(FileProblem("<site-packages>", problem))
    seen: set[str] = set()
    if wanted:
        for path in _files_of(wanted, answer):
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                found.files.append(_site_file(path, sites, cwd))
        return found
    excluded = name_matcher(("__pycache__", *excludes))
    for site in sites:
        listings = ListingCache.load(cache_dir, site)
        found.files.extend(_walked_site_files(site, sites, excluded, found, cwd, seen, listings))
        listings.save()
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
        shown = _display_folder(directory, cwd, folders)
        for name, path in files:
            if path in seen:
                continue
            seen.add(path)
            if name == "__init__.py":
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


def _files_of(wanted: list[str], answer: dict) -> list[str]:
    known = {_normalize(n): n for n in answer["names"]}
    files: list[str] = []
    for name in wanted:
        key = _normalize(name)
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
        listing = listings.get(directory) or _list_directory(directory, found, listings)
        if listing is None:
            continue  # unreadable (or vanished) directory: skipped, as os.walk does
        yield directory, folders, listing.files
        subdirs = [(name, path) for name, path in listing.subdirs if not excluded(name)]
        stack.extend((path, (*folders, name)) for name, path in reversed(subdirs))


def _list_directory(directory: str, found: Discovery, listings: ListingCache) -> Listing | None:
    """List ``directory``: file types come from the listing, only links cost a ``stat``."""
    try:
        mtime: int | None = os.stat(directory).st_mtime_ns  # before listing: see listings.py
    except OSError:
        mtime = None
    subdirs: list[tuple[str, str]] = []
    candidates: list[tuple[str, os.DirEntry[str]]] = []
    linked = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.is_symlink():
                        linked = True
                    else:
                        subdirs.append((name, entry.path))
                elif name.endswith(".py"):
                    candidates.append((name, entry))
                    linked = linked or entry.is_symlink()
    except OSError:
        return None
    candidates.sort(key=lambda candidate: candidate[0])
    files = [(n, e.path) for n, e in candidates if _is_source_entry(e, found)]
    listing = Listing(mtime or 0, sorted(subdirs), files)
    listings.put(directory, mtime, None if linked else listing)
    return listing


def _is_source_entry(entry: os.DirEntry[str], found: Discovery) -> bool:
    """Whether a listed ``.py`` entry is a regular file (through a link); a link that does not
    resolve is recorded as a problem."""
    if entry.is_symlink() and not os.path.exists(entry.path):
        found.problems.append(FileProblem(entry.path, link_problem(entry.path)))
        return False
    try:
        return entry.is_file()
    except OSError:
        return False


def _site_of(path: str, sites: list[str]) -> str:
    best = ""
    for site in sites:
        if path.startswith(site.rstrip(os.sep) + os.sep) and len(site) > len(best):
            best = site
    return best or os.path.dirname(path)
