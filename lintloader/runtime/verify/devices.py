"""Moving batches to the probed device, as a training loop would."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lintloader.runtime.verify.records import DeviceInfo


def torch_device_name(device: DeviceInfo) -> str:
    return device.type if device.index is None else f"{device.type}:{device.index}"


def to_device(batch: Any, device: str) -> Any:
    """``batch`` with every tensor inside it on ``device`` (non-blocking from pinned memory)."""
    import torch

    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, Mapping):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(to_device(value, device) for value in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(value, device) for value in batch)
    return batch
