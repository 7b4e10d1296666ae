"""Demand-driven selection: which files get parsed. This is the one place that decides.

Parsing is the expensive step (libcst: tens of ms a file), and in a whole site-packages only a
handful of files matter. Selection works backwards from the sinks:

1. seed: files that contain the tokens of an active rule (a byte search, no parse);
2. link what is parsed, and find every function that reaches a sink;
3. parse the files that could call one of those functions: they mention its name (and, for a
   method, its class's name or a subclass's name), files defining bases of parsed classes, and
   modules that parsed code imports a sink-reaching name through (re-exports);
4. repeat 2-3 until nothing new is found.

A file that reaches a sink only through an edge of unknown receiver type (matched by method name
alone) is therefore not pulled in unless it names the class; such edges can never make an
error-severity finding anyway.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from lintloader.analysis.reachability import EPOCH_HOOKS, is_real_sink
from lintloader.findings import Confidence
from lintloader.program import Program
from lintloader.rules.base import Rule
from lintloader.scan.paths import SourceFile
from lintloader.scan.sources import SourceSet
from lintloader.scan.tokens import (
    function_groups,
    index_token,
    method_group,
    prerequisites,
    scope_package,
    top_package,
)
from lintloader.summary.model import FileSummary

MAX_ROUNDS = 12
TokenGroup = tuple[bytes, ...]
# Summarize the candidates that a round's query (None: none) or module names choose.
Take = Callable[[list[SourceFile], "GroupQuery | None", frozenset[str]], dict[str, FileSummary]]


@dataclass(frozen=True)
class Wanted:
    """What makes an unparsed file worth parsing in the next round."""

    token_groups: frozenset[TokenGroup]
    modules: frozenset[str]


@dataclass
class Round:
    """What one selection round asked for and took (for diagnostics and the benchmark)."""

    groups: int
    tokens: int
    modules: int
    chosen: int


@dataclass
class GroupQuery:
    """Token groups arranged for a fast search: a file matches when it contains every token of
    some group (a scope token: when it is inside that package or names it). Groups are
    bucketed under their most shared token, which is searched first, so a file costs one
    search per bucket it fails, and a token whose prerequisite (a shorter token it contains,
    see :func:`tokens.prerequisites`) is absent costs none. The index remembers every answer."""

    buckets: dict[bytes, list[TokenGroup]] = field(default_factory=dict)
    needs: dict[bytes, tuple[bytes, ...]] = field(default_factory=dict)
    # each group as (bits of its tokens, (package, bit of its name) per scope token), for the
    # stat index they were worked out against
    _masks: list[tuple[int, tuple[tuple[str, int], ...]]] = field(default_factory=list)
    _masks_for: object = None
    _heads: tuple[int, frozenset[str]] = (0, frozenset())
    _heads_for: object = None

    @classmethod
    def build(cls, groups: Iterable[TokenGroup]) -> GroupQuery:
        groups = sorted(set(groups))
        shared = Counter(token for group in groups for token in set(group))
        buckets: dict[bytes, list[TokenGroup]] = {}
        for group in groups:
            if not group:
                continue
            head = max(group, key=lambda token: (shared[token], token))
            rest = tuple(sorted(token for token in set(group) if token != head))
            buckets.setdefault(head, []).append(rest)
        query = cls({head: sorted(set(rests)) for head, rests in sorted(buckets.items())})
        query.needs = prerequisites(query.tokens)
        return query

    @property
    def tokens(self) -> set[bytes]:
        return {*self.buckets, *(t for rests in self.buckets.values() for r in rests for t in r)}

    @property
    def searched(self) -> set[bytes]:
        """Every token a match may search for (scope tokens search their package's name)."""
        found = {t for token in self.tokens for t in (token, *self.needs.get(token, ()))}
        return {index_token(token) for token in found}

    def matches(self, sources: SourceSet, file: SourceFile) -> bool:
        known = self._known(sources, file)
        if known is not None:
            return known
        for head, rests in self.buckets.items():
            if self._has(sources, file, head) and any(
                all(self._has(sources, file, token) for token in rest) for rest in rests
            ):
                return True
        return False

    def _known(self, sources: SourceSet, file: SourceFile) -> bool | None:
        """The answer from the stat index's bits alone, None when a token must be searched.
        (Unchanged files of a warm or one-changed-file run answer every round this way, which
        is an integer test per group instead of a dictionary walk per token.)"""
        checked, present = sources.answers(file.path)
        package_of_file, undecided = top_package(file.module), False
        for mask, scopes in self._group_masks(sources):
            for package, bit in scopes:
                if package != package_of_file:
                    mask |= bit
            if checked & mask == mask:
                if present & mask == mask:
                    return True
            elif not checked & ~present & mask:
                undecided = True
        return None if undecided else False

    def head_mask(self, sources: SourceSet) -> tuple[int, frozenset[str]]:
        """The bits of every bucket head (a scope head: of its package's name) and the scope
        heads' packages: a file outside those packages whose bits say every head is absent
        matches no group (each group holds its head)."""
        index = sources.index
        if self._heads_for is not index:
            mask, packages = 0, set()
            for head in self.buckets:
                package = scope_package(head)
                mask |= index.bit(index_token(head))
                if package is not None:
                    packages.add(package)
            self._heads, self._heads_for = (mask, frozenset(packages)), index
        return self._heads

    def _group_masks(self, sources: SourceSet) -> list[tuple[int, tuple[tuple[str, int], ...]]]:
        index = sources.index
        if self._masks_for is not index:
            masks = []
            for head, rests in self.buckets.items():
                for rest in rests:
                    bits, scopes = 0, []
                    for token in (head, *rest):
                        package = scope_package(token)
                        if package is None:
                            bits |= index.bit(token)
                        else:
                            scopes.append((package, index.bit(index_token(token))))
                    masks.append((bits, tuple(scopes)))
            self._masks, self._masks_for = masks, index
        return self._masks

    def _has(self, sources: SourceSet, file: SourceFile, token: bytes) -> bool:
        package = scope_package(token)
        inside = package is not None and top_package(file.module) == package
        return inside or sources.contains(file.path, index_token(token), self.needs)


def seed_groups(rules: Iterable[Rule]) -> set[TokenGroup]:
    return {group for rule in rules for group in rule.seed_tokens}


def chosen_by(
    query: GroupQuery | None,
    modules: frozenset[str],
    sources: SourceSet,
    candidates: Iterable[SourceFile],
) -> list[SourceFile]:
    """The candidates a round takes: a module it asks for by name, or a file its query
    matches. Most files of a warm round are rejected by one integer test here, before
    :meth:`GroupQuery.matches` (8,000 files a round in a site-packages)."""
    if query is None:
        return [f for f in candidates if f.module in modules]
    mask, packages = query.head_mask(sources)
    answers = sources.answers
    chosen = []
    for file in candidates:
        if file.module in modules:
            chosen.append(file)
            continue
        checked, present = answers(file.path)
        if checked & ~present & mask == mask and top_package(file.module) not in packages:
            continue  # every bucket head known to be absent (see GroupQuery.head_mask)
        if query.matches(sources, file):
            chosen.append(file)
    return chosen


def select(
    files: Sequence[SourceFile],
    sources: SourceSet,
    rules: Iterable[Rule],
    take: Take,
    rounds: list[Round] | None = None,
) -> tuple[dict[str, FileSummary], Program]:
    """Summaries of every file the active rules need, found backwards from their seeds, and
    the program they link into.
    ``take(candidates, query, modules)`` summarizes :func:`chosen_by` of the candidates."""
    rules = list(rules)
    rounds = [] if rounds is None else rounds
    by_module = {f.module: f for f in files}
    groups = seed_groups(rules)
    query = GroupQuery.build(groups)
    summaries = take(list(files), query, frozenset())
    rounds.append(Round(len(groups), len(query.tokens), 0, len(summaries)))
    tried: set[TokenGroup] = set(groups)
    # rules that share a demand hook (LL201, LL202 and LL204 do) ask it once a round
    demands = list(dict.fromkeys(rule.demand for rule in rules if rule.demand is not None))
    program = Program(summaries.values())
    for _ in range(MAX_ROUNDS):
        wanted = wanted_by(program)
        extra = {group for demand in demands for group in demand(program)}
        fresh = (wanted.token_groups | extra) - tried
        tried |= fresh
        modules = frozenset(_longest_known(path, by_module) for path in wanted.modules)
        query = GroupQuery.build(fresh)
        candidates = [f for f in files if f.path not in summaries]
        found = take(candidates, query if fresh else None, modules)
        rounds.append(Round(len(fresh), len(query.tokens), len(modules), len(found)))
        if not found:
            break
        summaries.update(found)
        program.extend(found.values())
    return summaries, program


def _longest_known(path: str, by_module: dict[str, SourceFile]) -> str:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in by_module:
            return candidate
    return ""


def wanted_by(program: Program) -> Wanted:
    reaching = functions_reaching_sinks(program)
    groups: set[TokenGroup] = set()
    for key in reaching:
        info = program.functions[key]
        name = info.function.name
        class_key = info.class_key
        if class_key is None:
            groups |= function_groups(name, info.file.module)
            continue
        if _is_dunder(name) and name != "__init__":
            continue  # called by syntax (next(), for, del, with), never by its name
        for holder in {class_key, *program.subclasses.get(class_key, ())}:
            klass = program.classes[holder]
            groups.add(method_group(name, klass.klass.name, klass.file.module))
    return Wanted(frozenset(groups), frozenset(_modules_to_follow(program, reaching)))


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def demanding_sinks(program: Program) -> list[str]:
    """Functions holding a reset that can make a warning or an error: a real sink (not a
    class's own ``self._iterator``) that does not depend on ``persistent_workers`` being off.
    Guarded resets and chains through guessed edges are info-level leads: they are reported
    when the files are parsed anyway, but never make more files worth parsing."""
    return [
        key
        for key, info in program.functions.items()
        if any(
            not sink.persistent_guard and is_real_sink(program, info, sink)
            for sink in info.function.sinks
        )
    ]


def functions_reaching_sinks(program: Program) -> set[str]:
    """Keys of functions with a demanding sink, and of every function with a sure edge into
    one."""
    frontier = demanding_sinks(program)
    reaching = set(frontier)
    while frontier:
        key = frontier.pop()
        for edge in program.edges_into(key, Confidence.HIGH):
            if edge.caller not in reaching:
                reaching.add(edge.caller)
                frontier.append(edge.caller)
    return reaching


def _modules_to_follow(program: Program, reaching: set[str]) -> set[str]:
    """Dotted paths not parsed yet that the analysis needs: bases of classes that own a root
    or a sink-reaching method (for the MRO), and re-exports that a call whose name could reach
    a sink resolves through."""
    names = {program.functions[k].function.name for k in reaching}
    owners = {program.functions[k].class_key for k in reaching}
    owners |= {
        info.class_key
        for info in program.functions.values()
        if info.function.name == "__iter__"
        or EPOCH_HOOKS.match(info.function.name)
        or info.function.sinks  # is the class a DataLoader? its bases tell
    }
    paths: set[str] = set()
    for class_key in owners - {None}:
        for ancestor in program.mro(class_key):
            paths.update(b.key for b in program.bases(ancestor) if b.kind == "external")
    for info in program.functions.values():
        for call in info.function.calls:
            if call.target[-1] not in names:
                continue
            symbol = program.resolve(info.file.module, call.target[:1])
            if symbol is not None and symbol.kind == "external":
                paths.add(symbol.key)
    return paths
