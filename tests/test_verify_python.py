"""``verify --python PATH``: the probe runs in another environment, with its own torch, even
where lintloader (and click) are not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli


@pytest.fixture(scope="module")
def torch_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with torch from constraints.txt and nothing of lintloader's."""
    venv = tmp_path_factory.mktemp("torch-env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt"), "torch"],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot install torch into a fresh venv here: {done.stderr[-300:]}")
    missing = subprocess.run(
        [str(python), "-c", "import lintloader"], cwd=venv, capture_output=True, check=False
    )
    assert missing.returncode != 0  # the probe must not depend on an install there
    return python


def test_the_probe_runs_with_the_other_interpreter(torch_env: Path) -> None:
    done = run_cli(
        "verify", "--python", str(torch_env), "--engine", "torch", "--epochs", "2", "--json",
        cwd=torch_env.parent,  # not the repository: its lintloader/ must not be importable
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["verdict"] == "PASS"
    assert result["versions"]["interpreter"] == str(torch_env)


def test_options_reach_the_other_interpreter(torch_env: Path) -> None:
    done = run_cli(
        "verify", "--python", str(torch_env), "--engine", "torch", "--epochs", "2",
        "--no-persistent-workers", "--json", cwd=torch_env.parent,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert json.loads(done.stdout)["verdict"] == "FAIL"


def test_an_interpreter_without_torch_cannot_run_the_probe(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    done = run_cli("verify", "--python", str(bare / "bin" / "python"), "--json")
    assert done.returncode == 2
    assert "cannot run" in done.stderr and "torch" in done.stderr


def test_a_missing_interpreter_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("verify", "--python", str(tmp_path / "nope" / "python"), "--json")
    assert done.returncode == 2
    assert "cannot run it" in done.stderr
    assert json.loads(done.stdout)["exit_code"] == 2
