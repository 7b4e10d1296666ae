"""## unreached-dataloader-iterator-reset (LL103)

### What it does
Lists every DataLoader iterator reset that no `__iter__` and no per-epoch entry point reaches:
typically the legitimate ones in `teardown()`, `close()` or `__del__`. Shown only with
`--min-severity info`.

### Why is this bad?
It usually is not: this is an inventory, so that a reviewer can see every place that can kill a
worker pool, and notice one that a dynamic call (which static analysis cannot follow) reaches.

**Cost** ([cost model](../concepts.md#the-cost-model)): none known: no root reaches the reset;
if a dynamic call does, a *defeated* pool each time it runs.

### Example
```python
class Fetcher:
    def teardown(self):
        self.loader._iterator = None   # LL103 (info): fine in teardown
```

### Fix safety
No fix: nothing is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.reachability import sink_hop
from lintloader.analysis.reset_demand import SINK_SEEDS, reset_demand
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    for ref in ctx.reachability.unreached():
        hop = sink_hop(ctx.program, ref, ctx.display)
        yield Finding(
            code=RULE.code,
            severity=RULE.severity,
            path=hop.path,
            line=hop.line,
            column=hop.column,
            message=(
                f"`{hop.action}` in `{hop.function}` resets a DataLoader iterator; "
                "no `__iter__` or per-epoch hook reaches it"
            ),
            chain=(hop,),
        )


VALID = (
    """
class Fetcher:
    def teardown(self):
        self.loader._dataloader_iter = None
""",
)

INVALID = (
    """
class Fetcher:
    def teardown(self):
        self.loader._iterator = None
""",
)

RULE = Rule(
    code="LL103",
    name="unreached-dataloader-iterator-reset",
    severity=Severity.INFO,
    summary="a DataLoader iterator reset that no root reaches (inventory)",
    doc=__doc__ or "",
    check=check,
    seed_tokens=SINK_SEEDS,
    valid=VALID,
    invalid=INVALID,
    demand=reset_demand,
)
