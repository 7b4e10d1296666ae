"""LL205 blames the loader a reload really drops: one a ``*_dataloader`` hook builds (the hooks
Lightning calls again every N epochs), named by that hook, before a persistent loader built
elsewhere; one in the Trainer's own file first."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import run_cli

MODEL = """
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader


    class Model(pl.LightningModule):
        def val_dataloader(self):
            return DataLoader(self.dataset, num_workers=4, persistent_workers=True)
"""
DATA = """
    from torch.utils.data import DataLoader


    def preview(dataset):
        return DataLoader(dataset, num_workers=2, persistent_workers=True)
"""
MAIN = """
    import pytorch_lightning as pl

    from model import Model


    def main():
        pl.Trainer(reload_dataloaders_every_n_epochs=2).fit(Model())
"""


def test_the_blamed_loader_is_the_hooks_and_is_named_by_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL).lstrip())
    (tmp_path / "main.py").write_text(textwrap.dedent(MAIN).lstrip())
    (tmp_path / "data.py").write_text(textwrap.dedent(DATA).lstrip())
    done = run_cli(
        "check", "--no-cache", "--select", "LL205", "--min-severity", "info",
        "--output-format", "json", ".", cwd=tmp_path,
    )  # fmt: skip
    [finding] = json.loads(done.stdout)
    assert (finding["path"], finding["line"]) == ("main.py", 7)
    assert finding["message"].endswith(
        "(persistent DataLoader built in `Model.val_dataloader` at model.py:7)"
    )
    (tmp_path / "model.py").unlink()  # no hook left: any persistent loader
    done = run_cli(
        "check", "--no-cache", "--select", "LL205", "--min-severity", "info", ".", cwd=tmp_path
    )
    assert "(persistent DataLoader at data.py:5)" in done.stdout


def test_in_the_trainers_file_the_hooks_loader_comes_first(tmp_path: Path) -> None:
    source = textwrap.dedent(DATA).lstrip() + textwrap.dedent(MODEL) + textwrap.dedent(MAIN)
    source = source.replace("from model import Model\n", "")
    (tmp_path / "train.py").write_text(source)
    done = run_cli(
        "check", "--no-cache", "--select", "LL205", "--min-severity", "info", "train.py",
        cwd=tmp_path,
    )  # fmt: skip
    assert "(persistent DataLoader built in `Model.val_dataloader` at train.py:13)" in done.stdout
