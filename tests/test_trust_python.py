"""``--python ENV/bin/python`` never runs the environment's code (issue 39): a virtual
environment's ``pyvenv.cfg`` names the standard library its interpreter starts with, and
``-I -S`` does not keep that library's ``encodings``, ``os`` or ``site`` from running, so such
an interpreter is never started; its site directories come from its prefix and the version its
``pyvenv.cfg`` records. Real venvs, real runs of the CLI."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from child_processes import Processes
from conftest import run_cli
from trust_support import ORIGINAL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX venv layout")
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


def planted_home(root: Path, marker: Path) -> Path:
    """A 'base Python' whose standard library makes ``marker`` on import (``posix`` is built
    in: it works before anything else is importable)."""
    lib = root / "lib" / f"python{VERSION}"
    (lib / "encodings").mkdir(parents=True)
    (root / "bin").mkdir()
    plant = f"import posix\nposix.mkdir({str(marker)!r})\n"
    for module in ("os.py", "site.py", "encodings/__init__.py"):
        (lib / module).write_text(plant)
    return root / "bin"


def venv(processes: Processes, where: Path) -> Path:
    done = processes.run([sys.executable, "-m", "venv", "--without-pip", str(where)], timeout=120)
    assert done.returncode == 0, done.stderr
    return where


def point_home(env: Path, home: Path, version: str | None = None) -> None:
    config = env / "pyvenv.cfg"
    text = re.sub(r"(?m)^home = .*$", f"home = {home}", config.read_text())
    if version is not None:
        text = re.sub(r"(?m)^version(_info)? = .*$", f"version = {version}.0", text)
    config.write_text(text)


def test_a_venv_whose_home_is_planted_is_never_run(processes: Processes, tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    env = venv(processes, tmp_path / "env")
    site = env / "lib" / f"python{VERSION}" / "site-packages"
    (site / "fetchmod.py").write_bytes(ORIGINAL)  # one LL101
    point_home(env, planted_home(tmp_path / "base", marker))
    python = str(env / "bin" / "python")
    for command in ("check", "fix"):
        extra = ("--diff",) if command == "fix" else ()
        done = run_cli(command, "--site-packages", "--python", python, "--no-cache", *extra,
                       cwd=tmp_path)  # fmt: skip
        assert not marker.exists(), f"{command} ran the environment's standard library"
        assert done.returncode == 1, done.stderr
        assert "fetchmod.py" in done.stdout, done.stdout
    # the same interpreter, started, runs the planted library (what lintloader avoids)
    processes.run([python, "-I", "-S", "-c", "pass"], timeout=60)
    assert marker.exists()


def test_the_site_directories_follow_the_recorded_version(
    processes: Processes, tmp_path: Path
) -> None:
    env = venv(processes, tmp_path / "env")
    point_home(env, tmp_path / "nowhere" / "bin", version="3.99")
    site = env / "lib" / "python3.99" / "site-packages"
    site.mkdir(parents=True)
    (site / "fetchmod.py").write_bytes(ORIGINAL)
    python = str(env / "bin" / "python")
    done = run_cli("check", "--site-packages", "--python", python, "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "fetchmod.py:" in done.stdout, done.stdout


def test_a_venv_config_without_a_version_is_one_line(processes: Processes, tmp_path: Path) -> None:
    env = venv(processes, tmp_path / "env")
    config = env / "pyvenv.cfg"
    config.write_text(re.sub(r"(?m)^version(_info)? = .*\n", "", config.read_text()))
    done = run_cli("check", "--site-packages", "--python", str(env / "bin" / "python"),
                   "--no-cache", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().endswith("records no Python version; not running it")
