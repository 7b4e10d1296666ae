"""Which files to scan and what module name each one has.

Source trees: files and directories given on the command line, minus default excludes, user
excludes and (inside a git work tree) whatever ``.gitignore`` ignores. Installed packages: the
site directories of an interpreter, asked through a subprocess so that scanned code is never
imported; a distribution name resolves to its files through its installed metadata.
"""

from __future__ import annotations

import difflib
import errno
import fnmatch
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass(frozen=True)
class SourceFile:
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
_QUERY = r"""
import json, os, re, site, sys, sysconfig
try:
    from importlib import metadata
except ImportError:
    metadata = None

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

wanted = json.loads(sys.argv[1])
# Run with -S so that no .pth file or sitecustomize of the scanned interpreter executes; without
# the site module a virtual environment goes undetected, so find its pyvenv.cfg as site.venv does.
bindir = os.path.dirname(os.path.abspath(sys.executable))
prefix = {}
if any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in (bindir, os.path.dirname(bindir))):
    prefix = {"base": os.path.dirname(bindir), "platbase": os.path.dirname(bindir)}
sites = []
for key in ("purelib", "platlib"):
    path = sysconfig.get_paths(vars=prefix).get(key)
    if path and os.path.isdir(path) and path not in sites:
        sites.append(path)
try:
    user = site.getusersitepackages()
    if site.ENABLE_USER_SITE and os.path.isdir(user) and user not in sites:
        sites.append(user)
except Exception:
    pass
dists, names, broken = {}, [], []
for dist in (metadata.distributions(path=sites) if metadata else []):
    try:
        name = dist.metadata["Name"]
    except Exception:
        continue
    if not name:
        continue
    names.append(name)
    if norm(name) not in [norm(w) for w in wanted]:
        continue
    files = []
    try:
        for entry in dist.files or []:
            if str(entry).endswith(".py"):
                files.append(os.path.abspath(str(dist.locate_file(entry))))
    except Exception as exc:
        broken.append("%s: unreadable RECORD (%s)" % (name, exc))
    if not files:
        base = os.path.abspath(str(dist.locate_file("")))
        try:
            tops = (dist.read_text("top_level.txt") or "").split()
        except Exception:
            tops = []
        for top in tops:
            root = os.path.join(base, top)
            if os.path.isfile(root + ".py"):
                files.append(root + ".py")
            for folder, _, filenames in os.walk(root):
                files.extend(os.path.join(folder, f) for f in filenames if f.endswith(".py"))
        if not files:
            broken.append("%s: no RECORD or top_level.txt to list its files" % name)
    dists.setdefault(norm(name), []).extend(files)
print(json.dumps({"sites": sites, "dists": dists, "names": names, "broken": broken,
                  "python": sys.version.split()[0]}))
"""


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def query_interpreter(python: str | None, dists: Iterable[str]) -> dict:
    executable = python or sys.executable
    try:
        result = subprocess.run(
            [executable, "-I", "-S", "-c", _QUERY, json.dumps(list(dists))],
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
) -> Discovery:
    """Every ``.py`` file of the interpreter's site directories, or only those of ``dists``."""
    wanted = list(dists)
    answer = query_interpreter(python, wanted)
    sites: list[str] = answer["sites"]
    if not sites:
        raise DiscoveryError("no site-packages directory found for that interpreter")
    cwd = os.path.abspath(cwd or os.getcwd())
    found = Discovery(roots=list(sites))
    for problem in answer.get("broken", []):
        found.problems.append(FileProblem("<site-packages>", problem))
    if wanted:
        paths = _files_of(wanted, answer)
    else:
        patterns = ("__pycache__", *excludes)
        paths = [p for site in sites for p in _walk_site(site, patterns, found)]
    seen: set[str] = set()
    for path in paths:
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        site_dir = _site_of(path, sites)
        module, is_package = module_name_in_site(path, site_dir)
        found.files.append(SourceFile(path, module, is_package, display_path(path, cwd, site_dir)))
    return found


def _files_of(wanted: list[str], answer: dict) -> list[str]:
    known = {_normalize(n): n for n in answer["names"]}
    files: list[str] = []
    for name in wanted:
        key = _normalize(name)
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(known[c] for c in close)}?" if close else ""
            raise DiscoveryError(f"distribution {name!r} is not installed{hint}")
        files.extend(answer["dists"].get(key, []))
    return sorted(files)


def _walk_site(site: str, patterns: tuple[str, ...], found: Discovery) -> Iterator[str]:
    for directory, dirnames, filenames in os.walk(site, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(d, patterns))
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(directory, name)
                if os.path.islink(full) and not os.path.exists(full):
                    found.problems.append(FileProblem(full, link_problem(full)))
                else:
                    yield full


def _site_of(path: str, sites: list[str]) -> str:
    best = ""
    for site in sites:
        if path.startswith(site.rstrip(os.sep) + os.sep) and len(site) > len(best):
            best = site
    return best or os.path.dirname(path)
