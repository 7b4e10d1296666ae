"""## epoch-hook-resets-dataloader-iterator (LL102)

### What it does
Finds a per-epoch entry point from which a DataLoader iterator reset is reachable. Per-epoch
entry points are: `on_*_epoch_start`, `on_*_epoch_end`, `on_epoch_start` and `on_epoch_end`
hooks (an epoch's end comes again next epoch), `on_run_start`, `on_advance_start`, and
`reset`/`advance`/`run` of a Lightning-style loop (a class with a `*Loop` class in its
hierarchy). `__iter__` is LL101's. Teardown-like functions (`teardown`, `close`, `shutdown`,
`__del__`, `__exit__`) and end-of-run hooks (`on_train_end`, `on_fit_end`) are never entry
points.

One finding per hook: the reset its best chain reaches is the finding's, every other reset the
hook reaches is listed under "also reaches".

### Why is this bad?
Each call runs once an epoch; a reset there kills the persistent worker pool every epoch, as
LL101 explains.

**Cost** ([cost model](../concepts.md#the-cost-model)): a *defeated* pool: a new pool of
`num_workers` processes every epoch.

### Example
```python
class FitLoop(Loop):
    def on_run_start(self):
        self.trainer.train_dataloader._iterator = None   # LL102
```
Use instead: reset the iterator in `teardown()`.

### Fix safety
Same strategies as LL101 (`relocate` and `remove-reset-call` safe, `remove-call` and
`remove-sink` unsafe): no reset
stays reachable from the hook; a relocated reset is listed as LL103 (info) in teardown.

### Severity
warning; info when a step was matched by method name only or when the reset only runs if
`persistent_workers` is off.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.chains import findings_for_roots
from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.reset_demand import SINK_SEEDS, reset_demand
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    roots = ctx.reachability.epoch_roots()
    yield from findings_for_roots(
        ctx, RULE.code, RULE.severity, roots, "per-epoch hook ", per_root=True
    )


VALID = (
    """
class Model:
    def on_train_end(self):
        self.loader._iterator = None
""",
)

INVALID = (
    """
class Model:
    def on_train_epoch_start(self):
        self.drop()

    def drop(self):
        self.loader._iterator = None
""",
    """
class Model:
    def on_validation_epoch_end(self):
        self.val_loader._iterator = None
""",
    """
class _Loop:
    pass

class FitLoop(_Loop):
    def reset(self):
        setattr(self.loader, "_iterator", None)
""",
)

RULE = Rule(
    code="LL102",
    name="epoch-hook-resets-dataloader-iterator",
    severity=Severity.WARNING,
    summary="a per-epoch hook reaches a DataLoader iterator reset",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=SINK_SEEDS,
    fixes=("relocate", "remove-reset-call", "remove-call", "remove-sink"),
    valid=VALID,
    invalid=INVALID,
    demand=reset_demand,
)
