"""Issue 29, shape 6: a project scan reads the frameworks its classes subclass from the
environment it runs in (the running interpreter's site directories), so the framework's loops
reach the user's overrides; findings stay in the user's files.

The framework is a miniature one (fixtures/environment/*/site), installed into a real virtual
environment made for the test, whose interpreter runs the real CLI. The real installed
pytorch_lightning is checked too: its hooks are called once per fit, so a LightningModule's
loaders are no finding at warning level.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, run_cli

CASE = FIXTURES / "environment" / "framework_override"


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment whose site-packages holds the miniature framework; lintloader
    and its dependencies come from this interpreter's site directory through a ``.pth``."""
    root = tmp_path_factory.mktemp("env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    (site / "parent.pth").write_text(f"{ours}\n{REPO}\n")
    shutil.copytree(CASE / "site" / "fakeframe", site / "fakeframe")
    return python


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's project, outside this repository (whose root would make it scan more)."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(CASE / "project" / "myproj", root / "myproj")
    return root


def check(python: Path, cwd: Path, *paths: str) -> list[dict]:
    result = run_cli(
        "check", "--output-format", "json", "--no-cache", "--min-severity", "info", *paths,
        cwd=cwd, python=python,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_the_frameworks_loop_reaches_the_users_override(environment: Path, project: Path) -> None:
    (finding,) = check(environment, project, "myproj/training.py")
    assert (finding["code"], finding["severity"]) == ("LL202", "warning")
    assert (finding["path"], finding["line"]) == ("myproj/training.py", 10)
    functions = [hop["function"] for hop in finding["chain"]]
    assert functions == [
        "Trainer.train",
        "Trainer.train",
        "Trainer.evaluate",
        "MyTrainer.get_eval_dataloader",
    ]
    assert finding["chain"][0]["path"] == "fakeframe/trainer.py"


def test_an_override_that_keeps_its_loader_is_clean(environment: Path, project: Path) -> None:
    assert check(environment, project, "myproj/kept.py") == []


def test_nothing_is_reported_in_the_framework(environment: Path, project: Path) -> None:
    paths = {finding["path"] for finding in check(environment, project, "myproj")}
    assert paths == {"myproj/training.py"}


def test_without_the_framework_installed_nothing_is_reached(project: Path) -> None:
    result = run_cli("check", "--output-format", "json", "--no-cache", "myproj", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


LIGHTNING_PROJECT = """
import pytorch_lightning as pl
from torch.utils.data import DataLoader


class Model(pl.LightningModule):
    def train_dataloader(self):
        return DataLoader(range(64), num_workers=4, persistent_workers=True)

    def val_dataloader(self):
        return DataLoader(range(16), num_workers=4, persistent_workers=True)


class Probe(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pass
"""


def test_real_lightning_calls_the_loader_hooks_once_per_fit(tmp_path: Path) -> None:
    pytest.importorskip("pytorch_lightning", reason="the runtime extra is absent")
    (tmp_path / "model.py").write_text(LIGHTNING_PROJECT)
    result = run_cli("check", "--output-format", "json", "--no-cache", "model.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_python_names_the_environment_of_a_project_scan(environment: Path, project: Path) -> None:
    """lintloader runs in its own environment; ``--python`` reads the framework from another
    one, by asking that interpreter for its site directories (never importing anything)."""
    result = run_cli(
        "check", "--python", str(environment), "--output-format", "json", "--no-cache",
        "myproj/training.py", cwd=project,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)
    assert (finding["path"], finding["line"]) == ("myproj/training.py", 10)
    assert finding["chain"][0]["path"].endswith("fakeframe/trainer.py")
