"""## loop-resets-dataloader-iterator (LL105)

### What it does
Finds a `for` or `while` loop over epochs or steps from whose body a DataLoader iterator reset
is reachable, directly or through any chain of calls across functions, classes and modules. A
loop is over epochs or steps when its header names one: `epoch(s)`, `step(s)`, `iteration(s)`,
`batch(es)` (`for epoch in range(args.epochs)`, `while global_step < max_steps`,
`for batch in loader`). The finding is reported on the loop's line; the chain's first hop is the
loop, and every other reset the loop reaches is listed under "also reaches". Loops of an
`__iter__` or of a per-epoch hook are LL101's and LL102's; loops in teardown functions are
never roots. A call in a step loop nested in an epoch loop belongs to the step loop.

### Why is this bad?
The body of such a loop runs once per epoch (or per step): a reset there kills and respawns
every worker of a `persistent_workers=True` DataLoader each time, exactly like a reset in a
per-epoch hook (LL102).

**Cost** ([cost model](../concepts.md#the-cost-model)): a *defeated* pool: a new pool of
`num_workers` processes each time the loop's body runs (every epoch, or every step). None in a
set-up hook before the first pass: there is no pool to shut down yet.

### Example
```python
def shutdown_loader_workers(loader):
    loader._iterator._shutdown_workers()
    loader._iterator = None

for epoch in range(epochs):           # LL105 reported here
    train_one_epoch(model, train_loader)
    shutdown_loader_workers(train_loader)
```
Use instead: shut the workers down once, after the loop:
```python
for epoch in range(epochs):
    train_one_epoch(model, train_loader)
shutdown_loader_workers(train_loader)
```

### Fix safety
`move-reset-after-loop` (safe): a helper called as the last statement of the loop's body moves
to just after the loop when it does nothing but the reset (resets, calls of functions that only
reset, `if`s that only read): it then runs once, and the pool lives through the loop. Elsewhere
(a reset written in the loop, a helper that does more) where the reset belongs (after the loop,
in a `finally`, in a teardown) depends on the script: no automatic fix.

### Severity
warning; info when a step of the chain was matched by method name among several classes, or
when the reset only runs if `persistent_workers` is off; info (the message says why) when the
loop is in a set-up hook that the framework calls once before the first pass over any loader
(`before_first_pass` in the frameworks' stubs: mmengine's `before_train`, Lightning's `setup`
or `on_fit_start`, fastai's `before_fit`): no loader has been iterated yet, so the reset has no
worker pool to shut down.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.chains import findings_for_loops
from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.reset_demand import SINK_SEEDS, reset_demand
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    roots = ctx.reachability.loop_roots()
    yield from findings_for_loops(ctx, RULE.code, RULE.severity, roots)


VALID = (
    # The shutdown runs once, after the epoch loop.
    """
def shutdown(loader):
    loader._iterator = None

def train(loader, epochs):
    for epoch in range(epochs):
        for batch in loader:
            pass
    shutdown(loader)
""",
    # A loop over loaders in a teardown is where resets belong.
    """
def teardown(loaders):
    for loader in loaders:
        loader._iterator = None
""",
    # A loop over something that is not epochs or steps.
    """
def close_all(loaders):
    for loader in loaders:
        loader._iterator = None
""",
)

INVALID = (
    """
def shutdown(loader):
    loader._iterator._shutdown_workers()
    loader._iterator = None

def train(loader, epochs):
    for epoch in range(epochs):
        for batch in loader:
            pass
        shutdown(loader)
""",
    """
def train(loader, max_steps):
    step = 0
    while step < max_steps:
        step += 1
        del loader._iterator
""",
)

RULE = Rule(
    code="LL105",
    name="loop-resets-dataloader-iterator",
    severity=Severity.WARNING,
    summary="an epoch or step loop reaches a DataLoader iterator reset",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=SINK_SEEDS,
    fixes=("move-reset-after-loop",),
    valid=VALID,
    invalid=INVALID,
    demand=reset_demand,
)
