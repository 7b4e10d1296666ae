"""The knobs of one probe run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProbeConfig:
    """Settings shared by every engine. ``workers``, ``batch_size``, ``samples`` and
    ``persistent_workers`` shape the probe's own loaders; a user factory keeps its own."""

    epochs: int = 3
    workers: int = 2
    batch_size: int = 8
    samples: int = 64
    worker_init_delay: float = 0.0
    device: str = "auto"  # "auto", "cpu", "cuda" or "cuda:N"
    val: bool = False
    persistent_workers: bool = True
    log_dir: Path | None = None  # where workers write their logs; a temp dir if None
