"""## dataloader-built-every-epoch (LL202)

### What it does
Finds a `DataLoader` with workers (`num_workers` not 0) that is constructed inside a loop body,
or in a function that runs once per iteration of a loop or once per epoch: it is reached, through
sure call edges, from a call inside a `for`/`while` body or from a per-epoch hook
(`on_*_epoch_start`, a Lightning-style loop's `run`/`advance`/`reset`). The finding is reported
where the loop (or hook) makes the call, with the chain down to the construction.

### Why is this bad?
Every new DataLoader starts a new pool of worker processes the first time it is iterated:
fork or spawn, import the dataset code, re-open files, warm up caches. `persistent_workers=True`
cannot help, since the loader that owns the pool is thrown away with the loop iteration.

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
`hoist-dataloader` (unsafe): moves the assignment `name = DataLoader(...)` out of the loop, to
just before it (with the comment lines above it), when no argument reads a name the loop binds
or assigns, and makes the loader persistent when the loop uses it again: `persistent_workers=True`
when `num_workers > 0` is certain, `persistent_workers=<num_workers> > 0` otherwise. One pool
for the whole loop. Refused, with the reason, when that cannot be written (`**kwargs`, an
expression already given). Unsafe because the arguments may still depend on state the loop
mutates (a dataset object changed in place, a sampler seeded per epoch).

### Severity
warning. Info when the construction is behind a one-shot check (`if loader is None:`, a
cached function), only runs when `persistent_workers` is off, or when its arguments change
with the loop (a per-fold dataset: a new loader may be intended). Calls matched by method
name only are never followed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from lintloader.analysis.loaders import (
    LoaderSite,
    Workers,
    depends_on_loop,
    facts_of,
    hop,
    loader_demand,
    loader_sites,
    once_guarded,
    persistent_guarded,
)
from lintloader.analysis.reachability import is_epoch_root
from lintloader.findings import Confidence, Finding, Hop, Severity
from lintloader.program import Edge
from lintloader.rules.base import AnalysisContext, Rule
from lintloader.summary.model import Site
from lintloader.torch_api import LOADER_TOKENS

FIX = "hoist-dataloader"
_MAX_DEPTH = 6


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    program = ctx.program
    sites = [s for s in loader_sites(program) if s.workers is not Workers.ZERO]
    for site in sites:
        if site.call.context.loop >= 0:
            yield _in_loop(ctx, site)
        elif not once_guarded(site.facts, site.call.context):
            yield from _per_call(ctx, site)


def _in_loop(ctx: AnalysisContext, site: LoaderSite) -> Finding:
    facts, call = site.facts, site.call
    loop = facts.loops[call.context.loop]
    dependent = depends_on_loop(facts, call.context.loop, call.names)
    once = once_guarded(facts, call.context)
    persistent = persistent_guarded(facts, call.context)
    note = _note(dependent, once, persistent)
    hoistable = not (dependent or once) and call.bound_to is not None and len(call.bound_to) == 1
    return Finding(
        code=RULE.code,
        severity=Severity.INFO if note else RULE.severity,
        path=ctx.display(site.info.file.path),
        line=call.site.line,
        column=call.site.column,
        end_line=call.site.end_line,
        message=(
            f"DataLoader with workers built inside `{loop.header}` (line {loop.line}): every "
            f"iteration starts a new worker pool{note}"
        ),
        chain=(
            hop(ctx.display, site.info, _loop_site(loop.line, loop.column, loop.header)),
            hop(ctx.display, site.info, call.site),
        ),
        fixes=(FIX,) if hoistable else (),
    )


def _note(dependent: bool, once: bool, persistent: bool) -> str:
    if persistent:
        return " (only when persistent_workers is off)"
    if once:
        return " (behind a one-shot check: probably built once)"
    if dependent:
        return " (its arguments change with the loop: a new loader may be intended)"
    return ""


def _loop_site(line: int, column: int, text: str) -> Site:
    return Site(line, column, text, line, line)


def _per_call(ctx: AnalysisContext, site: LoaderSite) -> Iterator[Finding]:
    """Walk sure call edges upwards from the constructing function; stop at the first call
    that sits in a loop body or in a per-epoch hook."""
    program = ctx.program
    queue: deque[tuple[str, tuple[Edge, ...]]] = deque([(site.key, ())])
    seen = {site.key}
    if is_epoch_root(program, site.info):
        yield _finding(ctx, site, (), f"per-epoch hook `{site.info.display_name}`")
        return
    while queue:
        key, path = queue.popleft()
        for edge in program.edges_into(key, Confidence.HIGH):
            if edge.caller in seen or len(path) >= _MAX_DEPTH:
                continue
            seen.add(edge.caller)
            caller = program.functions[edge.caller]
            chain = (edge, *path)
            facts = facts_of(caller)
            loop = -1
            if facts is not None:
                loop = facts.innermost_loop_at(edge.call.site.line, edge.call.site.column)
            if facts is not None and loop >= 0:
                header = facts.loops[loop].header
                yield _finding(ctx, site, chain, f"`{header}` in `{caller.display_name}`")
            elif facts is None and edge.call.in_loop:  # a file without loader facts
                yield _finding(ctx, site, chain, f"a loop in `{caller.display_name}`")
            elif is_epoch_root(program, caller):
                yield _finding(ctx, site, chain, f"per-epoch hook `{caller.display_name}`")
            elif not (facts and facts.cached):
                queue.append((edge.caller, chain))


def _finding(
    ctx: AnalysisContext, site: LoaderSite, edges: tuple[Edge, ...], where: str
) -> Finding:
    program = ctx.program
    hops: list[Hop] = []
    for edge in edges:
        caller = program.functions[edge.caller]
        hops.append(hop(ctx.display, caller, edge.call.site))
    hops.append(hop(ctx.display, site.info, site.call.site))
    first = hops[0]
    persistent = persistent_guarded(site.facts, site.call.context) or any(
        e.call.persistent_guard for e in edges
    )
    calls = len(edges)
    via = f" through {calls} call{'s' * (calls != 1)}" if calls else ""
    return Finding(
        code=RULE.code,
        severity=Severity.INFO if persistent else RULE.severity,
        path=first.path,
        line=first.line,
        column=first.column,
        message=(
            f"{where} builds a DataLoader with workers{via} (`{site.call.site.text}` at "
            f"{hops[-1].path}:{hops[-1].line}): every call starts a new worker pool"
            + (" (only when persistent_workers is off)" if persistent else "")
        ),
        chain=tuple(hops),
    )


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
)

RULE = Rule(
    code="LL202",
    name="dataloader-built-every-epoch",
    severity=Severity.WARNING,
    summary="a DataLoader with workers is constructed in a loop or once per epoch",
    doc=__doc__ or "",
    check=check,
    seed_tokens=LOADER_TOKENS,
    fixes=(FIX,),
    valid=VALID,
    invalid=INVALID,
    demand=loader_demand,
)
