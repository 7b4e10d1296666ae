"""Which paths a walk leaves out: the default excludes (version control, virtual environments,
caches, build output) and the user's glob patterns, matched against every component of a path
or the whole of it."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

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
    match = _matcher(patterns)
    if match is None:
        return lambda name: False
    return lambda name: match(name) is not None


Match = Callable[[str], object]  # a compiled expression's ``match``: truthy for a match


def _matcher(patterns: Iterable[str]) -> Match | None:
    """One expression matching what any of the glob ``patterns`` matches (None: no pattern),
    names case-folded where the system folds them."""
    expression = "|".join(fnmatch.translate(os.path.normcase(p.rstrip("/"))) for p in patterns)
    if not expression:
        return None
    match = re.compile(expression).match
    if os.path.normcase("A/b") == "A/b":  # POSIX: names are matched as they are
        return match
    return lambda name: match(os.path.normcase(name))


Entries = Sequence[tuple[str, str]]  # (name, path) of the entries of one directory


@dataclass(frozen=True, eq=False)
class Excluder:
    """:func:`is_excluded` for a walk that checks each path as it goes down: the components
    above a path were checked on the way, so only its last component and the whole path are
    matched, each against all patterns at once. ``name`` None: no pattern matches a last
    component; ``whole`` None: no pattern can match a whole path without matching its last
    component (see :func:`_by_name_only`)."""

    name: Match | None
    whole: Match | None

    @classmethod
    def of(cls, patterns: Iterable[str], suffixes: tuple[str, ...] = ()) -> Excluder:
        """The excluder of ``patterns``; with ``suffixes``, of the paths whose last name ends
        in one of them only (a walk's files): a pattern that can match no such name is left
        out, so that where none is left a directory's files are taken without a match each."""
        patterns = tuple(p for p in patterns if not suffixes or _may_end_in(p, suffixes))
        whole = [p for p in patterns if not _by_name_only(p)]
        return cls(_matcher(patterns), _matcher(whole))

    def __call__(self, relative: str, name: str) -> bool:
        return bool(
            (self.name is not None and self.name(name))
            or (self.whole is not None and self.whole(relative))
        )

    def kept(self, entries: Entries, folder: str) -> Entries:
        """The ``entries`` of one directory that are not excluded, in their order; ``folder``:
        its path relative to the walk's root, with a trailing '/' ("" for the root). The
        entries themselves when no pattern can exclude one."""
        name, whole = self.name, self.whole
        if whole is not None:
            return [entry for entry in entries if not self(folder + entry[0], entry[0])]
        if name is None:
            return entries
        return [entry for entry in entries if not name(entry[0])]


def _may_end_in(pattern: str, suffixes: tuple[str, ...]) -> bool:
    """Whether ``pattern`` can match a path whose last name ends in one of ``suffixes``: one
    that is matched by the last name only (:func:`_by_name_only`) cannot unless that name
    (a plain name) or its tail (``*`` and a plain name) can end so."""
    if not _by_name_only(pattern):
        return True
    plain = pattern.rstrip("/")
    if not plain.startswith("*"):
        return plain.endswith(suffixes)
    tail = plain[1:]
    return any(tail.endswith(suffix) or suffix.endswith(tail) for suffix in suffixes)


def _by_name_only(pattern: str) -> bool:
    """Whether ``pattern`` matches a '/'-separated path only when it matches the path's last
    component: a plain name (no '/', no wildcard) matches only a one-component path, and
    ``*`` followed by such a name only a path ending in that name. (On Windows, where names
    are matched case-folded with '\\' separators, every pattern is matched whole too.)"""
    plain = pattern.rstrip("/").removeprefix("*")
    return os.path.normcase("A/b") == "A/b" and not any(c in plain for c in "/*?[\\")
