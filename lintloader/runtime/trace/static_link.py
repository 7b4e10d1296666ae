"""The static link: lintloader's own check run on the files of the culprit frames, and the
finding whose chain passes through one of those frames.

The check runs as a child ``lintloader check --output-format json`` on those files alone
(``--project-root none``: a culprit in site-packages must not index all of site-packages).
It runs isolated (``python -I``: no ``PYTHONPATH``, no user site, no working directory on
``sys.path``) from a neutral private directory, with lintloader's own directory added at the
end of ``sys.path``: a ``lintloader/`` or ``json.py`` in the traced project's directory can
neither run nor shadow anything. When it does not run, the report says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lintloader
from lintloader.runtime.trace.records import Frame

CHECK_TIMEOUT_S = 120
BOOT = (
    "import sys; sys.path.append({root!r}); sys.argv[0] = 'lintloader'; "
    "from lintloader.cli.main import main; main(prog_name='lintloader')"
)


@dataclass(frozen=True)
class StaticLink:
    """A finding of ``lintloader check`` whose chain passes through a culprit frame."""

    code: str
    path: str  # relative to the working directory of ``trace`` when inside it
    line: int
    message: str
    fixes: tuple[str, ...]  # the fix strategies that can act on it
    safe: tuple[str, ...] = ()  # those of them that are safe
    absolute: str = ""  # the resolved path of the finding's file

    @property
    def fixable(self) -> bool:
        return bool(self.fixes)

    @property
    def advice(self) -> str:
        where = f"{self.code} at {self.path}:{self.line}"
        if self.safe:
            return f"{where}: `lintloader fix {self.path}` fixes it ({', '.join(self.safe)})"
        if self.fixes:
            return (
                f"{where}: only an unsafe fix covers it: `lintloader fix --unsafe-fixes "
                f"{self.path}` ({', '.join(self.fixes)}; review the diff)"
            )
        return f"{where}: no fixer covers it; change it by hand (`lintloader rule {self.code}`)"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "fixable": self.fixable,
            "fixes": list(self.fixes),
            "safe_fixes": list(self.safe),
            "advice": self.advice,
        }


@dataclass(frozen=True)
class Findings:
    """The check's findings as ``(absolute path, line) -> finding`` for every hop of each."""

    by_site: dict[tuple[str, int], StaticLink]
    error: str | None = None

    def link(self, frames: Iterable[Frame], hops: bool = True) -> StaticLink | None:
        """The finding reported at one of ``frames`` (innermost first), else, with ``hops``,
        the first whose chain passes through one of them. A loader rebuilt per call links
        only by the first rule: a helper that builds loaders is a hop of every finding
        about its callers."""
        frames = list(frames)
        for frame in frames:
            found = self.by_site.get((_absolute(frame.path), frame.line))
            if found is not None and _at(found, frame):
                return found
        if not hops:
            return None
        for frame in frames:
            found = self.by_site.get((_absolute(frame.path), frame.line))
            if found is not None:
                return found
        return None


def _at(link: StaticLink, frame: Frame) -> bool:
    return link.line == frame.line and link.absolute == _absolute(frame.path)


def check_command(files: list[str]) -> list[str]:
    root = str(Path(lintloader.__file__).resolve().parent.parent)
    command = [sys.executable, "-I", "-c", BOOT.format(root=root), "check"]
    command += ["--output-format", "json", "--project-root", "none", "--no-cache"]
    command += ["--min-severity", "info"]  # an avoidable pool's finding is info (domain/cost.py)
    return [*command, "--exit-zero", "-q", "--", *files]


def check_files(
    frames: Iterable[Frame],
    cwd: str,
    neutral_dir: str,
    fix_safety: Mapping[str, bool] | None = None,
) -> Findings:
    """Run the check once on every existing ``.py`` file the frames are in, from
    ``neutral_dir``; paths in the links are shown relative to ``cwd``."""
    files = sorted({_absolute(f.path) for f in frames if f.path.endswith(".py")})
    files = [path for path in files if os.path.isfile(path)]
    if not files:
        return Findings({})
    try:
        done = subprocess.run(
            check_command(files),
            cwd=neutral_dir,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Findings({}, f"static check did not run: {exc}")
    try:
        findings = json.loads(done.stdout)
        if done.returncode != 0 or not isinstance(findings, list):
            raise ValueError(f"exit {done.returncode}")
        return Findings(_index(findings, neutral_dir, cwd, fix_safety or {}))
    except (ValueError, KeyError, TypeError) as exc:
        last = (done.stderr.strip().splitlines() or [str(exc)])[-1]
        return Findings({}, f"static check did not run: {last}")


def _index(
    findings: list[dict[str, Any]], ran_in: str, cwd: str, safety: Mapping[str, bool]
) -> dict[tuple[str, int], StaticLink]:
    sites: dict[tuple[str, int], StaticLink] = {}
    for finding in findings:
        fixes = tuple(str(name) for name in finding.get("fixes") or ())
        where = os.path.join(ran_in, str(finding["path"]))
        link = StaticLink(
            code=str(finding["code"]),
            path=_shown(where, cwd),
            line=int(finding["line"]),
            message=str(finding.get("message", "")),
            fixes=fixes,
            safe=tuple(name for name in fixes if safety.get(name)),
            absolute=_absolute(where),
        )
        sites[(link.absolute, link.line)] = link  # a finding's own place wins over a hop
        for hop in [*finding.get("chain", ()), *finding.get("also_reaches", ())]:
            key = (_absolute(os.path.join(ran_in, str(hop["path"]))), int(hop["line"]))
            if not (key in sites and _at(sites[key], Frame(key[0], key[1], ""))):
                sites.setdefault(key, link)
    return sites


def _shown(path: str, cwd: str) -> str:
    absolute = _absolute(path)
    relative = os.path.relpath(absolute, cwd)
    return absolute if relative.startswith(os.pardir) else relative


def _absolute(path: str) -> str:
    return str(Path(path).resolve())
