"""``check --fix`` with LL001 selected: take the unused codes out of their ``# noqa`` comments,
as ruff's ``--fix`` does for RUF100 (atomically; a file that cannot be written is an error)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import click

from lintloader.engine import CheckResult
from lintloader.suppress.unused_noqa import CODE, STALE_CODES, without_unused


def remove_unused_noqa(result: CheckResult, roots: Sequence[str]) -> CheckResult:
    """The result without the LL001 findings whose comments were rewritten."""
    from lintloader.fixers.writer import Roots, WriteError, atomic_write, why_not_writable

    paths = {file.display: file.path for file in result.files}
    by_file: dict[str, list[tuple[int, list[str]]]] = {}
    for finding in result.findings:
        match = STALE_CODES.search(finding.message) if finding.code == CODE else None
        if match and finding.path in paths:
            codes = [c.strip() for c in match["codes"].split(",")]
            by_file.setdefault(finding.path, []).append((finding.line, codes))
    allowed, removed, done = Roots.of(roots), 0, set()
    for display, edits in sorted(by_file.items()):
        path = paths[display]
        try:
            problem = why_not_writable(path, allowed, allow_installed=False)
            if problem:
                raise WriteError(problem)
            with open(path, "rb") as handle:
                lines = handle.read().decode("utf-8", "surrogateescape").splitlines(keepends=True)
            for line, codes in edits:
                text = lines[line - 1]
                ending = text[len(text.rstrip("\r\n")) :]
                lines[line - 1] = without_unused(text.rstrip("\r\n"), codes) + ending
            atomic_write(path, "".join(lines).encode("utf-8", "surrogateescape"))
            removed += len(edits)
            done.add(display)
        except (OSError, WriteError) as exc:
            click.echo(f"lintloader: error: {display}: {exc}", err=True)
    if removed:
        click.echo(f"Removed {removed} unused noqa directive{'s' * (removed != 1)}.", err=True)
    kept = [f for f in result.findings if not (f.code == CODE and f.path in done)]
    return replace(result, findings=kept)
