"""## dataloader-built-every-epoch (LL202)

### What it does
Finds a `DataLoader` with workers (`num_workers` not 0; a subclass whose `__init__` hands
torch's DataLoader a `num_workers` parameter that defaults to 0 has none when the call leaves it
out) that is constructed inside a loop body, or in a function that runs once per iteration of a
loop, once per epoch or once per pass over a loader: it is reached, through sure call edges,
from a call inside a `for`/`while` body, from a per-epoch hook (`on_*_epoch_start`, a
Lightning-style loop's `run`/`advance`/`reset`) or from an `__iter__`/`__next__`. The finding is
reported where the loop (or hook) makes the call, with the chain down to the construction (a
chain that enters an override in another distribution is placed in that distribution: see
`analysis/placement.py`).

Every loop that reaches the construction counts, not only the nearest: a call made once before
the training loop (`if args.eval_on_start: self.evaluate()`) does not hide the same call inside
it. The finding is anchored on the loop that runs most often (a step or batch loop, then an
epoch loop, before a loop over a few evaluation sets or splits); the other loops are listed as
"also reached from".

Also a construction: a DataLoader class passed as a value (`iterator_train=DataLoader` kept in
`self.iterator_train` and called later, `loader_cls = DataLoader`), and a worker pool started
by hand in a DataLoader subclass or wrapper (`_MultiProcessingDataLoaderIter(self)`, or
`self._get_iterator()` outside torch's `persistent_workers` branch), and a class picked from a
tuple, list or dict of classes and called (`_ITERATORS[self.num_workers == 0]` called on
`self` in `__iter__`, `LOADERS[kind]` called with `num_workers=8`). Chains are followed to
any length.

In a project scan, the frameworks a project's classes subclass are read from the environment
(the running interpreter's site directories) as context: the framework's loop reaches the
user's override (`get_eval_dataloader` of a `Trainer` subclass), and the finding is placed in
the user's file.

### Why is this bad?
Every new DataLoader starts a new pool of worker processes the first time it is iterated:
fork or spawn, import the dataset code, re-open files, warm up caches. `persistent_workers=True`
cannot help, since the loader that owns the pool is thrown away with the loop iteration.

**Cost** ([cost model](../concepts.md#the-cost-model)): a new pool of `num_workers` processes
each time the build runs: every step, every evaluation, every K steps or once per epoch, as the
message says. *Defeated* (a bug) when the loader asks for persistent workers or the build runs
every step; *avoidable* (torch's default, one pool per pass) otherwise; once plus once per
failed attempt in a bounded retry loop.

### Example
```python
for epoch in range(epochs):
    loader = DataLoader(dataset, batch_size=64, num_workers=8)   # LL202
    for batch in loader:
        ...
```
Use instead:
```python
loader = DataLoader(dataset, batch_size=64, num_workers=8, persistent_workers=True)
for epoch in range(epochs):
    for batch in loader:
        ...
```

### Fix safety
`hoist-loader-call` (safe): builds a loader made at every iteration once before the loop,
persistent: `loader = DataLoader(...)` or `loader = make_loader(args)` moves there, and a call the
loop iterates (`for batch in DataLoader(...)`, `for batch in self.train_loader()`) is bound to a
name first; through helpers and methods that return the loader. `keep-eval-loader` (safe): a
getter method that builds the loader at every call (`get_eval_dataloader(eval_dataset=None)`
called from `evaluate()`) keeps it on the instance, keyed by its dataset, persistent, and returns
the kept one. `pass-loader-in` (safe): a function or a method of the caller's class called from
the loop that builds (itself or through a getter) and consumes its own loader (`validate(...)`
every N steps, `self.train_epoch()` every epoch) gets it built once in the caller, persistent,
and passed in (`val_loader=None` is added, and the function builds its own only when given
none). `keep-iter-loader` (safe): a wrapper's `__iter__` builds the loader on the first pass and
keeps it (`if self._loader is None:`), persistent. Each is refused, with the reason, where the
loader built once could differ from the one built each time: what it reads is bound in the
loop, or the loop (or another method of the class) sets per-epoch state on it (`set_epoch`, an
attribute assigned, a method called), which persistent workers would not see; a getter's loader
is kept only when it reads nothing but its dataset and attributes no method changes.

`hoist-dataloader` (unsafe): moves the assignment `name = DataLoader(...)` out of the loop, to
just before it (with the comment lines above it), when no argument reads a name the loop binds
or assigns, and makes the loader persistent when the loop uses it again: `persistent_workers=True`
when `num_workers > 0` is certain, `persistent_workers=<num_workers> > 0` otherwise. One pool
for the whole loop. Refused, with the reason, when that cannot be written (`**kwargs`, an
expression already given). Unsafe because the arguments may still depend on state the loop
mutates (a dataset object changed in place, a sampler seeded per epoch).

`cache-loader-per-dataset` (unsafe): an evaluation function that builds one loader per
evaluation set at every call (`for item in eval_sets: loader = DataLoader(item.data, ...)`), or
one over the dataset it is given (a dataset the caller keeps in a dict or a module global), keeps
each loader in a dict of its module keyed by the dataset's identity, persistent, built on first
use (`if id(item.data) not in _run_eval_loaders:`); the statements that only prepare its
arguments (a sampler) move into that `if`. Unsafe because every dataset's loader keeps its
workers and their memory for the rest of the run, and a dataset changed in place afterwards (or
another batch size at a later call) is not seen. Refused when the dataset is plainly new at each
call (bound in the function, made by a call at every pass of the caller's loop, or an item of
sets the function binds).

`keep-builder-loader` (unsafe): the same one loader per evaluation set, asked of a builder in
another file (detectron2's `do_test` calling `build_detection_test_loader(cfg, dataset_name)`
for each test set): the builder gains `persistent_workers=False`, handed to its `DataLoader` only
when it has workers, and the caller keeps each loader in a dict of its module keyed by the set
(`if dataset_name not in _do_test_loaders:`), asking for a persistent one. Unsafe for the same
reasons, and the builder's signature changes. Refused when the keyword could not reach the
construction (`**kwargs`, a decorator that does not hand keywords on, a loader built in a loop
of the builder) or the kept loader could differ (an argument bound in the loop, a draw at each
build).

`keep-builder-result` (unsafe): a function called at every evaluation asks a builder in another
file for its loaders once per call, outside any loop of its own (SSD's `do_evaluation` calling
`make_data_loader(cfg, is_train=False, distributed=distributed)`, which builds one loader per
test set in a loop and returns the list): the builder gains the same keyword, and the caller
keeps all it returns in a dict of its module keyed by the identity of the arguments it was given
(`if (id(cfg), id(distributed)) not in _do_evaluation_loaders:`), asking for persistent loaders.
Unsafe for the same reasons; an argument changed in place between calls is not seen. Refused
when an argument is neither a parameter of the caller nor a literal (a new object at each call).

### Severity
From the cost model ([concepts](../concepts.md#the-cost-model)), and the message says what the
finding costs ("a new pool of 4 workers every step", "every evaluation", "every 500 steps",
"once per epoch: avoidable with one loader and persistent_workers=True"):

- warning: a *defeated* pool: the loader asks for `persistent_workers=True` (or may: an
  expression such as `args.persistent`, `**kwargs`, a factory named in `extend-loaders`, a
  scanned subclass) and is rebuilt, so its workers are thrown away; or a loader rebuilt in a
  step or batch loop (a pool per step, persistent or not);
- info: an *avoidable* pool: a non-persistent loader rebuilt once per epoch, per evaluation
  or every K steps (a build, or a call on the way to it, under `if step % K == 0`) starts no
  more pools than torch's default does for a loader kept (LL204, the same severity);
- info: a build in a bounded retry loop, named so (`for attempt in range(3)`) or shaped so (a
  `for` whose body tries the run and leaves with `break` once it worked), persistent or not:
  it builds once, plus once per failed attempt, and the message says so;
- one level up (info to warning, warning to error) when each worker starts as a fresh
  interpreter: start method `spawn` or `forkserver`, from `multiprocessing_context` or the
  default of the Python the project targets (the lowest `requires-python` of the nearest
  `pyproject.toml`, else the running Python: `forkserver` on Linux from Python 3.14, `spawn` on
  macOS and Windows); not for a retry or a fixed set of items. A context chosen by a condition
  (`"spawn" if flag else None`) raises it only when every branch is costly; else the message
  says "and under spawn when flag" ([concepts](../concepts.md#the-cost-model)).

Info, whatever the cost, when the construction is behind a one-shot check in the loop (`if loader is
None:`), only runs when `persistent_workers` is off, or when its arguments change with the loop (a
per-fold dataset: a new loader may be intended), also when the loop's value reaches them through
locals and calls (`files = glob(split)`, `load_data(files)`, a wrapper's `*args` or `**kwargs`
handed to DataLoader), and when the loop is in a set-up function (`setup*`, `build*`, `prepare*`,
`create*`, `init*`, `__init__`: one loader per item, built once), when a function on the way is
passed on as a value instead of called (`Process(target=work)` per GPU: one run per process), or
over a fixed set of items written in it (`for ds in (train_ds, val_ds)`, or a local only ever bound
to such lists: `options = [False] if xla else [True, False]`) with no ordinary loop around it. Only
a test of the very value a branch keeps is a one-shot check: both branches of an ordinary `if` (`if
self.collate_fn is None:`, `if self.curriculum:`) build a pool each time, and a test of a local in a
function called per epoch (`if loader is None: loader = DataLoader(...)`, the caller passing no
loader) is None again at every call. A function that builds its loader once and keeps it (`if
self._loader is None:`, `if key not in self._cache:`, `self._cache.setdefault(key, ...)`,
`@functools.cache`/`lru_cache`) is not reported, and neither is a call into a builder made under
such a test (`if self._loader is None: self._loader = self._make()`), unless that test sits in a
branch on `persistent_workers` (then the usual persistent-branch note applies). Nor is a
construction that runs only while a parameter is None (`if dataloader is None: dataloader =
make_loader()`, `dataloader = dataloader or make_loader()`, the `else` of `if model is not None:`,
or of `if training:` after `training = model is not None`) for a call that passes a value for it
(`evaluate(model, dataloader=val_loader)`); a call that passes nothing, `None`, or a name that may
still hold None (a local or a `self.` attribute bound to None somewhere) reaches it. Calls matched
by method name only are never followed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from lintloader.analysis import built_once
from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.declared_loaders import declared_loader_sites
from lintloader.analysis.framework_loaders import framework_built
from lintloader.analysis.frameworks import builder_tokens, root_keys
from lintloader.analysis.loader_cost import SiteCost, loop_cost, place_cost
from lintloader.analysis.loaders import (
    LoaderSite,
    Workers,
    hop,
    loader_demand,
    loader_sites,
    persistent_guarded,
    pool_sites,
)
from lintloader.analysis.override_demand import override_demand
from lintloader.analysis.repetition import Place, loop_frequency, own_loop, places
from lintloader.domain.cost import Kind
from lintloader.domain.torch_api import LOADER_TOKENS, POOL_TOKENS
from lintloader.finding.findings import Finding, Hop, Severity
from lintloader.link.program import FunctionInfo
from lintloader.rules.base import Rule
from lintloader.summary.model import LoopInfo, Site
from lintloader.text.wording import counted

FIX = "hoist-dataloader"
HOIST_CALL = "hoist-loader-call"  # safe: refused where what the loader reads changes per pass
KEEP = "keep-iter-loader"
PASS_IN = "pass-loader-in"
KEEP_EVAL = "keep-eval-loader"
CACHE = "cache-loader-per-dataset"  # unsafe: every dataset's loader keeps its workers
SAMPLER = "hoist-loader-sampler"  # safe: the sampler built in the loop moves with the loader
BUILDER = "keep-builder-loader"  # unsafe: the same, through a builder in another file
RESULT = "keep-builder-result"  # unsafe: all a builder in another file returns, kept per call
PERSISTENT_NOTE = " (only when persistent_workers is off)"
DEPENDENT_NOTE = " (its arguments change with the loop: a new loader may be intended)"
PASSED_NOTE = " (a function on the way is passed as a value: how often it runs is up to the callee)"
SETUP_NOTE = " (a loop in a set-up function: probably one loader per item, built once)"
FIXED_SET_NOTE = " (a loop over a fixed set of items: probably one loader per item)"
ONCE_NOTE = " (behind a one-shot check: probably built once)"


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    program = ctx.program
    sites = [s for s in loader_sites(program) if s.workers is not Workers.ZERO]
    sites += declared_loader_sites(program, ctx.vocabulary.loaders)
    sites += framework_built(program).sites
    for site in (*sites, *pool_sites(program)):
        if site.persistent_with_workers and built_once.in_kept_block(
            site.facts, site.call.site.line, site.call.context.loop
        ):
            continue  # built once per key, kept beyond the call, persistent: one pool each
        if site.call.context.loop >= 0:
            yield _per_item_again(ctx, site) or _in_loop(ctx, site)
        elif not built_once.guarded(site.facts, site.call.context):
            finding = _repeated(ctx, site)
            if finding is not None:
                yield finding


def _what(site: LoaderSite) -> str:
    return "starts a new worker pool" if site.pool else "builds a DataLoader with workers"


def _build_hop(ctx: AnalysisContext, site: LoaderSite) -> Hop:
    return hop(ctx.display, site.info, site.call.site, verb="starts" if site.pool else "builds")


def _in_loop(ctx: AnalysisContext, site: LoaderSite) -> Finding:
    call = site.call
    place = own_loop(ctx.program, site)
    loop = place.loop
    assert loop is not None  # a construction's own loop
    note = _note(site, place)
    movable = not (place.dependent or built_once.guarded(site.facts, call.context) or site.pool)
    hoistable = movable and call.bound_to is not None and len(call.bound_to) == 1
    what = "a worker pool started" if site.pool else "DataLoader with workers built"
    cost = _defeated_by_hand(site, loop_cost(ctx, site, loop, call.context.conditions))
    return Finding(
        code=RULE.code,
        severity=Severity.INFO if note else cost.severity,
        path=ctx.display(site.info.file.path),
        line=call.site.line,
        column=call.site.column,
        end_line=call.site.end_line,
        message=f"{what} inside `{loop.header}` (line {loop.line}): {cost.phrase}{note}",
        chain=(_loop_hop(ctx, site.info, loop), _build_hop(ctx, site)),
        fixes=(HOIST_CALL, FIX) if hoistable else (HOIST_CALL,) if movable else _cache(site, place),
    )


def _per_item_again(ctx: AnalysisContext, site: LoaderSite) -> Finding | None:
    """One loader per item of a loop (each item its own loader: info on its own), in a
    function that callers run again and again over the same items (an evaluation every N
    steps): every item's loader is rebuilt at every call, reported where the callers repeat
    it."""
    facts, call = site.facts, site.call
    index = call.context.loop
    own = own_loop(ctx.program, site)
    if not (own.dependent or own.fixed) or built_once.guarded(facts, call.context) or own.setup:
        return None
    if persistent_guarded(facts, call.context):
        return None
    if any(loop_frequency(loop) > 2 for loop in facts.loop_chain(index)):
        return None  # a step or epoch loop of its own: the loop is the place
    again = _repeated(ctx, site)
    if again is None or again.message.endswith(PASSED_NOTE) or SETUP_NOTE in again.message:
        return None
    loop = site.facts.loops[site.call.context.loop]
    at = _loop_hop(ctx, site.info, loop)
    items = f" (one per item of `{loop.header}` at {at.path}:{at.line}, the same items each call)"
    chain = (*again.chain[:-1], at, again.chain[-1])
    return replace(again, message=again.message + items, chain=chain)


def _note(site: LoaderSite, place: Place) -> str:
    """Why a construction run again at ``place`` may be meant (info), in one order for a loop
    of its own function and for a loop, hook or ``__iter__`` of a caller; "" for none."""
    context = site.call.context
    if persistent_guarded(site.facts, context) or place.persistent_guard:
        return PERSISTENT_NOTE
    if built_once.guarded(site.facts, context):
        return ONCE_NOTE
    if place.dependent:
        return DEPENDENT_NOTE
    if place.passed:
        return PASSED_NOTE
    if place.setup:
        return SETUP_NOTE
    if place.fixed:
        return FIXED_SET_NOTE
    return ""


def _loop_hop(ctx: AnalysisContext, info: FunctionInfo, loop: LoopInfo) -> Hop:
    site = Site(loop.line, loop.column, loop.header, loop.line, loop.line)
    return hop(ctx.display, info, site, verb="loop")


def _repeated(ctx: AnalysisContext, site: LoaderSite) -> Finding | None:
    """A construction outside any loop of its function, run repeatedly by its callers: anchored
    on the place that runs it most often, the other places listed as "also reached from"."""
    roots = root_keys(ctx.program, ctx.vocabulary)
    found = places(ctx.program, site, roots)
    if not found:
        return None
    best = found[0]
    hops = _place_hops(ctx, best)
    hops.append(_build_hop(ctx, site))
    first = next((h for h in hops if h.verb != "loop"), hops[0])
    note = _note(site, best)
    calls = len(best.edges)
    via = f" through {counted(calls, 'call')}" if calls else ""
    build = hops[-1]
    cost = _defeated_by_hand(site, place_cost(ctx, site, best))
    effect = cost.phrase
    if best.kind == "iter":
        effect = f"again on every pass over it, whatever `persistent_workers` says: {effect}"
    return Finding(
        code=RULE.code,
        severity=Severity.INFO if note else cost.severity,
        path=first.path,
        line=first.line,
        column=first.column,
        message=(
            f"{best.describe()} {_what(site)}{via} (`{site.call.site.text}` at "
            f"{build.path}:{build.line}): {effect}{note}"
        ),
        chain=tuple(hops),
        also=tuple(_also_hop(ctx, place) for place in found[1:]),
        fixes=_place_fixes(best, note),
    )


def _place_fixes(place: Place, note: str) -> tuple[str, ...]:
    """A loop calls what builds the loader: hoist the call, keep it in the getter that builds
    it, or build it in the caller and pass it in; ``__iter__`` builds it: keep it."""
    if place.kind == "loop" and note == DEPENDENT_NOTE:
        return (CACHE, BUILDER)
    if note or place.passed:
        return ()
    if place.kind == "iter":
        return (KEEP,)
    return (
        (HOIST_CALL, KEEP_EVAL, PASS_IN, CACHE, BUILDER, RESULT)
        if place.kind == "loop" and place.loop is not None
        else ()
    )


def _cache(site: LoaderSite, place: Place) -> tuple[str, ...]:
    """A loader built from what its loop changes: one per item of the loop (an evaluation
    set), kept per dataset; one bound to a name from what the loop binds (a sampler), built
    once with it."""
    if not place.dependent or site.pool:
        return ()
    bound = site.call.bound_to is not None and len(site.call.bound_to) == 1
    return (SAMPLER, CACHE) if bound else (CACHE,)


def _defeated_by_hand(site: LoaderSite, cost: SiteCost) -> SiteCost:
    """A worker pool started by hand (outside torch's ``persistent_workers`` branch) throws
    persistence away whatever the loader asked for."""
    return cost._replace(kind=Kind.DEFEATED, rebuilt=False) if site.pool else cost


def _place_hops(ctx: AnalysisContext, place: Place) -> list[Hop]:
    hops: list[Hop] = []
    if place.loop is not None:
        hops.append(_loop_hop(ctx, place.caller, place.loop))
    for edge in place.edges:
        caller = ctx.program.functions[edge.caller]
        hops.append(hop(ctx.display, caller, edge.call.site, verb="calls"))
    return hops


def _also_hop(ctx: AnalysisContext, place: Place) -> Hop:
    site = place.edges[0].call.site if place.edges else None
    info = place.caller
    line, column = (site.line, site.column) if site else (info.function.line, 1)
    where = place.describe() + (f": {site.text}" if site else "")
    return hop(ctx.display, info, Site(line, column, where), verb="also reached from")


VALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
for epoch in range(3):
    for batch in loader:
        pass
""",
    # No workers: nothing to respawn.
    """
from torch.utils.data import DataLoader
for epoch in range(3):
    for batch in DataLoader(range(8)):
        pass
""",
    # Not torch's DataLoader.
    """
from mylib import DataLoader
for epoch in range(3):
    loader = DataLoader(range(8), num_workers=2)
""",
    # Built once per key and kept.
    """
from torch.utils.data import DataLoader

class Loaders:
    def __init__(self):
        self.cache = {}

    def get(self, key):
        return self.cache.setdefault(key, DataLoader(range(8), num_workers=2))

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.get("train"):
                pass
""",
)

INVALID = (
    """
from torch.utils.data import DataLoader
for epoch in range(3):
    loader = DataLoader(range(8), num_workers=2)
    for batch in loader:
        pass
""",
    """
from torch.utils.data import DataLoader

def make_loader():
    return DataLoader(range(8), num_workers=2)

def train():
    for epoch in range(3):
        for batch in make_loader():
            pass
""",
    """
import torch

class Model:
    def on_train_epoch_start(self):
        self.loader = torch.utils.data.DataLoader(range(8), num_workers=4)
""",
    # `__iter__` builds a new loader, and so a new worker pool, on every pass.
    """
from torch.utils.data import DataLoader

class Wrapper:
    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        return iter(DataLoader(self.dataset, num_workers=2, persistent_workers=True))
""",
)

RULE = Rule(
    code="LL202",
    name="dataloader-built-every-epoch",
    severity=Severity.WARNING,
    summary="a DataLoader with workers is constructed in a loop or once per epoch",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=(*LOADER_TOKENS, *POOL_TOKENS, *builder_tokens()),
    fixes=(HOIST_CALL, FIX, KEEP, PASS_IN, KEEP_EVAL, CACHE, SAMPLER, BUILDER, RESULT),
    valid=VALID,
    invalid=INVALID,
    demand=loader_demand,
    also_demand=(override_demand,),  # bases across distributions (shape 6 of issue 14)
)
