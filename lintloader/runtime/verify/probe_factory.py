"""``--dataloader MODULE:FACTORY``: probe the user's own loader (this runs user code).

FACTORY is called with no arguments and may return a DataLoader or any iterable wrapping one
(a fetcher, a loop helper); the probe iterates what it returns for N epochs and finds the
DataLoader inside it to instrument:

* ``worker_init_fn`` is wrapped: every worker logs its PID when it starts (then sleeps
  ``--worker-init-delay``, then runs the user's own ``worker_init_fn``);
* unless the dataset is the probe's :class:`ProbeDataset`, ``collate_fn`` is wrapped so each
  worker logs its PID per batch it makes; the epoch's worker PIDs are then the workers that
  made batches in the epoch (batches prefetched but never consumed included);
* samples are counted in the main process from what the iterable yields: exact indices with
  the probe dataset, else the leading dimension of each batch. The expected count is the
  sampler's length (what one full epoch yields), or epoch 1's count when it has none.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.devices import to_device, torch_device_name
from lintloader.runtime.verify.environment import require_torch, resolve_device, versions
from lintloader.runtime.verify.errors import ProbeUnavailable
from lintloader.runtime.verify.recorder import EpochRecorder
from lintloader.runtime.verify.records import ProbeResult
from lintloader.runtime.verify.session import ProbedLoader, ProbeSession, consume_epoch
from lintloader.runtime.verify.worker_log import CollateLog, WorkerInitLog

_SEARCH_DEPTH = 3
_UNSIZED_BATCH_CAP = 100_000


def run_factory_probe(spec: str, config: ProbeConfig) -> ProbeResult:
    """Import ``spec`` (``MODULE:FACTORY``) and probe what its factory returns."""
    require_torch()
    return probe_factory(load_factory(spec), config, spec)


def probe_factory(factory: Callable[[], Any], config: ProbeConfig, label: str) -> ProbeResult:
    """Call ``factory`` and iterate what it returns for ``config.epochs`` epochs."""
    device = resolve_device(config.device)
    with ProbeSession(config) as session:
        produced = factory()
        loader = find_dataloader(produced)
        if loader is None:
            raise ProbeUnavailable(
                f"{label} returned {type(produced).__qualname__}, which is not a torch "
                "DataLoader and holds none in its attributes"
            )
        probed = session.add(instrument(loader, session, config))
        cap = _batch_cap(loader)
        step = _device_step(torch_device_name(device))
        for epoch in range(1, config.epochs + 1):
            if not consume_epoch(produced, probed, step, cap):
                session.notes.append(f"epoch {epoch}: stopped after {cap} batches (endless?)")
    target = f"{label} -> {type(produced).__qualname__}"
    return session.result("factory", target, device, versions())


def load_factory(spec: str) -> Callable[[], Any]:
    """``package.module:factory`` or ``path/to/file.py:factory`` (the module is imported with
    the current directory, or the file's directory, on ``sys.path``)."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise ProbeUnavailable(
            f"--dataloader {spec!r}: expected MODULE:FACTORY or path/to/file.py:FACTORY"
        )
    module = _import_target(module_part)
    factory: object = module
    for part in attr.split("."):
        if not hasattr(factory, part):
            raise ProbeUnavailable(f"--dataloader {spec!r}: {module.__name__} has no {attr!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise ProbeUnavailable(f"--dataloader {spec!r}: {attr} is not callable")
    return factory


def _import_target(module_part: str) -> ModuleType:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        return _import_file(Path(module_part))
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return _import_module(module_part)


def _import_file(path: Path) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise ProbeUnavailable(f"--dataloader: no such file {path}")
    sys.path.insert(0, str(path.parent))  # so spawn-started workers can import it too
    module = _import_module(path.stem)
    if Path(getattr(module, "__file__", "") or "").resolve() != path:
        raise ProbeUnavailable(
            f"--dataloader: importing {path.stem!r} found {module.__file__}, not {path} "
            "(another module of that name shadows it)"
        )
    return module


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise ProbeUnavailable(
            f"--dataloader: could not import {name!r}: {type(exc).__name__}: {exc}"
        ) from exc


def find_dataloader(obj: Any, depth: int = 0) -> Any | None:
    """``obj`` itself if it is a DataLoader, else the first DataLoader among its attributes
    (and theirs, a few levels deep)."""
    from torch.utils.data import DataLoader

    if isinstance(obj, DataLoader):
        return obj
    if depth >= _SEARCH_DEPTH:
        return None
    for child in _children(obj):
        found = find_dataloader(child, depth + 1)
        if found is not None:
            return found
    return None


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, (list, tuple)):
        return list(obj)
    attributes = getattr(obj, "__dict__", None)
    return list(attributes.values()) if isinstance(attributes, dict) else []


def instrument(loader: Any, session: ProbeSession, config: ProbeConfig) -> ProbedLoader:
    """Make the loader's workers log their PIDs; refuse loaders without a worker pool."""
    from lintloader.runtime.verify.cleanup import shutdown_workers
    from lintloader.runtime.verify.dataset import ProbeDataset

    if loader.num_workers == 0:
        raise ProbeUnavailable(
            "the DataLoader has num_workers=0: there is no worker pool to verify"
        )
    if getattr(loader, "_iterator", None) is not None:
        shutdown_workers([loader])
        session.notes.append(
            "the factory had already iterated the loader; its workers were shut down so the "
            "probe could watch them start"
        )
    if not loader.persistent_workers:
        session.notes.append(
            "persistent_workers=False: the DataLoader itself starts new workers on every "
            "iter(); set persistent_workers=True to keep them"
        )
    log_dir = session.log_dir("train")
    tagged = isinstance(loader.dataset, ProbeDataset)
    loader.worker_init_fn = WorkerInitLog(
        str(log_dir), config.worker_init_delay, loader.worker_init_fn
    )
    if not tagged:
        loader.collate_fn = CollateLog(str(log_dir), loader.collate_fn)
    return ProbedLoader(
        name="train",
        loader=loader,
        recorder=EpochRecorder(log_dir),
        expected_samples=expected_samples(loader),
        tagged=tagged,
        collated=loader.batch_sampler is not None,
        dataset_size=_len_or_none(loader.dataset),
    )


def expected_samples(loader: Any) -> int | None:
    """How many samples one full pass over ``loader`` yields, if the sampler knows."""
    from torch.utils.data import BatchSampler, IterableDataset

    if isinstance(loader.dataset, IterableDataset):
        return None
    batch_sampler = loader.batch_sampler
    if batch_sampler is None:
        return _len_or_none(loader.sampler)
    if type(batch_sampler) is not BatchSampler:  # a custom batch sampler: no promise
        return None
    if batch_sampler.drop_last:
        batches = _len_or_none(batch_sampler)
        return None if batches is None else batches * batch_sampler.batch_size
    return _len_or_none(batch_sampler.sampler)


def _len_or_none(obj: Any) -> int | None:
    try:
        return len(obj)
    except TypeError:
        return None


def _batch_cap(loader: Any) -> int:
    batches = _len_or_none(loader)
    return _UNSIZED_BATCH_CAP if batches is None else 2 * batches + 10


def _device_step(device: str) -> Callable[[Any], None] | None:
    if device == "cpu":
        return None

    def step(batch: Any) -> None:
        to_device(batch, device)

    return step
