"""Demand-driven selection: which files get parsed. This is the one place that decides.

Parsing is the expensive step (it grows with a file's size), and in a whole site-packages only a
handful of files matter. Selection works backwards from the sinks:

1. seed: files that contain the seed tokens of an active rule (a byte search, no parse);
2. link what is parsed, and ask each active rule's ``demand`` hook what it needs next: token
   groups (files that could call a function that reaches a sink, or builds a DataLoader) and
   modules (bases of parsed classes, re-exports);
3. parse the files that match (:mod:`lintloader.select.query`);
4. repeat 2-3 until nothing new is found.

The hooks live with what they serve: the reset chase of LL101-LL105 in
:mod:`lintloader.analysis.reset_demand`, the DataLoader chase of LL2xx in
:mod:`lintloader.analysis.loaders`, the bases across distributions that the LL2xx rules also
need (``Rule.also_demand``) in :mod:`lintloader.analysis.override_demand`; with
``--select LL2`` no reset is chased. No rule is named here: each declares its hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from lintloader.analysis.context import Demand, TokenGroup
from lintloader.link.folder_modules import FolderFiles
from lintloader.link.program import Program
from lintloader.rules.base import Rule
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.select.query import GroupQuery
from lintloader.select.trail import Round
from lintloader.summary.model import FileSummary

MAX_ROUNDS = 12
# Summarize the candidates that a round's query (None: none) or module names choose.
Take = Callable[[list[SourceFile], "GroupQuery | None", frozenset[str]], dict[str, FileSummary]]
# A module that is not among the files, found by dotted path (scan/environment/locate.py), or None.
Locate = Callable[[str], "SourceFile | None"]


def seed_groups(rules: Iterable[Rule]) -> set[TokenGroup]:
    return {group for rule in rules for group in rule.seed_tokens}


def demand_hooks(rules: Sequence[Rule]) -> list[Callable[[Program], Demand]]:
    """The demand hooks of ``rules``, each once (LL101-LL105 share one, and LL201, LL202,
    LL204), their own first, then those they also need asked (``Rule.also_demand``)."""
    own = [rule.demand for rule in rules if rule.demand is not None]
    also = [hook for rule in rules for hook in rule.also_demand]
    return list(dict.fromkeys([*own, *also]))


def select(
    files: Sequence[SourceFile],
    sources: SourceSet,
    rules: Iterable[Rule],
    take: Take,
    rounds: list[Round] | None = None,
    locate: Locate | None = None,
    wanted: frozenset[str] = frozenset(),
    extra: Sequence[Callable[[Program], Demand]] = (),
    link: Callable[[Iterable[FileSummary]], Program] = Program,
) -> tuple[dict[str, FileSummary], Program]:
    """Summaries of every file the active rules need, found backwards from their seeds, and
    the program they link into.
    ``take(candidates, query, modules)`` summarizes :func:`chosen_by` of the candidates;
    ``locate`` finds a wanted module that no file is (context: a scanned distribution's base
    classes in another one), which then joins the candidates; ``rounds`` receives what each
    round asked for and took (the trail a later run revisits, see ``select/trail.py``);
    ``wanted``: dotted paths whose modules are parsed from the start (a declared vocabulary,
    ``analysis/vocabulary.py``), and ``extra`` the demand hooks that follow them;
    ``link`` links the summaries (``pipeline/engine.py`` gives a program that records what was
    read)."""
    rules = list(rules)
    rounds = [] if rounds is None else rounds
    files = list(files)
    by_module = {f.module: f for f in files}
    folders = FolderFiles(list(files))
    groups = seed_groups(rules)
    query = GroupQuery.build(groups)
    first = frozenset(_longest_known(path, by_module, folders) for path in wanted) - {""}
    summaries = take(list(files), query, first)
    rounds.append(Round(tuple(sorted(groups)), first, tuple(summaries)))
    tried: set[TokenGroup] = set(groups)
    demands = [*demand_hooks(rules), *extra]
    program = link(summaries.values())
    # the files not taken yet, in the files' order (paths are unique: scan/discover/paths.py)
    untaken = {f.path: f for f in files if f.path not in summaries}
    for _ in range(MAX_ROUNDS):
        asked = [demand(program) for demand in demands]
        fresh = {group for wanted in asked for group in wanted.token_groups} - tried
        tried |= fresh
        paths = {path for wanted in asked for path in wanted.modules}
        if locate is not None:
            located = _located(paths, by_module, sources, locate)
            untaken.update((f.path, f) for f in located if f.path not in summaries)
        modules = frozenset(_longest_known(path, by_module, folders) for path in paths)
        query = GroupQuery.build(fresh)
        found = take(list(untaken.values()), query if fresh else None, modules)
        rounds.append(Round(tuple(sorted(fresh)) if fresh else None, modules, tuple(found)))
        if not found:
            break
        summaries.update(found)
        for path in found:
            untaken.pop(path, None)
        program.extend(found.values())
    return summaries, program


def _located(
    paths: Iterable[str], by_module: dict[str, SourceFile], sources: SourceSet, locate: Locate
) -> list[SourceFile]:
    """Files for the wanted modules that no file is yet, found by ``locate`` (and admitted to
    ``sources`` and ``by_module``). One that cannot be read is left out silently: it is
    context, not a file the user asked to check."""
    found = []
    for path in sorted(paths):
        if path in by_module:
            continue
        file = locate(path)
        if file is not None and file.module not in by_module:
            found += sources.load([file], [])
            by_module[file.module] = file
    return found


def _longest_known(
    path: str, by_module: dict[str, SourceFile], folders: FolderFiles[SourceFile]
) -> str:
    """The module of the longest start of ``path`` that names a file, by its module name or
    through folders that are no package (``models.net`` for ``models/net.py``)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in by_module:
            return candidate
    for cut in range(len(parts), 1, -1):
        file = folders.first(".".join(parts[:cut]))
        if file is not None:
            return file.module
    return ""
