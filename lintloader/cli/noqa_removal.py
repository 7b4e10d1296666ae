"""``check --fix`` (LL001 on, the default): take the unused codes out of their ``# noqa`` comments,
as ruff's ``--fix`` does for RUF100 (atomically; a file that cannot be written is an error)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import click

from lintloader.pipeline.engine import CheckResult
from lintloader.suppress.unused_noqa import CODE, STALE_CODES, without_unused
from lintloader.text.wording import counted


def remove_unused_noqa(result: CheckResult, roots: Sequence[str]) -> CheckResult:
    """The result without the LL001 findings whose comments were rewritten."""
    from lintloader.fixers.writer import Roots, WriteError, rewrite_scanned

    paths = {file.display: file.path for file in result.files}
    by_file: dict[str, list[tuple[int, list[str]]]] = {}
    for finding in result.findings:
        match = STALE_CODES.search(finding.message) if finding.code == CODE else None
        if match and finding.path in paths:
            codes = [c.strip() for c in match["codes"].split(",")]
            by_file.setdefault(finding.path, []).append((finding.line, codes))
    allowed, removed, done = Roots.of(roots), 0, set()
    for display, edits in sorted(by_file.items()):
        try:
            removed += rewrite_scanned(
                paths[display], allowed, partial(_removed, paths[display], edits=edits)
            )
            done.add(display)
        except (OSError, WriteError) as exc:
            click.echo(f"lintloader: error: {display}: {exc}", err=True)
    if removed:
        click.echo(f"Removed {counted(removed, 'unused noqa directive')}.", err=True)
    kept = [f for f in result.findings if not (f.code == CODE and f.path in done)]
    return replace(result, findings=kept)


def _removed(path: str, data: bytes, edits: list[tuple[int, list[str]]]) -> tuple[bytes, int]:
    """``data`` with the unused ``codes`` taken out of the ``# noqa`` on each edit's line, and
    how many comments were edited. A notebook's lines are those of its cells as Python (the
    cell mapping ``fix`` and ``--add-noqa`` use), and only the edited cells change."""
    from lintloader.scan.read.notebooks import is_notebook, notebook_to_python, python_to_notebook

    if is_notebook(path):
        python, count = _removed_in_python(notebook_to_python(data), edits)
        return python_to_notebook(data, python), count
    return _removed_in_python(data, edits)


def _removed_in_python(data: bytes, edits: list[tuple[int, list[str]]]) -> tuple[bytes, int]:
    lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    for line, codes in edits:
        text = lines[line - 1]
        ending = text[len(text.rstrip("\r\n")) :]
        lines[line - 1] = without_unused(text.rstrip("\r\n"), codes) + ending
    return "".join(lines).encode("utf-8", "surrogateescape"), len(edits)
