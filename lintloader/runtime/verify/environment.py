"""What is installed and which device to use: torch and Lightning are imported here, lazily."""

from __future__ import annotations

import importlib
import platform
import sys
from dataclasses import dataclass
from types import ModuleType

from lintloader.runtime.verify.errors import ProbeUnavailable
from lintloader.runtime.verify.records import DeviceInfo

# Tried in this order; the first importable one is probed.
LIGHTNING_PACKAGES = (
    ("pytorch_lightning", "pytorch_lightning"),
    ("lightning", "lightning.pytorch"),
)


@dataclass(frozen=True)
class Lightning:
    """The importable Lightning: ``module`` has ``Trainer``, ``LightningModule``, ``Callback``."""

    package: str
    version: str
    module: ModuleType


def require_torch() -> ModuleType:
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise ProbeUnavailable(
            f"torch is not importable by {sys.executable} ({exc}); {missing_hint('torch')}"
        ) from None


def import_lightning() -> Lightning:
    errors = []
    for package, module_name in LIGHTNING_PACKAGES:
        try:
            module = importlib.import_module(module_name)
            top = importlib.import_module(package)
        except ImportError as exc:
            errors.append(f"{package}: {exc}")
            continue
        return Lightning(package, str(getattr(top, "__version__", "?")), module)
    raise ProbeUnavailable(
        f"Lightning is not importable by {sys.executable} ({'; '.join(errors)}); "
        f"{missing_hint('pytorch-lightning')} -- or probe plain PyTorch with --engine torch"
    )


def missing_hint(package: str) -> str:
    """What to install, into the interpreter that lacks it (``verify --python`` probes another
    one: lintloader's own extra would not help there)."""
    import shlex

    python = shlex.quote(sys.executable)
    return (
        f"install it into that interpreter: {python} -m pip install -c constraints.txt {package} "
        "(the constraints.txt of a lintloader checkout)"
    )


def resolve_device(requested: str) -> DeviceInfo:
    """``auto`` is the first CUDA device if there is one, else the CPU. Asking for ``cuda``
    without a usable GPU is an error, not a silent CPU run."""
    torch = require_torch()
    wanted = requested.strip().lower()
    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    if wanted == "cpu":
        return DeviceInfo("cpu", None, _cpu_name())
    if wanted.startswith("cuda"):
        return _cuda_device(torch, wanted)
    raise ProbeUnavailable(f"unknown --device {requested!r} (expected auto, cpu, cuda or cuda:N)")


def _cuda_device(torch: ModuleType, wanted: str) -> DeviceInfo:
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise ProbeUnavailable(
            f"--device {wanted}: CUDA is not available (torch {torch.__version__} is {build}, "
            f"torch.cuda.is_available() is False)"
        )
    index = _cuda_index(wanted)
    count = torch.cuda.device_count()
    if index >= count:
        raise ProbeUnavailable(f"--device {wanted}: only {count} CUDA device(s) visible")
    return DeviceInfo("cuda", index, torch.cuda.get_device_name(index))


def _cuda_index(wanted: str) -> int:
    _, _, suffix = wanted.partition(":")
    if not suffix:
        return 0
    if not suffix.isdigit():
        raise ProbeUnavailable(f"--device {wanted}: expected cuda:N")
    return int(suffix)


def _cpu_name() -> str | None:
    return platform.processor() or platform.machine() or None


def device_of_tensor(tensor: object, fallback: DeviceInfo) -> DeviceInfo:
    """The device a batch really was on (what Lightning chose with ``accelerator="auto"``)."""
    device = getattr(tensor, "device", None)
    if device is None:
        return fallback
    if device.type == fallback.type and device.index == fallback.index:
        return fallback
    if device.type == "cuda":
        torch = require_torch()
        index = device.index or 0
        return DeviceInfo("cuda", index, torch.cuda.get_device_name(index))
    name = _cpu_name() if device.type == "cpu" else None
    return DeviceInfo(device.type, device.index, name)


def versions(lightning: Lightning | None = None) -> dict[str, str]:
    torch = require_torch()
    found = {
        "python": platform.python_version(),
        "interpreter": sys.executable,
        "torch": str(torch.__version__),
    }
    if lightning is not None:
        found[lightning.package] = lightning.version
    return found
