"""One probe run: its worker-log directory, the loaders under test, their cleanup."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from lintloader.runtime.verify.batches import inspect_batch
from lintloader.runtime.verify.cleanup import leftover_children, pool_pids, shutdown_workers
from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.recorder import EpochRecorder
from lintloader.runtime.verify.records import DeviceInfo, LoaderReport, ProbeResult


@dataclass
class ProbedLoader:
    """A DataLoader under test and the recorder of what its epochs delivered."""

    name: str
    loader: Any
    recorder: EpochRecorder
    expected_samples: int | None
    tagged: bool  # samples carry index + worker PID (the probe's own dataset)
    collated: bool = True
    dataset_size: int | None = None

    def report(self) -> LoaderReport:
        return LoaderReport(
            name=self.name,
            num_workers=int(getattr(self.loader, "num_workers", 0)),
            persistent_workers=bool(getattr(self.loader, "persistent_workers", False)),
            dataset_size=self.dataset_size,
            batch_size=getattr(self.loader, "batch_size", None),
            pid_source="samples" if self.tagged else "collate log",
            epochs=self.recorder.records(self.expected_samples, self.tagged),
        )


@dataclass
class ProbeSession:
    """``with ProbeSession(config) as session:`` -- whatever happens inside, the worker pools
    of every loader are shut down on exit and the worker logs are removed."""

    config: ProbeConfig
    loaders: list[ProbedLoader] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    _own_dir: Path | None = None

    def __enter__(self) -> ProbeSession:
        if self.config.log_dir is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="lintloader-verify-"))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        shutdown_workers([probed.loader for probed in self.loaders])
        if exc_type is not None:
            self.discard()

    def log_dir(self, name: str) -> Path:
        root = self.config.log_dir if self.config.log_dir is not None else self._own_dir
        assert root is not None, "use ProbeSession as a context manager"
        path = root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def add(self, probed: ProbedLoader) -> ProbedLoader:
        self.loaders.append(probed)
        return probed

    def probe_loader(self, name: str, pin_memory: bool, size: int | None = None) -> ProbedLoader:
        """The probe's own loader, its ``iter()`` wired to start the recorder's epoch."""
        from lintloader.runtime.verify.dataset import make_probe_loader

        log_dir = self.log_dir(name)
        loader = make_probe_loader(self.config, str(log_dir), pin_memory, size)
        recorder = EpochRecorder(log_dir)
        loader.on_iter = recorder.begin
        size = len(loader.dataset)  # type: ignore[arg-type]  # a map-style dataset has a len
        return self.add(ProbedLoader(name, loader, recorder, size, True, True, size))

    def result(
        self, engine: str, target: str, device: DeviceInfo, versions: dict[str, str]
    ) -> ProbeResult:
        """Build the result (call after the ``with`` block, once the workers are gone)."""
        reports = [probed.report() for probed in self.loaders]
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
        return ProbeResult(
            engine=engine,
            target=target,
            device=device,
            versions=versions,
            loaders=reports,
            notes=list(self.notes),
            leftover_pids=leftover_children(),
            wall_s=time.monotonic() - self.started,
        )

    def discard(self) -> None:
        """Remove the worker logs of a run that produced no result."""
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)


def consume_epoch(
    iterable: Any,
    probed: ProbedLoader,
    step: Callable[[Any], None] | None = None,
    max_batches: int | None = None,
) -> bool:
    """Iterate ``iterable`` once as a training loop would; False if cut at ``max_batches``."""
    recorder = probed.recorder
    recorder.begin()
    complete = True
    for count, batch in enumerate(iterable, start=1):
        recorder.observe(inspect_batch(batch, probed.collated))
        if step is not None:
            step(batch)
        if max_batches is not None and count >= max_batches:
            complete = False
            break
    recorder.end(pool_pids(probed.loader))
    return complete
