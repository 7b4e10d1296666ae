"""The unit of ``trace``'s verdict: the place that creates loaders (the creating line and the
frame that called it), with every loader it created folded together.

A site may start one worker pool per loader it needs. A pool beyond that is *extra*, and a
persistent site with an extra pool fails the run:

- a **respawn**: a second pool of one persistent loader (something shut the first one down);
- a **new loader**: the site built a loader that replaces an earlier one of the same kind (same
  process, dataset type and length, batch size) whose last pass began before it was created:
  a loader rebuilt per epoch or per evaluation; when Lightning built it, the
  ``reload_dataloaders_every_n_epochs`` it ran with is named.

One loader per split (train, val, test of other datasets), or loaders built up front and used
side by side, need their pools. A non-persistent loader starts a pool per pass by design: it
is reported (with what ``persistent_workers=True`` would save), not failed.

Time spent starting a pool: the first-batch latency of the pass that started it, minus the
site's steady first batch (the median first batch of its passes that started no pool or, when
every pass started one, the median time between later batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lintloader.runtime import timing
from lintloader.runtime.trace.records import Frame, LoaderTrace, PassRecord, PoolStart
from lintloader.runtime.trace.respawns import LoaderSummary, pass_of, steady_state

SiteKey = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PoolCost:
    """One pool start of a site, the pass that started it, and what it cost."""

    loader: LoaderSummary
    start: PoolStart
    pass_record: PassRecord | None
    cost_s: float


@dataclass(frozen=True)
class ExtraPool:
    """A pool the run did not need."""

    kind: str  # "respawn" | "new loader" | "lightning reload"
    pool: PoolCost
    cause: str
    frames: tuple[Frame, ...]  # the culprit frames, innermost first

    @property
    def cost_s(self) -> float:
        return self.pool.cost_s


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
    def failing(self) -> bool:
        return self.persistent and bool(self.extras)

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
        return sum(extra.cost_s for extra in self.extras) if self.persistent else 0.0

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
    grouped: dict[SiteKey, list[LoaderSummary]] = {}
    for loader in sorted(loaders, key=lambda item: item.trace.t):
        grouped.setdefault(site_key(loader), []).append(loader)
    sites = [_site(members) for members in grouped.values()]
    return sorted(sites, key=lambda s: (-s.lost_s, -len(s.extras)))


def _site(loaders: list[LoaderSummary]) -> Site:
    site = Site(loaders[0].created_by, loaders)
    site.steady_s = steady_state([p for loader in loaders for p in loader.trace.passes])
    site.pools = [_pool_cost(loader, start, site.steady_s) for loader in loaders
                  for start in sorted(loader.trace.pool_starts, key=lambda s: s.t)]  # fmt: skip
    replacing = _replacements(loaders)
    for pool in site.pools:
        extra = _extra(pool, site, replacing)
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


def _replacements(loaders: list[LoaderSummary]) -> set[str]:
    """Ids of the loaders that replace an earlier one of the same kind: created after the
    earlier one's last pass began."""
    chains: dict[tuple[object, ...], LoaderTrace] = {}
    replacing = set()
    for loader in loaders:
        trace = loader.trace
        kind = (trace.pid, trace.dataset, trace.num_workers)
        previous = chains.get(kind)
        if previous is not None and previous.passes and _last_began(previous) <= trace.t:
            replacing.add(trace.id)
        chains[kind] = trace
    return replacing


def _last_began(trace: LoaderTrace) -> float:
    return max(p.t0 if p.t0 is not None else p.t for p in trace.passes)


def _extra(pool: PoolCost, site: Site, replacing: set[str]) -> ExtraPool | None:
    trace = pool.loader.trace
    if trace.num_workers == 0 or not trace.persistent_workers:
        return None
    first = min(s.t for s in trace.pool_starts)
    if pool.start.t > first:
        respawn = next((r for r in pool.loader.respawns if r.pool_start is pool.start), None)
        cause = respawn.cause if respawn is not None else "unknown"
        return ExtraPool("respawn", pool, cause, respawn.frames if respawn is not None else ())
    if trace.id not in replacing:
        return None
    frames = pool.loader.created_by
    if trace.lightning_reload:
        every = trace.lightning_reload
        cause = f"Lightning rebuilt it (reload_dataloaders_every_n_epochs={every})"
        return ExtraPool("lightning reload", pool, cause, frames)
    return ExtraPool("new loader", pool, "a new loader replaced the last one", frames)
