"""Known affected releases: a finding located in a distribution version that is known to ship
the bug (``lintloader/data/advisories.toml``) carries an advisory naming the release that fixed
it; one known to carry an avoidable cost (not a bug) carries an advice instead. The
distribution of a file is read from the ``*.dist-info`` next to its top-level package (a
site-packages, or an unpacked wheel), only for the few distributions the data names."""

from __future__ import annotations

import dataclasses
import os
import pkgutil
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from lintloader.domain.cost import Kind
from lintloader.finding.findings import Advisory, Finding
from lintloader.scan.model import SourceFile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old interpreters
    import tomli as tomllib


# the cost model's kinds (lintloader/domain/cost.py, docs/concepts.md): a defeated pool or a raise
# is a bug, "affected"; an avoidable pool (torch's default, non-persistent, once per epoch or
# evaluation) is "advice".
COST_CLASSES = frozenset(kind.value for kind in Kind)
BUG_CLASSES = frozenset(kind.value for kind in Kind if kind.defect)


@dataclass(frozen=True)
class Entry:
    distribution: str
    affected: frozenset[str]
    fixed: str | None  # None: affected, no fixed release yet
    rules: frozenset[str]
    summary: str
    reference: str
    cost_class: str  # one of COST_CLASSES

    @property
    def kind(self) -> str:
        """The word the advisory says: "affected" (a bug) or "advice" (an avoidable cost)."""
        return Kind(self.cost_class).advisory_label


@cache
def known_advisories() -> tuple[Entry, ...]:
    # pkgutil, not importlib.resources: the same bytes through the package's loader (a zip
    # too), without importing tempfile, shutil and the archive modules (~3.5 ms a run)
    data = pkgutil.get_data("lintloader", "data/advisories.toml")
    if data is None:
        raise OSError("lintloader's loader cannot read data/advisories.toml")
    text = data.decode("utf-8")
    return tuple(
        Entry(
            str(item["distribution"]),
            frozenset(map(str, item["affected"])),
            str(item["fixed"]) if "fixed" in item else None,
            frozenset(map(str, item["rules"])),
            str(item["summary"]),
            str(item["reference"]),
            str(item["cost_class"]),
        )
        for item in tomllib.loads(text)["advisory"]
    )


def with_advisories(findings: Sequence[Finding], files: Iterable[SourceFile]) -> list[Finding]:
    """``findings``, those in a known affected release with its advisory attached."""
    if not findings:
        return list(findings)
    by_display = {file.display: file for file in files}
    entries = {_normalize(entry.distribution): entry for entry in known_advisories()}
    attached = []
    for finding in findings:
        file = by_display.get(finding.path)
        installed = distribution_of(file.path, file.module, file.is_package) if file else None
        entry = entries.get(_normalize(installed[0])) if installed else None
        if entry and installed and installed[1] in entry.affected and finding.code in entry.rules:
            advisory = Advisory(
                entry.distribution,
                installed[1],
                entry.fixed,
                entry.summary,
                entry.reference,
                entry.kind,
            )
            finding = dataclasses.replace(finding, advisory=advisory)
        attached.append(finding)
    return attached


def distribution_of(path: str, module: str, is_package: bool) -> tuple[str, str] | None:
    """(name, version) of the distribution a file belongs to, from the ``*.dist-info`` of a
    distribution the advisories name, beside the file's top-level package."""
    parts = module.split("@")[0].split(".")
    root = os.path.abspath(path)
    for _ in range(len(parts) + (1 if is_package else 0)):
        root = os.path.dirname(root)
    return _owner(root, parts[0])


@cache
def _owner(root: str, top: str) -> tuple[str, str] | None:
    wanted = {_normalize(entry.distribution) for entry in known_advisories()}
    try:
        names = os.listdir(root)
    except OSError:
        return None
    for name in names:
        match = re.fullmatch(r"(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info", name)
        if not match or _normalize(match["name"]) not in wanted:
            continue
        if top in _top_levels(os.path.join(root, name)):
            return match["name"], match["version"]
    return None


def _top_levels(dist_info: str) -> set[str]:
    for member, first_column in (("top_level.txt", False), ("RECORD", True)):
        try:
            with open(os.path.join(dist_info, member), encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        if first_column:
            return {line.split(",")[0].split("/")[0] for line in lines if "/" in line}
        return {line.strip() for line in lines if line.strip()}
    return set()


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
