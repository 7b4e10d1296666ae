"""From one loader's records to what the report says about it: passes, pool starts, respawns,
what they cost and the frames that caused each.

A respawn is a pool start after the first one for a persistent loader, and every pass of a
non-persistent loader with workers (it starts a pool each time by design). Its cost is the
first-batch latency of that pass above the loader's steady state: the median first-batch
latency of its passes that started no pool or, when every pass started one, the median time
between later batches.
"""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass, field

from lintloader.runtime import timing
from lintloader.runtime.trace.records import Frame, LoaderTrace, PassRecord, PoolStart, Shutdown

CULPRIT_FRAMES = 4  # user or library frames shown per culprit, innermost first
_STDLIB = sysconfig.get_paths()["stdlib"]


@dataclass(frozen=True)
class Respawn:
    """One respawn: the pool start, its pass, and what shut the previous pool down."""

    pool_start: PoolStart
    pass_number: int | None
    first_batch_s: float | None
    cost_s: float
    cause: str
    frames: tuple[Frame, ...]  # user or library frames, innermost first (torch's left out)


@dataclass
class LoaderSummary:
    """The report's view of one loader."""

    trace: LoaderTrace
    respawns: list[Respawn] = field(default_factory=list)
    steady_s: float | None = None

    @property
    def cost_s(self) -> float:
        return sum(respawn.cost_s for respawn in self.respawns)

    @property
    def created_by(self) -> tuple[Frame, ...]:
        """The user's frames that created the loader, innermost first (through a library that
        wraps ``DataLoader.__init__``, as Lightning does); else the frames outside torch."""
        frames = [f for f in self.trace.created if not f.torch and not _machinery(f)]
        users = [f for f in frames if not _installed(f)]
        return tuple((users or frames)[:CULPRIT_FRAMES])

    @property
    def created_at(self) -> Frame | None:
        return self.created_by[0] if self.created_by else None

    @property
    def empty_passes(self) -> list[int]:
        """Passes after the first that yielded no batch although the first one did."""
        passes = self.trace.passes
        if not passes or not passes[0].batches:
            return []
        return [p.number for p in passes[1:] if p.batches == 0]

    @property
    def device(self) -> str:
        devices = [p.device for p in self.trace.passes if p.device and p.device != "cpu"]
        return devices[-1] if devices else "cpu"


def summarize(loader: LoaderTrace) -> LoaderSummary:
    summary = LoaderSummary(loader, steady_s=steady_state(loader.passes))
    summary.respawns = [
        _respawn(loader, start, summary.steady_s) for start in _respawning_starts(loader)
    ]
    return summary


def _respawning_starts(loader: LoaderTrace) -> list[PoolStart]:
    starts = sorted(loader.pool_starts, key=lambda s: s.t)
    if loader.num_workers == 0:
        return []
    return starts[1:] if loader.persistent_workers else starts


def steady_state(passes: list[PassRecord]) -> float | None:
    warm = [p.first_batch_s for p in passes if not p.pool_start and p.first_batch_s is not None]
    between = [p.steady_s for p in passes if p.steady_s is not None]
    return timing.steady_first_batch(warm, between)


def _respawn(loader: LoaderTrace, start: PoolStart, steady: float | None) -> Respawn:
    opened = pass_of(loader.passes, start)
    first = opened.first_batch_s if opened is not None else None
    cost = timing.pool_cost(first, steady)
    shutdown = _previous_shutdown(loader.shutdowns, start)
    if shutdown is not None and not loader.persistent_workers and _ended_pass(shutdown):
        shutdown = None  # the design of a non-persistent loader, not a frame's doing
    if shutdown is None:
        cause = "persistent_workers=False" if not loader.persistent_workers else "unknown"
        frames = culprit_frames(loader.created) if not loader.persistent_workers else ()
    else:
        cause, frames = shutdown.cause, culprit_frames(shutdown.stack)
    number = opened.number if opened is not None else None
    return Respawn(start, number, first, cost, cause, frames)


def _ended_pass(shutdown: Shutdown) -> bool:
    return shutdown.cause.startswith("end of pass")


def pass_of(passes: list[PassRecord], start: PoolStart) -> PassRecord | None:
    """The pass whose ``iter()`` started this pool: the first pass that started one and
    ended after it."""
    for candidate in passes:
        if candidate.pool_start and candidate.t >= start.t:
            return candidate
    return None


def _previous_shutdown(shutdowns: list[Shutdown], start: PoolStart) -> Shutdown | None:
    earlier = [s for s in shutdowns if s.t <= start.t]
    return max(earlier, key=lambda s: s.t) if earlier else None


def culprit_frames(stack: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The user or library frames of ``stack`` (torch's own and the interpreter's start-up
    frames left out), innermost first."""
    kept = [frame for frame in stack if not frame.torch and not _machinery(frame)]
    return tuple(kept[:CULPRIT_FRAMES])


def _installed(frame: Frame) -> bool:
    """A frame of an installed package or of the standard library."""
    path = frame.path
    return "site-packages" in path or "dist-packages" in path or path.startswith(_STDLIB)


def _machinery(frame: Frame) -> bool:
    return frame.path.startswith("<") or frame.path.endswith(("runpy.py", "/threading.py"))
