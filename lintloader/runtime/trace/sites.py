"""The unit of ``trace``'s verdict: the place that creates loaders (the creating line and the
frame that called it), with every loader it created folded together, its pools counted
against the cheapest correct run (lintloader/domain/cost.py).

Loaders are matched by the identity of their dataset (and batch size) in one process, across
creation sites: a loader created after the last pass of an earlier one over the same dataset
had begun *replaces* it (a loader rebuilt per epoch or per evaluation, from the same line or
another). One loader per dataset object (train and val splits, even of one dataset built from
one line) needs its pool. Every other pool is *extra*, of one of two kinds:

- **defeated** (a FAIL): persistence asked for and thrown away (a **respawn**: a second pool of
  one persistent loader; a persistent **new loader** that replaces an earlier one; a
  **lightning reload**, where Lightning's ``reload_dataloaders_every_n_epochs`` is named); or a
  **pool per step**: one-batch passes (``next(iter(loader))``) repeated, each starting a pool,
  persistent or not;
- **avoidable** (reported with what it could save): torch's default, a non-persistent loader
  starting one pool per pass, kept (**pool per pass**) or rebuilt (**rebuilt**).

Time spent starting a pool: the first-batch latency of the pass that started it, minus the
site's steady first batch (the median first batch of its own passes that started no pool or,
when every pass started one, the median time between later batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lintloader.domain.cost import Kind
from lintloader.runtime import timing
from lintloader.runtime.trace.records import Frame, LoaderTrace, PassRecord, PoolStart
from lintloader.runtime.trace.respawns import LoaderSummary, pass_of, steady_state

SiteKey = tuple[tuple[str, int], ...]
PER_STEP = "pool per step"
DEFEATED_KINDS = ("respawn", "new loader", "lightning reload", PER_STEP)
AVOIDABLE_KINDS = ("pool per pass", "rebuilt")


@dataclass(frozen=True)
class PoolCost:
    """One pool start of a site, the pass that started it, and what it cost."""

    loader: LoaderSummary
    start: PoolStart
    pass_record: PassRecord | None
    cost_s: float


@dataclass(frozen=True)
class ExtraPool:
    """A pool the cheapest correct run does not start."""

    kind: str  # one of DEFEATED_KINDS or AVOIDABLE_KINDS
    pool: PoolCost
    cause: str
    frames: tuple[Frame, ...]  # the culprit frames, innermost first
    replaced_at: Frame | None = None  # where the loader it replaced was built, another line

    @property
    def cost_s(self) -> float:
        return self.pool.cost_s

    @property
    def cost_kind(self) -> Kind:
        return Kind.AVOIDABLE if self.kind in AVOIDABLE_KINDS else Kind.DEFEATED

    @property
    def defeated(self) -> bool:
        return self.cost_kind is Kind.DEFEATED

    @property
    def pid(self) -> int:
        return self.pool.loader.trace.pid


@dataclass
class Site:
    """Every loader created at one place, folded."""

    frames: tuple[Frame, ...]
    loaders: list[LoaderSummary]
    steady_s: float | None = None
    pools: list[PoolCost] = field(default_factory=list)
    extras: list[ExtraPool] = field(default_factory=list)

    @property
    def persistent(self) -> bool:
        return any(loader.trace.persistent_workers for loader in self.loaders)

    @property
    def defeated(self) -> list[ExtraPool]:
        return [extra for extra in self.extras if extra.defeated]

    @property
    def avoidable(self) -> list[ExtraPool]:
        return [extra for extra in self.extras if not extra.defeated]

    @property
    def failing(self) -> bool:
        return bool(self.defeated)

    @property
    def passes(self) -> list[PassRecord]:
        """Every pass of the site's loaders, in the order they began."""
        every = [p for loader in self.loaders for p in loader.trace.passes]
        return sorted(every, key=lambda p: p.t0 if p.t0 is not None else p.t)

    @property
    def full_passes(self) -> int:
        return sum(1 for p in self.passes if p.full)

    @property
    def startup_s(self) -> float:
        return sum(pool.cost_s for pool in self.pools)

    @property
    def lost_s(self) -> float:
        """Time the defeated pools cost (every process of the site together)."""
        return sum(extra.cost_s for extra in self.defeated)

    @property
    def could_save_s(self) -> float:
        """Time the avoidable pools cost: what persistent workers, one loader, would save."""
        return sum(extra.cost_s for extra in self.avoidable)

    @property
    def needed_pools(self) -> int:
        return len(self.pools) - len(self.extras)

    @property
    def processes(self) -> int:
        return len({loader.trace.pid for loader in self.loaders})

    @property
    def lightning_reload(self) -> int | None:
        values = [loader.trace.lightning_reload for loader in self.loaders]
        return next((v for v in values if v), None)

    @property
    def created_at(self) -> Frame | None:
        return self.frames[0] if self.frames else None


def site_key(loader: LoaderSummary) -> SiteKey:
    return tuple((frame.path, frame.line) for frame in loader.created_by[:2])


def build_sites(loaders: list[LoaderSummary]) -> list[Site]:
    """The sites of ``loaders``, the one that lost most time first; sites that lost the same
    (none, most often) in the order their first loader was built, so that a report lists them
    alike from run to run (docs/trace.md shows real reports, and a test compares them)."""
    ordered = sorted(loaders, key=lambda item: item.trace.t)
    replaced = replacements(ordered)
    per_step = _per_step_chains(ordered, replaced)
    grouped: dict[SiteKey, list[LoaderSummary]] = {}
    for loader in ordered:
        grouped.setdefault(site_key(loader), []).append(loader)
    sites = [_site(members, replaced, per_step) for members in grouped.values()]
    return sorted(sites, key=lambda s: (-s.lost_s, -len(s.defeated), -s.could_save_s))


def _site(
    loaders: list[LoaderSummary], replaced: dict[str, LoaderTrace], per_step: set[str]
) -> Site:
    site = Site(loaders[0].created_by, loaders)
    site.steady_s = steady_state([p for loader in loaders for p in loader.trace.passes])
    site.pools = [_pool_cost(loader, start, site.steady_s) for loader in loaders
                  for start in sorted(loader.trace.pool_starts, key=lambda s: s.t)]  # fmt: skip
    for pool in site.pools:
        extra = _extra(pool, replaced, per_step)
        if extra is not None:
            site.extras.append(extra)
    return site


def _pool_cost(loader: LoaderSummary, start: PoolStart, steady: float | None) -> PoolCost:
    opened = pass_of(loader.trace.passes, start)
    first = start.ready_s
    if first is None and opened is not None:
        first = opened.first_batch_s
    cost = timing.pool_cost(first, steady)
    return PoolCost(loader, start, opened, cost)


def _chain_key(trace: LoaderTrace) -> tuple[object, ...]:
    """What one loader and its replacements share: the process, the dataset object (its type
    and length where the record has no identity) and the batch size."""
    dataset = trace.dataset_id if trace.dataset_id is not None else trace.dataset[:2]
    return (trace.pid, dataset, trace.dataset[2], trace.num_workers > 0)


def replacements(loaders: list[LoaderSummary]) -> dict[str, LoaderTrace]:
    """Loader id -> the earlier loader it replaces: one over the same dataset in the same
    process (built at any line), created after the earlier one's last pass began; for a loader
    Lightning reloads, one of the same hook, dataset type, length and batch size. Loaders
    built side by side before either ran (one per split) replace nothing."""
    chains: dict[tuple[object, ...], LoaderTrace] = {}
    reloads: dict[tuple[object, ...], LoaderTrace] = {}
    replaced: dict[str, LoaderTrace] = {}
    for loader in sorted(loaders, key=lambda item: item.trace.t):
        trace = loader.trace
        key = _chain_key(trace)
        previous = chains.get(key)
        if previous is None and trace.lightning_reload:
            previous = reloads.get(_reload_key(loader))
        if previous is not None and previous.passes and _last_began(previous) <= trace.t:
            replaced[trace.id] = previous
        chains[key] = trace
        reloads[_reload_key(loader)] = trace
    return replaced


def _reload_key(loader: LoaderSummary) -> tuple[object, ...]:
    """What a loader Lightning reloads shares with the one it replaces when its hook builds
    a new dataset object too: the hook (the site), the dataset's type and length, the batch
    size."""
    return (loader.trace.pid, site_key(loader), loader.trace.dataset)


def _last_began(trace: LoaderTrace) -> float:
    return max(p.t0 if p.t0 is not None else p.t for p in trace.passes)


def _per_step_chains(loaders: list[LoaderSummary], replaced: dict[str, LoaderTrace]) -> set[str]:
    """Ids of the loaders whose chain (a loader and its replacements) starts a pool per step:
    one-batch passes (``next(iter(loader))``), abandoned after their first batches (or left
    open until the process ended, the loader dropped), each starting a pool, at least two
    and more than the chain's full passes (a warm-up peek or two
    before full epochs is not a pool per step)."""
    root: dict[str, str] = {}
    for loader in loaders:
        trace = loader.trace
        earlier = replaced.get(trace.id)
        root[trace.id] = root.get(earlier.id, earlier.id) if earlier is not None else trace.id
    peeks: dict[str, int] = {}
    full: dict[str, int] = {}
    for loader in loaders:
        chain = root[loader.trace.id]
        for record in loader.trace.passes:
            if record.full:
                full[chain] = full.get(chain, 0) + 1
            elif record.pool_start and record.ended in ("abandoned", "exit"):
                peeks[chain] = peeks.get(chain, 0) + 1
    stepping = {c for c, n in peeks.items() if n >= 2 and n > full.get(c, 0)}
    return {loader_id for loader_id, chain in root.items() if chain in stepping}


def _extra(
    pool: PoolCost, replaced: dict[str, LoaderTrace], per_step: set[str]
) -> ExtraPool | None:
    summary = pool.loader
    trace = summary.trace
    if trace.num_workers == 0:
        return None
    first = min(s.t for s in trace.pool_starts)
    earlier = replaced.get(trace.id)
    if pool.start.t <= first and earlier is None:
        return None  # the one pool this loader needs
    step = trace.id in per_step
    if pool.start.t > first:  # a second pool of one loader
        respawn = next((r for r in summary.respawns if r.pool_start is pool.start), None)
        cause = respawn.cause if respawn is not None else "unknown"
        frames = respawn.frames if respawn is not None else ()
        if step:
            return ExtraPool(PER_STEP, pool, "a one-batch pass started a pool", frames)
        kind = "respawn" if trace.persistent_workers else "pool per pass"
        return ExtraPool(kind, pool, cause, frames)
    return _replacing(pool, earlier, step)


def _replacing(pool: PoolCost, earlier: LoaderTrace | None, step: bool) -> ExtraPool:
    """The first pool of a loader that replaces ``earlier``."""
    trace = pool.loader.trace
    frames = pool.loader.created_by
    at = _built_elsewhere(earlier, frames)
    if step:
        return ExtraPool(PER_STEP, pool, "a new loader for one batch", frames, at)
    if trace.lightning_reload:
        every = trace.lightning_reload
        cause = f"Lightning rebuilt it (reload_dataloaders_every_n_epochs={every})"
        return ExtraPool("lightning reload", pool, cause, frames, at)
    kind = "new loader" if trace.persistent_workers else "rebuilt"
    return ExtraPool(kind, pool, "a new loader replaced the last one", frames, at)


def _built_elsewhere(earlier: LoaderTrace | None, frames: tuple[Frame, ...]) -> Frame | None:
    """Where ``earlier`` was built, when that is another line than ``frames``' first."""
    if earlier is None:
        return None
    built = [f for f in earlier.site or earlier.created if not f.torch]
    if not built or (frames and (built[0].path, built[0].line) == (frames[0].path, frames[0].line)):
        return None
    return built[0]
