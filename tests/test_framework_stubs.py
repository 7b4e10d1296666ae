"""lintloader's framework stubs (lintloader/data/frameworks.toml): checked against each framework
installed here (Lightning is; the others are checked only where importable), and used for a
framework lintloader cannot read: a Lightning project checked with ``--python`` of an
environment without Lightning is found from the stubs, and the summary line says so once."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

from lintloader.analysis.frameworks import KINDS, REPEATED, Framework, known_frameworks

FRAMEWORKS = {framework.name: framework for framework in known_frameworks()}
NOTE = "Framework knowledge from lintloader's stubs: "
# where each framework's own classes are imported from when installed
IMPORTS = {
    "lightning": "pytorch_lightning",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "keras": "keras",
    "ignite": "ignite",
    "fastai": "fastai",
    "mmengine": "mmengine",
}
LIGHTNING_PROJECT = """
import pytorch_lightning as pl
from torch.utils.data import DataLoader


def probe_loader(dataset):
    return DataLoader(dataset, batch_size=4, num_workers=2)


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return next(iter(probe_loader(self.dataset)))

    def configure_optimizers(self):
        self.first = probe_loader(self.dataset)
"""


def _import(path: str) -> object | None:
    """The object at dotted ``path`` (a module's attribute, or an attribute of one), if any."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name, None)
        return found
    return None


def test_every_framework_the_issue_names_has_stubs() -> None:
    assert set(IMPORTS) == set(FRAMEWORKS)
    for framework in FRAMEWORKS.values():
        for stub in framework.classes:
            assert stub.bases, framework.name
            listed = [name for kind in KINDS for name in stub.methods[kind]]
            assert len(listed) == len(set(listed)), f"{framework.name}: a method in two kinds"
            assert stub.repeated(), framework.name
            assert stub.setup <= stub.methods["once"], f"{framework.name}: set-up not once"
        assert framework.classes or framework.calls, framework.name


def _installed(name: str) -> Framework:
    pytest.importorskip(
        IMPORTS[name], reason=f"{name} is not installed here: its stubs are unchecked"
    )
    return FRAMEWORKS[name]


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_stubbed_classes_and_methods_exist_in_the_installed_framework(name: str) -> None:
    framework = _installed(name)
    for function in framework.calls:
        assert callable(_import(function)), (name, function)
    for stub in framework.classes:
        classes = [found for found in map(_import, sorted(stub.bases)) if found is not None]
        assert classes, f"{name}: none of {sorted(stub.bases)} imports"
        for kind in KINDS:
            for method in stub.methods[kind]:
                assert all(hasattr(cls, method) for cls in classes), (name, kind, method)
        for method in stub.builds:
            assert all(hasattr(cls, method) for cls in classes), (name, "builds", method)


def test_lightning_calls_every_repeated_hook_by_name_from_its_loops() -> None:
    """Lightning calls hooks by name (``_call_callback_hooks(trainer, "on_train_epoch_end")``):
    each per-epoch hook of the stubs is named in its loops, each other repeated one in its
    package; and every per-epoch or per-batch hook of its classes is in the stubs."""
    framework = _installed("lightning")
    import pytorch_lightning

    root = Path(pytorch_lightning.__file__).parent
    loops = "".join(p.read_text() for p in sorted((root / "loops").rglob("*.py")))
    package = "".join(p.read_text() for p in sorted(root.rglob("*.py")))
    for stub in framework.classes:
        for name in stub.methods["per_epoch"]:
            assert f'"{name}"' in loops, name
        for kind in REPEATED:
            for name in stub.methods[kind]:
                assert f'"{name}"' in package, name
        classes = [found for found in map(_import, sorted(stub.bases)) if found is not None]
        hooks = {
            name
            for cls in classes
            for name in dir(cls)
            if re.fullmatch(r"on_\w+_(epoch|batch)_(start|end)", name)
        }
        listed = stub.methods["per_epoch"] | stub.methods["per_step"]
        assert hooks <= listed, sorted(hooks - listed)


def _bare_python(tmp_path: Path) -> str:
    """An environment with nothing installed: no framework to read."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def test_a_lightning_shape_is_found_from_the_stubs_without_lightning(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(LIGHTNING_PROJECT)
    python = _bare_python(tmp_path)
    done = run_cli(
        "check", "--no-cache", "--min-severity", "info", "--python", python, "model.py",
        cwd=project,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert len(lines) == 1, done.stdout
    assert lines[0].startswith(
        "model.py:12:26: LL202 [warning] per-step hook `Model.training_step`"
    )
    assert done.stderr.count(NOTE) == 1
    assert f"{NOTE}lightning." in done.stderr


def test_an_installed_framework_is_read_not_stubbed(tmp_path: Path) -> None:
    """The nearest negative: with Lightning installed, its own code is read as context (the
    loader hooks make the selection parse it) and the stubs are not used."""
    pytest.importorskip("pytorch_lightning")
    project = tmp_path / "project"
    project.mkdir()
    hooks = (
        "\n    def train_dataloader(self):\n"
        "        return DataLoader(self.dataset, num_workers=4, persistent_workers=True)\n"
    )
    (project / "model.py").write_text(LIGHTNING_PROJECT + hooks)
    done = run_cli("check", "-v", "--no-cache", "--min-severity", "info", "model.py", cwd=project)
    assert done.returncode in (0, 1), done.stderr
    assert NOTE not in done.stderr
    assert "parsed" in done.stderr and "(1 parsed" not in done.stderr  # Lightning's files too


def test_the_stubs_note_is_said_once_for_every_framework_used() -> None:
    # the file alone: inside the checkout, its project would be the whole checkout
    done = run_cli(
        "check", "--no-cache", "--min-severity", "info", "--project-root", "none",
        str((FIXTURES / "rules" / "LL202" / "framework_stubs.py").relative_to(FIXTURES.parent)),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.count(NOTE) == 1
    assert f"{NOTE}fastai, mmengine, transformers." in done.stderr


def test_a_replayed_run_says_so_too(tmp_path: Path) -> None:
    """The note is stored with the run: a warm run that replays it prints the same line."""
    shutil.copy(FIXTURES / "rules" / "LL202" / "framework_stubs.py", tmp_path / "train.py")
    runs = [
        run_cli("check", "-v", "--min-severity", "info", "train.py", cwd=tmp_path) for _ in range(2)
    ]
    assert [run.returncode for run in runs] == [1, 1], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert "(0 parsed, 1 from cache" in runs[1].stderr
    for run in runs:
        assert run.stderr.count(f"{NOTE}fastai, mmengine, transformers.") == 1
