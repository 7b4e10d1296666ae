"""## dataloader-workers-not-persistent (LL204)

### What it does
Finds a `DataLoader` with workers (`num_workers` not 0) and without `persistent_workers=True`
that is used for more than one epoch: iterated by a loop nested in another loop (`for epoch ...:
for batch in loader:`), or `iter(loader)` at the head of a per-epoch block, or returned from a
Lightning `train_dataloader`/`val_dataloader` hook (Lightning iterates those every epoch).

### Why is this bad?
Without `persistent_workers=True`, each epoch's `iter(loader)` starts a new pool of worker
processes and the previous one is shut down at the end of the epoch. For datasets with an
expensive `__init__`, worker initialisation or large file handles this costs seconds per epoch.

**Cost** ([cost model](../concepts.md#the-cost-model)): an *avoidable* pool: a new pool of
`num_workers` processes once per epoch, which `persistent_workers=True` saves (with its caveats:
state set per epoch on the dataset never reaches persistent workers; the pool holds its memory
between passes).

### Example
```python
loader = DataLoader(dataset, batch_size=64, num_workers=8)    # LL204
for epoch in range(epochs):
    for batch in loader:
        ...
```
Use instead:
```python
loader = DataLoader(dataset, batch_size=64, num_workers=8, persistent_workers=True)
```

### Fix safety
`persistent-workers-stateless` (safe): the same edit, made only when the loop that runs the
epochs sets no per-epoch state (no `set_epoch` call, no attribute assigned on the dataset, the
loader or anything else the DataLoader call is given); otherwise it is refused, naming the
statement.
`add-persistent-workers` (unsafe): adds `persistent_workers=True` to the call
(`persistent_workers=<num_workers> > 0` when `num_workers` may be 0). Unsafe because
workers then keep their state between epochs: a dataset that changes between epochs in the main
process (curriculum, resampling) is no longer seen by the workers, and the worker pool holds
its memory while other loaders run.

### Severity
From the cost model ([concepts](../concepts.md#the-cost-model)): one pool per epoch is torch's
default, an *avoidable* pool, not a defect: info, like a non-persistent loader rebuilt per
epoch (LL202). Warning when each worker starts as a fresh interpreter (start method `spawn` or
`forkserver`, from `multiprocessing_context` or the default of the Python the project targets:
the lowest `requires-python` of the nearest `pyproject.toml`, else the running Python;
`forkserver` on Linux from Python 3.14, `spawn` on macOS and Windows; on every branch of a
context chosen by a condition, `"spawn" if flag else None`, else the message says under which
condition): every epoch then imports torch and the dataset code again in every worker. The
message says what it costs: "a new pool of 8 workers once per epoch: avoidable with
persistent_workers=True".
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.loader_cost import kept_cost
from lintloader.analysis.loaders import (
    LoaderSite,
    Workers,
    facts_of,
    hop,
    loader_bound_to,
    loader_demand,
    loader_sites,
    returned,
)
from lintloader.analysis.override_demand import override_demand
from lintloader.domain.torch_api import LIGHTNING_EPOCH_HOOKS
from lintloader.finding.findings import Finding, Hop, Severity
from lintloader.link.program import FunctionInfo
from lintloader.rules.base import Rule
from lintloader.summary.model import Site

FIX = "add-persistent-workers"
SAFE_FIX = "persistent-workers-stateless"


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    sites = [
        s
        for s in loader_sites(ctx.program)
        if s.workers is not Workers.ZERO and s.persistent_off and s.call.context.loop < 0
    ]
    if not sites:
        return
    uses = _epoch_uses(ctx, sites)
    for site in sites:
        use = uses.get(id(site))
        if use is None and site.info.function.name in LIGHTNING_EPOCH_HOOKS and returned(site):
            text = f"`{site.info.function.name}` returns it: Lightning iterates it every epoch"
            use = (site.info, Site(site.call.site.line, site.call.site.column, text))
        if use is None:
            continue
        call = site.call
        user, where = use
        cost = kept_cost(ctx, site)
        yield Finding(
            code=RULE.code,
            severity=cost.severity,
            path=ctx.display(site.info.file.path),
            line=call.site.line,
            column=call.site.column,
            end_line=call.site.end_line,
            message=f"DataLoader with workers is used every epoch ({where.text}): {cost.phrase}",
            chain=(
                hop(ctx.display, site.info, call.site, verb="builds"),
                _use_hop(ctx, user, where),
            ),
            fixes=(SAFE_FIX, FIX),
        )


def _use_hop(ctx: AnalysisContext, user: FunctionInfo, where: Site) -> Hop:
    """``loop for batch in loader`` for a loop; the hook's sentence for a Lightning hook."""
    if where.text.endswith(_EVERY_EPOCH):
        header = where.text[: -len(_EVERY_EPOCH)].strip("`")
        return hop(ctx.display, user, where, action=header, verb="loop")
    return hop(ctx.display, user, where, verb="returns")


_EVERY_EPOCH = " runs every epoch"


def _epoch_uses(
    ctx: AnalysisContext, sites: list[LoaderSite]
) -> dict[int, tuple[FunctionInfo, Site]]:
    """For each loader site (by id): the function and place that iterates it every epoch."""
    found: dict[int, tuple[FunctionInfo, Site]] = {}
    files = {id(s.info.file) for s in sites}
    for info in ctx.program.functions.values():
        if id(info.file) not in files:
            continue
        facts = facts_of(info)
        if facts is None:
            continue
        for loop in facts.loops:
            if loop.iterable is None or loop.parent < 0:
                continue
            loader = loader_bound_to(sites, info, loop.iterable)
            if loader is not None:
                text = f"`{loop.header}`{_EVERY_EPOCH}"
                site = Site(loop.line, loop.column, text, loop.line, loop.line)
                found.setdefault(id(loader), (info, site))
    return found


VALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
for epoch in range(3):
    for batch in loader:
        pass
""",
    # Used once.
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2)
for batch in loader:
    pass
""",
    # No workers.
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8))
for epoch in range(3):
    for batch in loader:
        pass
""",
)

INVALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2)
for epoch in range(3):
    for batch in loader:
        pass
""",
    """
from torch.utils.data import DataLoader

class Model:
    def train_dataloader(self):
        return DataLoader(range(8), num_workers=4)
""",
)

RULE = Rule(
    code="LL204",
    name="dataloader-workers-not-persistent",
    severity=Severity.INFO,
    summary="a DataLoader with workers is used every epoch without `persistent_workers=True`",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=((b"DataLoader", b"num_workers"),),
    fixes=(SAFE_FIX, FIX),
    valid=VALID,
    invalid=INVALID,
    demand=loader_demand,
    also_demand=(override_demand,),  # bases across distributions (shape 6 of issue 14)
)
