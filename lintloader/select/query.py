"""The token query engine: which unparsed files contain the tokens a demand round asks for.

A group of byte tokens matches a file when the file contains every token of the group (a scope
token: when the file is inside that package or names it). Searching is a byte search on the
file's bytes, remembered by :class:`~lintloader.scan.read.sources.SourceSet` and the stat index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lintloader.analysis.context import TokenGroup
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.tokens import (
    absence_implies,
    in_code,
    index_token,
    is_shape,
    prerequisites,
    scope_package,
    top_package,
)


@dataclass
class GroupQuery:
    """Token groups arranged for a fast search: a file matches when it contains every token of
    some group (a scope token: when it is inside that package or names it). Groups are
    bucketed under their most shared token (never a shape), which is searched first, so a file
    costs one search per bucket it fails, and a token whose prerequisite (a shorter token it
    contains, see :func:`tokens.prerequisites`) is absent costs none; the other tokens of a
    group are asked most shared first, a shape last.
    The index remembers every answer."""

    buckets: dict[bytes, list[TokenGroup]] = field(default_factory=dict)
    needs: dict[bytes, tuple[bytes, ...]] = field(default_factory=dict)
    # each group as (bits of its tokens, (package, bit of its name) per scope token), for the
    # stat index they were worked out against
    _masks: list[tuple[int, tuple[tuple[str, int], ...]]] = field(default_factory=list)
    _masks_for: object = None
    # every bit of those masks, and whether a group is scope tokens only (a file inside its
    # packages matches it without a search)
    _asked: int = 0
    _scope_only: bool = False
    _heads: tuple[int, frozenset[str]] = (0, frozenset())
    _heads_for: object = None
    # per token: the package of a scope token (None: another token), the token searched
    _searched_as: dict[bytes, tuple[str | None, bytes]] = field(default_factory=dict)
    # per bucket, for the token table of _plan_for (the index, its size): see _head_plan
    _plan: list[_Head] = field(default_factory=list)
    _plan_for: tuple[object, int] = (None, 0)
    _gate: _Gate = field(default_factory=lambda: _Gate((), 0, frozenset()))

    @classmethod
    def build(cls, groups: Iterable[TokenGroup]) -> GroupQuery:
        groups = sorted({_with_code_shape(group) for group in groups})
        shared = Counter(token for group in groups for token in set(group))
        buckets: dict[bytes, list[TokenGroup]] = {}
        for group in groups:
            if not group:
                continue
            head = max(group, key=lambda token: (not is_shape(token), shared[token], token))
            rest = tuple(sorted((t for t in set(group) if t != head), key=_order(shared)))
            buckets.setdefault(head, []).append(rest)
        return cls.of_buckets({head: sorted(set(rests)) for head, rests in sorted(buckets.items())})

    @classmethod
    def of_buckets(cls, buckets: dict[bytes, list[TokenGroup]]) -> GroupQuery:
        """The query of :attr:`buckets` as :meth:`build` arranged them (a forked shard gets
        its round's query this way: the same search, in the same order). The buckets are
        asked in the order of their shortest prerequisite: a file without ``oader`` then
        fails the eight DataLoader buckets on that one search, before ``get_eval_dataloader``
        (which holds it) is ever searched for."""
        needs = prerequisites(cls(buckets).tokens)
        order = sorted(buckets, key=lambda head: (_shortest_need(head, needs), head))
        query = cls({head: buckets[head] for head in order})
        query.needs = needs
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
        package, path = top_package(file.module), file.path
        plan = self._head_plan(sources)
        gate = self._gate
        # no head asked of the file yet: its gate tokens first, each searched at most once;
        # all absent, every head is (see _Gate), and the file matches no group
        if (
            package not in gate.packages
            and not sources.answers(path)[0] & gate.heads
            and not sources.search_until_found(path, gate.tokens)
        ):
            sources.note_absent(path, gate.heads)
            return False
        for head in plan:
            if head.package is None or head.package != package:
                # most heads of a cold file are answered by its bits: already searched, or a
                # plain token inside the head known absent (``oader`` for ``DataLoader(``),
                # which is what ``contains`` would find, but for an integer test
                checked, present = sources.answers(path)
                if checked & head.bit:
                    if not present & head.bit:
                        continue
                elif checked & ~present & head.inner:
                    sources.note_absent(path, head.bit)
                    continue
                elif head.needs:
                    if not sources.contains(path, head.searched, self.needs):
                        continue
                elif not sources.search(path, head.searched, head.bit):
                    continue
            if any(
                all(self._has(sources, file, package, token) for token in rest)
                for rest in head.rests
            ):
                return True
        return False

    def _head_plan(self, sources: SourceSet) -> list[_Head]:
        """Each bucket's head as :meth:`matches` asks it, for the index's token table now
        (worked out again when it has grown: a token found inside a head may be new)."""
        index = sources.index
        if self._plan_for[0] is not index or self._plan_for[1] != len(index.tokens):
            plan = []
            for token, rests in self.buckets.items():
                searched = index_token(token)
                bit, needs = index.bit(searched), bool(self.needs.get(searched))
                plan.append(_Head(searched, bit, scope_package(token), rests, needs))
            for head in plan:  # once every head has its bit
                head.inner = index.inner_bits(head.searched)
            self._gate = _gate_of(plan, self.needs, index.bit)
            self._plan, self._plan_for = plan, (index, len(index.tokens))
        return self._plan

    def _known(self, sources: SourceSet, file: SourceFile) -> bool | None:
        """The answer from the stat index's bits alone, None when a token must be searched.
        (Unchanged files of a warm or one-changed-file run answer every round this way, which
        is an integer test per group instead of a dictionary walk per token.)"""
        checked, present = sources.answers(file.path)
        masks = self._group_masks(sources)
        if not checked & self._asked and not self._scope_only:
            return None  # nothing this query asks was asked of the file yet (a cold file)
        package_of_file, undecided = top_package(file.module), False
        for mask, scopes in masks:
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
            self._asked = 0
            for bits, scoped in masks:
                self._asked |= bits
                for _, bit in scoped:
                    self._asked |= bit
            self._scope_only = any(not bits for bits, _ in masks)
        return self._masks

    def _has(
        self, sources: SourceSet, file: SourceFile, package_of_file: str, token: bytes
    ) -> bool:
        """Whether ``file`` (of top-level package ``package_of_file``) holds ``token``."""
        known = self._searched_as.get(token)
        if known is None:
            known = self._searched_as[token] = (scope_package(token), index_token(token))
        package, searched = known
        inside = package is not None and package_of_file == package
        return inside or sources.contains(file.path, searched, self.needs)


@dataclass
class _Head:
    """A bucket's head as a cold file is asked it: the token searched (a scope head: its
    package's name as a whole word), its bit, its package (a scope head's, else None), the
    bucket's rests, whether the token has prerequisites (``GroupQuery.needs``: searched
    first) and the bits of the plain tokens inside it (``StatIndex.inner_bits``)."""

    searched: bytes
    bit: int
    package: str | None
    rests: list[TokenGroup]
    needs: bool
    inner: int = 0


@dataclass(frozen=True)
class _Gate:
    """What answers every head of a query at once in a file none was asked of yet: the gate
    ``tokens`` (with their bits), such that each head is one of them, holds one of them
    (``tokens.absence_implies``), or needs one through its prerequisites; the bits of the
    heads (``heads``) and the packages of the scope heads (a file inside one is asked the
    heads one by one: it need not name its own package). A file with none of the gate tokens
    holds no head, so it matches no group: a seed round's 17 heads in a file without
    ``oader``, ``_iterator`` and ``_shutdown_workers`` cost those three searches and two
    integer tests, not a walk through the heads and their prerequisites."""

    tokens: tuple[tuple[bytes, int], ...]
    heads: int
    packages: frozenset[str]


def _gate_of(
    plan: list[_Head], needs: dict[bytes, tuple[bytes, ...]], bit: Callable[[bytes], int]
) -> _Gate:
    """The gate of the heads of ``plan`` (in its order): a head that no gate token found so
    far answers adds the prerequisite it needs first, through theirs (``oader`` for
    ``= DataLoader``), or itself."""
    tokens: list[bytes] = []
    heads = 0
    for head in plan:
        heads |= head.bit
        token = head.searched
        if any(gate == token or absence_implies(gate, token) for gate in tokens):
            continue
        while needs.get(token):
            token = needs[token][0]
        tokens.append(token)
    packages = frozenset(head.package for head in plan if head.package is not None)
    return _Gate(tuple((token, bit(token)) for token in tokens), heads, packages)


def _with_code_shape(group: TokenGroup) -> TokenGroup:
    """``group`` and, asked last of a file that holds its other tokens, that they are in its
    code (not only in comments and docstrings: ``scan/read/code_view.py``)."""
    shape = in_code(group)
    return group if shape is None or shape in group else (*group, shape)


def _shortest_need(token: bytes, needs: dict[bytes, tuple[bytes, ...]]) -> int:
    """The length of the shortest of ``token`` and the prerequisites it needs, through
    theirs."""
    shortest, stack = len(token), [token]
    while stack:
        for need in needs.get(stack.pop(), ()):
            shortest = min(shortest, len(need))
            stack.append(need)
    return shortest


def _order(shared: Counter[bytes]) -> Callable[[bytes], tuple[bool, int, bytes]]:
    """The order a group's other tokens are asked in: the most shared first (a file that lacks
    ``__call__`` fails the 22 groups of ``(XPipeline, __call__)`` on one search of it, its
    answer remembered, instead of on a search of each class name), a shape (a check of the
    bytes, ``scan/read/shapes.py``) last, of the files that hold the plain tokens of its group."""
    return lambda token: (is_shape(token), -shared[token], token)


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
