"""## unresolved-reset-in-iter (LL104)

### What it does
Finds an `__iter__` that calls a reset-like method (`reset`, `_reset`, `reset_*`, `*_reset`)
that the analysis cannot resolve to any scanned function: its receiver's type is unknown and no
scanned class defines a method of that name, or it is a function imported from a module that is
not scanned. (A scanned module it is imported from is parsed to find it there.)

### Why is this bad?
The chain cannot be proven safe: that method may shut down a DataLoader's workers (Lightning
1.5.0's did). Scan the package that defines it too (`lintloader check src/ other_pkg/`), or, if
you know it is harmless, suppress with `# noqa: LL104`.

**Cost** ([cost model](../concepts.md#the-cost-model)): unknown until the method is read; if it
resets, a *defeated* pool each time the root runs.

### Example
```python
from elsewhere import make_state

class Fetcher:
    def __iter__(self):
        self.state.reset()   # LL104 if no scanned class has `reset`
        return iter(self.loader)
```

Only files that mention a loader (`oader`) are examined for this rule: an `__iter__` that
resets something in a file with no loader in sight is none of its business.

### Fix safety
No fix.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.reset_demand import ITER_RESET_SEEDS, reset_demand
from lintloader.finding.findings import Finding, Hop, Severity
from lintloader.link.call_kinds import RESET_LIKE_CALLS
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    program = ctx.program
    for root in ctx.reachability.iter_roots():
        for call in program.calls_of(root.key, RESET_LIKE_CALLS):
            if call.is_reference:
                continue
            if call.target[-1] in program.methods_by_name or any(program.callees(root, call)):
                continue
            path = ctx.display(root.file.path)
            site = call.site
            yield Finding(
                code=RULE.code,
                severity=RULE.severity,
                path=path,
                line=site.line,
                column=site.column,
                message=(
                    f"`{root.display_name}` calls `{site.text}`, which no scanned code defines: "
                    "cannot prove it leaves the DataLoader's workers alive"
                ),
                chain=(Hop(path, site.line, site.column, root.display_name, site.text),),
            )


VALID = (
    """
class Fetcher:
    def __iter__(self):
        self.reset()
        return self

    def reset(self):
        self.count = 0
""",
)

INVALID = (
    """
class Fetcher:
    def __iter__(self):
        self.state.reset()
        return iter(self.loader)
""",
)

RULE = Rule(
    code="LL104",
    name="unresolved-reset-in-iter",
    severity=Severity.WARNING,
    summary="`__iter__` calls a reset-like method that cannot be resolved",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    # An __iter__ calling a reset in a file that never mentions a loader is none of our business
    seed_tokens=ITER_RESET_SEEDS,
    valid=VALID,
    invalid=INVALID,
    demand=reset_demand,
)
