# ruff: noqa: UP031
"""What an interpreter's site directories and installed distributions are.

This file runs in two ways. For another interpreter, its text is given to that interpreter as
``python -I -S -c <this file> <json list of distribution names>``, so that no ``.pth`` file or
``sitecustomize`` of the scanned interpreter executes; it must therefore stay plain Python that
any Python 3 runs (no annotations, only type comments; no f-strings; only the standard
library), and it prints its
answer as JSON. For the interpreter lintloader itself runs in, ``discover`` imports it and calls
:func:`answer` directly, which gives the same answer without starting a process.
"""

import os
import re
import site
import sys
import sysconfig

MYPY = False  # true for mypy only: the names its type comments use
if MYPY:
    from importlib.metadata import Distribution  # noqa: F401 (in type comments)
    from typing import TypedDict, TypeGuard  # noqa: F401 (in type comments)

    Files = dict[str, list[str]]

    class Answer(TypedDict):
        sites: list[str]
        candidates: list[str]
        dists: Files
        names: list[str]
        broken: list[str]
        python: str


def norm(name):
    # type: (str) -> str
    return re.sub(r"[-_.]+", "-", name).lower()


def site_candidates(executable, user_site_enabled, version=None):
    # type: (str, bool | None, str | None) -> list[str]
    """Where ``executable``'s site directories would be: the purelib and platlib directories of
    its scheme (and the user site when ``user_site_enabled``, the value of
    ``site.ENABLE_USER_SITE`` under ``-S``: never), whether they exist or not. ``version``
    ("3.12.1"): worked out here for a virtual environment of that Python, never run."""
    # Without the site module a virtual environment goes undetected, so find its pyvenv.cfg as
    # site.venv does.
    bindir = os.path.dirname(os.path.abspath(executable))
    prefix = {}  # type: dict[str, str]
    folders = (bindir, os.path.dirname(bindir))
    if any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in folders):
        prefix = {"base": os.path.dirname(bindir), "platbase": os.path.dirname(bindir)}
    if version:
        short = ".".join(version.split(".")[:2])
        prefix["py_version_short"] = short
        prefix["py_version_nodot"] = short.replace(".", "")
        scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"
        paths = sysconfig.get_paths(scheme, vars=prefix)
    else:
        paths = sysconfig.get_paths(vars=prefix)
    candidates = [path for path in (paths.get("purelib"), paths.get("platlib")) if path]
    try:
        if user_site_enabled:
            candidates.append(site.getusersitepackages())
    except Exception:
        pass
    return candidates


def existing_sites(candidates):
    # type: (list[str]) -> list[str]
    """The candidates that are directories, each once, in order."""
    sites = []  # type: list[str]
    for path in candidates:
        if os.path.isdir(path) and path not in sites:
            sites.append(path)
    return sites


def distribution_files(sites, wanted):
    # type: (list[str], list[str]) -> tuple[Files, list[str], list[str]]
    """(files by normalized name of each wanted distribution, every installed name, problems).
    Reads only metadata, so it is skipped when no distribution is wanted."""
    dists = {}  # type: Files
    names = []  # type: list[str]
    broken = []  # type: list[str]
    try:
        from importlib import metadata
    except ImportError:  # before Python 3.8: no distribution is known
        return dists, names, broken
    wanted_keys = [norm(w) for w in wanted]
    for dist in metadata.distributions(path=sites):
        try:
            name = dist.metadata["Name"]
        except Exception:
            continue
        if not name:
            continue
        names.append(name)
        if norm(name) not in wanted_keys:
            continue
        files = []  # type: list[str]
        try:
            for entry in dist.files or []:
                if str(entry).endswith(".py"):
                    files.append(os.path.abspath(str(dist.locate_file(entry))))
        except Exception as exc:
            broken.append("%s: unreadable RECORD (%s)" % (name, exc))
        if not files:
            files = top_level_files(dist)
            if not files:
                broken.append("%s: no RECORD or top_level.txt to list its files" % name)
        dists.setdefault(norm(name), []).extend(files)
    return dists, names, broken


def top_level_files(dist):
    # type: (Distribution) -> list[str]
    """The ``.py`` files below the packages that ``top_level.txt`` names."""
    files = []  # type: list[str]
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
    return files


def answer(wanted, executable, user_site_enabled, version=None):
    # type: (list[str], str, bool | None, str | None) -> Answer
    """The whole answer: site directories (and the candidates they were chosen from), then the
    files of each wanted distribution (``version``: see :func:`site_candidates`)."""
    candidates = site_candidates(executable, user_site_enabled, version)
    sites = existing_sites(candidates)
    nothing = ({}, [], [])  # type: tuple[Files, list[str], list[str]]
    dists, names, broken = distribution_files(sites, wanted) if wanted else nothing
    python = version or sys.version.split()[0]
    return {
        "sites": sites,
        "candidates": candidates,
        "dists": dists,
        "names": names,
        "broken": broken,
        "python": python,
    }


def is_answer(answer):
    # type: (object) -> TypeGuard[Answer]
    """The shape the query prints; anything else came from a program that is not a Python."""
    return (
        isinstance(answer, dict)
        and isinstance(answer.get("sites"), list)
        and isinstance(answer.get("names"), list)
        and isinstance(answer.get("dists"), dict)
        and all(isinstance(s, str) for s in answer["sites"])
    )


if __name__ == "__main__":
    import json

    wanted = json.loads(sys.argv[1])
    print(json.dumps(answer(wanted, sys.executable, site.ENABLE_USER_SITE)))
