"""A baseline: the findings a team accepts today, so that a run fails on new ones only.

An entry is keyed on what a finding *is*, not on its lines: the rule, the file, the root
function's and the sink's (or the construction's) qualified names, and a hash of the calls on
the chain with their whitespace removed. Lines moving above it or a reformatted call keep it
matched; a second instance of the same chain in the same function is a second occurrence
(``fingerprint:2``), so it is new until the baseline records it too.

The file is plain JSON, sorted and stable across runs, one entry per finding, so that it diffs
well. The same fingerprint is GitLab Code Quality's ``fingerprint``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lintloader.findings import Finding, Hop
from lintloader.scan.model import SourceFile

VERSION = 1
_LOCATION = re.compile(r":\d+(?::\d+)?")  # ``file.py:22`` in a message: lines do not count

Relocate = Callable[[str], str]  # a finding's display path -> the path an entry records


class BaselineError(Exception):
    """A baseline file that cannot be read or written (a one-line error, exit 2)."""


@dataclass(frozen=True)
class Entry:
    """One accepted finding: its fingerprint and, for people reading the file, what it is."""

    fingerprint: str
    code: str
    path: str
    root: str
    sink: str

    def to_json(self) -> dict[str, str]:
        return {
            "fingerprint": self.fingerprint,
            "code": self.code,
            "path": self.path,
            "root": self.root,
            "sink": self.sink,
        }

    @property
    def sort_key(self) -> tuple[str, str, str, str, str]:
        return (self.path, self.code, self.root, self.sink, self.fingerprint)


@dataclass(frozen=True)
class Matched:
    """What a baseline did to a run: the findings left, how many it hid, its stale entries."""

    findings: list[Finding]
    baselined: int
    stale: list[Entry]


_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def _normalised(text: str) -> str:
    """Source text without its layout: no whitespace, no trailing comma before a bracket."""
    return _TRAILING_COMMA.sub("", "".join(text.split()))


def _hop_key(hop: Hop) -> str:
    return f"{hop.function}|{hop.verb}|{_normalised(hop.action)}"


def key_parts(finding: Finding, relocate: Relocate = str) -> tuple[str, str, str, str, str]:
    """(code, path, root, sink, chain hash): the identity of a finding, without lines."""
    path = relocate(finding.path).replace(os.sep, "/")
    if finding.chain:
        root, sink = finding.chain[0].function, finding.chain[-1].function
        calls = "\n".join(_hop_key(hop) for hop in finding.chain)
    else:
        root = sink = ""
        calls = _normalised(_LOCATION.sub("", finding.message))
    digest = hashlib.sha256(calls.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return finding.code, path, root, sink, digest


def entries(findings: Iterable[Finding], relocate: Relocate = str) -> list[Entry]:
    """One entry per finding, in the findings' order; the n-th occurrence of a key gets
    ``:n`` on its fingerprint."""
    seen: dict[str, int] = {}
    made = []
    for finding in findings:
        code, path, root, sink, digest = key_parts(finding, relocate)
        base = hashlib.sha256("\0".join((code, path, root, sink, digest)).encode()).hexdigest()
        count = seen[base] = seen.get(base, 0) + 1
        fingerprint = base if count == 1 else f"{base}:{count}"
        made.append(Entry(fingerprint, code, path, root, sink))
    return made


def fingerprints(findings: Sequence[Finding], relocate: Relocate = str) -> list[str]:
    return [entry.fingerprint for entry in entries(findings, relocate)]


def dumps(recorded: Iterable[Entry]) -> str:
    ordered = sorted(recorded, key=lambda entry: entry.sort_key)
    data = {"version": VERSION, "findings": [entry.to_json() for entry in ordered]}
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def write(path: str, findings: Sequence[Finding], relocate: Relocate = str) -> int:
    """Record ``findings`` in ``path`` (written whole, then renamed); returns the entry count."""
    recorded = entries(findings, relocate)
    temporary = f"{path}.lintloader-tmp"
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(dumps(recorded))
        os.replace(temporary, path)
    except OSError as exc:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    return len(recorded)


def read(path: str) -> list[Entry]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {path}: no such file (`--write-baseline {path}` records one)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"baseline {path}: cannot read it ({exc})") from None
    try:
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return [_entry(item) for item in data["findings"]]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"baseline {path}: not a lintloader baseline ({exc})") from None


def _entry(item: dict[str, Any]) -> Entry:
    values = [item[name] for name in ("fingerprint", "code", "path", "root", "sink")]
    if not all(isinstance(value, str) for value in values):
        raise ValueError("an entry's fields must be strings")
    return Entry(*values)


def match(
    findings: Sequence[Finding],
    recorded: Sequence[Entry],
    relocate: Relocate = str,
    scanned: Iterable[str] = (),
) -> Matched:
    """Hide the findings ``recorded`` holds. Stale entries: those in a scanned file (``scanned``
    holds the entries' paths) that match no finding any more."""
    known = {entry.fingerprint for entry in recorded}
    current = entries(findings, relocate)
    kept = [f for f, entry in zip(findings, current, strict=True) if entry.fingerprint not in known]
    present = {entry.fingerprint for entry in current}
    files = set(scanned)
    stale = [e for e in recorded if e.fingerprint not in present and e.path in files]
    return Matched(kept, len(findings) - len(kept), sorted(stale, key=lambda e: e.sort_key))


def relocator(files: Sequence[SourceFile], baseline: str) -> Relocate:
    """A finding's display path -> its path relative to the baseline file's directory, so the
    same file is one entry whether the run was ``check .`` or ``check src/``."""
    base = os.path.dirname(os.path.abspath(baseline))
    absolute = {file.display: file.path for file in files}

    def relocate(display: str) -> str:
        path = absolute.get(display, display)
        if os.path.isabs(path) and os.path.commonpath([path, base]) == base:
            return os.path.relpath(path, base)
        return display

    return relocate


def match_files(
    findings: Sequence[Finding], files: Sequence[SourceFile], recorded: Sequence[Entry], path: str
) -> Matched:
    """:func:`match` for the findings of a run over ``files``, against the baseline at ``path``."""
    relocate = relocator(files, path)
    return match(findings, recorded, relocate, [relocate(file.display) for file in files])
