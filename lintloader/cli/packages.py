"""``check --site-packages``: one line per installed distribution with findings (name,
version, counts, and its advisory with an upgrade command for the interpreter it applies to),
printed on stderr before the summary."""

from __future__ import annotations

import os
import shlex
from collections import Counter
from collections.abc import Sequence

from lintloader.finding.findings import Advisory, Finding
from lintloader.scan.environment.distributions import Distribution, owners
from lintloader.scan.model import SourceFile
from lintloader.text.wording import counted

UNOWNED = Distribution("(no distribution)", "")


def package_lines(
    findings: Sequence[Finding], files: Sequence[SourceFile], sites: Sequence[str],
    python: str | None,
) -> list[str]:  # fmt: skip
    """The per-distribution lines, most findings first."""
    if not findings:
        return []
    owned = owners(sites)
    absolute = {file.display: os.path.normpath(os.path.abspath(file.path)) for file in files}
    grouped: dict[Distribution, list[Finding]] = {}
    for finding in findings:
        path = absolute.get(finding.path, os.path.abspath(finding.path))
        grouped.setdefault(owned.get(path, UNOWNED), []).append(finding)
    ordered = sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0].name.lower()))
    return [_line(dist, found, python) for dist, found in ordered]


def _line(dist: Distribution, found: list[Finding], python: str | None) -> str:
    counts = Counter(f.severity.label for f in found)
    parts = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s])
    head = f"{dist.name} {dist.version}".rstrip()
    line = f"{head}: {counted(len(found), 'finding')} ({parts})"
    advisory = next((f.advisory for f in found if f.advisory), None)
    return line + (f"; {upgrade_hint(advisory, python)}" if advisory else "")


def upgrade_hint(advisory: Advisory, python: str | None) -> str:
    """``affected, fixed in X: pip install -U "D>=X"``, for the ``--python`` interpreter when
    one was given; an advice (an avoidable cost, not a bug) or a release with no fix says so."""
    if advisory.kind == "advice" or advisory.fixed is None:
        verdict = "advice, not a bug" if advisory.kind == "advice" else "affected"
        fixed = "no fixed release yet" if advisory.fixed is None else f"{advisory.fixed} avoids it"
        return f"{verdict}, {fixed}"
    requirement = shlex.quote(f"{advisory.distribution}>={advisory.fixed}")
    pip = f"{shlex.quote(python)} -m pip" if python else "pip"
    return f"affected, fixed in {advisory.fixed}: {pip} install -U {requirement}"
