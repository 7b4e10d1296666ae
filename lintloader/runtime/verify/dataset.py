"""The probe's own dataset and loader. Imports torch: only import it from a running probe
(or from code that already needs torch, like the fixtures)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

from lintloader.runtime.verify.batches import INDEX_KEY, WORKER_PID_KEY
from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.worker_log import WorkerInitLog

FEATURES = 4


class ProbeDataset(Dataset[dict[str, Any]]):
    """``size`` tiny samples; each carries its own index and the PID of the process that
    loaded it, so the consumer can count unique samples and see which worker made them."""

    def __init__(self, size: int = 64, features: int = FEATURES) -> None:
        self.size = size
        self.features = features

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        x = torch.full((self.features,), float(index) / max(self.size, 1))
        return {
            "x": x,
            "y": x.sum(dim=0, keepdim=True),
            INDEX_KEY: index,
            WORKER_PID_KEY: os.getpid(),
        }


class ProbeDataLoader(DataLoader[dict[str, Any]]):
    """A DataLoader that calls ``on_iter`` whenever an epoch asks it for an iterator, which is
    where that epoch's clock starts (and where a respawn, if any, happens)."""

    on_iter: Callable[[], None] | None = None

    def __iter__(self) -> Any:
        if self.on_iter is not None:
            self.on_iter()
        return super().__iter__()


def make_probe_loader(
    config: ProbeConfig, log_dir: str, pin_memory: bool, size: int | None = None
) -> ProbeDataLoader:
    """The loader every engine probes: ``config.workers`` workers whose ``worker_init_fn``
    logs their PID (and sleeps ``config.worker_init_delay`` seconds)."""
    return ProbeDataLoader(
        ProbeDataset(size if size is not None else config.samples),
        batch_size=config.batch_size,
        shuffle=False,
        num_workers=config.workers,
        persistent_workers=config.persistent_workers,
        pin_memory=pin_memory,
        worker_init_fn=WorkerInitLog(log_dir, config.worker_init_delay),
    )
