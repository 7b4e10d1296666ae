"""Several reports from one run: ``--output-format FORMAT[:PATH]``, repeatable.

The analysis is the expensive part of a run; CI wants GitHub annotations *and* a SARIF upload
from it. Each ``--output-format`` is a format, written to standard output, or ``FORMAT:PATH``,
written to PATH (whole or not at all). At most one goes to standard output; ``-o FILE`` sends
that one to FILE instead. ``[tool.lintloader] output-format`` holds the same strings.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lintloader.cli.options import Failure
from lintloader.report.formats import FORMATS


@dataclass(frozen=True)
class Target:
    """One report: its format and where it goes (``None``: standard output)."""

    format: str
    path: Path | None = None


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
) -> list[Target]:
    """The reports to write: the command line's, else the config's, else ``text`` to stdout."""
    if given:
        parsed = [parse_target(text) for text in given]
    elif configured:
        where = f"output-format (in {config_source})" if config_source else "output-format"
        parsed = [parse_target(text, where) for text in configured]
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


def write_output(path: Path, text: str) -> None:
    """A report file is written whole or not at all (a temporary file, then a rename)."""
    temporary = path.with_name(f".{path.name}.lintloader-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise Failure(f"cannot write output: {path}: {exc.strerror or exc}") from None
