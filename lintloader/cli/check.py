"""``lintloader check``: report what the rules find, in the format asked for."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    SEVERITIES,
    Failure,
    ScanArgs,
    emit,
    guarded,
    prepare,
    project_root_option,
    project_scope,
    read_stdin,
    scan_options,
    stdin_filename_option,
    stdin_scan,
)
from lintloader.engine import CheckResult, run_check
from lintloader.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.report.context import ReportContext
from lintloader.report.formats import FORMATS, render
from lintloader.scan.model import NOTEBOOK_SUFFIX


class CheckDone(SystemExit):
    """How ``check`` ends (a ``SystemExit`` with its exit code): the console script leaves
    the process at once on it (see :func:`lintloader.cli.main.run`)."""


@click.command("check")
@scan_options
@click.option(
    "--output-format",
    type=click.Choice(sorted(FORMATS)),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option(
    "--min-severity",
    type=click.Choice(SEVERITIES),
    default=None,
    help="Lowest severity reported (default: warning, or min-severity in the config).",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Print a count per rule (count, code, fixable, name) instead of findings.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour text output (default: on a TTY; FORCE_COLOR and NO_COLOR are honoured).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary line.")
@click.option(
    "--add-noqa",
    is_flag=True,
    help="Add a `# noqa: CODE` comment for every finding instead of reporting it.",
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the findings to this file instead of stdout.",
)
@click.option("--fix", "apply_fix", is_flag=True, help="Apply fixes, then report what is left.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff; write nothing.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix/--diff: also apply unsafe fixes.")
@click.option("--show-fixes", is_flag=True, help="With --fix: list the fixes applied.")
@click.option(
    "--exit-non-zero-on-fix",
    is_flag=True,
    help="With --fix: exit 1 when a fix was applied, even if nothing is left.",
)
@stdin_filename_option
@project_root_option("report")
@guarded
def check(
    scan: ScanArgs,
    output_format: str,
    min_severity: str | None,
    statistics: bool,
    exit_zero: bool,
    color: bool | None,
    quiet: bool,
    add_noqa: bool,
    output_file: Path | None,
    apply_fix: bool,
    show_diff: bool,
    unsafe_fixes: bool,
    show_fixes: bool,
    exit_non_zero_on_fix: bool,
    stdin_filename: str | None,
    project_root: str | None,
) -> None:
    """Report DataLoader iterator resets reachable from __iter__ or per-epoch hooks.

    PATHS are files or directories (or, with --site-packages, distribution names).
    """
    stdin = read_stdin(scan, stdin_filename)
    if stdin is None:
        scope, scan = project_scope(scan, project_root)
        discovery, options = prepare(scan, min_severity)
    else:
        scope, scan, add_file = stdin_scan(scan, stdin, project_root)
        discovery, options = prepare(scan, min_severity, stdin, add_file)
    fixed = None
    if (apply_fix or show_diff) and stdin is None:
        from lintloader.cli.fixing import run_fixes

        fixed = run_fixes(discovery, options, unsafe_fixes, show_diff, scope)
        if show_diff:
            raise CheckDone(EXIT_FINDINGS if fixed.outcome.changed else EXIT_CLEAN)
    result = run_check(discovery, replace(options, replay=True))
    if scope is not None:
        result = scope.restrict(result)
    if fixed is not None:
        from lintloader.cli.fixing import show_fixes as list_fixes
        from lintloader.cli.fixing import unfixed_notes

        if show_fixes:
            list_fixes(fixed.outcome, {f.path: f.display for f in discovery.files}, fixed.failed)
        unfixed_notes(result.findings, fixed, unsafe_fixes, located_in_cells(result).findings)
    if add_noqa:
        raise CheckDone(add_noqa_comments(result, discovery.roots))
    result = located_in_cells(result)
    use_color = output_file is None and color_wanted(color)
    if statistics:
        text = render_statistics(result.findings, json_format=output_format == "json")
    else:
        context = ReportContext(color=use_color, root=os.getcwd())
        text = render(output_format, result.findings, context)
    if output_file is not None:
        write_output(output_file, text)
    else:
        emit(text, nl=False, color=use_color)
    if not quiet:
        click.echo(summary_line(result, options.config.min_severity), err=True)
    if fixed is not None and fixed.failed:
        raise CheckDone(EXIT_ERROR)  # a fix that was not written (said above, file by file)
    applied = fixed is not None and bool(fixed.outcome.applied)
    failed = exit_zero is False and (bool(result.findings) or (exit_non_zero_on_fix and applied))
    raise CheckDone(EXIT_FINDINGS if failed else EXIT_CLEAN)


def add_noqa_comments(result: CheckResult, roots: Sequence[str]) -> int:
    """``--add-noqa``: write the comments; exit 0, or 2 when a file could not be written."""
    from lintloader.fixers.add_noqa import CannotComment, file_with_noqa
    from lintloader.fixers.writer import Roots, WriteError, atomic_write, why_not_writable
    from lintloader.scan.escape import printable

    paths = {file.display: file.path for file in result.files}
    by_file: dict[str, dict[int, set[str]]] = {}
    for finding in result.findings:
        if finding.code != PARSE_ERROR_CODE and finding.path in paths:
            lines = by_file.setdefault(finding.path, {})
            lines.setdefault(finding.line, set()).add(finding.code)
    allowed, added, failed = Roots.of(roots), 0, 0
    for display, lines in sorted(by_file.items()):
        path = paths[display]
        try:
            problem = why_not_writable(path, allowed, allow_installed=False)
            if problem:
                raise WriteError(problem)
            with open(path, "rb") as handle:
                source = handle.read()
            edited, count = file_with_noqa(path, source, lines)
            atomic_write(path, edited)
            added += count
        except (OSError, WriteError, CannotComment) as exc:
            failed += 1
            click.echo(f"lintloader: error: {display}: {printable(str(exc))}", err=True)
    click.echo(f"Added {added} noqa directive{'s' * (added != 1)}.", err=True)
    return EXIT_ERROR if failed else EXIT_CLEAN


def located_in_cells(result: CheckResult) -> CheckResult:
    """Findings in notebooks reported by cell (``train.ipynb:cell 3:2:14``)."""
    if not any(f.path.endswith(NOTEBOOK_SUFFIX) for f in result.findings):
        return result
    from lintloader.engine import read_source
    from lintloader.scan.notebooks import in_cells

    return replace(result, findings=in_cells(result.findings, result.files, read_source))


def color_wanted(flag: bool | None) -> bool:
    """``--color``/``--no-color`` first, then FORCE_COLOR, then NO_COLOR, then: is it a TTY."""
    if flag is not None:
        return flag
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return bool(sys.stdout and sys.stdout.isatty())  # no stdout at all: no colour


def write_output(path: Path, text: str) -> None:
    """``--output-file``: written whole or not at all (a temporary file, then a rename)."""
    temporary = path.with_name(f".{path.name}.lintloader-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise Failure(f"cannot write output: {path}: {exc.strerror or exc}") from None


def render_statistics(findings: Sequence[Finding], json_format: bool = False) -> str:
    """As ruff's ``--statistics``: count, code, ``[*]`` when a safe fix exists, rule name;
    sorted by count (most first)."""
    from lintloader.fixers.catalog import fix_kind
    from lintloader.rules.registry import rules_by_code

    rules = rules_by_code()
    counts = Counter(f.code for f in findings)
    fixable = {f.code for f in findings if fix_kind(f.fixes) == "safe"}
    rows = [
        {
            "code": code,
            "name": rules[code].name if code in rules else "syntax-or-read-error",
            "count": count,
            "fixable": code in fixable,
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if json_format:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}\t{row['code']}\t{'[*]' if row['fixable'] else '[ ]'} "
        f"{row['name']}\n"
        for row in rows
    )


def summary_line(result: CheckResult, threshold: Severity = Severity.WARNING) -> str:
    by_severity = Counter(f.severity.label for f in result.findings)
    parts = ", ".join(f"{by_severity[s]} {s}" for s in reversed(SEVERITIES) if by_severity[s])
    found = f"Found {len(result.findings)} finding{'s' * (len(result.findings) != 1)}"
    details = f" ({parts})" if parts else ""
    stats = result.stats
    return (
        f"{found}{details} in {result.files_found} file{'s' * (result.files_found != 1)} "
        f"({stats.parsed} parsed, {stats.cached} from cache, {result.suppressed} suppressed)."
        + hidden_note(result.hidden, threshold)
        + fixable_note(result.findings)
    )


def fixable_note(findings: Sequence[Finding]) -> str:
    """ruff's "[*] N fixable with the --fix option (M more with --unsafe-fixes)"."""
    from lintloader.fixers.catalog import fix_kind

    kinds = Counter(fix_kind(f.fixes) for f in findings)
    if not kinds["safe"] and not kinds["unsafe"]:
        return ""
    if not kinds["safe"]:
        return f"\n[*] {kinds['unsafe']} fixable with `--fix --unsafe-fixes`."
    more = f" ({kinds['unsafe']} more with `--unsafe-fixes`)" if kinds["unsafe"] else ""
    return f"\n[*] {kinds['safe']} fixable with `--fix`{more}."


def hidden_note(hidden: int, threshold: Severity) -> str:
    if not hidden:
        return ""
    return (
        f" {hidden} finding{'s' * (hidden != 1)} below {threshold.label} hidden"
        f" (--min-severity info shows {'them' if hidden != 1 else 'it'})."
    )
