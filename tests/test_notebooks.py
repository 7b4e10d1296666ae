"""Jupyter notebooks through the real CLI: code cells are checked (magics and shell escapes
skipped, as ruff does), locations read ``train.ipynb:cell 3:2:14``, and ``fix`` writes a
notebook that the nbformat validator accepts, with outputs untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
from conftest import run_cli

LOOP = (
    "ds = list(range(8))\n"
    "for epoch in range(3):\n"
    "    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
    "    for batch in loader:\n"
    "        pass\n"
)


def notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Training\nfor epoch in range(3): DataLoader(x)"),
        nbformat.v4.new_code_cell(
            "%matplotlib inline\nfrom torch.utils.data import DataLoader\n!pip install tqdm"
        ),
        nbformat.v4.new_code_cell("%%bash\nfor i in 1 2; do echo DataLoader; done"),
        nbformat.v4.new_code_cell(
            LOOP,
            execution_count=3,
            outputs=[nbformat.v4.new_output("stream", text="epoch done\n")],
        ),
        nbformat.v4.new_code_cell("probe = DataLoader(ds, num_workers=0, persistent_workers=True)"),
    ]
    nbformat.write(nb, path)
    return path


def findings(cwd: Path, *args: str) -> list[dict]:
    done = run_cli("check", "--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_code_cells_are_checked_and_located_by_cell(tmp_path: Path) -> None:
    notebook(tmp_path / "train.ipynb")
    got = [
        (f["code"], f["path"], f["cell"], f["line"], f["column"]) for f in findings(tmp_path, ".")
    ]
    assert got == [("LL202", "train.ipynb", 4, 3, 14), ("LL201", "train.ipynb", 5, 1, 9)]
    text = run_cli("check", "--no-cache", "train.ipynb", cwd=tmp_path).stdout
    assert text.startswith("train.ipynb:cell 4:3:14: LL202 [warning] ")
    assert "(cell 4, line 2)" in text  # the loop line, counted in its cell
    assert "    train.ipynb:cell 4:2:1 <module>: " in text


def test_fix_writes_a_valid_notebook_and_keeps_outputs(tmp_path: Path) -> None:
    path = notebook(tmp_path / "train.ipynb")
    before = nbformat.read(path, as_version=4)
    done = run_cli("fix", "--no-cache", "--unsafe-fixes", "train.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = nbformat.read(path, as_version=4)
    nbformat.validate(after)
    assert [c.cell_type for c in after.cells] == [c.cell_type for c in before.cells]
    assert after.cells[3].outputs == before.cells[3].outputs
    assert after.cells[3].execution_count == 3
    assert after.cells[1].source == before.cells[1].source  # magics restored
    assert after.cells[2].source == before.cells[2].source  # the %%bash cell untouched
    assert after.cells[3].source.startswith("ds = list(range(8))\nloader = DataLoader(")
    assert "persistent_workers=False" in after.cells[4].source
    left = {f["code"] for f in findings(tmp_path, "train.ipynb")}
    assert not left & {"LL201", "LL202"}


def test_an_unreadable_notebook_is_one_ll000(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text("{not json")
    got = findings(tmp_path, ".")
    assert [(f["code"], f["path"]) for f in got] == [("LL000", "broken.ipynb")]
    assert "not a readable notebook" in got[0]["message"]


def test_without_nbformat_a_notebook_says_how_to_install_it(tmp_path: Path) -> None:
    notebook(tmp_path / "train.ipynb")
    (tmp_path / "plain.py").write_text("x = 1\n")
    blocked = (
        "import sys; sys.modules['nbformat'] = None; from lintloader.cli.main import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked, "check", "--no-cache", "--output-format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    got = json.loads(done.stdout)
    assert [(f["code"], f["path"]) for f in got] == [("LL000", "train.ipynb")]
    assert "lintloader[notebooks]" in got[0]["message"]
