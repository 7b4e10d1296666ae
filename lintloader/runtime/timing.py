"""The timing statistics ``verify`` and ``trace`` share: a loader's steady first batch (what a
first batch costs when it waits on no worker pool start), and how long a first batch waited
beyond it (a stall, or the cost of a pool start).

Plain arithmetic on seconds: each command picks its passes (verify: the epochs after the first
that started no worker; trace: the passes that started no pool) and this module does the rest.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no value."""
    return statistics.median(values) if values else None


def steady_first_batch(warm: Sequence[float], between: Sequence[float]) -> float | None:
    """The median first batch of the passes that started no pool (``warm``); when there is
    none, the median time between later batches (``between``, one per pass)."""
    return median(warm) if warm else median(between)


def stall(first_batch: float | None, steady: float | None) -> float | None:
    """How long a first batch waited beyond the steady one (never below 0); None when either
    is unknown."""
    if first_batch is None or steady is None:
        return None
    return max(0.0, first_batch - steady)


def pool_cost(first_batch: float | None, steady: float | None) -> float:
    """What a pool start cost its pass: the stall of its first batch over the steady one
    (all of it when no steady one is known), 0 when the pass saw no batch."""
    return stall(first_batch, steady or 0.0) or 0.0
