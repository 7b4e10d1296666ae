"""``verify --python PATH``: the probe runs in another environment, with its own torch, even
where lintloader (and click) are not installed."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import run_cli


def requirement_closure(name: str, seen: set[str] | None = None) -> set[str]:
    """``name`` and the installed distributions it requires, recursively (no extras)."""
    seen = set() if seen is None else seen
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return seen
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return seen
    seen.add(key)
    for requirement in dist.requires or []:
        if "extra ==" not in requirement:
            requirement_closure(re.split(r"[^A-Za-z0-9_.-]", requirement, maxsplit=1)[0], seen)
    return seen


@pytest.fixture(scope="module")
def torch_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no pip) with torch and what it requires, as installed here, and nothing
    else (no lintloader, no click): each file or folder of those distributions is linked into
    its site-packages, as pip would have put it. Installing torch from the index instead took
    3 minutes on a loaded machine."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the runtime extra)")
    venv = tmp_path_factory.mktemp("torch-env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    found = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True)
    site = Path(found.stdout.strip())
    for name in requirement_closure("torch"):
        dist = metadata.distribution(name)
        for top in {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}:
            source = Path(str(dist.locate_file(top)))
            if top != "__pycache__" and not top.endswith(".pth") and source.exists():
                (site / top).symlink_to(source)
    for absent in ("lintloader", "click"):  # the probe must not depend on an install there
        missing = subprocess.run(
            [str(python), "-c", f"import {absent}"], cwd=venv, capture_output=True, check=False
        )
        assert missing.returncode != 0, absent
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
