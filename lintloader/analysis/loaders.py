"""Shared by the user-code rules LL201-LL205: which calls construct a real DataLoader (or a
Lightning Trainer), what their worker settings are, and where they run.

Facts come from ``FileSummary.loaders`` (``summary/dataloaders/``); names resolve
through the linked :class:`~lintloader.link.program.Program`, so ``DataLoader`` is torch's only when
the import says so (``torch.utils.data.DataLoader``, ``torch.utils.data.dataloader.DataLoader``,
an alias of either, or a scanned subclass).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import NamedTuple

from lintloader.analysis.context import Demand
from lintloader.analysis.torch_classes import is_dataloader_class
from lintloader.domain.torch_api import (
    DATALOADER_PATHS,
    GET_ITERATOR_METHOD,
    NUM_WORKERS_POSITION,
    POOL_ITERATOR_CLASS,
    POOL_ITERATOR_PATHS,
    TRAINER_PATHS,
)
from lintloader.domain.torch_api import (
    DATALOADER_STAR_SOURCES as _STAR_SOURCES,
)
from lintloader.domain.torch_api import (
    TRAINER_MODULES as _TRAINER_MODULES,
)
from lintloader.finding.findings import Confidence, Hop
from lintloader.link.arguments import Binding, bind_loader_call
from lintloader.link.program import FunctionInfo, Program
from lintloader.scan.read.tokens import function_groups, method_group
from lintloader.summary.dataloaders import RETURNED
from lintloader.summary.model import (
    Argument,
    CallContext,
    Dotted,
    FunctionFacts,
    LoaderCall,
    Site,
    TrainerCall,
)


class Workers(enum.Enum):
    """What ``num_workers`` can be."""

    ZERO = "zero"  # a literal 0, or missing on torch's own DataLoader (default 0)
    POSITIVE = "positive"  # a literal > 0, or ``max(1, n)``
    UNKNOWN = "unknown"  # an expression that may be 0 (``args.workers``)


class LoaderSite(NamedTuple):
    """A DataLoader construction: the call, its function and the function's facts. ``pool``:
    not a DataLoader but a worker pool started by hand (``_MultiProcessingDataLoaderIter(self)``,
    ``self._get_iterator()`` in a DataLoader subclass)."""

    info: FunctionInfo
    facts: FunctionFacts
    call: LoaderCall
    subclass: bool  # a scanned subclass: its signature may differ from DataLoader's
    pool: bool = False
    pinned_zero: bool = False  # a subclass whose ``__init__`` passes up 0 workers, written or
    # defaulted (:func:`pins_no_workers`)

    @property
    def key(self) -> str:
        return self.info.key

    @property
    def num_workers(self) -> Argument | None:
        found = self.call.keyword("num_workers")
        if found is None and not self.subclass:
            found = self.call.positional(NUM_WORKERS_POSITION)
        return found

    @property
    def workers(self) -> Workers:
        if self.pinned_zero:
            return Workers.ZERO
        argument = self.num_workers
        if argument is None:
            if self.subclass or self.call.has_star_kwargs:
                return Workers.UNKNOWN
            return Workers.ZERO
        if argument.is_literal:
            value = argument.literal
            return Workers.POSITIVE if isinstance(value, int) and value > 0 else Workers.ZERO
        if argument.lower_bound is not None and argument.lower_bound > 0:
            return Workers.POSITIVE
        return Workers.UNKNOWN

    @property
    def persistent(self) -> Argument | None:
        return self.call.keyword("persistent_workers")

    @property
    def persistent_true(self) -> bool:
        """``persistent_workers=True``, or a parameter that defaults to True."""
        found = self.persistent
        if found is None or found.literal is not True:
            return False
        return found.is_literal or found.from_default

    @property
    def persistent_with_workers(self) -> bool:
        """``persistent_true``, or ``persistent_workers=<num_workers> > 0`` (the guard the fixes
        write): persistent whenever the loader has workers."""
        found, workers = self.persistent, self.num_workers
        guard = workers is not None and found is not None and found.text == f"{workers.text} > 0"
        return self.persistent_true or guard

    @property
    def persistent_off(self) -> bool:
        """``persistent_workers`` missing or a literal false value."""
        found = self.persistent
        return found is None or (found.is_literal and not found.literal)


def facts_of(info: FunctionInfo) -> FunctionFacts | None:
    loaders = info.file.loaders
    return loaders.facts(info.function.qualname) if loaders is not None else None


def resolves_to_dataloader(program: Program, info: FunctionInfo, target: Dotted) -> bool | None:
    """True for torch's DataLoader (or a scanned wrapper class that hands its whole signature
    to one), None for a scanned subclass, False for anything else."""
    resolved = _resolves_plain(program, info, target)
    if resolved is not False:
        return resolved
    symbol = program.resolve(info.file.module, target)
    if symbol is None or symbol.kind != "class":
        return False
    return program.lookup_method(symbol.key, "__init__") in forwarding_inits(program)


def _resolves_plain(program: Program, info: FunctionInfo, target: Dotted) -> bool | None:
    """:func:`resolves_to_dataloader` without the forwarding wrappers."""
    symbol = program.resolve(info.file.module, target)
    if symbol is None:
        stars = set(info.file.star_imports) & _STAR_SOURCES
        return bool(stars and target == ("DataLoader",))
    if symbol.kind == "external":
        return symbol.key in DATALOADER_PATHS
    if symbol.kind == "class":
        if not is_dataloader_class(program, symbol.key):
            return _stands_in(program, symbol.key)
        is_torch = symbol.key.startswith("torch.utils.data") and symbol.key.endswith(":DataLoader")
        return True if is_torch else None
    return False


def _stands_in(program: Program, class_key: str) -> bool:
    """A class that also imports torch's DataLoader under its own name: the stand-in defined
    where the import fails (``try: from torch.utils.data import DataLoader`` / ``except
    ImportError: class DataLoader: ...``). Where torch is installed the import is the name."""
    module, _, qualname = class_key.partition(":")
    binding = program.files[module].imports.get(qualname) if module in program.files else None
    if binding is None or binding.name is None:
        return False
    found = program.resolve_path(f"{binding.module}.{binding.name}")
    return found is not None and found.kind == "external" and found.key in DATALOADER_PATHS


def forwarding_inits(program: Program) -> frozenset[str]:
    """Keys of the ``__init__(self, *args, **kwargs)`` methods that hand every argument, and
    nothing else, to torch's DataLoader (``self.loader = DataLoader(*args, **kwargs)``): a call
    of such a wrapper class is a DataLoader call with the same arguments (issue 29)."""
    return program.derived(_forwarding_inits)


def _forwarding_inits(program: Program) -> frozenset[str]:
    found = set()
    for info, facts in functions_building(program):
        if info.function.name != "__init__" or info.class_key is None:
            continue
        if any(
            _forwards_everything(info, call) and _resolves_plain(program, info, call.target) is True
            for call in facts.loader_calls
        ):
            found.add(info.key)
    return frozenset(found)


def _forwards_everything(info: FunctionInfo, call: LoaderCall) -> bool:
    """The call passes only ``**kwargs`` (and ``*args``) that are not named parameters: the
    function's own variadic parameters, unchanged (a filled dict would show its keys)."""
    stars = [a.star for a in call.arguments]
    if "**" not in stars or stars.count("**") > 1 or stars.count("*") > 1 or "" in stars:
        return False
    named = set(info.function.params)
    return all(a.text.isidentifier() and a.text not in named for a in call.arguments)


def loader_sites(program: Program) -> list[LoaderSite]:
    """Every DataLoader construction in the program, in a stable order (worked out once per
    program: five rules and the demand hook ask)."""
    return program.derived(_all_loader_sites)


def _all_loader_sites(program: Program) -> list[LoaderSite]:
    return list(_loader_sites(program))


def functions_with_facts(program: Program) -> Iterator[tuple[FunctionInfo, FunctionFacts]]:
    """Every function that has DataLoader facts, with them, in a stable order (by key).
    Kept over the selection's rounds: only the new files' functions are looked at."""
    yield from program.gathered(facts_of)


def functions_building(program: Program) -> tuple[tuple[FunctionInfo, FunctionFacts], ...]:
    """The :func:`functions_with_facts` that make a loader call (``facts.loader_calls``: a
    DataLoader, a subclass, a pool started by hand), with their facts, by key: most functions
    of a file with facts make none. Kept over the selection's rounds like them."""
    return program.gathered(_building_facts)


def _building_facts(info: FunctionInfo) -> FunctionFacts | None:
    facts = facts_of(info)
    return facts if facts is not None and facts.loader_calls else None


def _loader_sites(program: Program) -> Iterator[LoaderSite]:
    for info, facts in functions_building(program):
        for call in facts.loader_calls:
            resolved = resolves_to_dataloader(program, info, call.target)
            if resolved is None and never_initialised(program, info, call):
                continue
            if resolved is not False:
                pinned = resolved is None and pins_no_workers(program, info, call)
                yield LoaderSite(info, facts, call, subclass=resolved is None, pinned_zero=pinned)


def never_initialised(program: Program, info: FunctionInfo, call: LoaderCall) -> bool:
    """A scanned DataLoader subclass whose ``__init__`` chain stops before torch's: some
    ``__init__`` on the way calls no parent ``__init__`` (catalyst's ``ILoaderWrapper`` keeps
    the loader it wraps in ``self.origin``). ``DataLoader.__init__`` never runs, so building
    one starts no worker pool: it is a wrapper, not a loader."""
    symbol = program.resolve(info.file.module, call.target)
    if symbol is None or symbol.kind != "class":
        return False
    init = program.lookup_method(symbol.key, "__init__")
    for _ in range(_INIT_DEPTH):
        init_info = program.functions.get(init) if init else None
        if init_info is None or init_info.class_key is None:
            return False  # torch's own, or code that is not read
        if not any(_chains_up(c.target) for c in program.calls_of(init_info.key)):
            return True
        init = program.lookup_method(init_info.class_key, "__init__", skip_self=True)
    return False


_INIT_DEPTH = 8


def _chains_up(target: Dotted) -> bool:
    """A call that may run a parent's ``__init__``: ``super().__init__``, ``Base.__init__``, or
    any ``super(...)`` (its attribute is not recorded)."""
    return target[-1] == "__init__" or target == ("super",)


def pins_no_workers(program: Program, info: FunctionInfo, call: LoaderCall) -> bool:
    """A scanned DataLoader subclass whose ``__init__`` hands ``super().__init__`` a literal
    ``num_workers=0`` (flair's ``DataLoader``: whatever its callers pass, no workers), or its
    own parameter that defaults to 0 (``num_workers=num_workers`` for ``num_workers: int = 0``)
    which ``call`` leaves out: no workers either."""
    symbol = program.resolve(info.file.module, call.target)
    init = (
        program.lookup_method(symbol.key, "__init__") if symbol and symbol.kind == "class" else None
    )
    init_info = program.functions.get(init) if init else None
    facts = facts_of(init_info) if init_info else None
    if init_info is None or facts is None or not _super_is_torch(program, init_info):
        return False
    supers = [c for c in facts.loader_calls if c.target == ("super()", "__init__")]
    left_out = bind_loader_call(call, init_info.function)
    return bool(supers) and all(
        _literal_zero(c.keyword("num_workers"))
        or _zero_default_left_out(c.keyword("num_workers"), left_out)
        for c in supers
    )


def _super_is_torch(program: Program, init: FunctionInfo) -> bool:
    """``super().__init__`` in ``init`` lands in torch's DataLoader: no scanned class after its
    own in the MRO defines ``__init__`` (one could map 0 to more workers), and torch's DataLoader
    is a base; or the next ``__init__`` is torch's own, read as context."""
    owner = init.class_key
    if owner is None:
        return False
    parent = program.lookup_method(owner, "__init__", skip_self=True)
    if parent is not None:
        return parent.startswith("torch.utils.data")
    return bool(program.external_bases(owner) & DATALOADER_PATHS)


def _literal_zero(argument: Argument | None) -> bool:
    return argument is not None and argument.is_literal and argument.literal == 0


def _zero_default_left_out(argument: Argument | None, call: Binding) -> bool:
    """``argument`` is a parameter (of the ``__init__`` that ``call`` runs) that defaults to 0,
    and ``call`` passes it neither by keyword nor by position, nor maybe in ``*``/``**``."""
    if argument is None or not argument.from_default or argument.literal != 0:
        return False
    return call.passes(argument.text) is False


def pool_sites(program: Program) -> list[LoaderSite]:
    """Worker pools started by hand outside torch: ``_MultiProcessingDataLoaderIter(...)`` and
    ``self._get_iterator()`` in a DataLoader subclass (torch's own ``__iter__`` only calls it
    once when the workers persist). Only LL202 asks: these are no DataLoader to configure."""
    return program.derived(_all_pool_sites)


def _all_pool_sites(program: Program) -> list[LoaderSite]:
    return list(_pool_sites(program))


def _pool_sites(program: Program) -> Iterator[LoaderSite]:
    for info, facts in functions_building(program):
        if info.file.module.startswith("torch."):
            continue  # torch's own DataLoader is the implementation, not a use
        for call in facts.loader_calls:
            if call.target[-1] == POOL_ITERATOR_CLASS:
                symbol = program.resolve(info.file.module, call.target)
                dotted = symbol.key.replace(":", ".") if symbol is not None else ""
                if dotted in POOL_ITERATOR_PATHS:  # external, or torch's parsed as context
                    yield LoaderSite(info, facts, call, subclass=True, pool=True)
            elif _own_get_iterator(program, info, call):
                yield LoaderSite(info, facts, call, subclass=True, pool=True)


def _own_get_iterator(program: Program, info: FunctionInfo, call: LoaderCall) -> bool:
    self_name, class_key = info.function.self_name, info.class_key
    if call.target != (self_name, GET_ITERATOR_METHOD) or class_key is None:
        return False
    if any(c.persistent for c in call.context.conditions):
        return False  # torch's own shape: a fresh pool only when the workers do not persist
    return is_dataloader_class(program, class_key)


def is_trainer(program: Program, info: FunctionInfo, call: TrainerCall) -> bool:
    symbol = program.resolve(info.file.module, call.target)
    if symbol is None:
        return False
    if symbol.kind == "external":
        return symbol.key in TRAINER_PATHS
    if symbol.kind != "class":
        return False
    for key in program.mro(symbol.key):
        module, _, qualname = key.partition(":")
        if qualname == "Trainer" and module.startswith(_TRAINER_MODULES):
            return True
    return bool(program.external_bases(symbol.key) & TRAINER_PATHS)


def loop_depth(facts: FunctionFacts, index: int) -> int:
    return len(facts.loop_chain(index))


def persistent_guarded(facts: FunctionFacts, context: CallContext) -> bool:
    depth = loop_depth(facts, context.loop) if context.loop >= 0 else 0
    return any(c.persistent and c.loop_depth >= depth for c in context.conditions)


def hop(
    display: Callable[[str], str],
    info: FunctionInfo,
    site: Site,
    action: str = "",
    verb: str = "",
) -> Hop:
    return Hop(
        display(info.file.path),
        site.line,
        site.column,
        info.display_name,
        action or site.text,
        Confidence.HIGH,
        verb=verb,
    )


def loader_bound_to(sites: list[LoaderSite], info: FunctionInfo, name: Dotted) -> LoaderSite | None:
    """The DataLoader a dotted name holds, when it is assigned from one: in the same function,
    at module level of the same file, or (``self.x``) in any method of the same class."""
    same_file = [s for s in sites if s.info.file is info.file]
    for site in same_file:
        if site.info.key == info.key and site.call.bound_to == name:
            return site
    self_name = info.function.self_name
    if self_name and len(name) == 2 and name[0] == self_name:
        for site in same_file:
            other = site.info.function
            if (
                other.class_qualname == info.function.class_qualname
                and other.self_name
                and site.call.bound_to == (other.self_name, name[1])
            ):
                return site
    if len(name) == 1:
        for site in same_file:
            if site.info.function.kind == "module" and site.call.bound_to == name:
                return site
    return None


def is_dataloader_name(program: Program, info: FunctionInfo, name: Dotted) -> bool:
    """``name`` is annotated or typed as a DataLoader (``loader: DataLoader``)."""
    type_ = info.function.local_types.get(name[0]) if len(name) == 1 else None
    if not type_:
        return False
    return resolves_to_dataloader(program, info, type_) is not False


def returned(site: LoaderSite) -> bool:
    bound = site.call.bound_to
    return bound == RETURNED or (bound is not None and bound in site.facts.returns)


# How many call levels above a DataLoader construction demand-driven parsing looks for a loop
# or an epoch hook. Deeper chains are still reported when their files are parsed anyway.
DEMAND_DEPTH = 3


def constructors_reaching(program: Program) -> set[str]:
    """Keys of functions that construct a DataLoader with workers, and of the functions with
    a sure call edge into one, up to ``DEMAND_DEPTH`` levels (the call-graph side of LL202)."""
    makers = {
        s.key
        for s in loader_sites(program)
        if s.workers is not Workers.ZERO and (s.call.context.loop < 0 or _per_item(s))
    }
    reaching, frontier = set(makers), list(makers)
    for _ in range(DEMAND_DEPTH):  # breadth-first, one call level a step
        frontier = [
            edge.caller
            for key in frontier
            for edge in program.edges_into(key, Confidence.HIGH)
            if edge.caller not in reaching
        ]
        reaching.update(frontier)
    return reaching


def _per_item(site: LoaderSite) -> bool:
    """Built in a loop over items, not epochs or a ``while`` (one loader per dataset): the
    whole function may run again per evaluation, so its callers are worth reading."""
    chain = site.facts.loop_chain(site.call.context.loop)
    return not any(loop.epoch_like or loop.kind == "while" for loop in chain)


def loader_demand(program: Program) -> Demand:
    """Files worth parsing next: those that could call a function that builds a DataLoader
    (they mention its name, with its class's name for a method) or build a scanned subclass.
    Worked out once for the files linked so far: LL201's hook asks it too, in the same round."""
    return program.derived(_loader_demand)


def _loader_demand(program: Program) -> Demand:
    groups: set[tuple[bytes, ...]] = set()
    for key in constructors_reaching(program):
        info = program.functions[key]
        function = info.function
        if function.kind == "module":
            continue
        class_key = info.class_key
        if class_key is None:
            groups |= function_groups(function.name, info.file.module)
        elif class_key in program.classes:
            holder = program.classes[class_key]
            groups.add(method_group(function.name, holder.klass.name, holder.file.module))
    for key, class_info in program.classes.items():
        if not class_info.klass.bases or key.startswith("torch."):
            continue  # a class with no base is no DataLoader (torch's own is torch's)
        if is_dataloader_class(program, key):
            groups.add(method_group("__init__", class_info.klass.name, class_info.file.module))
    return Demand(frozenset(groups))
