"""## dataloader-iterator-per-step (LL203)

### What it does
Finds `next(iter(loader))`, or `iter(loader)` in an innermost (per-step) loop body, where
`loader` is a DataLoader with workers: assigned from a `DataLoader(...)` call in the same
function, at module level or in another method of the same class (`self.loader`), annotated
as one, or an unannotated parameter that every call of the function in the scanned program
fills with a DataLoader (the step's confidence is then medium). An `iter(loader)` that heads
a per-epoch block (its loop has an inner loop, or its header names an epoch) is the normal way
to start an epoch and is not reported.

### Why is this bad?
`iter(loader)` on a DataLoader with workers starts a new worker pool (unless
`persistent_workers=True`) and has the workers prefetch `prefetch_factor` batches each; `next()`
then takes one batch and the iterator is thrown away. A loop of N steps starts N pools, and
(without shuffling) sees the first batch N times.

**Cost** ([cost model](../concepts.md#the-cost-model)): without `persistent_workers=True`, a
*defeated* pool per step (a one-batch pass repeated within an epoch): a new pool of
`num_workers` processes every step, or every K steps under `if step % K == 0` (a sample batch
every K steps is still a one-batch pass repeated within an epoch: defeated, a warning). With
it, the pool survives (no pool start, `trace` counts none) but every step restarts the epoch:
info.

### Example
```python
for step in range(steps):
    batch = next(iter(loader))     # LL203
```
Use instead:
```python
iterator = iter(loader)
for step in range(steps):
    try:
        batch = next(iterator)
    except StopIteration:
        iterator = iter(loader)
        batch = next(iterator)
```

### Fix safety
`persistent-sample-loader` (safe): for `next(iter(loader))` (in the loop, or in a helper the
loop calls: a sample batch), makes the loader's construction persistent, so each `iter()` resets
the same workers and each sample is still the first batch of a fresh pass; refused when a
function on the chain sets state on what the loader is built from (`dataset.x = ...`,
`set_epoch`), or loops over the same loader. What is left is the info finding for a persistent
loader.

`reuse-iterator` (unsafe): rewrites `name = next(iter(loader))` (or `x, y = next(iter(loader))`)
in a loop body as above, and makes the loader's construction persistent, so re-creating the
iterator after a pass reuses the pool; refused when the construction is unknown (a parameter
typed as a DataLoader). Unsafe because the loop now walks through the data instead of taking the
first batch again each step (different batches: usually what was meant, but a change of
behaviour).

### Severity
warning, also when the call runs every K steps of a step loop
(`if step % K == 0: next(iter(loader))`: the message says "every K steps"); error when the
start method is spawn or forkserver (explicit, or the default of the Python the project
targets; on every branch of a context chosen by a condition, else the message says under
which condition). Info when the loader has `persistent_workers=True` (or `<num_workers> > 0`:
the pool survives, but each `iter()` still restarts the epoch and throws away prefetched
batches), and info when the call only runs every N-th epoch (`if epoch % 10 == 0:
next(iter(loader))`: an occasional sample batch, not one within an epoch) or under a remainder
test other than `== 0` (`n % 30 == 29`).
Not reported inside an `except StopIteration:` handler (or a bare `except:` or
`except Exception:` whose `try` advances an iterator: the same reuse idiom),
behind a one-shot check or a remainder test no value passes (`n % 30 == 220`), or when the
loader itself is built in the same loop body (each pass iterates a new loader: that
construction is LL202's).

Also reported: `next(iter(loader))` outside any loop of a helper that a step loop calls
(directly or through up to three calls), with the same severities: the helper takes one batch
from a fresh iterator at each call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from lintloader.analysis import built_once
from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.loader_cost import SiteCost, iterator_cost
from lintloader.analysis.loaders import (
    LoaderSite,
    Workers,
    functions_with_facts,
    hop,
    is_dataloader_name,
    loader_bound_to,
    loader_sites,
    loop_depth,
)
from lintloader.analysis.override_demand import override_demand
from lintloader.analysis.param_loaders import PassedLoader, passed_loader
from lintloader.analysis.step_callers import StepCaller, step_caller
from lintloader.domain.cost import every_k
from lintloader.finding.findings import Confidence, Finding, Hop, Severity
from lintloader.link.program import FunctionInfo, Program
from lintloader.rules.base import Rule
from lintloader.summary.model import Dotted, FunctionFacts, IterCall
from lintloader.text.wording import counted

FIX = "reuse-iterator"
SAMPLE_FIX = "persistent-sample-loader"


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    program = ctx.program
    sites = loader_sites(program)
    for info, facts in functions_with_facts(program):
        for call in facts.iter_calls:
            if call.argument is None or _guarded(facts, call):
                continue
            if call.context.loop < 0:
                yield from _in_helper(ctx, sites, info, facts, call)
                continue
            if not call.in_next and _per_epoch(facts, call.context.loop):
                continue
            resolved = _resolve(program, sites, info, call.argument)
            if resolved is None:
                continue
            loader, passed = resolved
            if loader is not None and _built_in_same_pass(facts, call, loader):
                continue
            finding = _finding(ctx, info, facts, call, loader)
            yield finding if passed is None else _from_callers(finding, passed)


def _resolve(
    program: Program, sites: list[LoaderSite], info: FunctionInfo, name: Dotted
) -> tuple[LoaderSite | None, PassedLoader | None] | None:
    """The DataLoader with workers that ``name`` holds in ``info`` (its construction when
    known, and how its callers pass it when it is an untyped parameter), or None."""
    loader = loader_bound_to(sites, info, name)
    passed = None
    if loader is None and not is_dataloader_name(program, info, name):
        passed = passed_loader(program, sites, info, name)
        if passed is None:
            return None
        loader = passed.site
    if loader is not None and loader.workers is Workers.ZERO:
        return None
    return loader, passed


def _in_helper(
    ctx: AnalysisContext,
    sites: list[LoaderSite],
    info: FunctionInfo,
    facts: FunctionFacts,
    call: IterCall,
) -> Iterator[Finding]:
    """``next(iter(loader))`` outside any loop of a function that a step loop calls
    (issue 42): one fresh iterator, and pool, per call of the helper."""
    if not call.in_next or call.argument is None or built_once.kept_result(facts):
        return
    resolved = _resolve(ctx.program, sites, info, call.argument)
    if resolved is None:
        return
    step = step_caller(ctx.program, info.key)
    if step is None:
        return
    loader, passed = resolved
    finding = _helper_finding(ctx, info, call, loader, step, _periodic(facts, call))
    yield finding if passed is None else _from_callers(finding, passed)


def _from_callers(finding: Finding, passed: PassedLoader) -> Finding:
    """A finding on an untyped parameter that every caller fills with a DataLoader: its
    iterating step is a guess (medium confidence), and the message says so."""
    chain = list(finding.chain)
    chain[-1] = replace(chain[-1], confidence=Confidence.MEDIUM)
    callers = f"{counted(passed.callers, 'call site')}"
    note = f" (an untyped parameter: every one of its {callers} passes a DataLoader)"
    return replace(finding, chain=tuple(chain), message=finding.message + note)


def _guarded(facts: FunctionFacts, call: IterCall) -> bool:
    depth = loop_depth(facts, call.context.loop)
    stop = any(c.stop_iteration and c.loop_depth >= depth for c in call.context.conditions)
    dead = any(not c.negated and c.dead for c in call.context.conditions)
    return stop or dead or built_once.guarded(facts, call.context)


def _built_in_same_pass(facts: FunctionFacts, call: IterCall, loader: LoaderSite) -> bool:
    """The loader is built in the same loop body as the call (``for shuffle in (False, True):
    loader = DataLoader(...); next(iter(loader))``): each pass iterates its own new loader, so
    the loop repeats no pool of one loader (a loader built every pass is LL202's)."""
    if loader.facts is not facts:
        return False
    site = loader.call.site
    return facts.innermost_loop_at(site.line, site.column) == call.context.loop


def _periodic(facts: FunctionFacts, call: IterCall) -> str:
    """The test of an ``if`` inside the loop that lets the call run only every N-th pass
    (``epoch % 10 == 0``), or empty."""
    depth = loop_depth(facts, call.context.loop)
    for condition in call.context.conditions:
        if condition.loop_depth >= depth and not condition.negated and "%" in condition.text:
            return condition.text
    return ""


def _per_epoch(facts: FunctionFacts, index: int) -> bool:
    inner = any(loop.parent == index for loop in facts.loops)
    return inner or facts.loops[index].epoch_like


def _finding(
    ctx: AnalysisContext,
    info: FunctionInfo,
    facts: FunctionFacts,
    call: IterCall,
    loader: LoaderSite | None,
) -> Finding:
    loop = facts.loops[call.context.loop]
    persistent = loader is not None and loader.persistent_with_workers
    periodic = _periodic(facts, call)
    name = ".".join(call.argument or ())
    effect = (
        "restarts the epoch and drops prefetched batches every step (persistent workers survive)"
        if persistent
        else "starts a new worker pool every step"
    )
    every = _every_k_steps(periodic) if not _per_epoch(facts, call.context.loop) else None
    cost = None if persistent else iterator_cost(ctx, loader, info.file.path, every)
    if every is not None and cost is not None:
        effect = f"runs when `{periodic}`: {cost.phrase} (a sample batch from a fresh iterator)"
    elif periodic:
        effect = (
            f"runs only when `{periodic}`: an occasional fresh iterator (a sample batch), "
            "which starts a worker pool each time it runs"
        )
    fixable = (
        call.in_next
        and call.bound_to is not None
        and len(call.bound_to) == 1
        and not _loop_rebinds(facts, call, name)
    )
    message = f"`{call.site.text}` inside `{loop.header}` (line {loop.line}) {effect}"
    severity = _severity(cost, periodic, every)
    finding = _at_call(ctx, info, call, loader, [], message, severity)
    return replace(finding, fixes=_fixes(call, loader, fixable))


def _at_call(
    ctx: AnalysisContext,
    info: FunctionInfo,
    call: IterCall,
    loader: LoaderSite | None,
    calls: list[Hop],
    message: str,
    severity: Severity,
) -> Finding:
    """The finding on ``call``: chain from the loader's construction (when known) through
    ``calls`` to the iterating call."""
    chain = [*calls, hop(ctx.display, info, call.site, verb="iterates")]
    if loader is not None:
        chain.insert(0, hop(ctx.display, loader.info, loader.call.site, verb="builds"))
    return Finding(
        code=RULE.code,
        severity=severity,
        path=ctx.display(info.file.path),
        line=call.site.line,
        column=call.site.column,
        end_line=call.site.end_line,
        message=message,
        chain=tuple(chain),
    )


def _helper_finding(
    ctx: AnalysisContext,
    info: FunctionInfo,
    call: IterCall,
    loader: LoaderSite | None,
    step: StepCaller,
    own_periodic: str,
) -> Finding:
    persistent = loader is not None and loader.persistent_with_workers
    periodic = step.periodic or own_periodic
    loop = step.loop
    how = f"when `{step.periodic}`" if step.periodic else "every step"
    if own_periodic and not step.periodic:
        how += f", and it iterates only when `{own_periodic}`"
    effect = (
        "restarts the epoch and drops prefetched batches each time (persistent workers survive)"
        if persistent
        else "a new worker pool every step"
    )
    every = _every_k_steps(periodic)
    cost = None if persistent else iterator_cost(ctx, loader, info.file.path, every)
    if every is not None and cost is not None:
        effect = f"{cost.phrase} (a sample batch from a fresh iterator)"
    elif periodic:
        effect = "an occasional fresh iterator (a sample batch), which " + (
            "restarts the pass and drops its prefetched batches (persistent workers survive)"
            if persistent
            else "starts a worker pool each time"
        )
    calls = [hop(ctx.display, step.caller, step.edges[0].call.site, verb="calls")]
    for edge in step.edges[1:]:
        calls.append(hop(ctx.display, ctx.program.functions[edge.caller], edge.call.site))
    place = f"{calls[0].path}:{loop.line}"
    message = (
        f"`{call.site.text}` in `{info.display_name}` takes a batch from a fresh iterator, and "
        f"`{loop.header}` at {place} in `{step.caller.display_name}` calls it {how}: {effect}"
    )
    severity = _severity(cost, periodic, every)
    finding = _at_call(ctx, info, call, loader, calls, message, severity)
    return replace(finding, fixes=_fixes(call, loader, False))


def _fixes(call: IterCall, loader: LoaderSite | None, reusable: bool) -> tuple[str, ...]:
    """A sample (``next(iter(loader))``) of a loader built where the fix sees it, and not
    persistent: its loader can be made persistent; ``reusable``: its loop can keep one iterator."""
    sample = call.in_next and loader is not None and not loader.persistent_with_workers
    return (SAMPLE_FIX,) * sample + (FIX,) * reusable


def _every_k_steps(periodic: str) -> str | None:
    """The K of a test that lets a call in a step loop run every K steps, else None."""
    return every_k(periodic) if periodic else None


def _severity(cost: SiteCost | None, periodic: str, every: str | None) -> Severity:
    """The cost model's severity for a fresh iterator of a non-persistent loader every step or
    every K steps (a defeated pool); info for a persistent loader (no pool starts) and for an
    occasional one the model cannot count (every N-th epoch, a remainder test not ``== 0``)."""
    if cost is None or (periodic and every is None):
        return Severity.INFO
    return cost.severity


def _loop_rebinds(facts: FunctionFacts, call: IterCall, name: str) -> bool:
    """The loop assigns the loader itself: a fresh iterator per step may be intended."""
    return any(name in loop.assigned for loop in facts.loop_chain(call.context.loop))


VALID = (
    # One iterator, re-created on exhaustion only.
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2)
it = iter(loader)
for step in range(100):
    try:
        batch = next(it)
    except StopIteration:
        it = iter(loader)
        batch = next(it)
""",
    # Per-epoch iter() feeding an inner loop is how an epoch starts.
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2)
for epoch in range(3):
    it = iter(loader)
    for step in range(4):
        batch = next(it)
""",
    # No workers: iter() is cheap.
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8))
for step in range(100):
    batch = next(iter(loader))
""",
)

INVALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2)
for step in range(100):
    batch = next(iter(loader))
""",
    """
from torch.utils.data import DataLoader

class Probe:
    def __init__(self):
        self.loader = DataLoader(range(8), num_workers=2)

    def run(self):
        while True:
            batch = next(iter(self.loader))
""",
    """
from torch.utils.data import DataLoader

def steps(loader: DataLoader, n):
    for _ in range(n):
        yield next(iter(loader))
""",
)

RULE = Rule(
    code="LL203",
    name="dataloader-iterator-per-step",
    severity=Severity.WARNING,
    summary="`next(iter(loader))` or `iter(loader)` evaluated once per step",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.WARNING,  # info: a persistent loader, its pool survives each iter()
    seed_tokens=((b"DataLoader", b"iter("),),
    fixes=(SAMPLE_FIX, FIX),
    valid=VALID,
    invalid=INVALID,
    also_demand=(override_demand,),  # bases across distributions (shape 6 of issue 14)
)
