"""The static link: lintloader's own check run on the files of the culprit frames, and the
finding whose chain passes through one of those frames.

The check runs as ``python -m lintloader check --output-format json`` in a child process, on
those files alone (``--project-root none``: a culprit in site-packages must not index all of
site-packages), the way a user would run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lintloader.runtime.trace.records import Frame

CHECK_TIMEOUT_S = 120


@dataclass(frozen=True)
class StaticLink:
    """A finding of ``lintloader check`` whose chain passes through a culprit frame."""

    code: str
    path: str
    line: int
    message: str
    fixable: bool

    @property
    def advice(self) -> str:
        action = (
            "run `lintloader fix`" if self.fixable else "see `lintloader rule " + self.code + "`"
        )
        return f"{self.code} at {self.path}:{self.line} — {action}"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "fixable": self.fixable,
            "advice": self.advice,
        }


@dataclass(frozen=True)
class Findings:
    """The check's findings as ``(absolute path, line) -> finding`` for every hop of each."""

    by_site: dict[tuple[str, int], StaticLink]
    error: str | None = None

    def link(self, frames: Iterable[Frame]) -> StaticLink | None:
        for frame in frames:
            found = self.by_site.get((_absolute(frame.path), frame.line))
            if found is not None:
                return found
        return None


def check_files(frames: Iterable[Frame], cwd: str) -> Findings:
    """Run the check once on every existing ``.py`` file the frames are in."""
    files = sorted({_absolute(f.path) for f in frames if f.path.endswith(".py")})
    files = [path for path in files if os.path.isfile(path)]
    if not files:
        return Findings({})
    command = [sys.executable, "-m", "lintloader", "check", "--output-format", "json"]
    command += ["--project-root", "none", "--no-cache", "--exit-zero", "-q", "--", *files]
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S
        )
        findings = json.loads(done.stdout or "[]")
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return Findings({}, f"static check did not run: {exc}")
    return Findings(_index(findings, cwd))


def _index(findings: list[dict[str, Any]], cwd: str) -> dict[tuple[str, int], StaticLink]:
    sites: dict[tuple[str, int], StaticLink] = {}
    for finding in findings:
        link = StaticLink(
            code=str(finding["code"]),
            path=str(finding["path"]),
            line=int(finding["line"]),
            message=str(finding.get("message", "")),
            fixable=bool(finding.get("fixes")),
        )
        hops = [*finding.get("chain", ()), *finding.get("also_reaches", ()), finding]
        for hop in hops:
            key = (_absolute(os.path.join(cwd, str(hop["path"]))), int(hop["line"]))
            sites.setdefault(key, link)
    return sites


def _absolute(path: str) -> str:
    return str(Path(path).resolve())
