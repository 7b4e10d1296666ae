"""Which installed distribution a file belongs to: every ``*.dist-info/RECORD`` of the site
directories, read once, so that a file is credited to the distribution that installed it (a
bundled ``tests/`` too), not guessed from its top-level package."""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

_DIST_INFO = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info")


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str


def owners(sites: Iterable[str]) -> dict[str, Distribution]:
    """Absolute (normalised) file path -> its distribution, for every RECORD in ``sites``."""
    found: dict[str, Distribution] = {}
    for site in dict.fromkeys(sites):
        try:
            names = sorted(os.listdir(site))
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.fullmatch(name)
            if match:
                dist = Distribution(match["name"], match["version"])
                for path in _recorded(site, name):
                    found.setdefault(path, dist)
    return found


def _recorded(site: str, dist_info: str) -> list[str]:
    try:
        with open(os.path.join(site, dist_info, "RECORD"), encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    return [os.path.normpath(os.path.join(site, row[0])) for row in rows if row and row[0]]
