"""## persistent-workers-without-workers (LL201)

### What it does
Finds `DataLoader(..., persistent_workers=True)` where `num_workers` is 0: a literal `0`, or
missing (the default is 0). When `num_workers` is an expression that can be 0
(`num_workers=args.workers`) and nothing around the call checks it, the finding is a warning.
`DataLoader` is resolved through imports: torch's `torch.utils.data.DataLoader`, an alias of
it, or a subclass in the scanned code; a class merely named `DataLoader` from another library
is not one. A scanned wrapper class whose `__init__(self, *args, **kwargs)` hands both, and
nothing else, to torch's DataLoader is called with DataLoader's own keywords, so its calls count
as DataLoader calls; and torch's DataLoader imported in a `try` whose `except ImportError`
defines a stand-in class of the same name is torch's.

### Why is this bad?
PyTorch refuses the combination when the loader is built:
`ValueError: persistent_workers option needs num_workers > 0`. With a literal 0 the script
crashes on the first run; with `args.workers` it crashes the day someone passes `--workers 0`
(a common way to debug a data pipeline).

**Cost** ([cost model](../concepts.md#the-cost-model)): a *raise*, an error of its own: the run
stops with a ValueError, whatever the pools would have cost.

### Example
```python
loader = DataLoader(dataset, batch_size=32, persistent_workers=True)             # LL201 error
loader = DataLoader(dataset, num_workers=args.workers, persistent_workers=True)  # LL201 warning
```
Use instead:
```python
loader = DataLoader(dataset, num_workers=args.workers,
                    persistent_workers=args.workers > 0)
```

### Fix safety
`persistent-workers-guard` (safe): replaces `persistent_workers=True` with
`persistent_workers=<num_workers expression> > 0` (with `False` when `num_workers` is missing or
a literal 0); a value `P` that is a parameter, an attribute or a configuration field becomes
`P and <num_workers> > 0`, in the call or in the dict entry passed with `**`. The loader keeps
its persistent workers whenever it has workers, and no longer raises when it has none.

### Severity
error for a literal 0 or a missing `num_workers`; warning for an expression that can be 0;
info when `num_workers` may come from `**kwargs` or the class is a DataLoader subclass.
Keywords passed through a dict count as written in the call when the same function builds
that dict (`cfg = {...}`, `dict(...)`, `kwargs["persistent_workers"] = ...`), and so does a
parameter that defaults to `True` (`persistent_workers=persistent_workers`); a key the function
drops from that dict (`cfg.pop("persistent_workers")`, `del cfg[...]`) is not passed by the calls
after it in the same branch.
`persistent_workers` read from a configuration object counts with the class's default
(`self.args.dataloader_persistent_workers` where a dataclass field, a class attribute or a
stored `__init__` parameter defaults to `True`); a class that sets the attribute itself (a
`__post_init__` that clears it when there are no workers) proves no default.
A builder that passes its own `persistent_workers=True` default and worker-count parameter to
`DataLoader` is reported, and so is each caller that keeps the default with a worker count that
can be 0 (error for a literal 0), with the chain into the builder. A private builder
(`_make`) whose every call in the scanned code passes `persistent_workers` itself never uses
its default and is not reported. A builder whose own defaults are a working pair (a worker
count that defaults to a literal > 0, `persistent_workers` to True), called in the scanned
code and by every call with both passed, is info: only a caller that passes 0 workers and
keeps persistence on would raise, and there is none.
`num_workers=os.cpu_count()` (or `max(1, n)`, `n or os.cpu_count()`,
`len(os.sched_getaffinity(0))`, a local mapped from 0 first: `n = max(1, n)`) is never 0.
A call inside an `if` that tests the `num_workers` expression is not reported, and neither is a
`True` put into the dict under such a test (`if n > 0: kwargs["persistent_workers"] = True`,
also `n >= 1`, `n != 0`): the dict holds it only when there are workers.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.builder_callers import (
    callers_keeping_default,
    default_never_used,
    defaults_agree,
)
from lintloader.analysis.config_defaults import config_default, config_demand
from lintloader.analysis.context import AnalysisContext, Demand
from lintloader.analysis.loaders import LoaderSite, Workers, hop, loader_demand, loader_sites
from lintloader.analysis.override_demand import override_demand
from lintloader.finding.findings import Finding, Severity
from lintloader.link.program import Program
from lintloader.rules.base import Rule

FIX = "persistent-workers-guard"


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    for site in loader_sites(ctx.program):
        if site.workers is Workers.POSITIVE or _checked(site):
            continue
        if default_never_used(ctx.program, site):
            continue
        configured = None if site.persistent_true else _configured(ctx, site)
        if not site.persistent_true and configured is None:
            continue
        severity, why = _severity(site)
        raises = "DataLoader raises `ValueError: persistent_workers option needs num_workers > 0`"
        if defaults_agree(ctx.program, site):
            severity, why = Severity.INFO, _agreeing(site)
            raises = "`ValueError: persistent_workers option needs num_workers > 0`"
        call = site.call
        yield Finding(
            code=RULE.code,
            severity=severity,
            path=ctx.display(site.info.file.path),
            line=call.site.line,
            column=call.site.column,
            end_line=call.site.end_line,
            message=f"{configured or _persistent_text(site)} with {why}: {raises}",
            chain=(hop(ctx.display, site.info, call.site, verb="builds"),),
            fixes=(FIX,),
        )
        yield from _kept_by_callers(ctx, site)


def _kept_by_callers(ctx: AnalysisContext, site: LoaderSite) -> Iterator[Finding]:
    """The callers of a builder that keep its ``persistent_workers=True`` default with a worker
    count that can be 0: where the ValueError fires (the chain goes into the builder)."""
    for kept in callers_keeping_default(ctx.program, site):
        call = kept.edge.call.site
        builder = site.info.display_name
        yield Finding(
            code=RULE.code,
            severity=Severity.ERROR if kept.zero else Severity.WARNING,
            path=ctx.display(kept.caller.file.path),
            line=call.line,
            column=call.column,
            end_line=call.end_line,
            message=(
                f"`{builder}` keeps its `persistent_workers=True` default here, with "
                f"`{site.num_workers.text if site.num_workers else 'num_workers'}="
                f"{kept.workers}`, which {'is' if kept.zero else 'can be'} 0: DataLoader raises "
                "`ValueError: persistent_workers option needs num_workers > 0`"
            ),
            chain=(
                hop(ctx.display, kept.caller, call, verb="calls"),
                hop(ctx.display, site.info, site.call.site, verb="builds"),
            ),
        )


def _configured(ctx: AnalysisContext, site: LoaderSite) -> str | None:
    """``persistent_workers=self.args.flag`` where the configuration class's default is True
    (a field, a class attribute or a stored ``__init__`` parameter), described; else None."""
    argument = site.persistent
    if argument is None or argument.is_literal or argument.from_default:
        return None
    found = config_default(ctx.program, site.info, argument.text)
    if found is None or found.value is not True:
        return None
    return f"`persistent_workers={argument.text}` (defaults to True in `{found.owner}`)"


def _demand(program: Program) -> Demand:
    """What every LL2xx rule asks (:func:`loader_demand`), and the modules of the unparsed
    configuration classes a ``persistent_workers=`` argument reads from."""
    texts = [
        (site.info, site.persistent.text)
        for site in loader_sites(program)
        if site.persistent is not None and not site.persistent.is_literal
    ]
    shared, configs = loader_demand(program), config_demand(program, texts)
    groups = shared.token_groups | configs.token_groups
    return Demand(groups, shared.modules | configs.modules)


def _persistent_text(site: LoaderSite) -> str:
    """How ``persistent_workers=True`` reaches the call: written, a parameter's default, a dict."""
    argument = site.persistent
    assert argument is not None
    text = "`persistent_workers=True`"
    if argument.from_default:
        text = f"`persistent_workers={argument.text}` (a parameter that defaults to True)"
    if argument.via:
        text += (
            " (passed in `**dict(...)`)" if argument.via == "dict" else f" (in `**{argument.via}`)"
        )
    return text


def _severity(site: LoaderSite) -> tuple[Severity, str]:
    argument = site.num_workers
    if site.workers is Workers.ZERO:
        what = "`num_workers` missing (default 0)" if argument is None else "`num_workers=0`"
        return Severity.ERROR, what
    if argument is None:
        return Severity.INFO, "`num_workers` unknown here (subclass or `**kwargs`)"
    where = f" (in `**{argument.via}`)" if argument.via and argument.via != "dict" else ""
    return Severity.WARNING, f"`num_workers={argument.text}`{where}, which can be 0"


def _agreeing(site: LoaderSite) -> str:
    """Why a builder whose own defaults work, and whose every caller passes both, is info."""
    workers = site.num_workers
    assert workers is not None
    return (
        f"`num_workers={workers.text}` (defaults to {workers.literal}), a working pair that "
        "every call in the scanned code passes itself; only a caller that passes 0 workers "
        "and leaves persistence on would get"
    )


def _checked(site: LoaderSite) -> bool:
    """The call only runs where the ``num_workers`` expression was tested (``if n > 0:``)."""
    argument = site.num_workers
    if argument is None or argument.is_literal:
        return False
    return any(not c.negated and argument.text in c.text for c in site.call.context.conditions)


VALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
""",
    """
from torch.utils.data import DataLoader
def build(args):
    return DataLoader(range(8), num_workers=args.workers, persistent_workers=args.workers > 0)
""",
    # Guarded by the num_workers expression.
    """
from torch.utils.data import DataLoader
def build(args):
    if args.workers > 0:
        return DataLoader(range(8), num_workers=args.workers, persistent_workers=True)
    return DataLoader(range(8))
""",
    # Not torch's DataLoader.
    """
from mylib import DataLoader
loader = DataLoader(range(8), persistent_workers=True)
""",
)

INVALID = (
    """
from torch.utils.data import DataLoader
loader = DataLoader(range(8), persistent_workers=True)
""",
    """
import torch
loader = torch.utils.data.DataLoader(range(8), num_workers=0, persistent_workers=True)
""",
    """
from torch.utils.data import DataLoader as DL
def build(args):
    return DL(range(8), num_workers=args.workers, persistent_workers=True)
""",
)

RULE = Rule(
    code="LL201",
    name="persistent-workers-without-workers",
    severity=Severity.ERROR,
    summary="`persistent_workers=True` where `num_workers` is or can be 0 (ValueError)",
    doc=__doc__ or "",
    check=check,
    seed_tokens=((b"DataLoader", b"persistent_workers"),),
    fixes=(FIX,),
    valid=VALID,
    invalid=INVALID,
    demand=_demand,
    also_demand=(override_demand,),  # bases across distributions (shape 6 of issue 14)
)
