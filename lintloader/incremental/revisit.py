"""Replaying a stored run after a few files changed (a one-file commit in a large project).

A stored run's findings depend on the files' content only through the answers its selection
rounds got (``select/trail.py``) and the summaries of the files it took. So when the run's shape
is unchanged (the same files, module names, configuration and code) and only some files'
content changed, its findings still hold if each changed file

* is first taken by the same round as before, asked as it is now (by no round, for a file
  that was not taken), and
* if it was taken, summarizes to what it summarized to before (a comment or a blank line at
  its end changes no summary; a line inserted above a function does), once the functions no
  analysis reads are set aside (``incremental/inert.py``: a helper that calls nothing, added,
  removed or changed, and named by no taken file).

Each changed file then costs a byte search, and a parse if it was taken, instead of the whole
selection, linking and analysis. A taken file whose summarized part (``incremental/trailing.py``:
its bytes without the comment and blank lines that end it) is what it was is not parsed: its
stored summary is its summary, stored again under its new digest.

A taken file whose summary differs only in its line numbers (lines inserted or removed around
what it records, see ``incremental/moves.py``) leaves every round's question and answer as they
were, so the selection still holds; the stored trail's files are linked again and the rules run,
without a demand round (the findings print the new lines). When every line of the file moved by
one offset (a new first line), no difference of two of its lines changed either, so only a
finding that shows one of its lines can change: when no stored finding is in the file, passes
through it or names it in its message, the stored findings hold as they are.

Calls the stored run's analysis (its rounds and its rules) cannot have seen are set aside like
inert functions (``incremental/reads.py``): those of functions whose calls it never read, none
of them bearing a name it looked the callers of up, and in the others, calls that bear no such
name, link nowhere (no scanned function or class bears their name) and are of no kind it read
as written (``print(x)`` next to a reset on the chain). Anything else (no file or more than
:data:`MAX_CHANGED` files changed, one answers differently, its summary differs in more than
that, a stored summary is gone) means: analyze as usual.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, NamedTuple

from lintloader.cache.summaries import SummaryCache
from lintloader.incremental.moves import MOVED, line_moves
from lintloader.incremental.reads import DemandReads, stored_reads, unread_view
from lintloader.incremental.replay import Replay
from lintloader.incremental.trailing import PYTHON_SUFFIXES, summarized_digest
from lintloader.link.linkable import defined_names
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.select.trail import as_trail, first_taking_round

if TYPE_CHECKING:
    from lintloader.finding.findings import Finding
    from lintloader.summary.model import FileSummary

# More changed files than this: a checkout or a rebase, which a full analysis serves as fast.
MAX_CHANGED = 32
# How a taken file's summary changed (see _change): the stored findings hold; else only its
# lines moved (the stored selection holds), by one offset (SHIFTED: the stored findings too,
# unless one shows the file) or otherwise (MOVED: the rules run again). incremental/moves.py
SAME = "same"

Summarize = Callable[[SourceFile], "FileSummary"]


@dataclass(frozen=True)
class Revisited:
    """What a replay after changes needs to store itself again."""

    taken: tuple[tuple[str, str], ...]  # (path, content digest) of each summarized file
    taken_code: tuple[str, ...]  # per file of ``taken``: its summarized part's digest, or ""
    entry_keys: frozenset[str]  # the summary cache entries its findings now rest on
    # taken files whose summary moved (path -> new summary): the selection holds, but the
    # rules must run again; empty when the stored findings hold as they are
    moved: dict[str, FileSummary] = field(default_factory=dict)
    reads: DemandReads | None = None  # what the stored run's analysis read; None: unknown


def revisit(
    stored: Replay,
    files: Sequence[SourceFile],
    sources: SourceSet,
    cache: SummaryCache,
    summarize: Summarize,
) -> Revisited | None:
    """Whether ``stored`` (whose shape is this run's) still holds for ``files`` as they are
    now; None when it may not (see the module docstring)."""
    rounds = as_trail(stored.rounds)
    if rounds is None:
        return None
    now = sources.content_ids(file.path for file in files)
    if len(now) != len(stored.contents):
        return None
    changed = [f for f, new, old in zip(files, now, stored.contents, strict=True) if new != old]
    if not changed or len(changed) > MAX_CHANGED:
        return None
    queries = [round_.query() for round_ in rounds]
    taken_by = {path: number for number, round_ in enumerate(rounds) for path in round_.taken}
    digests = dict(stored.taken)
    codes = _stored_codes(stored)
    keys = {entry[0] for entry in stored.entries}
    edits: list[tuple[SourceFile, FileSummary, FileSummary]] = []  # (file, before, after)
    for file in changed:
        number = first_taking_round(rounds, queries, sources, file)
        if number != taken_by.get(file.path):
            return None
        if number is None:
            continue
        old_key = _summary_key(cache, digests.get(file.path), file)
        before = cache.get(old_key) if old_key else None
        if before is None:
            return None
        before = replace(before, path=file.path)
        digests[file.path] = sources.digest(file.path)
        new_key = cache.key(digests[file.path], file.module, file.is_package)
        code = summarized_digest(sources[file.path]) if file.path.endswith(PYTHON_SUFFIXES) else ""
        if code and code == codes.get(file.path) and before.ok:
            after = before  # only comment or blank lines at its end changed
            if sources.writes:
                cache.put(new_key, after)
        else:
            after = summarize(file)
        codes[file.path] = code
        edits.append((file, before, after))
        keys.discard(old_key)
        keys.add(new_key)
    context = _Context(taken_by, sources, _reads_now(stored.reads, edits))
    moved: dict[str, FileSummary] = {}
    changes: set[str] = set()
    for file, before, after in edits:
        change = _change(before, after, file, context)
        if change is None:
            return None
        changes.add(change)
        if change is not SAME:
            moved[file.path] = after
    shown = {f.display for f in changed if f.path in moved}
    if MOVED not in changes and not _quoting(stored.findings, shown):
        moved = {}  # each moved file shifted, and no finding shows it: the stored ones hold
    taken_code = tuple(codes.get(path, "") for path in digests)
    return Revisited(tuple(digests.items()), taken_code, frozenset(keys), moved, context.reads)


def _stored_codes(stored: Replay) -> dict[str, str]:
    """Path -> the digest of its summarized part when the stored run took it (known ones)."""
    if len(stored.taken_code) != len(stored.taken):
        return {}
    paths = (path for path, _ in stored.taken)
    return {path: code for path, code in zip(paths, stored.taken_code, strict=True) if code}


def _reads_now(
    stored: object, edits: Iterable[tuple[SourceFile, FileSummary, FileSummary]]
) -> DemandReads | None:
    """What the stored run read (None: unknown), with the names the edited files define,
    before and after the edit, among those a call must bear to link anywhere."""
    reads = stored_reads(stored)
    if reads is None:
        return None
    edited = [summary for _, *summaries in edits for summary in summaries]
    linkable = set().union(*(defined_names(summary) for summary in edited))
    bare = set().union(*(defined_names(summary, bare=True) for summary in edited))
    return reads._replace(linkable=reads.linkable | linkable, bare=reads.bare | bare)


def _quoting(findings: Iterable[Finding], displays: set[str]) -> bool:
    """Whether a finding is in a file of ``displays``, its chain passes through one, or its
    message names one (by its file name: ``path:line`` quotes one of its lines)."""
    names = {PurePath(display).name for display in displays}
    return any(
        finding.path in displays
        or any(hop.path in displays for hop in (*finding.chain, *finding.also))
        or any(name in finding.message for name in names)
        for finding in findings
    )


class _Context(NamedTuple):
    """What comparing a changed file's summaries needs besides them."""

    taken: Iterable[str]  # every file the stored run took
    sources: SourceSet
    reads: DemandReads | None  # whose calls the stored run's analysis read; None: unknown


def _change(
    before: FileSummary, after: FileSummary, file: SourceFile, context: _Context
) -> str | None:
    """How ``file``'s summary changed: :data:`SAME` for nothing an analysis reads (nothing,
    inert functions, see ``incremental/inert.py``, or calls the stored run's analysis did not
    read, see ``incremental/reads.py``), ``SHIFTED`` or ``MOVED`` for lines moved too
    (``incremental/moves.py``); None for more."""
    if before == after:
        return SAME
    change = _compared(before, after, file, context)
    if change is not None or context.reads is None:
        return change
    old, new = unread_view(before, context.reads), unread_view(after, context.reads)
    if old is None or new is None:
        return None
    return _compared(old, new, file, context)


def _compared(
    before: FileSummary, after: FileSummary, file: SourceFile, context: _Context
) -> str | None:
    """:data:`SAME`, ``SHIFTED`` or ``MOVED`` once the inert functions are set aside; None
    for more."""
    from lintloader.incremental.inert import edited_inert, without

    edited = edited_inert(before, after)
    if edited is None or not _unnamed(edited, after, file, context):
        return None
    before, after = without(before, edited), without(after, edited)
    if before == after:
        return SAME
    return line_moves(before, after)


def _unnamed(
    names: frozenset[str], after: FileSummary, file: SourceFile, context: _Context
) -> bool:
    """Whether no taken file names the inert functions ``names`` of ``file`` (see
    ``incremental/inert.py``), and ``file`` itself only where it defines them."""
    from lintloader.incremental.mentions import mentions

    if not names:
        return True
    sources = context.sources
    paths = [file.path, *(path for path in context.taken if path != file.path)]
    if not all(path.endswith(PYTHON_SUFFIXES) for path in paths):
        return False  # a notebook's bytes are JSON: its code is not searched as it is
    counts = mentions(names, sources[file.path])
    if counts is None or any(counts[n] > int(n in after.functions) for n in names):
        return False
    return all(mentions(names, sources[path]) == Counter() for path in paths[1:])


def _summary_key(cache: SummaryCache, digest: str | None, file: SourceFile) -> str | None:
    return cache.key(digest, file.module, file.is_package) if digest else None


def summaries_again(
    rounds: Sequence[object],
    revisited: Revisited,
    files: Sequence[SourceFile],
    cache: SummaryCache,
) -> dict[str, FileSummary] | None:
    """The summaries of the files the stored ``rounds`` took, in the order selection linked
    them, as the files are now: the moved ones as ``revisit`` made them, the others from the
    cache. None when one is gone from the cache (or not among ``files``)."""
    from lintloader.select.parse import at_path

    by_path = {file.path: file for file in files}
    digests = dict(revisited.taken)
    found: dict[str, FileSummary] = {}
    trail = as_trail(tuple(rounds))
    if trail is None:
        return None
    for round_ in trail:
        for path in round_.taken:
            file = by_path.get(path)
            key = _summary_key(cache, digests.get(path), file) if file else None
            if key is None:
                return None
            summary = revisited.moved.get(path) or cache.get(key)
            if summary is None:
                return None
            found[path] = at_path(summary, path)
    return found
