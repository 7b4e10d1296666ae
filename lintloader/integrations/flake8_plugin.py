"""The ``LL`` flake8 extension: ``flake8 --select LL src/`` reports what ``lintloader check`` does.

flake8 hands a plugin one file at a time, but a chain may cross files. So, by default
(``--lintloader-scope=project``), the plugin finds the file's project root (the nearest directory
with pyproject.toml, setup.cfg, setup.py or .git), runs one project-wide check there per flake8
process (demand-driven parsing, summaries read from and written to lintloader's on-disk cache,
so later runs reuse them), and reports the findings located in the file being checked. flake8's
worker processes share that check through the cache: the first to ask analyzes the project
while holding a lock file there, the others wait for it and replay its findings (checked
against every file's stat stamp, as ``lintloader check`` replays). Without
a project root, or with ``--lintloader-scope=file``, each file is analyzed alone: chains that
leave the file are then not seen (the documented limit).

Columns: lintloader's are 1-based and flake8 adds 1 to what a plugin yields, so the plugin yields
``column - 1``. ``# noqa: LL101`` is honoured by flake8 at the reported line (and by lintloader).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from lintloader import __version__
from lintloader.cache.files import default_cache_dir, make_private_dirs
from lintloader.cache.locks import LockBusy, bounded_lock
from lintloader.finding.findings import PARSE_ERROR_CODE, Finding
from lintloader.integrations.project import find_project_root
from lintloader.pipeline.engine import CheckOptions, run_check
from lintloader.pipeline.preparation import discover_trees, nearest_config, usable_cache
from lintloader.scan.discover.escape import printable
from lintloader.scan.model import DiscoveryError
from lintloader.settings.config import ConfigError
from lintloader.trust.safe_file import write_atomic

SCOPES = ("project", "file")
STDIN_NAMES = ("stdin", "-", "/dev/stdin")
Flake8Error = tuple[int, int, str, type]
# how long a flake8 worker waits for the one analyzing the project before analyzing it too
LOCK_WAIT_S = 120.0


@dataclass(frozen=True)
class Located:
    """A finding as flake8 needs it: line, 0-based column, ``CODE message``."""

    line: int
    column: int
    text: str

    @classmethod
    def of(cls, finding: Finding) -> Located:
        message = printable(" ".join(finding.message.split()))  # no raw ESC from the source
        return cls(finding.line, max(finding.column - 1, 0), f"{finding.code} {message}")


def _check(
    paths: tuple[str, ...], config_start: str, cache: Path | None, replay: bool = False
) -> dict[str, list[Located]]:
    """Findings by absolute path. jobs=1: flake8's workers are daemons, which may not fork."""
    config = nearest_config(config_start)
    # No environment read as context: a run that reads some is not stored, and flake8's
    # workers share one project check through the stored run (see the module docstring).
    discovery = discover_trees(paths, config.exclude, None, context=False)
    options = CheckOptions(config=config, jobs=1, cache_dir=cache, replay=replay and bool(cache))
    result = run_check(discovery, options)
    absolute = {f.display: f.path for f in result.files}
    found: dict[str, list[Located]] = {}
    for finding in result.findings:
        path = os.path.abspath(absolute.get(finding.path, finding.path))
        found.setdefault(path, []).append(Located.of(finding))
    return found


def _cache() -> Path | None:
    """The cache directory, or None (with a warning) when it is unusable."""
    return usable_cache(default_cache_dir(), _warn)


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


@functools.lru_cache(maxsize=8)
def project_findings(root: str) -> dict[str, list[Located]]:
    """One project-wide check per root and per process (one flake8 run), analyzed by one
    process and replayed by the others (see the module docstring). No lock in a cache that
    is not used (an untrusted one: anyone could hold a lock there)."""
    cache = _cache()
    if cache is None:
        return _check((root,), root, None)
    with project_lock(cache, root):
        return _check((root,), root, cache, replay=True)


@contextlib.contextmanager
def project_lock(cache_dir: Path, root: str, wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
    """Hold ``<cache>/flake8-locks/<root's hash>.lock`` (an advisory lock, released if its
    holder dies) for at most ``wait_s`` of waiting; yields whether it is held (without a
    trusted, writable lock folder, or after the wait, the body runs unlocked)."""
    folder = cache_dir / "flake8-locks"
    name = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    if not make_private_dirs(cache_dir, folder):
        yield False
        return
    with contextlib.ExitStack() as stack:
        try:
            held = stack.enter_context(bounded_lock(folder / f"{name}.lock", wait_s))
        except LockBusy:  # the one analyzing takes too long (or never lets go): analyze too
            held = False
        yield held


def file_findings(path: str) -> list[Located]:
    return _check((path,), path, _cache()).get(os.path.abspath(path), [])


def source_findings(lines: list[str], display: str) -> list[Located]:
    """Code that is not on disk (``flake8 -``): analyzed alone, in a temporary file."""
    base = os.path.basename(display) if display.endswith(".py") else "stdin.py"
    with tempfile.TemporaryDirectory(prefix="lintloader-flake8-") as folder:
        path = os.path.join(folder, base)
        write_atomic(path, "".join(lines).encode("utf-8"), private=True)
        return _check((path,), folder, None).get(path, [])


def matches_disk(filename: str, lines: list[str]) -> bool:
    """Whether flake8's text is the file on disk (not stdin, not an editor's unsaved buffer)."""
    if filename in STDIN_NAMES or not os.path.isfile(filename):
        return False
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    return text == "".join(lines).replace("\r\n", "\n")


class LintloaderChecker:
    """flake8 tree plugin; flake8 calls ``run`` once per file."""

    name = "lintloader"
    version = __version__
    scope: ClassVar[str] = "project"

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--lintloader-scope",
            default="project",
            choices=SCOPES,
            parse_from_config=True,
            help="project: index the file's whole project so chains across files are seen "
            "(default); file: analyze each file alone.",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.scope = getattr(options, "lintloader_scope", "project")

    def run(self) -> Iterator[Flake8Error]:
        try:
            located = self.findings()
        except (DiscoveryError, ConfigError, OSError) as exc:
            located = [Located(1, 0, f"{PARSE_ERROR_CODE} lintloader could not run: {exc}")]
        if located and not _printable_name(self.filename):
            _report_unprintable(self.filename, located)
            return
        for item in located:
            yield item.line, item.column, item.text, type(self)

    def findings(self) -> list[Located]:
        if not matches_disk(self.filename, self.lines):
            return source_findings(self.lines, self.filename)
        path = os.path.abspath(self.filename)
        root = find_project_root([path]) if self.scope == "project" else None
        if root is None:
            return file_findings(path)
        return project_findings(root).get(path, [])


def _printable_name(filename: str) -> bool:
    """Whether flake8's formatter can print ``filename`` (it encodes it as UTF-8 strictly)."""
    try:
        filename.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _report_unprintable(filename: str, located: list[Located]) -> None:
    """The findings of a file flake8 cannot name (its formatter would crash and lose every
    later file's findings): on stderr, under the escaped name, once each."""
    for item in located:
        print(f"{printable(filename)}:{item.line}:{item.column + 1}: {item.text}", file=sys.stderr)
