"""Why a probe could not run or did not finish."""

from __future__ import annotations

from lintloader import extra_hint

INSTALL_HINT = f"install the runtime extra: {extra_hint('runtime')}"


class ProbeUnavailable(Exception):
    """The probe cannot run here (missing torch/Lightning, no CUDA, bad factory): exit 2."""
