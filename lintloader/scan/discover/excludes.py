"""Which paths a walk leaves out: the default excludes (version control, virtual environments,
caches, build output) and the user's glob patterns, matched against every component of a path
or the whole of it."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable
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
    expression = "|".join(fnmatch.translate(os.path.normcase(p.rstrip("/"))) for p in patterns)
    if not expression:
        return lambda name: False
    match = re.compile(expression).match
    if os.path.normcase("A/b") == "A/b":  # POSIX: names are matched as they are
        return lambda name: match(name) is not None
    return lambda name: match(os.path.normcase(name)) is not None


@dataclass(frozen=True, eq=False)
class Excluder:
    """:func:`is_excluded` for a walk that checks each path as it goes down: the components
    above a path were checked on the way, so only its last component and the whole path are
    matched, each against all patterns at once. ``whole`` None: no pattern can match a whole
    path without matching its last component (see :func:`_by_name_only`)."""

    name: Callable[[str], bool]
    whole: Callable[[str], bool] | None

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Excluder:
        patterns = tuple(patterns)
        whole = [p for p in patterns if not _by_name_only(p)]
        return cls(name_matcher(patterns), name_matcher(whole) if whole else None)

    def __call__(self, relative: str, name: str) -> bool:
        return self.name(name) or (self.whole is not None and self.whole(relative))


def _by_name_only(pattern: str) -> bool:
    """Whether ``pattern`` matches a '/'-separated path only when it matches the path's last
    component: a plain name (no '/', no wildcard) matches only a one-component path, and
    ``*`` followed by such a name only a path ending in that name. (On Windows, where names
    are matched case-folded with '\\' separators, every pattern is matched whole too.)"""
    plain = pattern.rstrip("/").removeprefix("*")
    return os.path.normcase("A/b") == "A/b" and not any(c in plain for c in "/*?[\\")
