"""Evidence written by the worker processes themselves.

Both callables are picklable module-level classes, so they also work with the ``spawn`` and
``forkserver`` start methods. Each worker appends one line per event to a file of its own
(``<kind>-<pid>.log``), so no two processes ever write the same file. Times are
``time.monotonic()``, a system-wide clock on Linux, macOS and Windows, so they compare with the
main process's epoch boundaries.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INIT_KIND = "init"
BATCH_KIND = "batch"


@dataclass(frozen=True)
class WorkerEvent:
    """A worker started (``init``) or collated a batch (``batch``) at time ``t``."""

    kind: str
    pid: int
    t: float


def _append(log_dir: str, kind: str) -> None:
    pid = os.getpid()
    path = os.path.join(log_dir, f"{kind}-{pid}.log")
    with open(path, "a", encoding="ascii") as handle:
        handle.write(f"{pid} {time.monotonic():.6f}\n")


class WorkerInitLog:
    """A ``worker_init_fn`` that records the worker's PID, then waits ``delay_s`` seconds,
    then calls the loader's own ``worker_init_fn`` (if any)."""

    def __init__(
        self,
        log_dir: str,
        delay_s: float = 0.0,
        chained: Callable[[int], Any] | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.delay_s = delay_s
        self.chained = chained

    def __call__(self, worker_id: int) -> None:
        _append(self.log_dir, INIT_KIND)
        if self.delay_s > 0:
            time.sleep(self.delay_s)
        if self.chained is not None:
            self.chained(worker_id)


class CollateLog:
    """A ``collate_fn`` wrapper that records which worker produced a batch and returns the
    loader's own collate result unchanged. Only installed on loaders in the main process."""

    def __init__(self, log_dir: str, collate_fn: Callable[[Any], Any]) -> None:
        self.log_dir = log_dir
        self.collate_fn = collate_fn
        self.main_pid = os.getpid()  # batches the main process collates are no worker evidence

    def __call__(self, data: Any) -> Any:
        batch = self.collate_fn(data)
        if os.getpid() != self.main_pid:
            _append(self.log_dir, BATCH_KIND)
        return batch


def read_events(log_dir: Path, kind: str) -> list[WorkerEvent]:
    """All ``kind`` events in ``log_dir``, oldest first."""
    events: list[WorkerEvent] = []
    for path in sorted(log_dir.glob(f"{kind}-*.log")):
        for line in path.read_text(encoding="ascii").splitlines():
            pid, _, stamp = line.partition(" ")
            if pid and stamp:
                events.append(WorkerEvent(kind, int(pid), float(stamp)))
    return sorted(events, key=lambda event: event.t)
