"""Reachability from roots (``__iter__``, per-epoch hooks, epoch and step loops) to DataLoader
iterator resets.

Rules ask this module for chains; it knows nothing about severities or messages.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from lintloader.analysis.frameworks import root_keys
from lintloader.analysis.torch_classes import is_dataloader_class, is_dataloader_iterator_class
from lintloader.analysis.vocabulary import DECLARED_RESET, Vocabulary, function_keys
from lintloader.domain.torch_api import (
    EPOCH_HOOKS,
    ITER_ROOTS,
    LOOP_METHODS,
    SINK_PRIORITY,
    STEP_LOOP_WORDS,
    TEARDOWN_NAMES,
)
from lintloader.finding.findings import Confidence, Hop
from lintloader.link.program import Edge, FunctionInfo, Program
from lintloader.summary.model import LoopInfo, SinkSite, Site

_WORD = re.compile(r"[A-Z]?[a-z]+")
_Start = tuple[str, tuple[Edge, ...]]  # a function to explore, and the edges that led there


class SinkRef(NamedTuple):
    """A reset sink inside a function (``function`` is a program key)."""

    function: str
    sink: SinkSite


class Chain(NamedTuple):
    """A path of call edges from a root function to a sink."""

    root: str
    edges: tuple[Edge, ...]
    sink: SinkRef

    @property
    def confidence(self) -> Confidence:
        return min((e.confidence for e in self.edges), default=Confidence.HIGH)

    @property
    def guarded(self) -> bool:
        """Some step only runs when ``persistent_workers`` says so."""
        return self.sink.sink.persistent_guard or any(e.call.persistent_guard for e in self.edges)

    @property
    def start_line(self) -> int:
        return self.edges[0].call.site.line if self.edges else self.sink.sink.site.line

    @property
    def start_column(self) -> int:
        return self.edges[0].call.site.column if self.edges else self.sink.sink.site.column

    def rank(self) -> tuple[int, int, int, int, str, int]:
        """Lower is more convincing: sure edges, unguarded, real resets first, short chains."""
        sink = self.sink.sink
        return (
            -int(self.confidence),
            int(self.guarded),
            SINK_PRIORITY.get(sink.kind, 2),
            len(self.edges),
            self.sink.function,
            sink.site.line,
        )


def is_iter_root(info: FunctionInfo) -> bool:
    return info.function.name in ITER_ROOTS and info.function.class_qualname is not None


def is_epoch_root(program: Program, info: FunctionInfo) -> bool:
    """Per-epoch entry points: epoch-start hooks anywhere, and a Lightning-style loop's
    ``reset``/``advance``/``run`` (a class with ``Loop`` in its hierarchy)."""
    name = info.function.name
    if EPOCH_HOOKS.match(name):
        return True
    class_key = info.class_key
    if name not in LOOP_METHODS or class_key is None:
        return False
    names = [program.classes[k].klass.name for k in program.mro(class_key)]
    names += [p.rsplit(".", 1)[-1] for p in program.external_bases(class_key)]
    return any(n.lstrip("_").endswith("Loop") for n in names)


def is_step_loop(loop: LoopInfo) -> bool:
    """A loop over epochs or steps: its header names one (``for epoch in range(epochs)``)."""
    return any(word.lower() in STEP_LOOP_WORDS for word in _WORD.findall(loop.header))


class LoopRoot(NamedTuple):
    """An epoch or step loop (``loop``: index into the function's loops) of a function that is
    no other root: every call and reset in its body runs once per iteration."""

    function: str
    loop: int

    @property
    def key(self) -> str:
        return f"{self.function}#loop{self.loop}"


def owning_step_loop(info: FunctionInfo, loop: int) -> int:
    """The innermost epoch or step loop around a site whose innermost loop is ``loop``."""
    loops = info.function.loops
    while loop >= 0 and not is_step_loop(loops[loop]):
        loop = loops[loop].parent
    return loop


def is_real_sink(program: Program, info: FunctionInfo, sink: SinkSite) -> bool:
    """A reset of ``self._iterator`` is the class's own attribute unless the class is a
    DataLoader (or, for ``_shutdown_workers``, a DataLoader iterator)."""
    receiver = sink.receiver
    self_name = info.function.self_name
    class_key = info.class_key
    if receiver is None or self_name is None or class_key is None or receiver[0] != self_name:
        return True
    if sink.kind == "shutdown-workers":
        if receiver == (self_name,):  # self._shutdown_workers(): the class is the iterator
            return is_dataloader_iterator_class(program, class_key)
        if receiver == (self_name, "_iterator"):  # self._iterator._shutdown_workers()
            return is_dataloader_class(program, class_key)
        return True
    if receiver == (self_name,):  # self._iterator = None: the class's own attribute
        # ... and in __init__ it starts out empty: nothing to reset yet.
        return info.function.name != "__init__" and is_dataloader_class(program, class_key)
    return True  # self.loader._iterator = None: another object's iterator


@dataclass(eq=False, repr=False)
class Reachability:
    """Sinks of the program and the chains that reach them from every root, computed once."""

    program: Program
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    sinks: dict[str, list[SinkRef]] = field(default_factory=dict)
    _chains: dict[str, list[Chain]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key, info in self.program.functions.items():
            real = [s for s in info.function.sinks if is_real_sink(self.program, info, s)]
            if real:
                self.sinks[key] = [SinkRef(key, s) for s in real]
        for key in function_keys(self.program, self.vocabulary.resets):
            self.sinks.setdefault(key, []).append(SinkRef(key, declared_reset(self.program, key)))

    def all_sinks(self) -> list[SinkRef]:
        return [ref for refs in self.sinks.values() for ref in refs]

    def iter_roots(self) -> list[FunctionInfo]:
        return list(self._iter_roots)

    def epoch_roots(self) -> list[FunctionInfo]:
        return list(self._epoch_roots)

    def loop_roots(self) -> list[LoopRoot]:
        """Epoch and step loops of functions that are no other root (nor a teardown)."""
        return list(self._loop_roots)

    # each kind of root is looked for once: several rules and unreached() ask for them
    @cached_property
    def _iter_roots(self) -> tuple[FunctionInfo, ...]:
        return tuple(i for i in self.program.functions.values() if is_iter_root(i))

    @cached_property
    def _epoch_roots(self) -> tuple[FunctionInfo, ...]:
        return tuple(
            i
            for i in self.program.functions.values()
            if not is_iter_root(i) and self._is_epoch_root(i)
        )

    @cached_property
    def _declared_roots(self) -> frozenset[str]:
        return root_keys(self.program, self.vocabulary)

    def _is_epoch_root(self, info: FunctionInfo) -> bool:
        return info.key in self._declared_roots or is_epoch_root(self.program, info)

    @cached_property
    def _loop_roots(self) -> tuple[LoopRoot, ...]:
        found: list[LoopRoot] = []
        for key, info in self.program.functions.items():
            loops = info.function.loops
            if not loops or self._is_function_root(info):
                continue
            if info.function.name.startswith(TEARDOWN_NAMES):
                continue
            found += [LoopRoot(key, i) for i, loop in enumerate(loops) if is_step_loop(loop)]
        return tuple(found)

    def _is_function_root(self, info: FunctionInfo) -> bool:
        return is_iter_root(info) or self._is_epoch_root(info)

    def _is_root_key(self, key: str) -> bool:
        info = self.program.functions.get(key)
        return info is not None and self._is_function_root(info)

    def chains_from(self, root: str) -> list[Chain]:
        """The best chain to every sink ``root`` reaches: sure edges first, then guesses of
        one class hierarchy, then any edge."""
        if root not in self._chains:
            self._chains[root] = self._best(root, lambda lowest: [(root, ())], ())
        return self._chains[root]

    def chains_from_loop(self, root: LoopRoot) -> list[Chain]:
        """The best chain to every sink reached from the body of a loop root: resets written in
        it, and those its calls reach (a call in a nested step loop belongs to that loop)."""
        if root.key not in self._chains:
            info = self.program.functions[root.function]
            edges = [
                edge
                for edge in self.program.edges_from(root.function)
                if owning_step_loop(info, edge.call.loop) == root.loop
            ]

            def starts(lowest: Confidence) -> list[_Start]:
                # a call of another root (a hook, an __iter__) is that root's finding
                return [
                    (e.callee, (e,))
                    for e in edges
                    if e.confidence >= lowest and not self._is_root_key(e.callee)
                ]

            direct = [
                Chain(root.function, (), ref)
                for ref in self.sinks.get(root.function, ())
                if owning_step_loop(info, ref.sink.loop) == root.loop
            ]
            self._chains[root.key] = self._best(root.function, starts, direct)
        return self._chains[root.key]

    def _best(
        self,
        root: str,
        starts: Callable[[Confidence], list[_Start]],
        direct: Iterable[Chain],
    ) -> list[Chain]:
        best: dict[SinkRef, Chain] = {chain.sink: chain for chain in direct}
        for lowest in (Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW):
            for chain in self._bfs(root, starts(lowest), lowest):
                best.setdefault(chain.sink, chain)
        return sorted(best.values(), key=Chain.rank)

    def _bfs(self, root: str, starts: list[_Start], lowest: Confidence) -> Iterable[Chain]:
        queue: deque[_Start] = deque(s for s in starts if s[0] in self.program.functions)
        seen = {key for key, _ in queue} | {root}
        while queue:
            key, path = queue.popleft()
            for sink in self.sinks.get(key, ()):
                yield Chain(root, path, sink)
            # no depth bound: each function is explored once (``seen``), so chains of any length
            # the program has are followed, and cycles end
            for edge in self.program.edges_from(key):
                if edge.callee in seen or edge.callee not in self.program.functions:
                    continue
                if edge.confidence < lowest:
                    continue
                seen.add(edge.callee)
                queue.append((edge.callee, (*path, edge)))

    def unreached(self) -> list[SinkRef]:
        """Sinks that no ``__iter__``, per-epoch root or epoch loop reaches."""
        reached = {
            chain.sink
            for root in (*self.iter_roots(), *self.epoch_roots())
            for chain in self.chains_from(root.key)
        }
        reached |= {c.sink for loop in self.loop_roots() for c in self.chains_from_loop(loop)}
        return [s for s in self.all_sinks() if s not in reached]


def declared_reset(program: Program, key: str) -> SinkSite:
    """A reset the configuration declares (``extend-resets``): its definition is the sink."""
    function = program.functions[key].function
    text = f"{program.functions[key].display_name}() (a reset named in extend-resets)"
    return SinkSite(DECLARED_RESET, None, Site(function.line, 1, text, function.line))


def group_by_start(chains: Iterable[Chain]) -> list[list[Chain]]:
    """Chains that start at the same line of the root: one finding each, best chain first."""
    groups: dict[tuple[int, int], list[Chain]] = {}
    for chain in sorted(chains, key=Chain.rank):
        groups.setdefault((chain.start_line, chain.start_column), []).append(chain)
    return list(groups.values())


def chain_hops(program: Program, chain: Chain, display: Callable[[str], str]) -> tuple[Hop, ...]:
    """The chain as hops: each call on the way, then the reset itself."""
    hops = []
    for edge in chain.edges:
        caller = program.functions[edge.caller]
        site = edge.call.site
        hops.append(
            Hop(
                display(caller.file.path),
                site.line,
                site.column,
                caller.display_name,
                site.text,
                edge.confidence,
            )
        )
    return (*hops, sink_hop(program, chain.sink, display))


def sink_hop(program: Program, ref: SinkRef, display: Callable[[str], str]) -> Hop:
    info = program.functions[ref.function]
    site = ref.sink.site
    return Hop(display(info.file.path), site.line, site.column, info.display_name, site.text)
