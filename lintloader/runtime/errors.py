"""Why a probe could not run or did not finish."""

from __future__ import annotations

INSTALL_HINT = (
    'install the runtime extra: pip install -e ".[runtime]" (or: pip install "lintloader[runtime]")'
)


class ProbeUnavailable(Exception):
    """The probe cannot run here (missing torch/Lightning, no CUDA, bad factory): exit 2."""
