"""The package type-checks: mypy, configured in pyproject.toml (``strict = true`` for the
whole package), reports no error. Run through pytest so that CI runs it with the rest."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_reports_no_error() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_the_whole_package_is_checked_strictly() -> None:
    """``strict = true`` for the package; an override may only relax one flag for a named
    module, never turn strictness off for a package."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and config["packages"] == ["lintloader"]
    for override in config["overrides"]:
        modules = override["module"]
        assert not any(m.startswith("lintloader") and m.endswith("*") for m in modules), modules
        assert "ignore_errors" not in override and "disallow_untyped_defs" not in override
