"""## reload-dataloaders-with-persistent-workers (LL205)

### What it does
Finds a Lightning `Trainer(reload_dataloaders_every_n_epochs=N)` (N not 0; `Trainer` resolved
through imports of `lightning` / `pytorch_lightning`, or a scanned subclass) in code that also
builds a DataLoader with `persistent_workers` on (`True` or an expression).

### Why is this bad?
Lightning calls the `*_dataloader()` hooks again every N epochs and drops the old loaders, so
their persistent worker pools are shut down and new ones started by design: the
`persistent_workers=True` the code asks for only lasts N epochs. That is fine when the data
really changes; when it does not, the reload costs a worker start-up every N epochs.

**Cost** ([cost model](../concepts.md#the-cost-model)): a *defeated* pool every N epochs when
the data does not change (none when it must: new data needs new loaders).

### Example
```python
trainer = Trainer(max_epochs=100, reload_dataloaders_every_n_epochs=1)   # LL205
...
    def train_dataloader(self):
        return DataLoader(self.ds, num_workers=8, persistent_workers=True)
```

### Fix safety
No fix: whether the data changes between epochs is a design decision.

### Severity
info.
"""

from __future__ import annotations

from collections.abc import Iterator

from lintloader.analysis.context import AnalysisContext
from lintloader.analysis.loaders import (
    LoaderSite,
    functions_with_facts,
    hop,
    is_trainer,
    loader_sites,
)
from lintloader.analysis.override_demand import override_demand
from lintloader.domain.torch_api import LIGHTNING_RELOADED_HOOKS
from lintloader.domain.torch_api import RELOAD_KEYWORD as KEYWORD
from lintloader.finding.findings import Finding, Severity
from lintloader.rules.base import Rule


def check(ctx: AnalysisContext) -> Iterator[Finding]:
    program = ctx.program
    persistent = [s for s in loader_sites(program) if not s.persistent_off]
    if not persistent:
        return
    for info, facts in functions_with_facts(program):
        for call in facts.trainer_calls:
            reload = call.keyword(KEYWORD)
            if reload is None or (reload.is_literal and not reload.literal):
                continue
            if not is_trainer(program, info, call):
                continue
            loader = _blamed(persistent, info.file.path)
            yield Finding(
                code=RULE.code,
                severity=RULE.severity,
                path=ctx.display(info.file.path),
                line=call.site.line,
                column=call.site.column,
                end_line=call.site.end_line,
                message=(
                    f"`{KEYWORD}={reload.text}` rebuilds the DataLoaders, and their persistent "
                    f"worker pools, every {reload.text} epoch(s) (persistent DataLoader"
                    f"{_built_in(loader)} at {ctx.display(loader.info.file.path)}:"
                    f"{loader.call.site.line})"
                ),
                chain=(
                    hop(ctx.display, info, call.site, verb="configures"),
                    hop(ctx.display, loader.info, loader.call.site, verb="builds"),
                ),
            )


def _blamed(sites: list[LoaderSite], path: str) -> LoaderSite:
    """The persistent loader a reload drops: one in the Trainer's file if there is one, else
    any; among those, one a ``*_dataloader`` hook builds (the hooks Lightning calls again)."""
    return min(sites, key=lambda s: (s.info.file.path != path, not _in_hook(s)))


def _in_hook(site: LoaderSite) -> bool:
    return site.info.function.name in LIGHTNING_RELOADED_HOOKS


def _built_in(site: LoaderSite) -> str:
    """`` built in `Model.train_dataloader```, for a loader a reloaded hook builds."""
    return f" built in `{site.info.display_name}`" if _in_hook(site) else ""


VALID = (
    """
from lightning.pytorch import Trainer
from torch.utils.data import DataLoader
trainer = Trainer(reload_dataloaders_every_n_epochs=0)
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
""",
    # No persistent workers to lose.
    """
from lightning.pytorch import Trainer
from torch.utils.data import DataLoader
trainer = Trainer(reload_dataloaders_every_n_epochs=1)
loader = DataLoader(range(8), num_workers=2)
""",
    # Not Lightning's Trainer.
    """
from transformers import Trainer
from torch.utils.data import DataLoader
trainer = Trainer(reload_dataloaders_every_n_epochs=1)
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
""",
)

INVALID = (
    """
import pytorch_lightning as pl
from torch.utils.data import DataLoader
trainer = pl.Trainer(reload_dataloaders_every_n_epochs=1)
loader = DataLoader(range(8), num_workers=2, persistent_workers=True)
""",
)

RULE = Rule(
    code="LL205",
    name="reload-dataloaders-with-persistent-workers",
    severity=Severity.INFO,
    summary="Lightning reloads DataLoaders every N epochs, discarding persistent workers",
    doc=__doc__ or "",
    check=check,
    rebuilds_from=Severity.INFO,
    seed_tokens=((b"reload_dataloaders_every_n_epochs",), (b"persistent_workers", b"DataLoader")),
    valid=VALID,
    invalid=INVALID,
    also_demand=(override_demand,),  # bases across distributions (shape 6 of issue 14)
)
