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
    return lambda name: match(os.path.normcase(name)) is not None


@dataclass(frozen=True)
class Excluder:
    """:func:`is_excluded` for a walk that checks each path as it goes down: the components
    above a path were checked on the way, so only its last component and the whole path are
    matched, each against all patterns at once."""

    name: Callable[[str], bool]
    whole: Callable[[str], bool]

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Excluder:
        matcher = name_matcher(patterns)
        return cls(matcher, matcher)

    def __call__(self, relative: str, name: str) -> bool:
        return self.name(name) or self.whole(relative)
