"""## iter-resets-dataloader-iterator (LL101)

### What it does
Finds an `__iter__` method from which a DataLoader iterator reset is reachable: an assignment
`loader._iterator = None`, `del loader._iterator`, `setattr(loader, "_iterator", None)` or a call
to `._shutdown_workers()`, directly or through any chain of calls across functions, classes
(including overrides in subclasses and `super()`) and modules. The finding is reported on the
line of `__iter__` that starts the chain, and carries the chain hop by hop.

### Why is this bad?
`DataLoader(num_workers>0, persistent_workers=True)` keeps its worker processes alive in
`loader._iterator` between epochs. `__iter__` runs once per epoch, so resetting that iterator
there kills and respawns every worker each epoch, silently: PyTorch Lightning 1.5.0 shipped
this (`AbstractDataFetcher.__iter__` -> `reset()` ->
`CombinedLoader._shutdown_workers_and_reset_iterator`) and one user's epoch went from 1.5 s to 15 s.

**Cost** ([cost model](../concepts.md#the-cost-model)): a *defeated* pool, persistence asked for
and thrown away: a new pool of `num_workers` processes every epoch.

### Example
```python
class Fetcher:
    def __iter__(self):
        self.reset()                       # LL101 reported here
        self.iterator = iter(self.loader)
        return self

    def reset(self):
        self.fetched = 0
        shutdown(self.loader)

def shutdown(loader):
    loader._iterator = None                # the reset at the end of the chain
```
Use instead (what Lightning 1.5.1 did): keep `reset()` for per-iteration state and shut the
workers down in `teardown()`:
```python
    def reset(self):
        self.fetched = 0

    def teardown(self):
        self.reset()
        shutdown(self.loader)
```

### Fix safety
`relocate` (safe): moves the statements of the root class's method that lead to the reset into
the class's teardown method (`teardown`, `close`, `shutdown`, `__del__`), after its call to that
method. State resets stay where they are. It applies when the class has a teardown method, or
when it can add one. The moved reset is then listed as LL103 (info): out of scope.
`remove-reset-call` (safe): deletes the call in `__iter__` that starts the chain when the
function it calls does nothing but the reset (directly or through functions that only reset):
nothing else changes.
`remove-call` (unsafe, `--unsafe-fixes`): deletes the call in `__iter__` that starts the chain.
The callee usually also resets per-iteration state (counters, `done` flags); without it a second
iteration of the same object sees stale state (Lightning 1.5.0 then yields one batch), which
loses data: worse than the bug.
`remove-sink` (unsafe): deletes a reset written directly in `__iter__`; unsafe unless the loader
is known to use persistent workers.
After each, no reset stays reachable from `__iter__` through that chain (docs/fixes.md).

### Severity
error. Info when a step of the chain was matched by method name only (the receiver's type is
unknown, so the chain is a lead, not a proof) or when the reset only runs if
`persistent_workers` is off; `--min-severity info` shows those.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.chains import findings_for_roots
from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.reset_demand import SINK_SEEDS, reset_demand
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    roots = ctx.reachability.iter_roots()
    yield from findings_for_roots(ctx, RULE.code, RULE.severity, roots, "")


VALID = (
    # The 1.5.1 shape: the shutdown lives in teardown.
    """
class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.fetched = 0

    def teardown(self):
        self.reset()
        self.loader._iterator = None
""",
    # A class's own attribute named _iterator is not a DataLoader's.
    """
class Combined:
    def __iter__(self):
        self._iterator = None
        return self
""",
    # A different attribute that merely contains the word.
    """
class Fetcher:
    def __iter__(self):
        self.loader._dataloader_iter = None
        return self
""",
)

INVALID = (
    """
class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        shutdown(self.loader)

def shutdown(loader):
    loader._iterator = None
""",
    """
class Fetcher:
    def __iter__(self):
        del self.loader._iterator
        return self
""",
    """
class Fetcher:
    def __iter__(self):
        self.loader._iterator._shutdown_workers()
        return self
""",
)

RULE = Rule(
    code="LL101",
    name="iter-resets-dataloader-iterator",
    severity=Severity.ERROR,
    summary="`__iter__` reaches a DataLoader iterator reset (workers respawn every epoch)",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=SINK_SEEDS,
    fixes=("relocate", "remove-reset-call", "remove-call", "remove-sink"),
    valid=VALID,
    invalid=INVALID,
    demand=reset_demand,
)
