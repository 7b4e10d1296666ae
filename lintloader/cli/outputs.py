"""Several reports from one run: ``--output-format FORMAT[:PATH]``, repeatable.

The analysis is the expensive part of a run; CI wants GitHub annotations *and* a SARIF upload
from it. Each ``--output-format`` is a format, written to standard output, or ``FORMAT:PATH``,
written to PATH (whole or not at all; missing folders are made, as ruff makes them). At most
one goes to standard output; ``-o FILE`` sends that one to FILE instead. ``[tool.lintloader]
output-format`` holds the same strings.

The command line is the user's word: its PATH may be anywhere. A configuration file may come
with a cloned repository: the files it names (a relative path is read from the
configuration's folder) are written only inside the project root (that folder), never through
a link, and only under a report file's name (:data:`REPORT_SUFFIXES`); else one error line,
and the report goes to standard output when no other does. Every report file is written by
``safe_file.write_atomic``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import click

from lintloader.cli.options import Failure
from lintloader.report.formats import FORMATS
from lintloader.scan.discover.escape import printable
from lintloader.trust.safe_file import UnsafeWrite, is_below, write_atomic

# The names a report file named in a configuration may have: what the formats write (text,
# JSON, SARIF, JUnit XML, Markdown, Graphviz). Never a name a program runs or reads at start
# (``.pth``, ``.py``, ``.bashrc``, ``.profile``: no suffix at all).
REPORT_SUFFIXES = (".txt", ".log", ".json", ".sarif", ".xml", ".md", ".dot", ".gv")


@dataclass(frozen=True)
class Target:
    """One report: its format and where it goes (``None``: standard output)."""

    format: str
    path: Path | None = None
    # where a configuration named the path: its project root, which the file must stay in,
    # and the configuration's name (None: the command line's word)
    root: str | None = None
    source: str | None = None


def parse_target(text: str, source: str = "--output-format") -> Target:
    """``json`` or ``sarif:results.sarif`` (a format name has no colon, a path may)."""
    name, colon, path = text.partition(":")
    name = name.strip()
    if name not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise Failure(f"{source}: unknown format {name!r} (one of: {known})")
    if colon and not path:
        raise Failure(f"{source}: {text!r} names no file after ':'")
    return Target(name, Path(path) if colon else None)


def targets(
    given: Sequence[str],
    configured: Sequence[str],
    output_file: Path | None,
    config_source: str | None = None,
    config_root: str | None = None,
) -> list[Target]:
    """The reports to write: the command line's, else the config's, else ``text`` to stdout."""
    if given:
        parsed = [parse_target(text) for text in given]
    elif configured:
        where = f"output-format (in {config_source})" if config_source else "output-format"
        parsed = [parse_target(text, where) for text in configured]
        root = config_root or os.getcwd()
        parsed = [replace(t, path=_from(root, t.path), root=root, source=where) for t in parsed]
    else:
        parsed = [Target("text")]
    to_stdout = [target for target in parsed if target.path is None]
    if len(to_stdout) > 1:
        names = ", ".join(target.format for target in to_stdout)
        raise Failure(
            f"--output-format: at most one report goes to standard output ({names}); "
            "give the others a file (FORMAT:PATH)"
        )
    if output_file is not None:
        if not to_stdout:
            raise Failure("--output-file: every --output-format already names its file")
        parsed = [Target(t.format, output_file) if t.path is None else t for t in parsed]
    return parsed


def _from(root: str, path: Path | None) -> Path | None:
    """A path a configuration names, relative to the configuration's folder (as ruff's)."""
    return path if path is None or path.is_absolute() else Path(root) / path


def write_output(target: Target, text: str) -> bool:
    """Write a report file whole or not at all; False when a configuration named a file it
    may not write (said on one line: the caller sends the report to standard output)."""
    assert target.path is not None
    try:
        if target.root is not None:
            _check_configured(target.path, target.root)
        write_atomic(target.path, text.encode("utf-8"), inside=target.root, make_parents=True)
    except UnsafeWrite as exc:
        if target.root is None:
            raise Failure(f"cannot write output: {target.path}: {exc.strerror}") from None
        where = f"{target.source}: {printable(str(target.path))}"
        click.echo(f"lintloader: error: {where}: {exc.strerror}; not written", err=True)
        return False
    except OSError as exc:
        raise Failure(f"cannot write output: {target.path}: {exc.strerror or exc}") from None
    return True


def _check_configured(path: Path, root: str) -> None:
    """:class:`UnsafeWrite` unless ``path`` has a report file's name and lies below ``root``
    (links are the write's to refuse)."""
    if path.suffix.lower() not in REPORT_SUFFIXES:
        names = ", ".join(REPORT_SUFFIXES)
        raise UnsafeWrite(0, f"not a report file name (a configuration may name: {names})")
    if not is_below(os.path.abspath(path), os.path.abspath(root)):
        raise UnsafeWrite(0, f"outside the project root {root}")
