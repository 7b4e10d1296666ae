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

from lintloader.finding.findings import Finding, Hop
from lintloader.scan.model import SourceFile
from lintloader.trust.safe_file import Refused, owned_by_another_user, read_regular, write_atomic

VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # some 200,000 entries
MAX_DIGITS = 20
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
    """What a baseline did to a run: the findings left, how many it hid, its stale entries,
    and the baseline as it stands now (stale entries dropped, a moved file's entries under
    its new path; what ``--update-baseline`` writes)."""

    findings: list[Finding]
    baselined: int
    stale: list[Entry]
    updated: list[Entry]


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
    """Record ``findings`` in ``path``; returns the entry count."""
    return save(path, entries(findings, relocate))


def save(path: str, recorded: Sequence[Entry]) -> int:
    """Write ``recorded`` to ``path`` (written whole, then renamed; never through a link);
    returns the entry count."""
    try:
        write_atomic(path, dumps(recorded).encode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    return len(recorded)


class ForeignBaseline(BaselineError):
    """A baseline owned by another user: not used (a one-line warning; the run goes on)."""


def read(path: str, trusted: bool = False) -> list[Entry]:
    """The entries of the baseline at ``path``: a regular file of at most :data:`MAX_BYTES`,
    the user's or root's unless ``trusted`` (named on the command line), JSON nested at most
    as deep as Python can read; anything else is a :class:`BaselineError`
    (:class:`ForeignBaseline` for another user's file)."""
    accept = None if trusted else owned_by_another_user
    try:
        data = json.loads(
            read_regular(path, MAX_BYTES, follow=True, accept=accept), parse_int=_small_int
        )
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {path}: no such file (`--write-baseline {path}` records one)"
        ) from None
    except Refused as exc:
        raise ForeignBaseline(f"baseline {path}: {exc.strerror}; not used") from None
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot read it ({exc.strerror or exc})") from None
    except RecursionError:
        raise BaselineError(f"baseline {path}: cannot read it (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise BaselineError(f"baseline {path}: cannot read it ({exc})") from None
    try:
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return [_entry(item) for item in data["findings"]]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"baseline {path}: not a lintloader baseline ({exc})") from None


def _small_int(text: str) -> int:
    """A JSON integer, refused past :data:`MAX_DIGITS` digits (a baseline holds one: its
    version) before Python is asked to convert it."""
    if len(text) > MAX_DIGITS:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _entry(item: dict[str, Any]) -> Entry:
    values = [item[name] for name in ("fingerprint", "code", "path", "root", "sink")]
    if not all(isinstance(value, str) for value in values):
        raise ValueError("an entry's fields must be strings")
    return Entry(*values)


def _labels(entry: Entry) -> tuple[str, str, str, str]:
    return entry.code, entry.path, entry.root, entry.sink


def _fingerprint_at(entry: Entry, digest: str, path: str) -> str:
    """The fingerprint ``entry``'s finding would have in the file ``path``."""
    parts = (entry.code, path, entry.root, entry.sink, digest)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _moved_from(
    finding: Finding, current: Entry, gone: list[Entry], relocate: Relocate
) -> Entry | None:
    """The entry of a file that no longer exists that ``finding`` is, moved: the same rule,
    root, sink and calls, recorded under the old path (a file renamed or moved)."""
    digest = key_parts(finding, relocate)[4]
    for entry in gone:
        same = (entry.code, entry.root, entry.sink) == (current.code, current.root, current.sink)
        base = entry.fingerprint.split(":", 1)[0]
        if same and base == _fingerprint_at(entry, digest, entry.path):
            return entry
    return None


def match(
    findings: Sequence[Finding],
    recorded: Sequence[Entry],
    relocate: Relocate = str,
    scanned: Iterable[str] = (),
    exists: Callable[[str], bool] = lambda path: True,
) -> Matched:
    """Hide the findings ``recorded`` holds: an entry hides a finding when its fingerprint
    and what it says it is (rule, file, root, sink) are the finding's, or when its file no
    longer ``exists`` and the finding is the same chain in another file (a rename). Stale
    entries: those that hide nothing, in a scanned file (``scanned`` holds the entries'
    paths) or in a file that no longer exists."""
    by_fingerprint = {entry.fingerprint: entry for entry in recorded}
    gone = [entry for entry in recorded if not exists(entry.path)]
    used: dict[str, Entry] = {}  # recorded fingerprint -> the entry as it stands now
    kept: list[Finding] = []
    for finding, current in zip(findings, entries(findings, relocate), strict=True):
        accepted = by_fingerprint.get(current.fingerprint)
        if accepted is not None and _labels(accepted) == _labels(current):
            used[accepted.fingerprint] = accepted
            continue
        moved = _moved_from(
            finding, current, [e for e in gone if e.fingerprint not in used], relocate
        )
        if moved is not None:
            used[moved.fingerprint] = current
            continue
        kept.append(finding)
    files = set(scanned)
    unused = [e for e in recorded if e.fingerprint not in used]
    stale = [e for e in unused if e.path in files or not exists(e.path)]
    stale_keys = {e.fingerprint for e in stale}
    updated = [used.get(e.fingerprint, e) for e in recorded if e.fingerprint not in stale_keys]
    return Matched(
        kept, len(findings) - len(kept), sorted(stale, key=lambda e: e.sort_key), updated
    )


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


def entry_exists(baseline: str) -> Callable[[str], bool]:
    """Whether an entry's path (relative to the baseline's folder) still names a file."""
    base = os.path.dirname(os.path.abspath(baseline))
    return lambda path: os.path.lexists(os.path.join(base, path))


def match_files(
    findings: Sequence[Finding], files: Sequence[SourceFile], recorded: Sequence[Entry], path: str
) -> Matched:
    """:func:`match` for the findings of a run over ``files``, against the baseline at ``path``."""
    relocate = relocator(files, path)
    scanned = [relocate(file.display) for file in files]
    return match(findings, recorded, relocate, scanned, entry_exists(path))
