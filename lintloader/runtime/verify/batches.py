"""Reading a batch in the main process: how many samples, and (for the probe's own dataset)
which sample indices and which worker PIDs it carries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INDEX_KEY = "index"
WORKER_PID_KEY = "worker_pid"

_MAX_DEPTH = 4


@dataclass(frozen=True)
class BatchStats:
    """``indices``/``pids`` are set only when the batch carries the probe's tags."""

    samples: int
    indices: tuple[int, ...] | None = None
    pids: tuple[int, ...] | None = None


def inspect_batch(batch: Any, collated: bool = True) -> BatchStats:
    """Count the samples in ``batch``.

    A batch from :class:`~lintloader.runtime.verify.dataset.ProbeDataset` (found anywhere inside a
    tuple/list/dict wrapper, e.g. a fetcher's ``(batch, is_last)``) gives exact indices and PIDs.
    Otherwise a collated batch counts the leading dimension of its first tensor (or its length),
    and an uncollated one (``batch_size=None``) counts as one sample.
    """
    tags = _find_tags(batch, 0)
    if tags is not None:
        indices = _as_ints(tags[INDEX_KEY])
        pids = _as_ints(tags[WORKER_PID_KEY])
        return BatchStats(len(indices), indices, pids)
    if not collated:
        return BatchStats(1)
    return BatchStats(_leading_size(batch, 0))


def _find_tags(obj: Any, depth: int) -> Mapping[str, Any] | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(obj, Mapping):
        if INDEX_KEY in obj and WORKER_PID_KEY in obj:
            return obj
        children: Sequence[Any] = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        children = obj
    else:
        return None
    for child in children:
        found = _find_tags(child, depth + 1)
        if found is not None:
            return found
    return None


def _as_ints(value: Any) -> tuple[int, ...]:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, int):
        return (value,)
    return tuple(int(v) for v in value)


def _leading_size(obj: Any, depth: int) -> int:
    import torch

    if isinstance(obj, torch.Tensor):
        return int(obj.shape[0]) if obj.dim() > 0 else 1
    if depth < _MAX_DEPTH and isinstance(obj, Mapping):
        for child in obj.values():
            return _leading_size(child, depth + 1)
    if depth < _MAX_DEPTH and isinstance(obj, (list, tuple)) and obj:
        first = obj[0]
        if isinstance(first, (torch.Tensor, Mapping)) or (
            isinstance(first, (list, tuple)) and len(obj) <= 3
        ):
            return _leading_size(first, depth + 1)
        return len(obj)
    return 1
