"""The token query engine: which unparsed files contain the tokens a demand round asks for.

A group of byte tokens matches a file when the file contains every token of the group (a scope
token: when the file is inside that package or names it). Searching is a byte search on the
file's bytes, remembered by :class:`~lintloader.scan.read.sources.SourceSet` and the stat index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lintloader.analysis.context import TokenGroup
from lintloader.scan.model import SourceFile
from lintloader.scan.read.sources import SourceSet
from lintloader.scan.read.statindex import StatIndex
from lintloader.scan.read.tokens import (
    absence_implies,
    in_code,
    index_token,
    is_shape,
    prerequisites,
    scope_package,
    top_package,
)


@dataclass(eq=False, repr=False)
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
    # per bucket, for the token table of _plan_for (the index, its size): see _head_plan
    _plan: list[_Head] = field(default_factory=list)
    _plan_for: tuple[StatIndex | None, int] = (None, 0)
    _gate: _Gate = field(default_factory=lambda: _Gate((), 0, frozenset()))
    _tokens: dict[bytes, _Token] = field(default_factory=dict)  # see _token

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
        """Every token a match may search for (scope tokens search their package's name), and
        the prerequisites of those, through theirs."""
        found, stack = set(), [index_token(token) for token in self.tokens]
        while stack:
            token = stack.pop()
            if token not in found:
                found.add(token)
                stack.extend(self.needs.get(token, ()))
        return found

    def matches(self, sources: SourceSet, file: SourceFile) -> bool:
        checked, present = sources.answers(file.path)
        return self._matches(sources, file.path, top_package(file.module), checked, present)

    def _matches(
        self, sources: SourceSet, path: str, package: str, checked: int, present: int
    ) -> bool:
        """:meth:`matches` of the file at ``path`` (of top-level package ``package``), whose
        bits are ``checked`` and ``present`` now (read again after each search)."""
        self._group_masks(sources)
        if checked & self._asked or self._scope_only:
            known = self._known(checked, present, package)
            if known is not None:
                return known
        plan = self._head_plan(sources)
        gate = self._gate
        # no head asked of the file yet: its gate tokens first, each searched at most once;
        # all absent, every head is (see _Gate), and the file matches no group
        if package not in gate.packages and not checked & gate.heads:
            if not sources.search_until_found(path, gate.tokens):
                sources.note_absent(path, gate.heads)
                return False
            checked, present = sources.answers(path)
        for head in plan:
            if head.package is None or head.package != package:
                # most heads of a cold file are answered by its bits: already searched, or a
                # plain token inside the head known absent (``oader`` for ``DataLoader(``),
                # which is what ``contains`` would find, but for an integer test
                if checked & head.bit:
                    if not present & head.bit:
                        continue
                elif checked & ~present & head.inner:
                    sources.note_absent(path, head.bit)
                    checked |= head.bit
                    continue
                else:
                    if head.needs:
                        found = sources.contains(path, head.searched, self.needs)
                    else:
                        found = sources.search(path, head.searched, head.bit)
                    checked, present = sources.answers(path)
                    if not found:
                        continue
            rests = head.rests(self._token)
            if _any_rest(sources, path, package, rests, self.needs, (checked, present)):
                return True
            checked, present = sources.answers(path)
        return False

    def _head_plan(self, sources: SourceSet) -> list[_Head]:
        """Each bucket's head as :meth:`matches` asks it, for the index's token table now
        (worked out again when it has grown: a token found inside a head may be new)."""
        index = sources.index
        if self._plan_for[0] is not index or self._plan_for[1] != len(index.tokens):
            # the tokens a sharded round registers first (``searched``): the groups' with
            # their masks, the prerequisites here; the table then stays as it is all round
            self._group_masks(sources)
            sources.register(sorted({need for needs in self.needs.values() for need in needs}))
            plan = []
            for token, rests in self.buckets.items():
                searched = index_token(token)
                bit, needs = index.bit(searched), bool(self.needs.get(searched))
                plan.append(_Head(searched, bit, scope_package(token), rests, needs))
            for head in plan:  # once every head has its bit
                head.inner = index.inner_bits(head.searched)
            self._gate = _gate_of(plan, self.needs, index.bit)
            self._plan, self._plan_for = plan, (index, len(index.tokens))
            self._tokens = {}
        return self._plan

    def _token(self, token: bytes) -> _Token:
        """``token`` as a rest asks it, for the index of the plan now (see :class:`_Token`);
        worked out once per plan (``__call__`` is in 22 rests of a round)."""
        known = self._tokens.get(token)
        if known is None:
            index = self._plan_for[0]
            assert index is not None  # asked only after _head_plan
            known = self._tokens[token] = _token_of(token, index, self.needs)
        return known

    def _known(self, checked: int, present: int, package_of_file: str) -> bool | None:
        """The answer from a file's bits alone (``checked``, ``present``; of top-level
        package ``package_of_file``), None when a token must be searched; asked only of a
        file that some token of the query was asked of, against :meth:`_group_masks` worked
        out for the index now. (Unchanged files of a warm or one-changed-file run answer every
        round this way, which is an integer test per group instead of a walk per token.)"""
        undecided = False
        for mask, scopes in self._masks:
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


@dataclass(eq=False, repr=False)
class _Head:
    """A bucket's head as a cold file is asked it: the token searched (a scope head: its
    package's name as a whole word), its bit, its package (a scope head's, else None), the
    bucket's rests, whether the token has prerequisites (``GroupQuery.needs``: searched
    first) and the bits of the plain tokens inside it (``StatIndex.inner_bits``); the rests
    as :func:`_any_rest` asks them are worked out when a file first holds the head (most
    heads of a round with many, such as fixtures/' 134, are held by no file)."""

    searched: bytes
    bit: int
    package: str | None
    groups: list[TokenGroup]
    needs: bool
    inner: int = 0
    _rests: list[_Rest] | None = None

    def rests(self, token_of: Callable[[bytes], _Token]) -> list[_Rest]:
        if self._rests is None:
            self._rests = [_rest_of(group, token_of) for group in self.groups]
        return self._rests


@dataclass(frozen=True, eq=False)
class _Token:
    """A token of a rest as a file is asked it: its package (a scope token's, else None: a
    file inside that package holds it), the token searched (a scope token: its package's
    name as a whole word), its bit, and the bits of the plain tokens whose absence implies
    its own: those inside it (``StatIndex.inner_bits``) and its prerequisites
    (``GroupQuery.needs``, through theirs, and those inside them)."""

    package: str | None
    searched: bytes
    bit: int
    implied: int


@dataclass(frozen=True, eq=False)
class _Rest:
    """A group's tokens after its head, worked out once per round for the index's token
    table: the bits every file must hold (``bits``: of its tokens but the scope tokens), the
    scope tokens' (package, bit) (held by a file inside the package), its tokens in the
    order asked, and the bits whose absence implies one of its tokens' but the scope tokens'
    (``implied``). A file's bits answer most rests by one or two integer tests: one of its
    tokens known absent, or implied absent, or all known present."""

    bits: int
    scopes: tuple[tuple[str, int], ...]
    tokens: tuple[_Token, ...]
    implied: int

    def first_implied(self, absent: int) -> int:
        """The bit of the first token (but a scope token) whose absence the ``absent`` bits
        imply (0: none)."""
        for token in self.tokens:
            if token.package is None and token.implied & absent:
                return token.bit
        return 0

    def mask(self, package_of_file: str) -> int:
        """The bits a file of top-level package ``package_of_file`` must hold."""
        mask = self.bits
        for package, bit in self.scopes:
            if package != package_of_file:
                mask |= bit
        return mask


def _token_of(token: bytes, index: StatIndex, needs: Mapping[bytes, tuple[bytes, ...]]) -> _Token:
    """``token`` as :func:`_any_rest` asks it of a file (see :class:`_Token`)."""
    package, searched = scope_package(token), index_token(token)
    implied, stack = index.inner_bits(searched), list(needs.get(searched, ()))
    while stack:
        need = stack.pop()
        implied |= index.bit(need) | index.inner_bits(need)
        stack.extend(needs.get(need, ()))
    return _Token(package, searched, index.bit(searched), implied)


def _rest_of(rest: TokenGroup, token_of: Callable[[bytes], _Token]) -> _Rest:
    """``rest`` as :func:`_any_rest` asks it of a file (see :class:`_Rest`), its tokens
    made by ``token_of``."""
    tokens, bits, scopes, implied_any = [], 0, [], 0
    for token in map(token_of, rest):
        tokens.append(token)
        if token.package is None:
            bits |= token.bit
            implied_any |= token.implied
        else:
            scopes.append((token.package, token.bit))
    return _Rest(bits, tuple(scopes), tuple(tokens), implied_any)


def _any_rest(
    sources: SourceSet,
    path: str,
    package_of_file: str,
    rests: list[_Rest],
    needs: Mapping[bytes, tuple[bytes, ...]],
    answers: tuple[int, int],
) -> bool:
    """Whether the file holds every token of one of ``rests`` (its bucket's head it holds;
    its bits ``answers``, checked and present, as they are now):
    a rest with a token known absent is passed over on one integer test; one with a token
    whose absence the bits imply (a plain token inside it or a prerequisite known absent)
    on another, that absence remembered (as ``SourceSet.contains`` remembers it); one whose
    tokens are all known present matches. Only the others are asked token by token
    (:func:`_holds_all`), after which the file's bits are read again (a search's answer
    may decide the rests after it: the 22 rests of ``__call__`` fail on its one search)."""
    checked, present = answers
    for rest in rests:
        mask = rest.mask(package_of_file) if rest.scopes else rest.bits
        absent = checked & ~present
        if absent & mask:
            continue
        if absent & rest.implied:
            bit = rest.first_implied(absent)
            sources.note_absent(path, bit)
            checked |= bit
            continue
        if present & mask == mask or _holds_all(sources, path, package_of_file, rest, needs):
            return True
        checked, present = sources.answers(path)
    return False


def _holds_all(
    sources: SourceSet,
    path: str,
    package_of_file: str,
    rest: _Rest,
    needs: Mapping[bytes, tuple[bytes, ...]],
) -> bool:
    """Whether the file holds every token of ``rest`` (none known or implied absent): the
    tokens not known present are asked in order (``SourceSet.contains``: their prerequisites
    first), until one is absent; a scope token is held by a file inside its package."""
    present = sources.answers(path)[1]
    return all(
        present & token.bit
        or (token.package is not None and token.package == package_of_file)
        or sources.contains(path, token.searched, needs)
        for token in rest.tokens
    )


@dataclass(frozen=True, eq=False)
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
        package = top_package(file.module)
        if checked & ~present & mask == mask and package not in packages:
            continue  # every bucket head known to be absent (see GroupQuery.head_mask)
        if query._matches(sources, file.path, package, checked, present):
            chosen.append(file)
    return chosen
