"""``lintloader check``: report what the rules find, in the format asked for."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lintloader.cli.baselining import apply_baseline
from lintloader.cli.baselining import shown as shown_path
from lintloader.cli.baselining import write_baseline as write_baseline_file
from lintloader.cli.exits import CheckDone
from lintloader.cli.fast_record import Witness
from lintloader.cli.options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    SEVERITIES,
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
from lintloader.cli.outputs import Target, targets, write_output
from lintloader.finding.findings import PARSE_ERROR_CODE, Finding, Severity
from lintloader.finding.fix_safety import unsafe_names
from lintloader.pipeline.engine import CheckOptions, CheckResult, run_check
from lintloader.report.context import Replacement, ReportContext, SortKey
from lintloader.report.formats import EDITING_FORMATS, FORMATS, render
from lintloader.scan.model import NOTEBOOK_SUFFIX, Discovery
from lintloader.text.wording import counted, plural
from lintloader.workers.progress import ParseStats

if TYPE_CHECKING:
    from lintloader.cli.fixing import FixRun
    from lintloader.fixers.trial import Tried
    from lintloader.integrations.project import ReportScope


@click.command("check", short_help="Find code that throws DataLoader worker pools away.")
@scan_options
@click.option(
    "--output-format",
    "output_formats",
    multiple=True,
    metavar="FORMAT[:PATH]",
    help=f"How findings are printed: {', '.join(sorted(FORMATS))} (default: text). Repeatable; "
    "FORMAT:PATH writes that report to PATH; at most one goes to stdout.",
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
    help="Print a count per rule instead of findings: count, code, [*] a safe fix exists, [-] "
    "only unsafe ones, name.",
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
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Hide the findings recorded in this file; report (and fail on) the rest.",
)
@click.option(
    "--no-baseline",
    is_flag=True,
    help="Ignore the baseline (--baseline and `baseline =`): report and fix every finding.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record today's findings in this file (exit 0), for --baseline.",
)
@click.option(
    "--show-stale-baseline",
    is_flag=True,
    help="With a baseline: list its entries that no longer match a finding.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="With a baseline: drop its stale entries, follow renamed files; add nothing new.",
)
@click.option("--fix", "apply_fix", is_flag=True, help="Apply fixes, then report what is left.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff; write nothing.")
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help=f"With --fix/--diff: also apply unsafe fixes ({unsafe_names()}).",
)
@click.option("--show-fixes", is_flag=True, help="With --fix: list the fixes applied.")
@click.option(
    "--exit-non-zero-on-fix",
    is_flag=True,
    help="With --fix: exit 1 when a fix was applied, even if nothing is left.",
)
@click.option(
    "--show-settings",
    is_flag=True,
    help="Print the resolved settings (config file, selection, roots, vocabulary) and exit.",
)
@click.option("--show-files", is_flag=True, help="Print the files that would be checked and exit.")
@stdin_filename_option
@project_root_option("report")
@guarded
def check(
    scan: ScanArgs,
    output_formats: tuple[str, ...],
    min_severity: str | None,
    statistics: bool,
    exit_zero: bool,
    color: bool | None,
    quiet: bool,
    add_noqa: bool,
    output_file: Path | None,
    baseline_path: Path | None,
    no_baseline: bool,
    write_baseline: Path | None,
    show_stale_baseline: bool,
    update_baseline: bool,
    apply_fix: bool,
    show_diff: bool,
    unsafe_fixes: bool,
    show_fixes: bool,
    exit_non_zero_on_fix: bool,
    show_settings: bool,
    show_files: bool,
    stdin_filename: str | None,
    project_root: str | None,
) -> None:
    """Find code that throws a DataLoader's worker pool away: resets on the epoch path,
    loaders rebuilt per epoch, evaluation or step, persistent_workers without workers.

    PATHS are files or directories (or, with --site-packages, distribution names).
    """
    stdin = read_stdin(scan, stdin_filename)
    if stdin is not None and apply_fix:  # as ruff: the fixed source on stdout, notes on stderr
        from lintloader.cli.fix import fix_stdin

        raise CheckDone(
            fix_stdin(scan, stdin, project_root, min_severity, unsafe_fixes, no_baseline)
        )
    alone = None
    if stdin is None:
        scope, scan = project_scope(scan, project_root)
        alone = None if scan.site_packages else lone_note(scan.paths, project_root)
        discovery, options = prepare(scan, min_severity)
    else:
        scope, scan, add_file = stdin_scan(scan, stdin, project_root)
        discovery, options = prepare(scan, min_severity, stdin, add_file)
    if show_settings or show_files:
        from lintloader.cli.show import files_text, settings_text

        shown = settings_text(options.config, discovery) if show_settings else ""
        emit(shown + (files_text(discovery) if show_files else ""), nl=False)
        discovery.stores.write()  # no check runs to write them
        raise CheckDone(EXIT_CLEAN)
    config = options.config
    chosen = str(baseline_path) if baseline_path is not None else config.baseline
    chosen = None if no_baseline else chosen
    # the command line's baseline is the user's word; the configuration's must be theirs
    given = baseline_path is not None
    fixed = None
    if (apply_fix or show_diff) and stdin is None:
        from lintloader.cli.fix_notes import fix_restrict
        from lintloader.cli.fixing import run_fixes

        restrict = fix_restrict(scope, chosen, given)
        fixed = run_fixes(discovery, options, unsafe_fixes, show_diff, scope, restrict)
        if show_diff:
            raise CheckDone(EXIT_FINDINGS if fixed.outcome.changed else EXIT_CLEAN)
    reports = targets(
        output_formats,
        options.config.output_format,
        output_file,
        config_source(options),
        options.config.root,
    )
    edits_wanted = not statistics and any(t.format in EDITING_FORMATS for t in reports)
    # a format that carries fixes' edits needs the linked program, which a replayed run lacks
    result = checked = run_check(discovery, replace(options, replay=not edits_wanted))
    witness = witnessed(result, discovery, options, reports, scan.python)
    if scope is not None:
        excluded_notes(scope.targets, result)
        result = scope.restrict(result)
    if fixed is not None:
        result = after_fixes(result, fixed, discovery, show_fixes)
    if add_noqa:
        raise CheckDone(add_noqa_comments(result, discovery.roots))
    if write_baseline is not None:
        write_baseline_file(write_baseline, result)
        raise CheckDone(EXIT_CLEAN)
    baselined = apply_baseline(result, chosen, show_stale_baseline, given, update_baseline)
    unfixed = checked if fixed is None else None  # --fix: the files changed since
    result, tried = tried_fixes(
        baselined.result, discovery, options, scope, chosen, fixed is None, unfixed
    )
    if fixed is not None:
        fix_notes(result, fixed, tried, unsafe_fixes)
    result = located_in_cells(result)
    replacements = suggested_edits(result) if edits_wanted else {}
    write_reports(reports, result.findings, statistics, color, replacements)
    if not quiet:
        if scan.site_packages:
            from lintloader.cli.packages import package_lines

            for line in package_lines(result.findings, result.files, discovery.roots, scan.python):
                click.echo(line, err=True)
        line = summary_line(result, config.min_severity, baselined.count, scan.verbose)
        if witness is not None and scan.verbose and result.stats.parsed:
            # what the replay of the run stored will say: all its summaries from the cache
            replayed = replace(result, stats=ParseStats(cached=witness.summaries))
            again = summary_line(replayed, config.min_severity, baselined.count, True)
            witness.replaced_line(line, again)
        click.echo(line, err=True)
        if alone is not None:
            click.echo(alone, err=True)
    if fixed is not None and fixed.failed:
        raise CheckDone(EXIT_ERROR)  # a fix that was not written (said above, file by file)
    applied = fixed is not None and bool(fixed.outcome.applied)
    failed = exit_zero is False and (bool(result.findings) or (exit_non_zero_on_fix and applied))
    raise CheckDone(EXIT_FINDINGS if failed else EXIT_CLEAN)


def witnessed(
    result: CheckResult,
    discovery: Discovery,
    options: CheckOptions,
    reports: Sequence[Target],
    python: str | None,
) -> Witness | None:
    """Tell the console script's witness (``cli/fast_record.py``) of a run that replayed its
    stored run, or was stored for the next one to replay (the same answer but for the counts
    of ``-v``), and writes no report file: the next same check may take the fast path. The
    witness, if it was told."""
    context = click.get_current_context(silent=True)
    witness = context.find_object(Witness) if context is not None else None
    stored = result.route == "analyzed" and result.remember_fixable is not None
    if witness is None or not (stored or result.route == "replayed"):
        return None
    if any(target.path for target in reports):
        return None
    scanned = [file.path for file in result.files]
    known = options.reads.stamps(scanned) if options.reads is not None else {}
    witness.saw(scanned, discovery.roots, options.cache_dir, python, known, discovery.directories)
    witness.summaries = result.stats.parsed + result.stats.cached  # as the run was stored
    return witness


def add_noqa_comments(result: CheckResult, roots: Sequence[str]) -> int:
    """``--add-noqa``: write the comments; exit 0, or 2 when a file could not be written."""
    from functools import partial

    from lintloader.fixers.add_noqa import CannotComment, file_with_noqa
    from lintloader.fixers.writer import Roots, WriteError, rewrite_scanned
    from lintloader.scan.discover.escape import printable

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
            added += rewrite_scanned(
                path, allowed, partial(file_with_noqa, path, codes_by_line=lines)
            )
        except (OSError, WriteError, CannotComment) as exc:
            failed += 1
            click.echo(f"lintloader: error: {display}: {printable(str(exc))}", err=True)
    click.echo(f"Added {counted(added, 'noqa directive')}.", err=True)
    return EXIT_ERROR if failed else EXIT_CLEAN


def after_fixes(
    result: CheckResult, fixed: FixRun, discovery: Discovery, listed: bool
) -> CheckResult:
    """``--fix``: remove unused noqa codes (LL001), list the fixes."""
    from lintloader.cli.fixing import show_fixes
    from lintloader.cli.noqa_removal import remove_unused_noqa

    result = remove_unused_noqa(result, discovery.roots)
    if listed:
        show_fixes(fixed.outcome, {f.path: f.display for f in discovery.files}, fixed.failed)
    return result


def fix_notes(result: CheckResult, fixed: FixRun, tried: Tried | None, unsafe: bool) -> None:
    """``--fix``: a note for every finding left (not those the baseline accepts)."""
    from lintloader.cli.fix_notes import unfixed_notes
    from lintloader.finding.fix_safety import FIX_SAFETY

    shown = dict(zip(result.findings, located_in_cells(result).findings, strict=True))
    unfixed_notes(
        result.findings,
        [*fixed.outcome.notes, *(tried.notes if tried is not None else [])],
        lambda f: () if unsafe else tuple(n for n in f.fixes if not FIX_SAFETY[n].safe),
        fixed.failed,
        lambda f: shown[f].place,
        lambda f: shown[f].place.rsplit(":", 1)[0],  # a refusal reads path:line, as in `fix`
    )


def tried_fixes(
    result: CheckResult,
    discovery: Discovery,
    options: CheckOptions,
    scope: ReportScope | None,
    baseline: str | None,
    stored: bool = True,
    checked: CheckResult | None = None,
) -> tuple[CheckResult, Tried | None]:
    """``result`` whose findings name only the fixes ``fix`` would apply to them (the fix
    rounds run in memory, on what ``fix`` may act on), and what was tried (None: nothing, or
    the answer was stored with the run, when ``stored`` allows it: a whole scan, no baseline).
    ``checked``: the check ``result`` came from, as ``run_check`` gave it, when the files are
    still what it read (the rounds start from it: ``fixers/trial.py``'s ``try_fixes``)."""
    if not any(f.fixes for f in result.findings):
        return result, None
    stored = stored and scope is None and baseline is None
    if stored and result.fixable is not None and len(result.fixable) == len(result.findings):
        return result.with_fixes(result.fixable), None
    from lintloader.cli.fix import not_given
    from lintloader.cli.fix_notes import fix_restrict
    from lintloader.fixers.trial import try_fixes

    restrict = fix_restrict(scope, baseline)
    tried = try_fixes(discovery, options, restrict, lambda path: not_given(scope, path), checked)
    if stored and result.remember_fixable is not None:
        result.remember_fixable(tuple(tried.applied_to(result.findings)))
    return tried.narrowed(result), tried


def write_reports(
    reports: Sequence[Target],
    findings: Sequence[Finding],
    statistics: bool,
    color: bool | None,
    replacements: Mapping[SortKey, tuple[Replacement, ...]],
) -> None:
    """Every report of the run: to its file, or (at most one) to standard output; a report
    file a configuration may not name goes to standard output when no other report does."""
    unwritten: list[Target] = []
    for target in reports:
        use_color = target.path is None and color_wanted(color)
        if statistics:
            text = render_statistics(findings, json_format=target.format == "json")
        else:
            context = ReportContext(color=use_color, root=os.getcwd(), replacements=replacements)
            text = render(target.format, findings, context)
        if target.path is None:
            emit(text, nl=False, color=use_color)
        elif not write_output(target, text):
            unwritten.append(target)
    if unwritten and all(target.path is not None for target in reports):
        write_reports([replace(unwritten[0], path=None)], findings, statistics, color, replacements)


def excluded_notes(targets: Sequence[str], result: CheckResult) -> None:
    """One note for each file named on the command line that the walk excluded (the
    configuration's ``exclude``, ``.gitignore`` or a default exclude): it was not checked."""
    named = [target for target in targets if os.path.isfile(target)]
    unseen = _not_scanned(named, result, lambda path: path)  # as named: the walk keeps it so
    unseen = _not_scanned(unseen, result, os.path.abspath)  # no system call a file
    unseen = _not_scanned(unseen, result, os.path.realpath)  # through links: slow, so last
    for target in unseen:
        click.echo(
            f"note: {shown_path(target)} is excluded (exclude, .gitignore or a default "
            "exclude); not checked",
            err=True,
        )


def _not_scanned(targets: list[str], result: CheckResult, key: Callable[[str], str]) -> list[str]:
    """The ``targets`` no scanned file matches under ``key`` (a form of a path)."""
    if not targets:
        return []
    scanned = {key(file.path) for file in result.files}
    return [target for target in targets if key(target) not in scanned]


def config_source(options: CheckOptions) -> str | None:
    return options.config.source


def suggested_edits(result: CheckResult) -> dict[SortKey, tuple[Replacement, ...]]:
    """The safe fixes' edits, for the formats that offer them as suggestions."""
    from lintloader.fixers.suggest import replacements

    return replacements(result)


def located_in_cells(result: CheckResult) -> CheckResult:
    """Findings in notebooks reported by cell (``train.ipynb:cell 3:2:14``)."""
    if not any(f.path.endswith(NOTEBOOK_SUFFIX) for f in result.findings):
        return result
    from lintloader.pipeline.engine import read_source
    from lintloader.scan.read.notebooks import in_cells

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


def render_statistics(findings: Sequence[Finding], json_format: bool = False) -> str:
    """As ruff's ``--statistics``: count, code, ``[*]`` when a safe fix exists (``[-]`` when only
    unsafe ones do), rule name; sorted by count (most first)."""
    from lintloader.fixers.catalog import fix_kind
    from lintloader.rules.registry import rules_by_code

    rules = rules_by_code()
    counts = Counter(f.code for f in findings)
    kinds: dict[str, set[str]] = {code: set() for code in counts}
    for finding in findings:
        kinds[finding.code].add(fix_kind(finding.fixes))
    rows = [
        {
            "code": code,
            "name": rules[code].name if code in rules else "syntax-or-read-error",
            "count": count,
            "fixable": "safe" in kinds[code],
            "unsafe_fixable": "safe" not in kinds[code] and "unsafe" in kinds[code],
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if json_format:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}\t{row['code']}\t{_fix_mark(row)} {row['name']}\n" for row in rows
    )


def _fix_mark(row: dict[str, object]) -> str:
    """ruff's marks: ``[*]`` a safe fix exists, ``[-]`` only unsafe ones, ``[ ]`` none."""
    return "[*]" if row["fixable"] else "[-]" if row["unsafe_fixable"] else "[ ]"


def summary_line(
    result: CheckResult,
    threshold: Severity = Severity.WARNING,
    baselined: int = 0,
    verbose: bool = False,
) -> str:
    """ruff's "Found N findings" line. How many files were parsed and how many summaries came
    from the cache (what the selection did) only with ``--verbose``: a new rule's seed tokens
    change those counts, never what a user is told."""
    by_severity = Counter(f.severity.label for f in result.findings)
    parts = ", ".join(f"{by_severity[s]} {s}" for s in reversed(SEVERITIES) if by_severity[s])
    found = f"Found {counted(len(result.findings), 'finding')}"
    details = f" ({parts})" if parts else ""
    stats = result.stats
    counts = f"{stats.parsed} parsed, {stats.cached} from cache, " if verbose else ""
    return (
        f"{found}{details} in {_files_checked(result)} "
        f"({counts}{result.suppressed} suppressed"
        + (f", {baselined} baselined" if baselined else "")
        + ")."
        + stubs_note(result.stub_hooks, result.findings)
        + hidden_note(result.hidden, threshold)
        + fixable_note(result.findings)
    )


def _files_checked(result: CheckResult) -> str:
    """``6 files``; for files checked in their project: ``1 file, its project's 6 files read``."""
    found = result.files_found
    files = counted(found, "file")
    if result.reported_files in (None, found):
        return files
    asked = result.reported_files
    return f"{counted(asked, 'file')}, its project's {files} read"


def lone_note(paths: Sequence[str], project_root: str | None) -> str | None:
    """Files checked alone because no one project holds them all: their chains into other
    files are not followed, which a user must be told (a project root finds them). Files of
    two projects are named by project: "no project holds them" would be false."""
    from lintloader.integrations.project import PROJECT_MARKERS, find_project_root

    if project_root is not None or not paths or not all(os.path.isfile(p) for p in paths):
        return None
    if find_project_root(paths) is not None:
        return None
    roots = sorted({root for path in paths if (root := find_project_root([path])) is not None})
    if roots:
        projects = " and ".join(shown_path(root) for root in roots)
        return (
            f"note: {' '.join(paths)} lie in more than one project ({projects}): checked "
            "as one set of files, chains into their projects' other files are not followed "
            "(check each project on its own, or name one with --project-root DIR)."
        )
    markers = ", ".join(PROJECT_MARKERS[:-1]) + f" or {PROJECT_MARKERS[-1]}"
    return (
        f"note: no project holds {' '.join(paths)} (no {markers} above it): checked alone, "
        "chains into other files are not followed (--project-root DIR names the project)."
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


def stubs_note(hooks: Sequence[tuple[str, str, str]], findings: Sequence[Finding]) -> str:
    """Said once: what the analysis knew of a framework for the findings reported came from
    lintloader's stubs, not from the framework's code (not installed where lintloader reads)."""
    if not hooks:
        return ""
    places = {(hop.path, hop.function) for finding in findings for hop in finding.chain}
    names = sorted({name for path, function, name in hooks if (path, function) in places})
    return f" Framework knowledge from lintloader's stubs: {', '.join(names)}." if names else ""


def hidden_note(hidden: int, threshold: Severity) -> str:
    if not hidden:
        return ""
    return (
        f" {counted(hidden, 'finding')} below {threshold.label} hidden"
        f" (--min-severity info shows {plural(hidden, 'it', 'them')})."
    )
