"""The demand of the reset rules (LL101-LL105): which files to parse next to follow the chains
that reach a DataLoader iterator reset, found backwards from the sinks.

Each round: find every function that reaches a demanding sink; ask for the files that could call
one of them (they mention its name and, for a method, its class's name or a subclass's name),
the files defining bases of parsed classes, the modules that parsed code imports a
sink-reaching name through (re-exports), and those an ``__iter__`` imports a reset-like name
from (LL104 must know whether scanned code defines it). A file that reaches a sink only
through an edge of unknown receiver type (matched by method name alone) is therefore not pulled
in unless it names the class, or the method's name is distinctive enough (``next_epoch_itr``)
to be guessed; such edges can never make an error-severity finding anyway.
"""

from __future__ import annotations

from lintloader.analysis.context import Demand, TokenGroup
from lintloader.analysis.reachability import is_iter_root, is_real_sink
from lintloader.domain.torch_api import EPOCH_HOOKS, SHUTDOWN_METHOD, SINK_ATTRIBUTE
from lintloader.finding.findings import Confidence
from lintloader.link.call_kinds import RESET_LIKE_CALLS
from lintloader.link.program import FunctionInfo, Program
from lintloader.link.receiver_names import is_distinctive
from lintloader.scan.read.tokens import (
    function_groups,
    method_group,
    package_scope,
    shape,
    whole_word,
)
from lintloader.summary.model import SinkSite

_SINK = SINK_ATTRIBUTE.encode()
_SPELLINGS = (b"." + _SINK, b'"' + _SINK + b'"', b"'" + _SINK + b"'")  # setattr(x, "_iterator")
# The seeds of LL101-LL103 and LL105: files that can hold a sink. A `_shutdown_workers`, or a
# reset written on one line (the `iterator-reset` shape of scan/read/shapes.py), or any mention
# of `_iterator` with a loader in sight (a reset split over lines, an annotated one). A class's
# own `self._iterator = iter(...)` in a file with no loader (jinja2's LoopContext,
# more_itertools) is none of them.
SINK_SEEDS = (
    (SHUTDOWN_METHOD.encode(),),
    *((spelling, shape("iterator-reset")) for spelling in _SPELLINGS),
    *((spelling, b"oader") for spelling in _SPELLINGS),
)
# LL104's seeds: an `__iter__` that calls a reset (the `iter-reset` shape) in a file that
# mentions a loader ("oader": DataLoader, loader, Loader).
ITER_RESET_SEEDS = tuple(
    (b"def __iter__", call, b"oader", shape("iter-reset")) for call in (b".reset", b"._reset")
)


def reset_demand(program: Program) -> Demand:
    """The files and modules the reset chains need next (the hook of LL101-LL105)."""
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
        for holder in _holders(program, class_key, name):
            klass = program.classes[holder]
            groups.add(method_group(name, klass.klass.name, klass.file.module))
        if is_distinctive(name):  # callers that cannot type the receiver may guess it
            groups.add((whole_word(name), package_scope(info.file.module)))
    modules = _modules_to_follow(program, reaching) | _reset_definers(program)
    return Demand(frozenset(groups), frozenset(modules))


def _holders(program: Program, class_key: str, name: str) -> set[str]:
    """Classes whose instances' ``name()`` can land in ``class_key``'s: the class, its
    subclasses, and the ancestors that define ``name`` too (a call typed as the base, in the
    base's own package, dispatches to the override)."""
    found = {class_key, *program.subclasses.get(class_key, ())}
    for ancestor in program.mro(class_key)[1:]:
        if name in program.classes[ancestor].klass.methods:
            found.add(ancestor)
    return found


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def demanding_sinks(program: Program) -> list[str]:
    """Functions holding a reset that can make a warning or an error: a real sink (not a
    class's own ``self._iterator``) that does not depend on ``persistent_workers`` being off.
    Guarded resets and chains through guessed edges are info-level leads: they are reported
    when the files are parsed anyway, but never make more files worth parsing."""
    return [
        info.key
        for info, sinks in program.gathered(_sinks_of)
        if any(not sink.persistent_guard and is_real_sink(program, info, sink) for sink in sinks)
    ]


def _sinks_of(info: FunctionInfo) -> list[SinkSite] | None:
    return info.function.sinks or None


def functions_reaching_sinks(program: Program) -> set[str]:
    """Keys of functions with a demanding sink, and of every function with a sure edge (or a
    guess of one class hierarchy, which can make a warning) into one."""
    frontier = demanding_sinks(program)
    reaching = set(frontier)
    while frontier:
        key = frontier.pop()
        for edge in program.edges_into(key, Confidence.MEDIUM):
            if edge.caller not in reaching:
                reaching.add(edge.caller)
                frontier.append(edge.caller)
    return reaching


def _reset_definers(program: Program) -> set[str]:
    """Dotted paths an ``__iter__`` imports a reset-like name from that is not parsed yet
    (``from pkg.state import reset_counters``): LL104 reports a reset-like call that no scanned
    code defines, so whether a scanned module defines it must be known."""
    paths: set[str] = set()
    for info, _ in program.gathered(_iter_root):
        for call in program.calls_of(info.key, RESET_LIKE_CALLS):
            if call.is_reference:
                continue
            symbol = program.resolve(info.file.module, call.target[:1])
            if symbol is not None and symbol.kind == "external":
                paths.add(".".join((symbol.key, *call.target[1:-1])))
    return paths


def _iter_root(info: FunctionInfo) -> bool | None:
    return True if is_iter_root(info) else None


def _owner_of_root(info: FunctionInfo) -> str | None:
    """The class of an ``__iter__``, an epoch hook or a function holding a sink (is the class
    a DataLoader? its bases tell), whose bases the analysis needs."""
    name = info.function.name
    if name == "__iter__" or EPOCH_HOOKS.match(name) or info.function.sinks:
        return info.class_key
    return None


def _modules_to_follow(program: Program, reaching: set[str]) -> set[str]:
    """Dotted paths not parsed yet that the analysis needs: bases of classes that own a root
    or a sink-reaching method (for the MRO), and re-exports that a call whose name could reach
    a sink resolves through."""
    names = {program.functions[k].function.name for k in reaching}
    owners = {program.functions[k].class_key for k in reaching}
    owners |= {class_key for _, class_key in program.gathered(_owner_of_root)}
    paths: set[str] = set()
    for class_key in owners - {None}:
        if class_key is None:  # never: told apart for the type checker
            continue
        paths.update(program.external_bases(class_key))
    for info, call in program.calls_named(names):
        symbol = program.resolve(info.file.module, call.target[:1])
        if symbol is not None and symbol.kind == "external":
            paths.add(symbol.key)
    return paths
