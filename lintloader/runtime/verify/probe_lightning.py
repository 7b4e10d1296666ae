"""The default probe: the installed Lightning's own Trainer drives the probe's loaders.

Works with ``pytorch_lightning`` 1.5.x-2.x and with ``lightning``: Trainer arguments are
chosen by inspecting the installed Trainer's signature, not by version number.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import signal
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.environment import (
    Lightning,
    device_of_tensor,
    import_lightning,
    require_torch,
    resolve_device,
    versions,
)
from lintloader.runtime.verify.records import DeviceInfo, ProbeResult
from lintloader.runtime.verify.session import ProbedLoader, ProbeSession

_LIGHTNING_LOGGERS = (
    "pytorch_lightning",
    "lightning",
    "lightning.pytorch",
    "lightning.fabric",
    "lightning_fabric",
)

# (parameter, value) alternatives: the first name the installed Trainer accepts is used.
_QUIET_TRAINER_ARGS: tuple[tuple[tuple[str, Any], ...], ...] = (
    (("logger", False),),
    (("enable_checkpointing", False), ("checkpoint_callback", False)),
    (("enable_progress_bar", False), ("progress_bar_refresh_rate", 0)),
    (("enable_model_summary", False), ("weights_summary", None)),
    (("num_sanity_val_steps", 0),),
)


@dataclass
class _Observed:
    """Filled in by the LightningModule while the Trainer runs."""

    device: Any | None = None


def run_lightning_probe(config: ProbeConfig) -> ProbeResult:
    require_torch()
    lightning = import_lightning()
    device = resolve_device(config.device)
    observed = _Observed()
    with ProbeSession(config) as session:
        pin = device.type == "cuda"
        train = session.probe_loader("train", pin_memory=pin)
        val = None
        if config.val:
            val = session.probe_loader("val", pin_memory=pin, size=max(config.samples // 2, 1))
        module = _module_class(lightning.module, val is not None)(train, val, observed)
        kwargs = trainer_kwargs(lightning, config, device, session.log_dir("lightning_root"))
        _fit(lightning.module.Trainer, kwargs, module)
    used = device_of_tensor(observed.device, device)
    target = f"{lightning.package}.Trainer over the probe dataset"
    return session.result("lightning", target, used, versions(lightning))


def trainer_kwargs(
    lightning: Lightning, config: ProbeConfig, device: DeviceInfo, root: Path
) -> dict[str, Any]:
    """Quiet, single-device ``Trainer`` arguments the installed Trainer accepts."""
    params = inspect.signature(lightning.module.Trainer.__init__).parameters
    kwargs: dict[str, Any] = {"max_epochs": config.epochs}
    if "default_root_dir" in params:
        kwargs["default_root_dir"] = str(root)
    for alternatives in _QUIET_TRAINER_ARGS:
        for name, value in alternatives:
            if name in params:
                kwargs[name] = value
                break
    kwargs.update(_device_args(params, config.device, device))
    return kwargs


def _device_args(params: Any, requested: str, device: DeviceInfo) -> dict[str, Any]:
    accelerator = "auto" if requested == "auto" else ("gpu" if device.type == "cuda" else "cpu")
    if device.type == "cuda" and requested != "auto":
        count: Any = [device.index or 0]
    else:
        count = 1
    if "devices" in params:
        return {"accelerator": accelerator, "devices": count}
    if device.type == "cuda" and "gpus" in params:  # Lightning before ``devices``
        return {"gpus": count}
    return {}


def _module_class(pl: ModuleType, with_val: bool) -> type:
    """A one-linear-layer LightningModule that records every batch it is given."""
    import torch

    from lintloader.runtime.verify.batches import inspect_batch
    from lintloader.runtime.verify.cleanup import pool_pids
    from lintloader.runtime.verify.dataset import FEATURES

    class ProbeModule(pl.LightningModule):  # type: ignore[name-defined]  # imported at run time
        def __init__(
            self, train: ProbedLoader, val: ProbedLoader | None, observed: _Observed
        ) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(FEATURES, 1)
            self.probe_train = train
            self.probe_val = val
            self.observed = observed

        def train_dataloader(self) -> Any:
            return self.probe_train.loader

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.probe_train.recorder.observe(inspect_batch(batch))
            self.observed.device = batch["x"].device
            return torch.nn.functional.mse_loss(self.layer(batch["x"]), batch["y"])

        def on_train_epoch_end(self) -> None:
            self.probe_train.recorder.end(pool_pids(self.probe_train.loader))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    class ProbeModuleWithVal(ProbeModule):
        def val_dataloader(self) -> Any:
            assert self.probe_val is not None
            return self.probe_val.loader

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            assert self.probe_val is not None
            self.probe_val.recorder.observe(inspect_batch(batch))
            self.layer(batch["x"])

        def on_validation_epoch_end(self) -> None:
            assert self.probe_val is not None
            self.probe_val.recorder.end(pool_pids(self.probe_val.loader))

    return ProbeModuleWithVal if with_val else ProbeModule


def _fit(trainer_cls: type, kwargs: dict[str, Any], module: Any) -> None:
    """``Trainer(**kwargs).fit(module)`` without Lightning's chatter. Lightning turns Ctrl-C
    into a graceful stop (1.x returns, 2.x calls ``sys.exit(1)``); turn it back into
    ``KeyboardInterrupt``."""
    with _quiet(), _sigint_restored():
        trainer = trainer_cls(**kwargs)
        try:
            trainer.fit(module)
        except SystemExit:
            if getattr(trainer, "interrupted", False):
                raise KeyboardInterrupt from None
            raise
        if getattr(trainer, "interrupted", False):
            raise KeyboardInterrupt


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _LIGHTNING_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _sigint_restored() -> Iterator[None]:
    """Lightning 2.x leaves SIGINT ignored after an interrupt; put the old handler back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
