"""Where a DataLoader construction runs again and again: every loop and root that reaches it.

A construction outside any loop runs once per call of its function. Walking sure call edges
upwards finds each place that makes such a call repeatedly: a call inside a ``for``/``while``
body, a per-epoch hook, an ``__iter__`` or ``__next__`` (one pass over a loader, one batch).
All of them are collected, not only the nearest: a call before the training loop
(``if eval_on_start: self.evaluate()``) must not hide the same call inside it. LL202 anchors
its finding on the place that runs most often and lists the others.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from lintloader.analysis import built_once
from lintloader.analysis.cut_calls import cut_call_targets
from lintloader.analysis.frameworks import stub_hook_kind, stub_roots
from lintloader.analysis.loaders import LoaderSite, facts_of
from lintloader.analysis.none_guards import construction_guard, fills_guard
from lintloader.analysis.reachability import is_epoch_root
from lintloader.analysis.zero_workers import zero_along
from lintloader.domain.torch_api import CONSTRUCTION_ROOTS
from lintloader.finding.findings import Confidence
from lintloader.link.arguments import binding
from lintloader.link.call_kinds import LOCAL_BUILDERS
from lintloader.link.fixed_sets import only_fixed_sets
from lintloader.link.program import Edge, FunctionInfo, Program
from lintloader.summary.model import CallSite, LoopInfo, reads_back_whole

MAX_PLACES = 8  # places kept per construction (the best one and "also reached from")

# How often a loop runs, guessed from its header (higher: more often).
_FEW = re.compile(r"\.(items|keys|values)\(\)|dataset|split|fold|task|metric|name|eval|_sets?\b")
_MANY = re.compile(r"\b(step|steps|batch|batches|iteration|iterations|it|itr|iter)\b|while ")
_EPOCH = re.compile(r"epoch")


class Place(NamedTuple):
    """One place that runs a construction repeatedly: ``caller`` holds the loop (or is the
    root), ``edges`` are the calls from there down to the constructing function."""

    caller: FunctionInfo
    edges: tuple[Edge, ...]
    loop: LoopInfo | None  # None: a root (hook, ``__iter__``) or a loop of an unfaceted file
    kind: str  # "loop", "hook", "iter"; a stubbed framework's hook: "per-step hook" and the like
    dependent: bool  # the call in the loop passes something the loop changes

    @property
    def setup(self) -> bool:
        """A loop in a set-up function (one loader per model chunk or split, built once)."""
        return self.kind == "loop" and is_setup(self.caller)

    @property
    def passed(self) -> bool:
        """A function on the way is passed on as a value (``Process(target=work)``,
        ``save_hyperparameters(setup)``, ``load_pretrained(CodecModel, path)``) instead of
        called: how often it runs (once per process, or never) is up to the callee."""
        return any(edge.call.is_reference for edge in self.edges)

    @property
    def frequency(self) -> int:
        if self.setup:
            return 0
        if self.kind == "iter":
            return 3
        if self.kind.endswith("hook") or self.loop is None:
            return 2
        return loop_frequency(self.loop)

    @property
    def fixed(self) -> bool:
        """A loop over a fixed set of items written in it (``for ds in (a, b)``)."""
        if self.kind != "loop" or self.loop is None:
            return False
        facts = facts_of(self.caller)
        if facts is not None and self.loop in facts.loops:
            return only_fixed_sets(facts.loop_chain(facts.loops.index(self.loop)))
        function = self.caller.function  # a file without loader facts: its call summary's loops
        if self.loop not in function.loops:
            return False
        return only_fixed_sets(function.loop_chain(function.loops.index(self.loop)))

    @property
    def persistent_guard(self) -> bool:
        """A hop under an ``if`` on the ``persistent_workers`` flag: taken to run only when the
        workers are not kept. A hop in the body of a test that requires the flag (``if cached
        and args.persistent_workers:``) does not count: it runs only when they are kept, and a
        loader it builds on every pass is one more persistent pool each time."""
        return any(e.call.persistent_guard and not e.call.persistent_only for e in self.edges)

    def rank(self) -> tuple[int, int, int, int]:
        """Lower is a better anchor: unqualified (a warning) first, then the most frequent."""
        qualified = int(
            self.dependent or self.persistent_guard or self.setup or self.passed or self.fixed
        )
        return (qualified, -self.frequency, len(self.edges), self.line)

    @property
    def line(self) -> int:
        return self.edges[0].call.site.line if self.edges else 0

    def describe(self) -> str:
        name = self.caller.display_name
        if self.kind == "iter":
            return f"`{name}`"
        if self.kind.endswith("hook"):
            return f"{'per-epoch hook' if self.kind == 'hook' else self.kind} `{name}`"
        if self.loop is None:
            return f"a loop in `{name}`"
        return f"`{self.loop.header}` in `{name}`"


def is_setup(info: FunctionInfo) -> bool:
    """A function that runs once to set things up: a loop there builds one loader per item."""
    return bool(_SETUP.match(info.function.name))


_SETUP = re.compile(r"^_*(__init__|setup|set_up|init|initiali[sz]e|build|prepare|create)(_|$)")


def loop_frequency(loop: LoopInfo) -> int:
    """1: a loop over a few named things (eval sets, splits); 2: unknown; 3: epochs;
    4: steps or batches."""
    header = loop.header.lower()
    if _MANY.search(header) or loop.kind == "while":
        return 4
    if _EPOCH.search(header):
        return 3
    return 1 if _FEW.search(header) else 2


def is_construction_root(info: FunctionInfo) -> bool:
    function = info.function
    return function.name in CONSTRUCTION_ROOTS and function.class_qualname is not None


def own_loop(program: Program, site: LoaderSite) -> Place:
    """The place of a construction written inside a loop of its own function (its innermost
    loop): the same model as a loop of a caller that runs it (:func:`places`), no call on the
    way."""
    loop = site.facts.loops[site.call.context.loop]
    dependent = loop_reaches(program, site, (), loop)
    return Place(site.info, (), loop, kind="loop", dependent=dependent)


def places(program: Program, site: LoaderSite, roots: frozenset[str] = frozenset()) -> list[Place]:
    """Every place that runs ``site`` repeatedly, best anchor first (empty: it runs once).
    ``roots``: keys of functions declared to run once per epoch (``extend-roots``)."""
    start = site.info
    root = _root_kind(program, start, roots)
    if root is not None:
        return [Place(start, (), loop=None, kind=root, dependent=False)]
    found: dict[tuple[str, int, int], Place] = {}
    queue: deque[tuple[str, tuple[Edge, ...]]] = deque([(site.key, ())])
    # each caller is climbed once per None guard of the call it makes on the way, so that a
    # guarded call does not hide an unguarded one of the same function
    seen: set[tuple[str, tuple[str, ...]]] = {(site.key, ())}
    while queue and len(found) < MAX_PLACES:
        key, path = queue.popleft()  # no depth bound: each caller is climbed once (``seen``)
        guard = (
            path[0].call.none_guard if path else construction_guard(program, key, site.call.site)
        )
        for edge in program.edges_into(key, Confidence.HIGH):
            if zero_along(program, site, (edge, *path)):
                continue  # this way builds the loader without workers
            if fills_guard(program, guard, edge):
                continue  # it passes what the way needs None (``dataloader=val_loader``)
            place, climb = _place(program, site, edge, (edge, *path), roots)
            mark = (edge.caller, edge.call.site.line, edge.call.site.column)
            if place is not None:
                found.setdefault(mark, place)
            state = (edge.caller, edge.call.none_guard if edge.caller != site.key else ())
            if climb and state not in seen:
                seen.add(state)
                queue.append((edge.caller, (edge, *path)))
    return sorted(found.values(), key=Place.rank)


def _place(
    program: Program,
    target: LoaderSite,
    edge: Edge,
    chain: tuple[Edge, ...],
    roots: frozenset[str] = frozenset(),
) -> tuple[Place | None, bool]:
    """The place ``edge`` makes (if its call repeats), and whether to keep climbing above."""
    caller = program.functions[edge.caller]
    facts = facts_of(caller)
    site = edge.call.site
    if facts is not None:
        index = facts.innermost_loop_at(site.line, site.column)
        # built once and kept by the caller (a call under a persistent_workers branch as well
        # is left to the persistent-branch note)
        if built_once.in_kept_block(facts, site.line, index) and (
            index >= 0
            or not edge.call.persistent_guard
            or _root_kind(program, caller, roots) is not None
        ):
            return None, False
        if index >= 0:
            loop = facts.loops[index]
            dependent = loop_reaches(program, target, chain, loop)
            return Place(caller, chain, loop, kind="loop", dependent=dependent), True
    elif edge.call.in_loop:  # a file without loader facts: its call summary knows the loop
        loops = caller.function.loops
        known = loops[edge.call.loop] if 0 <= edge.call.loop < len(loops) else None
        return Place(caller, chain, known, kind="loop", dependent=False), True
    kept = built_once.kept_after(facts, edge.call.site.line)
    root = _root_kind(program, caller, roots)
    if root is not None and not kept:  # a hook that returns what it kept builds it once
        return Place(caller, chain, loop=None, kind=root, dependent=False), False
    return None, not kept


def _root_kind(program: Program, info: FunctionInfo, roots: frozenset[str]) -> str | None:
    """``"iter"`` for ``__iter__`` (a construction root), ``"hook"`` for a per-epoch hook or a
    declared root (``roots``), how often a stubbed framework calls it for one of its hooks
    (``"per-step hook"``), None for any other function."""
    if is_construction_root(info):
        return "iter"
    if is_epoch_root(program, info):
        return "hook"
    if info.key in roots:
        return stub_hook_kind(program, info.key) or "hook"
    return None


def comes_around(program: Program, info: FunctionInfo, line: int, column: int) -> bool:
    """Whether the loop around ``line:column`` of ``info`` runs again over the same items: it
    sits in another loop of its function that does not bind what it iterates anew (``for task
    in tasks`` every N steps; not ``batches = draw(); for b in batches``), or the function is
    a root (a hook, ``__iter__``). True where it cannot tell (no loop there, no facts)."""
    facts = facts_of(info)
    index = facts.innermost_loop_at(line, column) if facts is not None else -1
    if facts is None or index < 0:
        return True
    loop = facts.loops[index]
    inner = loop.assigned | set(loop.targets)
    items = _items_read(loop)
    for outer in facts.loop_chain(index)[1:]:
        if not items & (outer.assigned - inner):
            return True
    return _root_kind(program, info, frozenset(stub_roots(program).keys)) is not None


_NAME = re.compile(r"(?<![.\w])([A-Za-z_]\w*)")


def _items_read(loop: LoopInfo) -> set[str]:
    """The names a ``for`` header's iterable reads (``tasks`` of ``for t in tasks.keys()``);
    none for a ``while``."""
    if loop.iterable:
        return {loop.iterable[0]}
    _, found, items = loop.header.partition(" in ")
    return set(_NAME.findall(items)) if found else set()


def changed(loop: LoopInfo) -> frozenset[str]:
    """What a pass of ``loop`` changes: the names it binds or assigns, and the object of an
    attribute it iterates into (``for self.experience in stream``: ``self`` is another object
    for every pass, as far as what its methods build is concerned)."""
    owners = {target.split(".")[0] for target in loop.targets if "." in target}
    return loop.assigned | owners


def loop_reaches(
    program: Program, target: LoaderSite, chain: tuple[Edge, ...], loop: LoopInfo
) -> bool:
    """Whether the construction depends on ``loop``: a value the loop changes (:func:`changed`,
    of the innermost loop around the call: a value an outer loop changes stays the same for
    every inner pass) can reach the DataLoader's arguments through the calls of ``chain``
    (none: the construction is in the loop's own body): ``load_data(files)`` where the loop
    sets ``files``, ``load_data`` passes it on (or derives a local from it), and so on down."""
    tainted: set[str] = set(changed(loop))
    for edge in chain:
        caller = program.functions[edge.caller]
        tainted = _passed(program, edge, _derived(program, caller, tainted))
        if not tainted:
            return False
    tainted = _derived(program, target.info, tainted)
    return any(_hit(name, tainted, target.info) for name in target.call.names)


_ANY = "<any>"  # any parameter (the call passed ``*args``/``**kwargs`` or its text was cut)


def _hit(name: str, tainted: set[str], info: FunctionInfo) -> bool:
    parts = name.split(".")
    if any(".".join(parts[:cut]) in tainted for cut in range(1, len(parts) + 1)):
        return True
    return _ANY in tainted and parts[0] in _parameters(info)


def _parameters(info: FunctionInfo) -> set[str]:
    """Every parameter of the function but ``self``: positional, keyword-only, variadic."""
    function = info.function
    found = {*function.params, *function.keyword_only, function.star_args, function.star_kwargs}
    return found - {function.self_name, ""}


def _reads(names: str | Iterable[str], tainted: set[str], info: FunctionInfo) -> bool:
    """One of ``names`` (the summary's dotted names, space-separated) is tainted."""
    found = names.split() if isinstance(names, str) else names
    return any(_hit(name, tainted, info) for name in found)


def _call_reads(call: CallSite, tainted: set[str], info: FunctionInfo) -> bool:
    """The arguments of a call read a tainted name. A call whose text reads back whole counts
    what its text after the callee reads: its keyword names too (``super().m(x)``: ``m``)."""
    if not call.whole:
        return _reads(call.names_read, tainted, info)
    if _reads(call.names_read, tainted, info):
        return True
    written = [p.keyword for p in call.passed if p.keyword]
    if call.target[0] == "super()" and len(call.target) > 1:
        written.append(".".join(call.target[1:]))
    return _reads(written, tainted, info)


def _derived(program: Program, info: FunctionInfo, tainted: set[str]) -> set[str]:
    """``tainted`` plus the locals assigned from a call that reads one of them
    (``ds = FileDataset(files)``), to a fixed point."""
    calls = program.calls_of(info.key, LOCAL_BUILDERS)  # the others type no local
    derived = set(tainted)
    for _ in range(3):
        reading = [c for c in calls if not c.is_reference and _call_reads(c, derived, info)]
        # a call that names the local it binds taints that one, not every local of its type
        callees = {call.target for call in reading if not call.binds}
        fresh = {n for n, t in info.function.local_types.items() if t in callees}
        fresh |= {call.binds for call in reading if call.binds}
        aliases = info.function.read_aliases.items()
        fresh = (fresh | {n for n, read in aliases if _reads(read, derived, info)}) - derived
        if not fresh:
            break
        derived |= fresh
    return derived


def _passed(program: Program, edge: Edge, tainted: set[str]) -> set[str]:
    """The callee's parameters that receive a tainted value at the call ``edge`` makes (any of
    them, ``_ANY``, through a ``*args``/``**kwargs`` or a call whose text was cut)."""
    caller, callee = program.functions[edge.caller], program.functions[edge.callee]
    every = {*_parameters(callee), _ANY}
    bound = binding(program, edge)
    if bound.reference:
        return set()
    if not bound.parsed:  # not read back whole: what each argument reads is kept
        if edge.call.reads:
            return cut_call_targets(
                edge.call, callee.function, lambda t: _reads(t, tainted, caller), every
            )
        return every if _call_reads(edge.call, tainted, caller) else set()
    tainted = tainted | _comprehended(edge.call, tainted, caller)
    found: set[str] = set()
    for slot in bound.slots:
        if _reads(slot.argument.reads, tainted, caller):
            found |= every if slot.fills is None else set(slot.fills)
    return found


def _comprehended(call: CallSite, tainted: set[str], caller: FunctionInfo) -> set[str]:
    """The names that a loop or comprehension around ``call`` binds from a tainted value
    (``[load(p) for p in paths]`` or ``for p in paths: load(p)`` with ``paths`` tainted:
    ``p``)."""
    function = caller.function
    loops = function.loop_chain(call.loop) if 0 <= call.loop < len(function.loops) else []
    clauses = [clause for loop in reversed(loops) if (clause := _for_clause(loop)) is not None]
    clauses += [(clause.targets, clause.reads) for clause in call.comprehended]
    found: set[str] = set()
    for targets, reads in clauses:
        if _reads(reads, tainted | found, caller):
            found.update(targets)
    return found


def _for_clause(loop: LoopInfo) -> tuple[tuple[str, ...], str] | None:
    """What a ``for`` loop binds and the names what it iterates reads, as the summary recorded
    them (None: a ``while``, or a header that does not read back whole: cut at the text limit,
    or a comment in it, as when the header's text was parsed again)."""
    if loop.kind != "for" or not reads_back_whole(loop.header):
        return None
    return loop.binds, loop.reads
