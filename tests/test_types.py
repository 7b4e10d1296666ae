"""The package type-checks: mypy, configured in pyproject.toml (strict on the layered
packages), reports no error. Run through pytest so that CI runs it with the rest."""

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


def test_the_new_packages_are_checked_strictly() -> None:
    """The layered packages are named in the strict override (a rename must keep them)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    strict = next(o for o in config["overrides"] if o.get("disallow_untyped_defs"))
    for part in ("link", "incremental", "workers"):
        assert f"lintloader.{part}.*" in strict["module"]
        assert (ROOT / "lintloader" / part / "__init__.py").is_file()
