"""What a probe measured, per loader and per epoch, and the PASS/FAIL judgement on it.

Nothing here imports torch: the records are plain data so that rendering and judging can be
tested (and the JSON read back) without the runtime extra.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lintloader.runtime import timing
from lintloader.runtime.exits import EXIT_FAIL, EXIT_PASS

PASS = "PASS"
FAIL = "FAIL"


@dataclass(frozen=True)
class EpochRecord:
    """One pass over one loader.

    ``worker_pids`` are the processes that produced the batches seen in this epoch;
    ``started_pids`` the worker processes whose ``worker_init_fn`` ran in this epoch's window
    (after the previous epoch ended, up to the end of this one); ``pool_pids`` the loader's
    live worker processes when the epoch ended (empty when the loader kept no pool).
    """

    epoch: int
    batches: int
    samples: int
    unique_samples: int | None
    expected_samples: int | None
    worker_pids: tuple[int, ...]
    started_pids: tuple[int, ...]
    pool_pids: tuple[int, ...]
    first_batch_s: float | None
    duration_s: float

    @property
    def workers_started(self) -> int:
        return len(self.started_pids)


@dataclass
class LoaderReport:
    """Everything measured for one DataLoader (``train`` or ``val``)."""

    name: str
    num_workers: int
    persistent_workers: bool
    dataset_size: int | None
    batch_size: int | None
    pid_source: str  # "samples": PIDs carried in each sample; "collate log": written by workers
    epochs: list[EpochRecord] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return judge_loader(self)


@dataclass(frozen=True)
class DeviceInfo:
    """The device the batches were actually on."""

    type: str  # "cpu", "cuda", "mps", ...
    index: int | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        where = self.type if self.index is None else f"{self.type}:{self.index}"
        return f"{where} ({self.name})" if self.name else where


@dataclass
class ProbeResult:
    """The outcome of one ``lintloader verify`` run."""

    engine: str  # "lightning", "torch" or "factory"
    target: str  # what was probed, in words
    device: DeviceInfo
    versions: dict[str, str]
    loaders: list[LoaderReport]
    notes: list[str] = field(default_factory=list)
    leftover_pids: list[int] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def problems(self) -> list[str]:
        found: list[str] = []
        for loader in self.loaders:
            found.extend(f"{loader.name}: {problem}" for problem in loader.problems)
        return found

    @property
    def verdict(self) -> str:
        return PASS if not self.problems else FAIL

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.verdict == PASS else EXIT_FAIL

    def to_dict(self) -> dict[str, Any]:
        loaders = []
        for loader in self.loaders:
            data = asdict(loader)
            for epoch_data, epoch in zip(data["epochs"], loader.epochs, strict=True):
                epoch_data["workers_started"] = epoch.workers_started
                epoch_data["worker_pids"] = list(epoch.worker_pids)
                epoch_data["started_pids"] = list(epoch.started_pids)
                epoch_data["pool_pids"] = list(epoch.pool_pids)
            steady = steady_first_batch(loader)
            for epoch_data, epoch in zip(data["epochs"], loader.epochs, strict=True):
                epoch_data["stall_s"] = _rounded(stall(epoch, steady))
            data["problems"] = loader.problems
            data["first_batch_ratio"] = first_batch_ratio(loader)
            data["pools_started"] = pools_started(loader)
            data["steady_first_batch_s"] = _rounded(steady)
            data["median_stall_s"] = _rounded(median_stall(loader))
            data["stall_epochs"] = len(epoch_stalls(loader))
            loaders.append(data)
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "engine": self.engine,
            "target": self.target,
            "device": {**asdict(self.device), "label": self.device.label},
            "versions": dict(self.versions),
            "loaders": loaders,
            "problems": self.problems,
            "notes": list(self.notes),
            "leftover_pids": list(self.leftover_pids),
            "wall_s": round(self.wall_s, 3),
        }


def judge_loader(loader: LoaderReport) -> list[str]:
    """Reasons this loader fails; empty when every later epoch reused epoch 1's workers
    and every epoch saw all of its samples."""
    if not loader.epochs:
        return ["no epoch ran"]
    first = loader.epochs[0]
    problems: list[str] = []
    if not first.worker_pids and not first.started_pids:
        problems.append("epoch 1: no worker process produced a batch (num_workers=0?)")
    baseline = set(first.worker_pids) | set(first.started_pids) | set(first.pool_pids)
    for epoch in loader.epochs:
        problems.extend(_sample_problems(epoch, first))
        if epoch.epoch > 1:
            problems.extend(_respawn_problems(epoch, baseline))
    return problems


def _sample_problems(epoch: EpochRecord, first: EpochRecord) -> list[str]:
    expected = epoch.expected_samples if epoch.expected_samples is not None else first.samples
    what = "dataset size" if epoch.expected_samples is not None else "epoch 1"
    problems: list[str] = []
    if epoch.samples == 0 and expected == 0:
        problems.append(f"epoch {epoch.epoch}: no samples at all")
    seen = epoch.unique_samples if epoch.unique_samples is not None else epoch.samples
    if seen < expected:
        problems.append(
            f"epoch {epoch.epoch}: {expected - seen} of {expected} samples missing "
            f"(saw {seen} in {epoch.batches} batches; expected {expected} = {what})"
        )
    elif epoch.samples > expected:
        problems.append(
            f"epoch {epoch.epoch}: {epoch.samples} samples, more than the {expected} expected"
        )
    if epoch.unique_samples is not None and epoch.unique_samples < epoch.samples:
        dup = epoch.samples - epoch.unique_samples
        problems.append(f"epoch {epoch.epoch}: {dup} samples seen twice")
    return problems


def _respawn_problems(epoch: EpochRecord, baseline: set[int]) -> list[str]:
    seen = set(epoch.worker_pids) | set(epoch.started_pids) | set(epoch.pool_pids)
    new_pids = sorted(seen - baseline)
    if not epoch.started_pids and not new_pids:
        return []
    started = epoch.workers_started
    return [
        f"epoch {epoch.epoch}: respawned workers: {started} started this epoch, "
        f"new pids {_pids(new_pids)}; epoch 1's pids were {_pids(sorted(baseline))}"
    ]


def _pids(pids: list[int]) -> str:
    return ",".join(str(p) for p in pids) if pids else "-"


def first_batch_ratio(loader: LoaderReport) -> float | None:
    """Mean first-batch latency of epochs 2..N divided by epoch 1's (None if undefined)."""
    later = [e.first_batch_s for e in loader.epochs[1:] if e.first_batch_s is not None]
    first = loader.epochs[0].first_batch_s if loader.epochs else None
    if not later or not first:
        return None
    return (sum(later) / len(later)) / first


def mean_later_first_batch(loader: LoaderReport) -> float | None:
    later = [e.first_batch_s for e in loader.epochs[1:] if e.first_batch_s is not None]
    return sum(later) / len(later) if later else None


def pools_started(loader: LoaderReport) -> int:
    """Worker pools the loader started: one per epoch in which workers started."""
    return sum(1 for epoch in loader.epochs if epoch.workers_started)


def steady_first_batch(loader: LoaderReport) -> float | None:
    """The first batch of an epoch that waits on no pool start: the median first batch of the
    later epochs that started no worker; when every epoch started some, the median time
    between later batches of an epoch."""
    warm = [
        e.first_batch_s
        for e in loader.epochs[1:]
        if not e.workers_started and e.first_batch_s is not None
    ]
    between = [
        (e.duration_s - e.first_batch_s) / (e.batches - 1)
        for e in loader.epochs
        if e.first_batch_s is not None and e.batches > 1
    ]
    return timing.steady_first_batch(warm, between)


def stall(epoch: EpochRecord, steady: float | None) -> float | None:
    """How long the epoch's first batch waited beyond the steady first batch."""
    return timing.stall(epoch.first_batch_s, steady)


def epoch_stalls(loader: LoaderReport) -> list[float]:
    steady = steady_first_batch(loader)
    found = [stall(epoch, steady) for epoch in loader.epochs]
    return [value for value in found if value is not None]


def median_stall(loader: LoaderReport) -> float | None:
    """The median stall over every epoch: near 0 when only epoch 1 starts a pool, the cost
    of a pool start when every epoch starts one (None without a measured epoch)."""
    return timing.median(epoch_stalls(loader))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
