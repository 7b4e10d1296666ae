"""The main process's view of the epochs of one loader, merged with the workers' own logs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from lintloader.runtime.verify.batches import BatchStats
from lintloader.runtime.verify.records import EpochRecord
from lintloader.runtime.verify.worker_log import BATCH_KIND, INIT_KIND, WorkerEvent, read_events


@dataclass
class RawEpoch:
    """What the consumer saw between ``begin`` (the loader's ``iter()``) and ``end``."""

    begin: float
    end: float | None = None
    first_batch: float | None = None
    batches: int = 0
    samples: int = 0
    indices: set[int] | None = None
    pids: set[int] | None = None
    pool_pids: tuple[int, ...] = ()

    def add(self, stats: BatchStats, now: float) -> None:
        if self.first_batch is None:
            self.first_batch = now
        self.batches += 1
        self.samples += stats.samples
        if stats.indices is not None:
            self.indices = (self.indices or set()) | set(stats.indices)
        if stats.pids is not None:
            self.pids = (self.pids or set()) | set(stats.pids)


@dataclass
class EpochRecorder:
    """Collects epochs for one loader. ``begin`` is idempotent while an epoch is open, so a
    loop that calls ``iter()`` twice per epoch still counts one epoch."""

    log_dir: Path
    epochs: list[RawEpoch] = field(default_factory=list)
    _open: RawEpoch | None = None

    def begin(self) -> None:
        if self._open is None:
            self._open = RawEpoch(begin=time.monotonic())

    def observe(self, stats: BatchStats) -> None:
        now = time.monotonic()
        if self._open is None:
            self._open = RawEpoch(begin=now)
        self._open.add(stats, now)

    def end(self, pool_pids: tuple[int, ...] = ()) -> None:
        """Close the epoch; ``pool_pids``: the loader's live workers at this moment."""
        if self._open is None:  # an epoch that never called iter() (e.g. zero batches)
            self._open = RawEpoch(begin=time.monotonic())
        self._open.end = time.monotonic()
        self._open.pool_pids = pool_pids
        self.epochs.append(self._open)
        self._open = None

    def records(self, expected_samples: int | None, tagged: bool) -> list[EpochRecord]:
        """Epoch records, with worker starts attributed to the window
        ``(end of previous epoch, end of this epoch]``.

        ``tagged``: the loader's samples carry their index and worker PID (probe dataset), so
        PIDs and unique samples come from the batches; otherwise PIDs come from the workers'
        collate log in the same window and unique samples are unknown."""
        starts = read_events(self.log_dir, INIT_KIND)
        produced = read_events(self.log_dir, BATCH_KIND)
        records = []
        previous_end = float("-inf")
        for number, raw in enumerate(self.epochs, start=1):
            end = raw.end if raw.end is not None else float("inf")
            records.append(
                _record(
                    number, raw, (previous_end, end), starts, produced, expected_samples, tagged
                )
            )
            previous_end = end
        return records


def _in_window(events: list[WorkerEvent], after: float, until: float) -> list[int]:
    return sorted({event.pid for event in events if after < event.t <= until})


def _record(
    number: int,
    raw: RawEpoch,
    window: tuple[float, float],
    starts: list[WorkerEvent],
    produced: list[WorkerEvent],
    expected_samples: int | None,
    tagged: bool,
) -> EpochRecord:
    previous_end, end = window
    if tagged:
        pids = sorted(raw.pids or ())
        unique: int | None = len(raw.indices or ())
    else:
        pids = _in_window(produced, previous_end, end)
        unique = None
    first = None if raw.first_batch is None else raw.first_batch - raw.begin
    return EpochRecord(
        epoch=number,
        batches=raw.batches,
        samples=raw.samples,
        unique_samples=unique,
        expected_samples=expected_samples,
        worker_pids=tuple(pids),
        started_pids=tuple(_in_window(starts, previous_end, end)),
        pool_pids=raw.pool_pids,
        first_batch_s=first,
        duration_s=(raw.end or raw.begin) - raw.begin,
    )
