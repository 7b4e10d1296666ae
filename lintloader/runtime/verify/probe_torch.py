"""The baseline: a plain PyTorch training loop over the probe's own loader."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lintloader.runtime.verify.config import ProbeConfig
from lintloader.runtime.verify.devices import to_device, torch_device_name
from lintloader.runtime.verify.environment import require_torch, resolve_device, versions
from lintloader.runtime.verify.records import ProbeResult
from lintloader.runtime.verify.session import ProbedLoader, ProbeSession, consume_epoch


def run_torch_probe(config: ProbeConfig) -> ProbeResult:
    """``config.epochs`` epochs of a one-layer model trained the plain PyTorch way; with
    ``config.val`` each epoch is followed by a pass over a validation loader."""
    require_torch()
    device = resolve_device(config.device)
    pin = device.type == "cuda"
    with ProbeSession(config) as session:
        train = session.probe_loader("train", pin_memory=pin)
        val: ProbedLoader | None = None
        if config.val:
            val = session.probe_loader("val", pin_memory=pin, size=max(config.samples // 2, 1))
        train_step, eval_step = _steps(torch_device_name(device))
        for _ in range(config.epochs):
            consume_epoch(train.loader, train, train_step)
            if val is not None:
                consume_epoch(val.loader, val, eval_step)
    return session.result("torch", "plain PyTorch loop over the probe dataset", device, versions())


def _steps(device: str) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    import torch

    from lintloader.runtime.verify.dataset import FEATURES

    model = torch.nn.Linear(FEATURES, 1).to(device)

    def train_step(batch: Any) -> None:
        batch = to_device(batch, device)
        loss = torch.nn.functional.mse_loss(model(batch["x"]), batch["y"])
        model.zero_grad()
        loss.backward()
        with torch.no_grad():  # plain SGD; torch.optim would import torch._dynamo (seconds)
            for param in model.parameters():
                param.sub_(0.01 * param.grad)  # type: ignore[operator]  # backward() gave each one

    def eval_step(batch: Any) -> None:
        batch = to_device(batch, device)
        with torch.no_grad():
            model(batch["x"])

    return train_step, eval_step
