"""Paths as CI systems want them: relative to the report's root (the repository root in a
checkout) with ``/`` separators; a path outside it stays as the finding gives it."""

from __future__ import annotations

import os
from collections.abc import Callable


def relative_to(root: str) -> Callable[[str], str]:
    """A function: a finding's display path -> the path relative to ``root``."""
    base = os.path.abspath(root)

    def relocate(display: str) -> str:
        absolute = os.path.abspath(display)
        if os.path.commonpath([absolute, base]) == base and absolute != base:
            return os.path.relpath(absolute, base).replace(os.sep, "/")
        return display.replace(os.sep, "/")

    return relocate
